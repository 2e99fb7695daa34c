// End-to-end: a run whose constraint solve is far from converged says so in summary.json (the
// "convergence" section the viewer shows, with its advice), on stderr, and in the page; a
// converged run says nothing on stderr and reports converged: true.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_fixture.h"

namespace fs = std::filesystem;

namespace {

using pliant::cli_testing::readFile;
using pliant::cli_testing::writeFile;
using CliConvergence = pliant::cli_testing::CliFixture;

// A rope hanging from its first particle. `particles` 2 is one compliant link, which one projection
// solves exactly; 80 links of compliance 1e-9 m/N with one substep and one iteration are far from it.
std::string ropeScene(int particles, int substeps) {
  return R"({"name": "rope", "frames": 30, "solver": {"mode": "xpbd", "substeps": )" + std::to_string(substeps) +
         R"(, "iterations": 1}, "objects": [{"type": "rope", "name": "rope", "start": [0, 0, 0], "end": [2, 0, 0],
          "particles": )" +
         std::to_string(particles) + R"(, "mass": 1.0, "stretch": {"compliance": 1e-3},
          "pins": [{"index": 0}]}]})";
}

TEST_F(CliConvergence, AFarFromConvergedRunSaysSoInTheSummaryTheLogAndThePage) {
  std::string scene = ropeScene(80, 1);
  scene.replace(scene.find("1e-3"), 4, "1e-9");
  writeFile(path("stiff.json"), scene);
#if PLIANT_VIEWER_PAGE
  const auto r = run("run stiff.json --out out --no-frames --quiet --html out/page.html");
#else
  const auto r = run("run stiff.json --out out --no-frames --quiet");
#endif
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("pliant: warning: stiff.json: the constraint solve is far from converged"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("increase substeps"), std::string::npos) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  const nlohmann::json& c = summary.at("convergence");
  EXPECT_EQ(c.at("converged"), false);
  EXPECT_EQ(c.at("measure"), "strain_residual");
  EXPECT_GT(c.at("worst_strain_residual").get<double>(), c.at("threshold").get<double>());
  EXPECT_GT(c.at("worst_relative_residual").get<double>(), 0.9);
  // From the frame the falling rope has stretched visibly to the end, as one stretch.
  ASSERT_EQ(c.at("unconverged_frames").size(), 1u);
  EXPECT_LE(c.at("unconverged_frames")[0][0].get<int>(), 10);
  EXPECT_EQ(c.at("unconverged_frames")[0][1].get<int>(), 30);
  const std::string advice = c.at("advice").get<std::string>();
  EXPECT_EQ(advice.rfind("The constraint solve is far from converged", 0), 0u) << advice;
#if PLIANT_VIEWER_PAGE
  // The page embeds the summary, whose advice the viewer's convergence banner shows.
  EXPECT_NE(readFile(path("out/page.html")).find("increase substeps"), std::string::npos);
#endif
  // The elastic energy reported is that of the forces applied, bounded by the work gravity did
  // (80 kg falling at most the rope's length), not C^2 / (2 alpha) of the unconverged stretch.
  const double elastic = summary.at("final_energy_J").at("elastic").get<double>();
  EXPECT_GE(elastic, 0.0);
  EXPECT_LT(elastic, 80.0 * 9.81 * 2.0);
}

// The built-in cloth is stiff (stretch compliance far below what 15 substeps resolve), so its
// relative residual is near 1 in every frame; its shape is off by about 1 %, which is not flagged.
TEST_F(CliConvergence, AStiffClothWhoseShapeIsRightIsNotFlagged) {
  const auto r = run("run cloth --frames 40 --out out --no-frames --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  const nlohmann::json& c = summary.at("convergence");
  EXPECT_EQ(c.at("converged"), true);
  EXPECT_GT(c.at("worst_relative_residual").get<double>(), 0.9);
  EXPECT_GT(c.at("worst_strain_residual").get<double>(), 1e-3);
  EXPECT_LT(c.at("worst_strain_residual").get<double>(), c.at("threshold").get<double>());
}

TEST_F(CliConvergence, AConvergedRunReportsConvergedAndWarnsNothing) {
  writeFile(path("soft.json"), ropeScene(2, 10));
  const auto r = run("run soft.json --out out --no-frames --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  const nlohmann::json& c = summary.at("convergence");
  EXPECT_EQ(c.at("converged"), true);
  EXPECT_TRUE(c.at("unconverged_frames").empty());
  EXPECT_LT(c.at("worst_relative_residual").get<double>(), 1e-6);
  EXPECT_FALSE(c.contains("advice"));
}

}  // namespace
