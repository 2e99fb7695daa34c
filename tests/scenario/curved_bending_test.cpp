// V21 (docs/validation.md): a cloth that is curved at rest stays at rest. Isometric bending
// (Bergou et al. 2006) holds C = |sum K_i x_i| to zero, which only a flat stencil has, so a curved
// OBJ cloth with the default bending was pulled flat; addBendingConstraints now gives the stencils
// that are curved at rest dihedral bending about their own rest angle, and keeps isometric bending
// (bit for bit) where the rest mesh is flat.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "pliant/pliant.h"
#include "scenario_util.h"

namespace pliant {
namespace {

// A half-cylinder of radius `radius` (m) along z, `around` segments over pi and `along` over
// `length` (m), each quad split into two triangles with alternating diagonals.
struct HalfCylinder {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> triangles;
  int around = 0;
  int along = 0;
};
HalfCylinder makeHalfCylinder(double radius, double length, int around, int along) {
  HalfCylinder s;
  s.around = around;
  s.along = along;
  for (int j = 0; j <= along; ++j)
    for (int i = 0; i <= around; ++i) {
      const double phi = std::numbers::pi * i / around;
      s.vertices.emplace_back(radius * std::cos(phi), radius * std::sin(phi), length * j / along);
    }
  const auto node = [&](int i, int j) { return static_cast<std::uint32_t>(j * (around + 1) + i); };
  for (int j = 0; j < along; ++j)
    for (int i = 0; i < around; ++i) {
      if ((i + j) % 2 == 0) {
        s.triangles.push_back({node(i, j), node(i + 1, j), node(i + 1, j + 1)});
        s.triangles.push_back({node(i, j), node(i + 1, j + 1), node(i, j + 1)});
      } else {
        s.triangles.push_back({node(i, j), node(i + 1, j), node(i, j + 1)});
        s.triangles.push_back({node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)});
      }
    }
  return s;
}

// A cloth as a scene file makes it: 0.2 kg, stretch 1e-7 m/N, soft bending 0.5 1/J (a flattening
// pull would show within a few frames).
ModelPtr buildCloth(const HalfCylinder& shape, BendingModel bending, double dampingFactor = 0.0) {
  ModelBuilder b;
  ClothMeshDef def;
  def.totalMass = 0.2;
  def.stretch = {1e-7, 0.0, 1.0};
  def.bending = bending;
  def.bendingParams = {0.5, 0.0, 1.0};
  def.dampingFactor = dampingFactor;
  addClothMesh(b, shape.vertices, shape.triangles, def);
  return b.build();
}

double maxDisplacement(const Model& model, const State& state) {
  double d = 0.0;
  for (std::size_t i = 0; i < model.particleCount(); ++i)
    d = std::max(d, (state.position[i] - model.initialPosition[i]).norm());
  return d;
}

SolverSettings weightless() {
  SolverSettings s = SolverSettings::smallSteps(10);  // the scene files' default small steps
  s.gravity = Vec3::Zero();
  return s;
}

TEST(CurvedBending, AHalfCylinderWithIsometricBendingRequestedStaysAtRest) {
  const HalfCylinder shape = makeHalfCylinder(0.2, 0.4, 16, 8);
  const ModelPtr model = buildCloth(shape, BendingModel::Isometric);
  // The quads are planar facets, so the stencils of their diagonals and of the edges around the
  // cylinder are flat and stay isometric; the (16 - 1) x 8 interior edges along the axis join two
  // facets at 180/16 degrees and get dihedral bending.
  const std::size_t interior = 3 * 16 * 8 - 16 - 8;
  EXPECT_EQ(model->dihedralBendings.size(), static_cast<std::size_t>((16 - 1) * 8));
  EXPECT_EQ(model->isometricBendings.size(), interior - model->dihedralBendings.size());
  // The signed rest angle is the stencil's own: every constraint reads zero at rest.
  const State rest = State::fromModel(*model);
  for (std::uint32_t c = 0; c < model->dihedralBendings.size(); ++c) {
    EXPECT_EQ(constraintValue(*model, rest, {ConstraintFamily::DihedralBending, c}), 0.0);
    // Signed: the facets are consistently oriented, so every hinge is bent the same way.
    EXPECT_NEAR(model->dihedralBendings[c].restAngle,
                std::copysign(std::numbers::pi / 16, model->dihedralBendings[0].restAngle), 1e-12);
  }

  const SolverSettings settings = weightless();
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 600).ok());  // 10 s
  EXPECT_LT(maxDisplacement(*model, state), 1e-9);
  EXPECT_LT(scenario::maxSpeed(state), 1e-9);
}

