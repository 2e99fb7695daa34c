// A step in automatic thread mode goes on with one thread once the constraint barrier's waiters
// have slept (solver.cpp, Solver::advance; src/core/thread_drop.h): every step of these runs is made
// to drop after its first substep (a threshold of 0 sleeps), and the state must be the bits of one
// thread and of a fixed team, step after step. Scenes whose first substep runs the prediction
// inside the projection's region (cloth: no contacts) and in its own pass (cloth-sphere: collider
// and particle contacts; contact-fold-64: self-collision, 4,096 particles).
#include "thread_drop.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pliant/bench/benchmark.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

class ThreadDrop : public ::testing::TestWithParam<std::string> {};

TEST_P(ThreadDrop, AStepThatGoesOnWithOneThreadGivesTheSameBits) {
  setAutomaticThreadCount();
  if (threadCount() < 2) GTEST_SKIP() << "one core: automatic mode never runs a team";
  const Scene scene = makeBenchmarkScene(GetParam());
  // Per mode (one thread, two, automatic with every step dropping): the hash after each step.
  std::vector<std::vector<std::uint64_t>> hashes;
  std::vector<int> lastThreads;
  for (int mode : {1, 2, 0}) {
    if (mode == 0) {
      setAutomaticThreadCount();
      detail::threadDropSleeps().store(0);
    } else {
      setThreadCount(mode);
    }
    Solver solver(scene.model, scene.settings);
    State state = State::fromModel(*scene.model);
    hashes.emplace_back();
    for (int step = 0; step < 8; ++step) {
      const StepResult r = solver.step(state);
      ASSERT_TRUE(r.ok()) << r.message;
      hashes.back().push_back(state.hash());
      if (step == 0) lastThreads.push_back(solver.lastThreadCount());
    }
  }
  detail::threadDropSleeps().store(8);
  setAutomaticThreadCount();
  EXPECT_EQ(lastThreads[1], 2);
  EXPECT_EQ(lastThreads[2], 1);  // the automatic run's first step (on every core) dropped to one
  EXPECT_EQ(hashes[0], hashes[1]);
  EXPECT_EQ(hashes[0], hashes[2]);
}

INSTANTIATE_TEST_SUITE_P(BuiltinScenes, ThreadDrop, ::testing::Values("cloth", "cloth-sphere", "contact-fold-64"),
                         [](const auto& param) {
                           std::string name = param.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace pliant
