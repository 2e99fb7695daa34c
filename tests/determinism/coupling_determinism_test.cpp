// Determinism of particles coupled with rigid bodies (issue 17): the built-in cloth-over-body (a
// cloth landing on a falling box, two-way contacts) and rope-box (a rope carrying a box through a
// body attachment) end in the same bits for 1 and 2 threads, and a checkpoint steps on bit-identically.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "pliant/io/checkpoint.h"
#include "pliant/io/scenes.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

std::uint64_t hashAfter(const Scene& scene, int frames, std::size_t& bodyContacts) {
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  bodyContacts = 0;
  for (int frame = 0; frame < frames; ++frame) {
    EXPECT_TRUE(solver.step(state).ok());
    bodyContacts += solver.lastParticleBodyContacts().size();
  }
  return state.hash();
}

TEST(CouplingDeterminism, CoupledScenesGiveTheSameBitsForOneAndTwoThreads) {
  const int saved = threadCount();
  for (const char* name : {"cloth-over-body", "rope-box"}) {
    const Scene scene = makeBuiltinScene(name);
    std::size_t contacts1 = 0, contacts2 = 0;
    setThreadCount(1);
    const std::uint64_t one = hashAfter(scene, 45, contacts1);
    setThreadCount(2);
    const std::uint64_t two = hashAfter(scene, 45, contacts2);
    EXPECT_EQ(one, two) << name;
    EXPECT_EQ(contacts1, contacts2) << name;
    EXPECT_NE(one, State::fromModel(*scene.model).hash()) << name;
    if (std::string(name) == "cloth-over-body") {
      EXPECT_GT(contacts1, 0u);  // the cloth reached the box
    }
  }
  setThreadCount(saved);
}

TEST(CouplingDeterminism, CheckpointedCoupledStateStepsOnBitIdentically) {
  const Scene scene = makeBuiltinScene("rope-box");
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  ASSERT_TRUE(solver.run(state, 20).ok());
  State restored = io::decodeCheckpoint(io::encodeCheckpoint(state), "memory", scene.model.get());
  ASSERT_TRUE(solver.run(state, 20).ok());
  Solver again(scene.model, scene.settings);
  ASSERT_TRUE(again.run(restored, 20).ok());
  EXPECT_EQ(restored.hash(), state.hash());
}

}  // namespace
}  // namespace pliant
