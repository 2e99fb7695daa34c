// Unit tests of the step pipeline's stage timing (Solver::setStageTiming, StageTimes): off by
// default, what it counts when on, that the stages lie inside the step, and that timing changes no
// bit of the result. No test here asserts how fast anything is.
#include <gtest/gtest.h>

#include <chrono>

#include "pliant/io/scenes.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

// The built-in cloth-sphere scene: a cloth dropped onto a sphere on the ground, so that the
// prediction, the collider and particle contacts, the constraints, the contact projection and the
// velocities all have work.
struct Draping {
  Scene scene = makeBuiltinScene("cloth-sphere");
  Solver solver{scene.model, scene.settings};
  State state = State::fromModel(*scene.model);
};

TEST(StageTimes, OffByDefaultAndZeroUntilSwitchedOn) {
  Draping d;
  EXPECT_FALSE(d.solver.stageTiming());
  ASSERT_TRUE(d.solver.run(d.state, 3).ok());
  const StageTimes& t = d.solver.stageTimes();
  EXPECT_EQ(t.steps, 0);
  EXPECT_EQ(t.total(), 0.0);
}

TEST(StageTimes, StagesWithWorkAreTimedAndLieInsideTheSteps) {
  Draping d;
  ASSERT_TRUE(d.solver.run(d.state, 40).ok());  // the cloth reaches the sphere at about frame 30
  d.solver.setStageTiming(true);
  double stepSeconds = 0.0;
  constexpr int kSteps = 10;
  for (int step = 0; step < kSteps; ++step) {
    const auto begin = std::chrono::steady_clock::now();
    ASSERT_TRUE(d.solver.step(d.state).ok());
    stepSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }
  ASSERT_FALSE(d.solver.lastColliderContacts().empty());
  const StageTimes& t = d.solver.stageTimes();
  EXPECT_EQ(t.steps, kSteps);
  for (const double stage :
       {t.predict, t.colliderContacts, t.particleContacts, t.constraints, t.contactProjection, t.velocities})
    EXPECT_GT(stage, 0.0);
  for (const double stage : {t.surfaceContacts, t.bodyContacts, t.stepEnd}) EXPECT_GE(stage, 0.0);
  EXPECT_DOUBLE_EQ(t.total(), t.predict + t.colliderContacts + t.particleContacts + t.surfaceContacts + t.bodyContacts +
                                  t.constraints + t.contactProjection + t.velocities + t.stepEnd);
  // The stages are laps of one clock within each step, timed here around the step on the same clock.
  EXPECT_LE(t.total(), stepSeconds);

  // Switching off keeps what was timed; switching on again starts from zero.
  d.solver.setStageTiming(false);
  const StageTimes kept = t;
  ASSERT_TRUE(d.solver.step(d.state).ok());
  EXPECT_EQ(d.solver.stageTimes().steps, kept.steps);
  EXPECT_EQ(d.solver.stageTimes().total(), kept.total());
  d.solver.setStageTiming(true);
  EXPECT_EQ(d.solver.stageTimes().steps, 0);
  EXPECT_EQ(d.solver.stageTimes().total(), 0.0);
}

TEST(StageTimes, TimingChangesNoBitOnAnyThreadCount) {
  const int saved = threadCount();
  for (const int threads : {1, 2}) {
    setThreadCount(threads);
    Draping timed, plain;
    timed.solver.setStageTiming(true);
    ASSERT_TRUE(timed.solver.run(timed.state, 45).ok());
    ASSERT_TRUE(plain.solver.run(plain.state, 45).ok());
    EXPECT_EQ(timed.state.hash(), plain.state.hash()) << threads << " threads";
    EXPECT_EQ(timed.solver.stageTimes().steps, 45);
  }
  setThreadCount(saved);
}

}  // namespace
}  // namespace pliant
