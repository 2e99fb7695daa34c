// The cuts between the threads' parts of a parallel batch follow measured time (src/batch_split.h).
// The bits never depend on the cuts (the determinism tests check that with real timings); these
// tests check that the cuts balance uneven work and stay a valid split.
#include "batch_split.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace pliant::detail {
namespace {

// Time of [begin, end) when constraints before `heavyEnd` cost `heavy` and the rest 1.
std::uint64_t modelTime(std::uint32_t begin, std::uint32_t end, std::uint32_t heavyEnd, std::uint64_t heavy) {
  std::uint64_t time = 0;
  for (std::uint32_t c = begin; c < end; ++c) time += c < heavyEnd ? heavy : 1;
  return time;
}

TEST(BatchSplit, OneStepMovesTheCutHalfwayToEqualTime) {
  // Part 0 took 3x as long per constraint: equal time puts the cut at 1000/3, and one step moves
  // it halfway from 500, rounded to whole groups of four from the batch's start (8).
  std::vector<std::uint32_t> cuts = {8, 508, 1008};
  const std::vector<std::uint64_t> ticks = {1500, 500};
  std::vector<double> scratch(3);
  rebalanceCuts(cuts, ticks, scratch);
  const double equal = 8 + 1000.0 / 3.0;
  EXPECT_EQ(cuts[0], 8u);
  EXPECT_EQ(cuts[2], 1008u);
  EXPECT_EQ((cuts[1] - 8) % 4, 0u);
  EXPECT_NEAR(cuts[1], 0.5 * (508 + equal), 2.0);
}

TEST(BatchSplit, RepeatedStepsConvergeToEqualTimeForThreeThreads) {
  // Work three times as heavy in the first fifth of the batch (like taut tethers near the pins).
  const std::uint32_t begin = 0, end = 3000, heavyEnd = 600;
  const std::uint64_t heavy = 3;
  std::vector<std::uint32_t> cuts = {begin, 1000, 2000, end};
  std::vector<std::uint64_t> ticks(3);
  std::vector<double> scratch(4);
  for (int step = 0; step < 30; ++step) {
    for (int t = 0; t < 3; ++t) ticks[t] = modelTime(cuts[t], cuts[t + 1], heavyEnd, heavy);
    rebalanceCuts(cuts, ticks, scratch);
    for (int t = 0; t < 3; ++t) EXPECT_LE(cuts[t], cuts[t + 1]);
  }
  const std::uint64_t total = modelTime(begin, end, heavyEnd, heavy);  // 4200
  for (int t = 0; t < 3; ++t) {
    const std::uint64_t part = modelTime(cuts[t], cuts[t + 1], heavyEnd, heavy);
    // Within a group of four heavy constraints and rounding of the last step.
    EXPECT_NEAR(static_cast<double>(part), static_cast<double>(total) / 3.0, 16.0) << "part " << t;
  }
}

TEST(BatchSplit, EqualTimesKeepTheCutsAndZeroTimesChangeNothing) {
  std::vector<std::uint32_t> cuts = {0, 400, 800};
  std::vector<double> scratch(3);
  rebalanceCuts(cuts, std::vector<std::uint64_t>{700, 700}, scratch);
  EXPECT_EQ(cuts, (std::vector<std::uint32_t>{0, 400, 800}));
  rebalanceCuts(cuts, std::vector<std::uint64_t>{0, 0}, scratch);
  EXPECT_EQ(cuts, (std::vector<std::uint32_t>{0, 400, 800}));
}

TEST(BatchSplit, AllTimeInOnePartStillLeavesAnOrderedSplit) {
  // A preempted thread: its part took all the time. The cuts move toward it but stay ordered and
  // inside the batch, and a later even measurement moves them back.
  std::vector<std::uint32_t> cuts = {100, 300, 500, 700, 900};
  std::vector<double> scratch(5);
  rebalanceCuts(cuts, std::vector<std::uint64_t>{0, 0, 1000000, 0}, scratch);
  EXPECT_EQ(cuts.front(), 100u);
  EXPECT_EQ(cuts.back(), 900u);
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) EXPECT_LE(cuts[k], cuts[k + 1]);
  EXPECT_GT(cuts[1], 300u);  // the first parts take more of the batch
  EXPECT_LT(cuts[3], 700u);
  for (int step = 0; step < 20; ++step) {
    std::vector<std::uint64_t> even(4);
    for (int t = 0; t < 4; ++t) even[t] = cuts[t + 1] - cuts[t];
    rebalanceCuts(cuts, even, scratch);
  }
  for (int t = 0; t < 4; ++t) EXPECT_GT(cuts[t + 1] - cuts[t], 0u);
}

}  // namespace
}  // namespace pliant::detail
