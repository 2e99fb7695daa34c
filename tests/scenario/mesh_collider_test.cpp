// Scenario tests of triangle-mesh colliders (issue 4; docs/validation.md V13 on a mesh): particles dropped
// onto a mesh cube come to rest on its top face at the height their radius gives and never end a
// step inside it; a kinematic mesh cube moving along a path pushes a particle ahead of its face; a
// spinning mesh (a rotation path) carries a particle resting on it by friction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "pliant/pliant.h"
#include "scenario/scenario_util.h"

namespace pliant {
namespace {

using scenario::kG;

std::string meshPath(const std::string& name) { return std::string(PLIANT_TEST_DATA_DIR) + "/meshes/" + name; }

// Exact signed distance to the box of half size `half` centred at `centre` (axis aligned).
double boxDistance(const Vec3& x, const Vec3& centre, double half) {
  const Vec3 d = (x - centre).cwiseAbs() - Vec3::Constant(half);
  return d.cwiseMax(0.0).norm() + std::min(d.maxCoeff(), 0.0);
}

SignedDistanceGridOptions cells(double h) {
  SignedDistanceGridOptions o;
  o.cellSize = h;
  return o;
}

TEST(MeshContact, ParticlesDroppedOnAMeshCubeRestOnTopAtTheirRadius) {
  const double h = 0.05, r = 0.04;
  const Vec3 centre(0.0, 0.5, 0.0);  // the unit cube's top face at y = 1
  ModelBuilder b;
  b.addCollider(io::readMeshCollider(meshPath("sdf_cube.obj"), centre, Quat::Identity(), cells(h)));
  std::vector<ParticleIndex> particles;
  // Over the face, including close to its edges and corners (a particle over the rounded edge band
  // still rests on the face: the face's distance is exact there).
  for (double x : {-0.45, -0.2, 0.0, 0.3, 0.46})
    for (double z : {-0.46, 0.0, 0.25, 0.45}) {
      const ParticleIndex p = b.addParticle(Vec3(x, 1.3 + 0.1 * x + 0.05 * z, z), 0.1);
      b.setParticleRadius(p, r);
      particles.push_back(p);
    }
  b.model().particleCollisions = false;
  const ModelPtr model = b.build();
  SolverSettings s = scenario::makeSettings(SolverMode::Xpbd, 1.0 / 60.0, 10, 1);
  Solver solver(model, s);
  State state = State::fromModel(*model);
  double deepest = std::numeric_limits<double>::infinity();
  for (int step = 0; step < 90; ++step) {
    ASSERT_TRUE(solver.step(state).ok());
    for (ParticleIndex p : particles) deepest = std::min(deepest, boxDistance(state.position[p], centre, 0.5) - r);
  }
  // Never inside: the face region of the grid is exact, so no more than the solver's contact tolerance.
  EXPECT_GT(deepest, -1e-9);
  for (ParticleIndex p : particles) {
    SCOPED_TRACE(p);
    EXPECT_NEAR(state.position[p].y(), 1.0 + r, 1e-9);
    EXPECT_LT(state.velocity[p].norm(), 1e-6);
  }
}

TEST(MeshContact, IcosphereKeepsDroppedParticlesOutside) {
  // Particles rain onto a faceted sphere; each ends every step outside the polyhedron by at most
  // half a cell of interpolation error, and those that settle on top rest at the radius.
  const double h = 0.04, r = 0.03;
  ModelBuilder b;
  // Friction 1 holds particles where the slope is below 45 degrees.
  b.addCollider(
      io::readMeshCollider(meshPath("sdf_icosphere.obj"), Vec3::Zero(), Quat::Identity(), cells(h), {1.0, 1.0, 0.0}));
  std::vector<ParticleIndex> particles;
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 5; ++k) {
      const ParticleIndex p = b.addParticle(Vec3(-0.4 + 0.2 * i, 0.8 + 0.01 * i, -0.4 + 0.2 * k), 0.05);
      b.setParticleRadius(p, r);
      particles.push_back(p);
    }
  b.model().particleCollisions = false;
  const ModelPtr model = b.build();
  Solver solver(model, scenario::makeSettings(SolverMode::Xpbd, 1.0 / 60.0, 10, 1));
  State state = State::fromModel(*model);
  const auto& grid = *model->colliders[0].grid;
  double deepest = std::numeric_limits<double>::infinity();
  for (int step = 0; step < 60; ++step) {
    ASSERT_TRUE(solver.step(state).ok());
    for (ParticleIndex p : particles) {
      const Vec3& x = state.position[p];
      const double exact = bruteForceMeshDistance(grid.vertices, grid.triangles, x);
      // The polyhedron is convex: inside iff behind every face plane.
      bool inside = true;
      for (const auto& t : grid.triangles) {
        const Vec3& a = grid.vertices[t[0]];
        inside = inside && (grid.vertices[t[1]] - a).cross(grid.vertices[t[2]] - a).dot(x - a) < 0.0;
      }
      const double signedExact = inside ? -exact : exact;
      deepest = std::min(deepest, signedExact - r);
    }
  }
  EXPECT_GT(deepest, -0.5 * h);
  EXPECT_LT(deepest, 0.0);  // the check can fail: some particle did touch the mesh
  // The particle dropped onto the pole rests there, at its radius by the grid (to 1e-6 m: one
  // projection along the gradient of a trilinear, not linear, field lands within O(d^2) of it).
  const ParticleIndex top = particles[12];
  Vec3 n;
  EXPECT_NEAR(colliderDistance(model->colliders[0], model->colliders[0].pose, state.position[top], n), r, 1e-6);
  EXPECT_NEAR(state.position[top].y(), 0.5 + r, 0.5 * h);
  EXPECT_LT(state.velocity[top].norm(), 1e-6);
}

TEST(MeshContact, KinematicMeshCubePushesAParticle) {
  const double h = 0.05, r = 0.05, speed = 1.0;
  ModelBuilder b;
  const ParticleIndex p = b.addParticle(Vec3(0.0, 0.0, 0.0), 0.2);
  b.setParticleRadius(p, r);
  // The cube's centre moves from x = -1 at 1 m/s: its +x face reaches the particle's surface at
  // t = 0.45 s and then carries the particle along.
  b.addCollider(io::readMeshCollider(meshPath("sdf_cube.obj"), Vec3::Zero(), Quat::Identity(), cells(h)),
                [speed](double t) { return Vec3(-1.0 + speed * t, 0.0, 0.0); });
  const ModelPtr model = b.build();
  Solver solver(model, scenario::makeSettings(SolverMode::Xpbd, 1.0 / 60.0, 10, 1, Vec3::Zero()));
  State state = State::fromModel(*model);
  for (int step = 0; step < 24; ++step) ASSERT_TRUE(solver.step(state).ok());  // t = 0.4 s: not touched yet
  EXPECT_EQ(state.position[p], Vec3::Zero());
  for (int step = 24; step < 90; ++step) ASSERT_TRUE(solver.step(state).ok());  // t = 1.5 s
  const double face = -1.0 + speed * state.time + 0.5;
  EXPECT_NEAR(state.position[p].x(), face + r, 1e-9);
  EXPECT_NEAR(state.position[p].y(), 0.0, 1e-12);
  EXPECT_NEAR(state.velocity[p].x(), speed, 1e-6);
}

TEST(MeshContact, SpinningMeshCarriesAParticleByFriction) {
  // A flat mesh box (the cube scaled to 2 x 0.2 x 2 m) spins about the vertical axis; a particle
  // resting on it with high friction goes round with it at the plate's angular speed.
  const double omega = 1.0, r = 0.02, radius = 0.5;
  ModelBuilder b;
  const ParticleIndex p = b.addParticle(Vec3(radius, 0.1 + r, 0.0), 0.1);
  b.setParticleRadius(p, r);
  const Collider plate = io::readMeshCollider(meshPath("sdf_cube.obj"), Vec3::Zero(), Quat::Identity(), cells(0.05),
                                              {5.0, 5.0, 0.0}, Vec3(2.0, 0.2, 2.0));
  b.addCollider(plate, {}, [omega](double t) { return Quat(Eigen::AngleAxisd(omega * t, Vec3::UnitY())); });
  const ModelPtr model = b.build();
  Solver solver(model, scenario::makeSettings(SolverMode::Xpbd, 1.0 / 60.0, 10, 1));
  State state = State::fromModel(*model);
  for (int step = 0; step < 60; ++step) ASSERT_TRUE(solver.step(state).ok());  // t = 1 s: one radian
  // It slides for the first few hundredths of a second (static friction cannot take the plate's
  // speed within one substep), then sticks: a small lag in angle, none in radius or height.
  const Vec3& x = state.position[p];
  const double angle = std::atan2(-x.z(), x.x());
  EXPECT_NEAR(std::hypot(x.x(), x.z()), radius, 2e-3);
  EXPECT_NEAR(x.y(), 0.1 + r, 1e-9);
  EXPECT_NEAR(angle, omega * state.time, 0.03);
  EXPECT_LT(angle, omega * state.time);
  EXPECT_NEAR(state.velocity[p].norm(), omega * radius, 1e-2);
}

}  // namespace
}  // namespace pliant