TEST(CurvedBending, IsometricStencilsOnTheCurvedMeshFlattenIt) {
  // The behaviour before the fix, written out: Bergou's constraint on every stencil of the same
  // half-cylinder pulls it flat (this is what the test above rules out).
  const HalfCylinder shape = makeHalfCylinder(0.2, 0.4, 16, 8);
  ModelBuilder b;
  ClothMeshDef def;
  def.totalMass = 0.2;
  def.stretch = {1e-7, 0.0, 1.0};
  const GeneratedObject cloth = addClothMesh(b, shape.vertices, shape.triangles, def);
  std::size_t stencils = 0;
  // Every interior edge: the stencils addBendingConstraints builds, all isometric.
  std::map<std::pair<ParticleIndex, ParticleIndex>, ParticleIndex> opposite;
  for (const auto& t : cloth.triangles)
    for (int k = 0; k < 3; ++k) opposite[{t[k], t[(k + 1) % 3]}] = t[(k + 2) % 3];
  for (const auto& [edge, p2] : opposite) {
    if (edge.first > edge.second) continue;
    const auto other = opposite.find({edge.second, edge.first});
    if (other == opposite.end()) continue;
    b.addIsometricBending(edge.first, edge.second, p2, other->second, {0.5, 0.0, 1.0});
    ++stencils;
  }
  ASSERT_EQ(stencils, static_cast<std::size_t>(3 * 16 * 8 - 16 - 8));
  const ModelPtr model = b.build();
  Solver solver(model, weightless());
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 600).ok());
  EXPECT_GT(maxDisplacement(*model, state), 1e-3);
}

TEST(CurvedBending, ACurvedObjClothWithTheDefaultBendingStaysAtRest) {
  // The reported case: a sleeve as an OBJ cloth in a scene file, bending model left to its default.
  const HalfCylinder shape = makeHalfCylinder(0.15, 0.5, 20, 10);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pliant_curved_bending_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream obj(dir / "sleeve.obj");
    obj.precision(17);
    for (const Vec3& v : shape.vertices) obj << "v " << v.x() << ' ' << v.y() << ' ' << v.z() << '\n';
    for (const auto& t : shape.triangles) obj << "f " << t[0] + 1 << ' ' << t[1] + 1 << ' ' << t[2] + 1 << '\n';
  }
  const Scene scene = parseScene(R"({"name": "sleeve", "solver": {"mode": "small-steps", "gravity": [0, 0, 0]},
      "objects": [{"type": "cloth", "name": "sleeve", "mesh": "sleeve.obj", "mass": 0.2,
      "stretch": {"compliance": 1e-7}, "bending": {"compliance": 0.5}}]})",
                                 "sleeve.json", dir.string());
  std::filesystem::remove_all(dir);
  ASSERT_GT(scene.model->dihedralBendings.size(), 0u);
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  ASSERT_TRUE(solver.run(state, 600).ok());
  EXPECT_LT(maxDisplacement(*scene.model, state), 1e-9);
}

