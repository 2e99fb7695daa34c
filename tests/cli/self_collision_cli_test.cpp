// End-to-end: `pliant run` of the self-collision scenes reports the number of intersecting
// triangle pairs in summary.json (final_intersecting_triangle_pairs) and, through the scenes'
// `intersections` probe, in probes.csv; a scene file that switches self-collision off runs too.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_fixture.h"

namespace fs = std::filesystem;

namespace {

using pliant::cli_testing::readFile;
using CliSelfCollision = pliant::cli_testing::CliFixture;

TEST_F(CliSelfCollision, SummaryAndProbesCountIntersectingTrianglePairs) {
  const auto r = run("run cloth-fold --out out --frames 20 --no-frames --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(readFile(dir_ / "out" / "summary.json"));
  ASSERT_TRUE(summary.contains("final_intersecting_triangle_pairs"));
  EXPECT_EQ(summary.at("final_intersecting_triangle_pairs"), 0);
  std::istringstream probes(readFile(dir_ / "out" / "probes.csv"));
  std::string header;
  std::getline(probes, header);
  EXPECT_EQ(header.rfind("time,intersections.pairs,", 0), 0u) << header;
  int rows = 0;
  for (std::string line; std::getline(probes, line); ++rows) {
    const std::size_t comma = line.find(',');
    EXPECT_EQ(line.substr(comma + 1, line.find(',', comma + 1) - comma - 1), "0") << line;
  }
  EXPECT_EQ(rows, 21);
}

TEST_F(CliSelfCollision, SceneFileCanSwitchItOff) {
  std::string text = readFile(fs::path(PLIANT_SOURCE_DIR) / "scenes" / "two-cloths.json");
  const std::string on = "\"surface_contact\": {";
  const std::size_t at = text.find(on);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + on.size(), "\"enabled\": false, ");
  std::ofstream(dir_ / "off.json") << text;
  const auto r = run("run off.json --out out --frames 3 --no-frames --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(readFile(dir_ / "out" / "summary.json"));
  EXPECT_EQ(summary.at("scene"), "two-cloths");
  EXPECT_TRUE(summary.at("final_intersecting_triangle_pairs").is_number_unsigned());
}

}  // namespace
