// Scenario tests of islands and sleeping of rigid bodies (docs/validation.md V16;
// src/core/rigid/sleeping.cpp; SolverSettings::sleeping with its defaults 0.05 m/s, 0.05 rad/s,
// 0.5 s): a box at rest falls asleep within the stated time and keeps its pose bit for bit; a box
// landing on a sleeping stack wakes it; setting a sleeping body's velocity wakes it; a pendulum,
// a falling, a spinning and a slowly gliding body never sleep.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>

#include "body_definitions.h"
#include "pliant/pliant.h"

namespace pliant {
namespace {

using test::box;

constexpr int kSubsteps = 20;
constexpr double kStep = 1.0 / 60.0;

SolverSettings settings() { return SolverSettings::smallSteps(kSubsteps); }

bool bitsEqual(const Vec3& a, const Vec3& b) { return std::memcmp(a.data(), b.data(), 3 * sizeof(double)) == 0; }
bool bitsEqual(const Quat& a, const Quat& b) {
  return std::memcmp(a.coeffs().data(), b.coeffs().data(), 4 * sizeof(double)) == 0;
}

// V16: a box dropped 0.4 m onto the ground lands after sqrt(2 * 0.4 / g) = 0.29 s and comes to rest
// within a few frames; it then sleeps after the sleep time of 0.5 s: asleep by 1.2 s, not before
// 0.5 s. Asleep, its pose stays bit for bit for 2 s and its velocities are 0, resting on the ground
// (centre at its half height within 1e-4 m). Setting its velocity wakes it and it moves.
TEST(V16_BodySleep, BoxOnTheGroundSleepsWithinTheSleepTimeAndKeepsItsPose) {
  const ContactMaterial material{0.5, 0.4, 0.0};
  const Vec3 half(0.2, 0.1, 0.15);
  ModelBuilder builder;
  builder.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), material));
  BodyDefinition def = box(Vec3(0.0, 0.5, 0.0), half, 2.0);
  def.material = material;
  builder.addBody(def);
  const ModelPtr model = builder.build();
  const SolverSettings s = settings();
  Solver solver(model, s);
  State state = State::fromModel(*model);
  int frame = 0;
  for (; frame < 72 && !state.bodyAsleep(0); ++frame) {
    ASSERT_TRUE(solver.step(state).ok());
    ASSERT_TRUE(frame + 1 >= static_cast<int>(s.sleepTime / kStep) || !state.bodyAsleep(0)) << frame;
  }
  ASSERT_TRUE(state.bodyAsleep(0)) << "not asleep after 1.2 s";
  EXPECT_GT(frame * kStep, 0.29 + s.sleepTime - 2 * kStep);
  EXPECT_NEAR(state.bodyPosition[0].y(), half.y(), 1e-4);
  const Vec3 x = state.bodyPosition[0];
  const Quat q = state.bodyRotation[0];
  ASSERT_TRUE(solver.run(state, 120).ok());
  EXPECT_TRUE(state.bodyAsleep(0));
  EXPECT_TRUE(bitsEqual(state.bodyPosition[0], x));
  EXPECT_TRUE(bitsEqual(state.bodyRotation[0], q));
  EXPECT_EQ(state.bodyVelocity[0], Vec3::Zero());
  EXPECT_EQ(state.bodyAngularVelocity[0], Vec3::Zero());
  EXPECT_TRUE(solver.lastBodyContacts().empty());  // a sleeping body's contacts are not sought
  // The user pushes it: it wakes and slides (1 m/s against mu_d g = 3.9 m/s^2 decelerating).
  state.bodyVelocity[0] = Vec3(1.0, 0.0, 0.0);
  ASSERT_TRUE(solver.step(state).ok());
  EXPECT_FALSE(state.bodyAsleep(0));
  EXPECT_GT(state.bodyPosition[0].x() - x.x(), 0.9 * kStep);
  EXPECT_NEAR(state.bodyVelocity[0].x(), 1.0 - 0.4 * 9.81 * kStep, 0.02);
}

