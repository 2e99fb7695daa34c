// Unit tests of the generic (user function) family, src/constraints/generic.cpp: a user-written
// distance constraint must follow the built-in distance family's trajectory to round-off, and a
// user inequality (a floor) must push only while violated and never pull (lambda >= 0).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "pliant/builders.h"
#include "pliant/diagnostics.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

// A chain of 5 particles starting horizontal (swinging down), top fixed, with its links as
// built-in distance constraints or as user constraints computing the same C and gradient.
ModelPtr swingingChain(bool generic, const ConstraintParameters& params) {
  ModelBuilder b;
  ChainDef def;
  def.particles = 5;
  def.start = Vec3(0, 0, 0);
  def.end = Vec3(1.0, 0.0, 0.3);
  def.stretch = params;
  addChain(b, def);
  if (generic) {
    Model& m = b.model();
    const std::vector<DistanceConstraint> links = m.distances;
    m.distances.clear();
    for (const DistanceConstraint& link : links) {
      const double rest = link.restLength;
      auto distance = [rest](std::span<const Vec3> x, std::span<Vec3> g) {
        const Vec3 delta = x[0] - x[1];
        const double length = delta.norm();
        g[0] = delta / length;
        g[1] = -g[0];
        return length - rest;
      };
      b.addGeneric(distance, std::span<const ParticleIndex>(link.particles, 2), false, link.params);
    }
  }
  // Give the free end a sideways kick so the motion is three-dimensional.
  b.model().initialVelocity.back() = Vec3(0.0, 0.5, -1.0);
  return b.build();
}

void expectSameTrajectory(const SolverSettings& settings, const ConstraintParameters& params, double tolerance) {
  const ModelPtr builtIn = swingingChain(false, params);
  const ModelPtr user = swingingChain(true, params);
  ASSERT_EQ(builtIn->distances.size(), 4u);
  ASSERT_EQ(user->generics.size(), 4u);
  ASSERT_TRUE(user->distances.empty());
  Solver a(builtIn, settings);
  Solver b(user, settings);
  State sa = State::fromModel(*builtIn);
  State sb = State::fromModel(*user);
  double worst = 0.0;
  double worstLambda = 0.0;
  for (int step = 0; step < 100; ++step) {
    ASSERT_TRUE(a.step(sa).ok());
    ASSERT_TRUE(b.step(sb).ok());
    for (std::size_t i = 0; i < sa.position.size(); ++i)
      worst = std::max(worst, (sa.position[i] - sb.position[i]).norm());
    for (std::uint32_t c = 0; c < 4; ++c) {
      const double la = sa.lambda[builtIn->lambdaIndex({ConstraintFamily::Distance, c})];
      const double lb = sb.lambda[user->lambdaIndex({ConstraintFamily::Generic, c})];
      worstLambda = std::max(worstLambda, std::abs(la - lb) / std::max(std::abs(la), 1e-12));
    }
  }
  EXPECT_LT(worst, tolerance);
  EXPECT_LT(worstLambda, 1e3 * tolerance);
  // The chain really moved (so the comparison is not trivial).
  EXPECT_GT((sa.position.back() - builtIn->initialPosition.back()).norm(), 0.3);
}

TEST(GenericConstraint, UserDistanceReproducesTheBuiltInFamilyInXpbd) {
  // Compliant and damped, so the damping term (which reads the user gradient) is exercised too.
  SolverSettings settings;
  settings.substeps = 2;
  settings.iterations = 3;
  expectSameTrajectory(settings, ConstraintParameters{1e-5, 0.2, 1.0}, 1e-11);
  expectSameTrajectory(SolverSettings::smallSteps(10), ConstraintParameters{}, 1e-11);
}

TEST(GenericConstraint, UserDistanceReproducesTheBuiltInFamilyInPbd) {
  SolverSettings settings;
  settings.mode = SolverMode::Pbd;
  settings.iterations = 4;
  settings.iterationIndependentStiffness = true;
  expectSameTrajectory(settings, ConstraintParameters{0.0, 0.0, 0.6}, 1e-11);
}

// Floor y >= 0 as a user inequality C = y, one instance per particle sharing one function.
struct FloorScene {
  ModelPtr model;
  std::uint32_t firstFloor = 0;  // index of the first floor constraint in the generic family
};
FloorScene floorScene(const std::vector<Vec3>& positions, const std::vector<Vec3>& velocities,
                      const ConstraintParameters& params, bool withFloor) {
  ModelBuilder b;
  for (std::size_t i = 0; i < positions.size(); ++i)
    b.addParticle(positions[i], 0.5 + 0.25 * static_cast<double>(i), velocities[i]);
  FloorScene s;
  if (withFloor) {
    const std::uint32_t floor = b.addGenericFunction([](std::span<const Vec3> x, std::span<Vec3> g) {
      g[0] = Vec3(0, 1, 0);
      return x[0].y();
    });
    for (ParticleIndex p = 0; p < positions.size(); ++p) {
      const std::array<ParticleIndex, 1> one = {p};
      b.addGeneric(floor, one, true, params);
    }
  }
  s.model = b.build();
  return s;
}

