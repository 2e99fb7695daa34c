// End-to-end: `pliant run` of the self-collision scenes reports the number of intersecting
// triangle pairs in summary.json (final_intersecting_triangle_pairs) and, through the scenes'
// `intersections` probe, in probes.csv; a scene file that switches self-collision off runs too.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

std::string readWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string shellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class CliSelfCollision : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("pliant_selfcol_cli_tests." + std::to_string(::getpid())) / info->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "outputs kept in " << dir_ << '\n';
      return;
    }
    fs::remove_all(dir_);
    std::error_code ec;
    fs::remove(dir_.parent_path(), ec);
  }
  // Runs pliant with `args` in the test's folder; returns the exit code.
  int run(const std::string& args) {
    const std::string command = "cd " + shellQuote(dir_.string()) + " && " + shellQuote(PLIANT_CLI_PATH) + " " + args +
                                " >stdout.txt 2>stderr.txt </dev/null";
    const int status = std::system(command.c_str());
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  fs::path dir_;
};

TEST_F(CliSelfCollision, SummaryAndProbesCountIntersectingTrianglePairs) {
  ASSERT_EQ(run("run cloth-fold --out out --frames 20 --no-frames --quiet"), 0) << readWhole(dir_ / "stderr.txt");
  const nlohmann::json summary = nlohmann::json::parse(readWhole(dir_ / "out" / "summary.json"));
  ASSERT_TRUE(summary.contains("final_intersecting_triangle_pairs"));
  EXPECT_EQ(summary.at("final_intersecting_triangle_pairs"), 0);
  std::istringstream probes(readWhole(dir_ / "out" / "probes.csv"));
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
  std::string text = readWhole(fs::path(PLIANT_SOURCE_DIR) / "scenes" / "two-cloths.json");
  const std::string on = "\"surface_contact\": {";
  const std::size_t at = text.find(on);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + on.size(), "\"enabled\": false, ");
  std::ofstream(dir_ / "off.json") << text;
  ASSERT_EQ(run("run off.json --out out --frames 3 --no-frames --quiet"), 0) << readWhole(dir_ / "stderr.txt");
  const nlohmann::json summary = nlohmann::json::parse(readWhole(dir_ / "out" / "summary.json"));
  EXPECT_EQ(summary.at("scene"), "two-cloths");
  EXPECT_TRUE(summary.at("final_intersecting_triangle_pairs").is_number_unsigned());
}

}  // namespace