// V16: a stack of three 0.2 m cubes on the ground sleeps after 0.5 s (it starts at rest); a cube
// released 4.4 m above it lands at t = sqrt(2 * 4.4 / g) = 0.95 s at 9.3 m/s and wakes the stack,
// which takes the blow (its top cube is pushed down and moves); 3 s later the four rest as one
// column (the dropped cube's centre at 0.7 m within 5 mm) and sleep again as one island.
TEST(V16_BodySleep, BoxLandingOnASleepingStackWakesIt) {
  const ContactMaterial material{0.6, 0.5, 0.0};
  const Vec3 half = Vec3::Constant(0.1);
  ModelBuilder builder;
  builder.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), material));
  for (int level = 0; level < 3; ++level) {
    BodyDefinition def = box(Vec3(0.0, 0.1 + 0.2 * level, 0.0), half, 1.0);
    def.material = material;
    builder.addBody(def);
  }
  BodyDefinition dropped = box(Vec3(0.02, 5.0, 0.0), half, 1.0);
  dropped.material = material;
  builder.addBody(dropped);
  const ModelPtr model = builder.build();
  Solver solver(model, settings());
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 48).ok());  // 0.8 s
  for (int b = 0; b < 3; ++b) EXPECT_TRUE(state.bodyAsleep(b)) << b;
  EXPECT_FALSE(state.bodyAsleep(3));
  EXPECT_EQ(state.bodySleepIsland[1], 0);  // one island, named by its lowest body
  const Vec3 top = state.bodyPosition[2];
  bool woke = false, topMoved = false;
  for (int frame = 0; frame < 24; ++frame) {  // to 1.2 s
    ASSERT_TRUE(solver.step(state).ok());
    woke = woke || !state.bodyAsleep(2);
    topMoved = topMoved || state.bodyVelocity[2].norm() > 0.01;
  }
  EXPECT_TRUE(woke);
  EXPECT_TRUE(topMoved);
  EXPECT_FALSE(bitsEqual(state.bodyPosition[2], top));
  ASSERT_TRUE(solver.run(state, 180).ok());
  EXPECT_NEAR(state.bodyPosition[3].y(), 0.7, 5e-3);
  EXPECT_NEAR(state.bodyPosition[2].y(), 0.5, 5e-3);
  for (int b = 0; b < 4; ++b) {
    EXPECT_TRUE(state.bodyAsleep(b)) << b;
    EXPECT_EQ(state.bodySleepIsland[b], 0) << b;
  }
}

// V16: bodies in motion never sleep. A pendulum (a 0.1 m cube on a hinge 1 m above its centre,
// released at 30 degrees: period 2.0 s, speed below 0.05 m/s for ~0.01 s around each turning
// point); a falling cube (3 s); a cube spinning at 1 rad/s and one gliding at 0.1 m/s without
// gravity. A cube gliding at 0.01 m/s, below the sleep speed, sleeps after 0.5 s: the threshold is
// what decides.
TEST(V16_BodySleep, PendulumFallingSpinningAndGlidingBodiesNeverSleep) {
  const Vec3 half = Vec3::Constant(0.05);
  {
    ModelBuilder builder;
    const double angle = std::numbers::pi / 6.0;
    const BodyIndex bob = builder.addBody(box(Vec3(std::sin(angle), 1.0 - std::cos(angle), 0.0), half, 1.0));
    JointDefinition hinge;
    hinge.kind = JointKind::Hinge;
    hinge.bodyA = kWorldBody;
    hinge.bodyB = bob;
    hinge.anchor = Vec3(0.0, 1.0, 0.0);
    hinge.axis = Vec3::UnitZ();
    builder.addJoint(hinge);
    builder.addBody(box(Vec3(5.0, 100.0, 0.0), half, 1.0));  // falls
    const ModelPtr model = builder.build();
    Solver solver(model, settings());
    State state = State::fromModel(*model);
    double lowest = 1.0;
    for (int frame = 0; frame < 180; ++frame) {
      ASSERT_TRUE(solver.step(state).ok());
      ASSERT_FALSE(state.bodyAsleep(0)) << "pendulum asleep at frame " << frame;
      ASSERT_FALSE(state.bodyAsleep(1)) << "falling body asleep at frame " << frame;
      lowest = std::min(lowest, state.bodyPosition[0].y());
    }
    EXPECT_LT(lowest, 0.01);  // it swung through the bottom
  }
  SolverSettings weightless = settings();
  weightless.gravity = Vec3::Zero();
  ModelBuilder builder;
  BodyDefinition spinning = box(Vec3(0.0, 0.0, 0.0), half, 1.0);
  spinning.angularVelocity = Vec3(0.0, 1.0, 0.0);
  BodyDefinition gliding = box(Vec3(1.0, 0.0, 0.0), half, 1.0);
  gliding.velocity = Vec3(0.1, 0.0, 0.0);
  BodyDefinition creeping = box(Vec3(2.0, 0.0, 0.0), half, 1.0);
  creeping.velocity = Vec3(0.01, 0.0, 0.0);
  builder.addBody(spinning);
  builder.addBody(gliding);
  builder.addBody(creeping);
  const ModelPtr model = builder.build();
  Solver solver(model, weightless);
  State state = State::fromModel(*model);
  for (int frame = 0; frame < 120; ++frame) {
    ASSERT_TRUE(solver.step(state).ok());
    ASSERT_FALSE(state.bodyAsleep(0)) << frame;
    ASSERT_FALSE(state.bodyAsleep(1)) << frame;
  }
  EXPECT_TRUE(state.bodyAsleep(2));
  EXPECT_NEAR(state.bodyPosition[1].x(), 1.0 + 0.1 * 2.0, 1e-9);
  // Sleeping off: nothing sleeps, and the states carry no sleep data.
  weightless.sleeping = false;
  Solver awake(model, weightless);
  State other = State::fromModel(*model);
  ASSERT_TRUE(awake.run(other, 120).ok());
  EXPECT_FALSE(other.bodyAsleep(2));
  EXPECT_EQ(other.bodySleepTime[2], 0.0);
}

}  // namespace
}  // namespace pliant
