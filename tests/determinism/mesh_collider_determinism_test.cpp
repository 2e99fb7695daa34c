// Determinism with mesh colliders: the signed distance grid is the same bit for bit whatever the
// thread count that builds it, and a scene with a static and a spinning, moving mesh collider gives
// bit-identical states in two independent runs (each building its own grids).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/io/mesh_io.h"
#include "pliant/io/scenes.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

std::string meshPath(const std::string& name) { return std::string(PLIANT_TEST_DATA_DIR) + "/meshes/" + name; }

TEST(MeshColliderDeterminism, GridIsBitIdenticalForAnyThreadCount) {
  const io::TriangleMesh mesh = io::readObj(meshPath("sdf_icosphere.obj"));
  SignedDistanceGridOptions options;
  options.maxCellsPerAxis = 40;
  const int saved = threadCount();
  std::vector<std::vector<double>> grids;
  for (int threads : {1, 3}) {
    setThreadCount(threads);
    grids.push_back(SignedDistanceGrid::build(mesh.vertices, mesh.triangles, options, "icosphere").distance);
  }
  setThreadCount(saved);
  ASSERT_EQ(grids[0].size(), 41u * 41u * 41u);
  EXPECT_EQ(grids[0], grids[1]);
}

ModelPtr meshScene() {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = cloth.nodesY = 12;
  cloth.sizeX = cloth.sizeY = 1.0;
  cloth.origin = Vec3(-0.5, 0.7, -0.5);
  cloth.stretch.compliance = 1e-6;
  const GeneratedObject c = addClothGrid(b, cloth);
  b.setParticleRadius(c.firstParticle, c.particleCount, 0.01);
  SignedDistanceGridOptions options;
  options.cellSize = 0.05;
  b.addCollider(
      io::readMeshCollider(meshPath("sdf_icosphere.obj"), Vec3::Zero(), Quat::Identity(), options, {0.4, 0.3, 0.2}));
  b.addCollider(
      io::readMeshCollider(meshPath("sdf_cube.obj"), Vec3(0.0, -0.2, 0.0), Quat::Identity(), options, {0.6, 0.5, 0.0},
                           Vec3(2.0, 0.2, 2.0)),
      [](double t) { return Vec3(0.1 * t, -0.2, 0.0); },
      [](double t) { return Quat(Eigen::AngleAxisd(0.8 * t, Vec3::UnitY())); });
  return b.build();
}

std::vector<std::uint64_t> runMeshScene(int steps, std::size_t& contacts) {
  const ModelPtr model = meshScene();
  Solver solver(model, SolverSettings::smallSteps(8));
  State state = State::fromModel(*model);
  std::vector<std::uint64_t> hashes;
  for (int i = 0; i < steps; ++i) {
    const StepResult r = solver.step(state);
    EXPECT_TRUE(r.ok()) << r.message;
    hashes.push_back(state.hash());
    contacts = std::max(contacts, solver.lastColliderContacts().size());
  }
  return hashes;
}

TEST(MeshColliderDeterminism, IndependentRunsAreBitIdentical) {
  std::size_t contacts = 0, unused = 0;
  const auto a = runMeshScene(45, contacts);
  const auto b = runMeshScene(45, unused);
  EXPECT_EQ(a, b);
  EXPECT_GT(contacts, 20u);  // the cloth does land on the meshes
  EXPECT_NE(a.front(), a.back());
}

}  // namespace
}  // namespace pliant
