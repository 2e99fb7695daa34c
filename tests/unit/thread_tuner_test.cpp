// The automatic thread count (src/core/thread_tuner.h), fed synthetic step times: it keeps the
// faster count, leaves a count that another process made slow, and comes back when it is fast again.
#include "thread_tuner.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace pliant::detail {
namespace {

// Runs `steps` steps whose time is cost(threads, step); returns the count chosen at each step.
std::vector<int> simulate(ThreadTuner& tuner, int maxThreads, int steps, const std::function<double(int, int)>& cost) {
  std::vector<int> chosen;
  for (int step = 0; step < steps; ++step) {
    const int threads = tuner.choose(maxThreads);
    EXPECT_GE(threads, 1);
    EXPECT_LE(threads, maxThreads);
    chosen.push_back(threads);
    tuner.record(threads, cost(threads, step));
  }
  return chosen;
}

int countOf(const std::vector<int>& chosen, int threads, int from = 0) {
  int n = 0;
  for (std::size_t i = static_cast<std::size_t>(from); i < chosen.size(); ++i) n += chosen[i] == threads;
  return n;
}

TEST(ThreadTuner, KeepsAllThreadsWhenTheyAreFaster) {
  ThreadTuner tuner;
  const auto chosen = simulate(tuner, 2, 1000, [](int threads, int) { return threads == 2 ? 1.0 : 1.9; });
  EXPECT_EQ(chosen.front(), 2);
  // Only the probes run on one thread: one early, then one per interval.
  EXPECT_LE(countOf(chosen, 1), 1000 / ThreadTuner::kProbeInterval + 2);
  EXPECT_GE(countOf(chosen, 1), 1);
}

TEST(ThreadTuner, FallsBackToOneThreadWhenTheCoresAreTaken) {
  ThreadTuner tuner;
  const auto chosen = simulate(tuner, 2, 200, [](int threads, int) { return threads == 2 ? 40.0 : 1.0; });
  // The first probe (after kFirstProbe steps) shows one thread 40 times faster: from then on, one
  // thread except for the probes back.
  const int settled = ThreadTuner::kFirstProbe + 1;
  EXPECT_GE(countOf(chosen, 1, settled),
            static_cast<int>(chosen.size()) - settled - 200 / ThreadTuner::kProbeInterval - 1);
}

TEST(ThreadTuner, ComesBackWhenTheCoresAreFreeAgain) {
  ThreadTuner tuner;
  // Busy for the first 300 steps, quiet after.
  const auto chosen = simulate(tuner, 2, 1500, [](int threads, int step) {
    return step < 300 ? (threads == 2 ? 40.0 : 1.0) : (threads == 2 ? 0.55 : 1.0);
  });
  EXPECT_EQ(chosen[299], 1);
  // Back on two threads within the longest probe interval of the load going away, and staying there.
  const int back = 300 + ThreadTuner::kMaxProbeInterval + 1;
  EXPECT_EQ(chosen[static_cast<std::size_t>(back)], 2);
  EXPECT_GE(countOf(chosen, 2, back), static_cast<int>(chosen.size()) - back - 1500 / ThreadTuner::kProbeInterval);
}

TEST(ThreadTuner, ASuddenSlowdownIsProbedAtOnce) {
  ThreadTuner tuner;
  // Quiet for 100 steps (two threads faster), then another process takes a core.
  const auto chosen = simulate(tuner, 2, 120, [](int threads, int step) {
    return step < 100 ? (threads == 2 ? 1.0 : 1.9) : (threads == 2 ? 40.0 : 1.9);
  });
  EXPECT_EQ(chosen[99], 2);
  // Step 100 is slow; step 101 probes one thread, and from step 102 on it runs on one.
  EXPECT_EQ(chosen[101], 1);
  for (std::size_t step = 102; step < chosen.size(); ++step) EXPECT_EQ(chosen[step], 1) << step;
}

TEST(ThreadTuner, ProbesOfMoreThreadsBecomeRareWhileTheyKeepLosing) {
  ThreadTuner tuner;
  // The other core stays busy: two threads cost ten times one, and the one-thread steps are noisy
  // (up to three times their mean), which must not set off probes of two threads.
  const auto chosen = simulate(tuner, 2, 4000, [](int threads, int step) {
    const double noise = 1.0 + 2.0 * ((step * 7919) % 101 == 0 ? 1.0 : ((step * 31) % 17) / 17.0);
    return threads == 2 ? 10.0 : noise;
  });
  // The start on two threads (kFirstProbe steps), then probes after 64, 128, 256, 512, 512, ... steps: about 12.
  EXPECT_LE(countOf(chosen, 2), 16);  // against 4000 / 64 + noise-triggered probes without the backoff
}

TEST(ThreadTuner, OneThreadWhenThatIsAllThereIs) {
  ThreadTuner tuner;
  const auto chosen = simulate(tuner, 1, 100, [](int, int) { return 1.0; });
  EXPECT_EQ(countOf(chosen, 1), 100);
}

TEST(ThreadTuner, ASmallDifferenceDoesNotMakeItSwitch) {
  ThreadTuner tuner;
  // One thread only 5 % faster than two: within the margin, two threads stay.
  const auto chosen = simulate(tuner, 2, 500, [](int threads, int) { return threads == 2 ? 1.0 : 0.95; });
  EXPECT_LE(countOf(chosen, 1), 500 / ThreadTuner::kProbeInterval + 2);
}

}  // namespace
}  // namespace pliant::detail
