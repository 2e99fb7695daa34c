// Unit tests of src/core/error.cpp: numbers in messages as a person writes them (issue 16: a range
// printed DBL_MAX in 300 digits, and std::to_string prints 1e-9 as 0.000000).
#include "pliant/error.h"

#include <gtest/gtest.h>

#include <limits>

namespace pliant {
namespace {

TEST(FormatNumber, ShortestTextThatReadsBackWithPlainExponents) {
  EXPECT_EQ(formatNumber(0.0), "0");
  EXPECT_EQ(formatNumber(-0.5), "-0.5");
  EXPECT_EQ(formatNumber(0.1), "0.1");
  EXPECT_EQ(formatNumber(10.0), "10");
  EXPECT_EQ(formatNumber(123456789.0), "123456789");
  EXPECT_EQ(formatNumber(1e6), "1e6");
  EXPECT_EQ(formatNumber(2e6), "2e6");
  EXPECT_EQ(formatNumber(1e-9), "1e-9");
  EXPECT_EQ(formatNumber(-2.5e-12), "-2.5e-12");
  EXPECT_EQ(formatNumber(std::numeric_limits<double>::max()), "1.7976931348623157e308");
  EXPECT_EQ(formatNumber(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(formatNumber(std::numeric_limits<double>::infinity()), "inf");
}

}  // namespace
}  // namespace pliant
