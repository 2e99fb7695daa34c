// The barrier between parallel batches (src/core/spin_barrier.h): no thread leaves a round before every
// thread has arrived, and what each wrote before it is visible to all after it, round after round,
// also with more threads than this machine's cores (the waiting threads then sleep in the kernel).
#include "spin_barrier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace pliant::detail {
namespace {

TEST(SpinBarrier, EveryThreadSeesEveryWriteOfTheRoundAfterIt) {
  for (int team : {2, 3, 5}) {
    SCOPED_TRACE(team);
    SpinBarrier barrier;
    // Teams larger than the cores sleep at the barrier (a futex) and each round costs wake-ups.
    const int kRounds = team == 2 ? 2000 : 400;
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

// Fails by assertion, not by hanging: the waits run on a detached thread and the test gives up
// on it after a generous time (a blocked thread is then abandoned to the end of the process).
TEST(SpinBarrier, ATeamOfOneNeverWaits) {
  auto barrier = std::make_shared<SpinBarrier>();
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([barrier, done] {
    for (int i = 0; i < 3; ++i) barrier->wait(1);
    done->set_value();
  }).detach();
  EXPECT_EQ(finished.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "wait(1) blocked: a team of one must never wait";
}

// A thread that spun past its budget sleeps in the kernel; the last to arrive must wake it.
TEST(SpinBarrier, ASleepingThreadIsWoken) {
  SpinBarrier barrier;
  std::atomic<int> passed{0};
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // long past the spin budget
    barrier.wait(2);
    passed.fetch_add(1);
  });
  barrier.wait(2);
  passed.fetch_add(1);
  late.join();
  EXPECT_EQ(passed.load(), 2);
  // The wait that slept is counted (the solver's steps drop to one thread on it), until reset.
  EXPECT_GE(barrier.slept(), 1);
  barrier.resetSlept();
  EXPECT_EQ(barrier.slept(), 0);
}

// The projection's point-to-point waits (ProgressFlags): a thread that waits for another's count
// sees everything that thread wrote before publishing it, round after round, and only then; the
// writer never waits, so the reader checks what it reads against what the count promises.
TEST(ProgressFlags, AWaiterSeesWhatWasWrittenBeforeTheCount) {
  ProgressFlags flags;
  flags.reset(2);
  constexpr int kRounds = 20000;
  std::vector<int> written(kRounds, -1);  // plain ints: the flags alone must order them
  int wrongReads = 0;
  std::thread writer([&] {
    for (int round = 0; round < kRounds; ++round) {
      written[static_cast<std::size_t>(round)] = round;
      flags.publish(0, static_cast<std::uint64_t>(round) + 1);
    }
  });
  for (int round = 0; round < kRounds; round += 7) {
    flags.waitFor(0, static_cast<std::uint64_t>(round) + 1);
    for (int k = 0; k <= round; ++k)
      if (written[static_cast<std::size_t>(k)] != k) ++wrongReads;
  }
  writer.join();
  EXPECT_EQ(wrongReads, 0);
  EXPECT_EQ(flags.count(0), static_cast<std::uint64_t>(kRounds));
  EXPECT_EQ(flags.count(1), 0u);
  flags.reset(3);  // a new team starts from 0
  EXPECT_EQ(flags.count(0), 0u);
}

TEST(ProgressFlags, ASleepingWaiterIsWokenAndSaysItSlept) {
  ProgressFlags flags;
  flags.reset(2);
  std::atomic<bool> woken{false};
  bool slept = false;
  std::thread waiter([&] {
    slept = flags.waitFor(1, 1);
    woken.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // long past the spin budget
  EXPECT_FALSE(woken.load());
  flags.publish(1, 1);
  waiter.join();
  EXPECT_TRUE(woken.load());
  EXPECT_TRUE(slept);
  EXPECT_FALSE(flags.waitFor(1, 1));  // already there: no wait at all
}

}  // namespace
}  // namespace pliant::detail
