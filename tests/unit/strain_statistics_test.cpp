// The strain summary every benchmark row reports (pliant::strainStatistics, pliant/bench/benchmark.h): the mean
// and the nearest-rank 99th percentile, the smallest strain with at least 99 % of them at or below it.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "pliant/bench/benchmark.h"

namespace pliant {
namespace {

TEST(StrainStatistics, MeanAndNearestRankPercentileOfAShuffledList) {
  // Strains 0.001 ... 0.200: the mean is 0.1005 and the 198th smallest (ceil(0.99 * 200)) is 0.198.
  std::vector<double> strains;
  for (int i = 1; i <= 200; ++i) strains.push_back(0.001 * i);
  std::shuffle(strains.begin(), strains.end(), std::mt19937(7));
  const StrainStatistics s = strainStatistics(strains);
  EXPECT_NEAR(s.mean, 0.1005, 1e-12);
  EXPECT_DOUBLE_EQ(s.p99, 0.001 * 198);
}

TEST(StrainStatistics, OneOutlierInAHundredIsAboveThePercentileAndFewListsTakeTheirLargest) {
  std::vector<double> strains(99, 0.01);
  strains.push_back(5.0);  // rank ceil(0.99 * 100) = 99: the outlier is the 100th
  EXPECT_DOUBLE_EQ(strainStatistics(strains).p99, 0.01);
  std::vector<double> three = {0.3, 0.1, 0.2};  // rank ceil(2.97) = 3: the largest
  EXPECT_DOUBLE_EQ(strainStatistics(three).p99, 0.3);
  std::vector<double> none;
  const StrainStatistics empty = strainStatistics(none);
  EXPECT_EQ(empty.mean, 0.0);
  EXPECT_EQ(empty.p99, 0.0);
}

}  // namespace
}  // namespace pliant