TEST(CurvedBending, APerturbedHalfCylinderBendsBackToItsRestShape) {
  // Push the crest of the half-cylinder 2 cm in, let go (no gravity, object damping to settle):
  // with bending the cloth returns to its rest shape; without, nothing holds the curvature. The
  // shape error is the largest change of a hinge angle from rest, rad (the cloth may also move and
  // turn as a whole, which does not count).
  const HalfCylinder shape = makeHalfCylinder(0.2, 0.4, 16, 8);
  const ModelPtr reference = buildCloth(shape, BendingModel::Isometric);
  const auto shapeError = [&](const State& state) {
    double e = 0.0;
    for (std::uint32_t c = 0; c < reference->dihedralBendings.size(); ++c)
      e = std::max(e, std::abs(constraintValue(*reference, state, {ConstraintFamily::DihedralBending, c})));
    return e;
  };
  const double push = 0.02;  // m
  double initial = 0.0;
  const auto settle = [&](BendingModel bending) {
    const ModelPtr model = buildCloth(shape, bending, 0.05);
    Solver solver(model, weightless());
    State state = State::fromModel(*model);
    for (int j = 0; j <= shape.along; ++j) state.position[j * (shape.around + 1) + shape.around / 2].y() -= push;
    initial = shapeError(state);
    EXPECT_TRUE(solver.run(state, 600).ok());
    return shapeError(state);
  };
  const double withBending = settle(BendingModel::Isometric);
  const double without = settle(BendingModel::None);
  std::printf("largest hinge angle error: pushed %.3g rad, after 10 s with bending %.3g rad, without %.3g rad\n",
              initial, withBending, without);
  EXPECT_LT(withBending, 0.01 * initial);
  EXPECT_GT(without, 0.25 * initial);
}

TEST(CurvedBending, ACurvedHingeIsAsStiffAsTheSameHingeFlat) {
  // One hinge, flat (isometric) or bent 0.5 rad at rest (dihedral, compliance converted by c^2),
  // turned a further 1e-3 rad: both store the same energy, to first order in the turn.
  const double alpha = 0.5;  // 1/J
  const auto energyAfterTurn = [&](double restAngle, bool expectDihedral) {
    const Vec3 wing(0.06, -0.04, 0.0);  // m, wing B before it is turned about the hinge (the x axis)
    const auto turned = [&](double angle) {
      return Vec3(wing.x(), wing.y() * std::cos(angle), wing.y() * std::sin(angle));
    };
    ModelBuilder b;
    b.addParticle(Vec3(0.0, 0.0, 0.0), 0.01);
    b.addParticle(Vec3(0.1, 0.0, 0.0), 0.01);
    b.addParticle(Vec3(0.03, 0.05, 0.0), 0.01);
    b.addParticle(turned(restAngle), 0.01);
    EXPECT_EQ(addBendingConstraints(b, {{0, 1, 2}, {1, 0, 3}}, BendingModel::Isometric, {alpha, 0.0, 1.0}), 1u);
    const ModelPtr model = b.build();
    EXPECT_EQ(model->dihedralBendings.size(), expectDihedral ? 1u : 0u);
    State state = State::fromModel(*model);
    state.position[3] = turned(restAngle + 1e-3);
    return computeEnergy(*model, state, SolverSettings{}).elasticFromPositions;
  };
  const double flat = energyAfterTurn(0.0, false);
  const double curved = energyAfterTurn(0.5, true);
  EXPECT_GT(flat, 0.0);
  EXPECT_NEAR(curved / flat, 1.0, 1e-2);
}

TEST(CurvedBending, AFlatGridKeepsIsometricBendingOnEveryStencil) {
  // Tilted and far from the origin, a flat grid still reads as flat: all its stencils stay isometric
  // (the built-in cloths' golden hashes, tests/determinism/golden_hash_test.cpp, do not move).
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = 12;
  def.nodesY = 9;
  def.sizeX = 0.7;
  def.sizeY = 0.5;
  def.origin = Vec3(1234.5, -77.25, 0.125);
  def.axisX = Vec3(0.6, 0.0, 0.8);
  def.axisY = Vec3(0.0, 1.0, 0.0);
  def.bending = BendingModel::Isometric;
  def.bendingParams = {0.5, 0.0, 1.0};
  addClothGrid(b, def);
  const ModelPtr model = b.build();
  EXPECT_EQ(model->isometricBendings.size(), static_cast<std::size_t>(3 * 11 * 8 - 11 - 8));
  EXPECT_EQ(model->dihedralBendings.size(), 0u);
}

}  // namespace
}  // namespace pliant
