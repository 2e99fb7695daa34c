// Determinism of scenes with rigid bodies and joints (issue 17): the built-in hinge chain ends in
// the same bits for any thread count, and a state saved to a checkpoint and restored steps on to the
// bits of the uninterrupted run.
#include <gtest/gtest.h>

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
// checkpoint of the resting box pyramid holds them (format version 3), and the restored state steps
// on to the bits of the uninterrupted run.
TEST(BodyDeterminism, CheckpointedPyramidKeepsItsFrictionAnchors) {
  const Scene scene = makeBuiltinScene("box-pyramid");
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  ASSERT_TRUE(solver.run(state, 5).ok());
  ASSERT_FALSE(state.bodyContactAnchors.empty());
  State restored = io::decodeCheckpoint(io::encodeCheckpoint(state), "memory", scene.model.get());
  EXPECT_EQ(restored.hash(), state.hash());
  ASSERT_EQ(restored.bodyContactAnchors.size(), state.bodyContactAnchors.size());
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

}  // namespace
}  // namespace pliant
