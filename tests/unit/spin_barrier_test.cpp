// The barrier between parallel batches (src/spin_barrier.h): no thread leaves a round before every
// thread has arrived, and what each wrote before it is visible to all after it, round after round,
// also with more threads than this machine's cores (the waiting threads then yield).
#include "spin_barrier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace pliant::detail {
namespace {

TEST(SpinBarrier, EveryThreadSeesEveryWriteOfTheRoundAfterIt) {
  for (int team : {2, 3, 5}) {
    SCOPED_TRACE(team);
    SpinBarrier barrier;
    constexpr int kRounds = 2000;
    // Plain (non-atomic) slots: the barrier alone must order the writes before the reads.
    std::vector<int> slot(static_cast<std::size_t>(team), -1);
    std::atomic<int> wrongReads{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < team; ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < kRounds; ++round) {
          slot[static_cast<std::size_t>(t)] = round;
          barrier.wait(team);
          for (int other = 0; other < team; ++other)
            if (slot[static_cast<std::size_t>(other)] != round) wrongReads.fetch_add(1);
          barrier.wait(team);  // nobody writes the next round before all have read this one
        }
      });
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(wrongReads.load(), 0);
  }
}

TEST(SpinBarrier, ATeamOfOneNeverWaits) {
  SpinBarrier barrier;
  for (int i = 0; i < 3; ++i) barrier.wait(1);
  SUCCEED();
}

}  // namespace
}  // namespace pliant::detail
