// Determinism of scenes with rigid bodies and joints (issue 17): the built-in hinge chain ends in
// the same bits for any thread count, and a state saved to a checkpoint and restored steps on to the
// bits of the uninterrupted run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "pliant/io/checkpoint.h"
#include "pliant/io/scenes.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

std::uint64_t hingeChainHash(const Scene& scene, int frames) {
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  EXPECT_TRUE(solver.run(state, frames).ok());
  return state.hash();
}

TEST(BodyDeterminism, HingeChainGivesTheSameBitsForEveryThreadCount) {
  const int saved = threadCount();
  const Scene scene = makeBuiltinScene("hinge-chain");
  std::vector<std::uint64_t> hashes;
  for (int threads : {1, 2, 3, 4}) {
    setThreadCount(threads);
    hashes.push_back(hingeChainHash(scene, 60));
  }
  setThreadCount(saved);
  for (std::size_t i = 1; i < hashes.size(); ++i) EXPECT_EQ(hashes[0], hashes[i]) << i + 1 << " threads";
  EXPECT_NE(hashes[0], State::fromModel(*scene.model).hash());  // the chain moved
}

TEST(BodyDeterminism, CheckpointedBodyStateStepsOnBitIdentically) {
  const Scene scene = makeBuiltinScene("hinge-chain");
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  ASSERT_TRUE(solver.run(state, 20).ok());
  State restored = io::decodeCheckpoint(io::encodeCheckpoint(state), "memory", scene.model.get());
  EXPECT_EQ(restored.hash(), state.hash());
  EXPECT_EQ(restored.jointLinearImpulse.size(), 10u);
  EXPECT_EQ(restored.jointForce(0), state.jointForce(0));
  EXPECT_EQ(restored.bodyPreviousRotation.size(), 10u);
  ASSERT_TRUE(solver.run(state, 20).ok());
  Solver again(scene.model, scene.settings);
  ASSERT_TRUE(again.run(restored, 20).ok());
  EXPECT_EQ(restored.hash(), state.hash());
  for (std::size_t b = 0; b < state.bodyPosition.size(); ++b) {
    EXPECT_EQ(restored.bodyPosition[b], state.bodyPosition[b]);
    EXPECT_EQ(restored.bodyRotation[b].coeffs(), state.bodyRotation[b].coeffs());
  }
}

// Resting contacts keep static friction's anchors in the State (State::bodyContactAnchors): a
// checkpoint of the resting box pyramid holds them (format version 3; 5 with their multipliers), and the restored state
// steps on to the bits of the uninterrupted run.
TEST(BodyDeterminism, CheckpointedPyramidKeepsItsFrictionAnchors) {
  const Scene scene = makeBuiltinScene("box-pyramid");
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  ASSERT_TRUE(solver.run(state, 5).ok());
  ASSERT_FALSE(state.bodyContactAnchors.empty());
  State restored = io::decodeCheckpoint(io::encodeCheckpoint(state), "memory", scene.model.get());
  EXPECT_EQ(restored.hash(), state.hash());
  ASSERT_EQ(restored.bodyContactAnchors.size(), state.bodyContactAnchors.size());
  // With their normal multipliers, the next solve's warm start (format version 5).
  double pushed = 0.0;
  for (std::size_t i = 0; i < state.bodyContactAnchors.size(); ++i) {
    EXPECT_EQ(restored.bodyContactAnchors[i].lambda, state.bodyContactAnchors[i].lambda);
    pushed = std::max(pushed, state.bodyContactAnchors[i].lambda);
  }
  EXPECT_GT(pushed, 0.0);
  ASSERT_TRUE(solver.run(state, 5).ok());
  Solver again(scene.model, scene.settings);
  ASSERT_TRUE(again.run(restored, 5).ok());
  EXPECT_EQ(restored.hash(), state.hash());
  // Without its anchors the same state steps on to other bits: they decide the next step.
  State forgetful = io::decodeCheckpoint(io::encodeCheckpoint(state), "memory", scene.model.get());
  forgetful.bodyContactAnchors.clear();
  State kept = state;
  ASSERT_TRUE(solver.run(kept, 1).ok());
  ASSERT_TRUE(again.run(forgetful, 1).ok());
  EXPECT_NE(forgetful.bodyPosition, kept.bodyPosition);
}

// Sleeping (rigid/sleeping.cpp): the box pyramid settles and falls asleep as one island after
// 0.5 s; its run ends in the same bits (sleep timers and islands included) on 1 and 2 threads, and
// a checkpoint of the sleeping pyramid (format version 4) restores the sleep state and steps on to
// the bits of the uninterrupted run, through a wake-up by the user.
TEST(BodyDeterminism, SleepingPyramidSameBitsForThreadCountsAndCheckpoints) {
  const int saved = threadCount();
  const Scene scene = makeBuiltinScene("box-pyramid");
  std::vector<std::uint64_t> hashes;
  State state;
  for (int threads : {1, 2}) {
    setThreadCount(threads);
    Solver solver(scene.model, scene.settings);
    state = State::fromModel(*scene.model);
    ASSERT_TRUE(solver.run(state, 45).ok());
    hashes.push_back(state.hash());
  }
  setThreadCount(saved);
  EXPECT_EQ(hashes[0], hashes[1]);
  ASSERT_TRUE(state.bodyAsleep(0));
  ASSERT_TRUE(state.bodyAsleep(54));
  State restored = io::decodeCheckpoint(io::encodeCheckpoint(state), "memory", scene.model.get());
  EXPECT_EQ(restored.hash(), state.hash());
  EXPECT_EQ(restored.bodySleepIsland, state.bodySleepIsland);
  EXPECT_EQ(restored.bodySleepTime, state.bodySleepTime);
  // The user knocks the top box sideways: the pyramid wakes.
  for (State* s : {&state, &restored}) s->bodyVelocity[54] = Vec3(0.5, 0.0, 0.0);
  Solver solver(scene.model, scene.settings), again(scene.model, scene.settings);
  ASSERT_TRUE(solver.run(state, 10).ok());
  ASSERT_TRUE(again.run(restored, 10).ok());
  EXPECT_FALSE(state.bodyAsleep(0));
  EXPECT_EQ(restored.hash(), state.hash());
  // Without its sleep data the state steps on to other bits: it decides the next step.
  ASSERT_TRUE(solver.run(state, 40).ok());
  ASSERT_TRUE(state.bodyAsleep(0) || state.bodySleepTime[0] > 0.0);
  State forgetful = state;
  forgetful.bodySleepTime.assign(forgetful.bodySleepTime.size(), 0.0);
  forgetful.bodySleepIsland.assign(forgetful.bodySleepIsland.size(), -1);
  EXPECT_NE(forgetful.hash(), state.hash());
}

}  // namespace
}  // namespace pliant