TEST(GenericConstraint, V13_FloorInequalityStopsFallingParticlesAndHoldsTheirWeight) {
  // V13: dropped particles never end a step below the plane; at rest they stay on it (< 1e-9 m)
  // and the multiplier carries the weight, lambda/h^2 = m g.
  const std::vector<Vec3> x0 = {Vec3(0, 1.0, 0), Vec3(1, 0.2, 0), Vec3(2, 0.0, 0)};
  const std::vector<Vec3> v0 = {Vec3(0.3, 0, 0), Vec3(0, -4.0, 0), Vec3(0, 0, 0)};
  const FloorScene scene = floorScene(x0, v0, ConstraintParameters{}, true);
  SolverSettings settings;
  settings.iterations = 2;
  Solver solver(scene.model, settings);
  State state = State::fromModel(*scene.model);
  for (int step = 0; step < 120; ++step) {
    ASSERT_TRUE(solver.step(state).ok());
    for (std::uint32_t p = 0; p < 3; ++p) {
      EXPECT_GE(state.position[p].y(), -1e-12) << "step " << step << " particle " << p;
      EXPECT_GE(state.lambda[scene.model->lambdaIndex({ConstraintFamily::Generic, p})], 0.0);
    }
  }
  for (std::uint32_t p = 0; p < 3; ++p) {
    EXPECT_LT(std::abs(state.position[p].y()), 1e-9);
    EXPECT_LT(std::abs(state.velocity[p].y()), 1e-9);
    const double weight = scene.model->mass[p] * 9.81;
    EXPECT_NEAR(constraintForce(*scene.model, state, {ConstraintFamily::Generic, p}), weight, 1e-9 * weight);
  }
  // The floor is frictionless: the first particle kept sliding at 0.3 m/s.
  EXPECT_NEAR(state.velocity[0].x(), 0.3, 1e-12);
}

TEST(GenericConstraint, FloorInequalityNeverPulls) {
  // Above the floor -- rising, lifting off from it, or falling but not reaching it within the run --
  // the trajectory is bit-identical to free flight: the satisfied inequality is not projected.
  const std::vector<Vec3> x0 = {Vec3(0, 0.5, 0), Vec3(1, 0.0, 0), Vec3(2, 5.0, 0)};
  const std::vector<Vec3> v0 = {Vec3(0, 3.0, 0), Vec3(0, 6.0, 1.0), Vec3(0, -1.0, 0)};
  const FloorScene withFloor = floorScene(x0, v0, ConstraintParameters{}, true);
  const FloorScene free = floorScene(x0, v0, ConstraintParameters{}, false);
  SolverSettings settings;
  settings.substeps = 3;
  settings.iterations = 2;
  Solver a(withFloor.model, settings);
  Solver b(free.model, settings);
  State sa = State::fromModel(*withFloor.model);
  State sb = State::fromModel(*free.model);
  for (int step = 0; step < 30; ++step) {
    ASSERT_TRUE(a.step(sa).ok());
    ASSERT_TRUE(b.step(sb).ok());
    ASSERT_EQ(std::memcmp(sa.position.data(), sb.position.data(), sa.position.size() * sizeof(Vec3)), 0) << step;
    ASSERT_EQ(std::memcmp(sa.velocity.data(), sb.velocity.data(), sa.velocity.size() * sizeof(Vec3)), 0) << step;
    for (double l : sa.lambda) EXPECT_EQ(l, 0.0);
  }
  for (const Vec3& x : sa.position) EXPECT_GT(x.y(), 0.0);
}

TEST(GenericConstraint, SoftFloorMultiplierStaysNonNegative) {
  // A compliant floor lets the accumulated multiplier shrink within a substep (the alpha~ lambda
  // term); the clamp must keep it >= 0 so the floor never pulls a bouncing particle back.
  const double alpha = 1e-3;  // m/N
  const std::vector<Vec3> x0 = {Vec3(0, 0.3, 0), Vec3(1, 0.05, 0)};
  const std::vector<Vec3> v0 = {Vec3(0, -2.0, 0), Vec3(0, 0, 0)};
  const FloorScene scene = floorScene(x0, v0, ConstraintParameters{alpha, 0.0, 1.0}, true);
  SolverSettings settings;
  settings.iterations = 6;
  Solver solver(scene.model, settings);
  State state = State::fromModel(*scene.model);
  double lowest = 0.0;
  for (int step = 0; step < 600; ++step) {
    ASSERT_TRUE(solver.step(state).ok());
    for (std::uint32_t p = 0; p < 2; ++p) {
      EXPECT_GE(state.lambda[scene.model->lambdaIndex({ConstraintFamily::Generic, p})], 0.0) << step;
      lowest = std::min(lowest, state.position[p].y());
    }
  }
  // A soft floor is penetrated, but boundedly, and at rest by m g alpha (V3 for a contact).
  EXPECT_LT(lowest, 0.0);
  EXPECT_GT(lowest, -0.1);
  for (std::uint32_t p = 0; p < 2; ++p) {
    const double sag = scene.model->mass[p] * 9.81 * alpha;
    EXPECT_NEAR(state.position[p].y(), -sag, 1e-3 * sag) << p;
  }
}

}  // namespace
}  // namespace pliant
