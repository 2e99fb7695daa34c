// End-to-end: the limits of issue 12 items 1, 5 and 8. Scenes too large for the memory budget exit
// 2 naming the field and the estimate, before anything is built; contacts that would grow without
// bound refuse the step cleanly (exit 1, never an abort); a runaway step that each frame's old
// fixed bound let through is refused with its culprit named, and the refused run still writes
// every output up to its last good frame. The inputs are in tests/data/scenes/limits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_fixture.h"

namespace fs = std::filesystem;

namespace {

using pliant::cli_testing::readFile;
using pliant::cli_testing::shellQuote;
using CliLimits = pliant::cli_testing::CliFixture;
using ::testing::HasSubstr;

std::string limitsScene(const std::string& name) {
  return shellQuote(std::string(PLIANT_TEST_DATA_DIR) + "/scenes/limits/" + name);
}

TEST_F(CliLimits, AClothTooLargeForTheBudgetExits2NamingTheFieldAndTheEstimate) {
  // 4096 x 4096 nodes: about 26 GiB by the estimate, refused under 4 GiB before it is built.
  for (const char* command : {"validate", "run"}) {
    SCOPED_TRACE(command);
    const auto r = run(std::string(command) + " " + limitsScene("cloth_4096.json") + " --max-memory 4G" +
                       (std::string(command) == "run" ? " --out out --quiet" : ""));
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("cloth_4096.json: /objects/0/grid/nodes: the scene needs an estimated "));
    EXPECT_THAT(r.err, HasSubstr("16777216 particles"));
    EXPECT_THAT(r.err, HasSubstr("above the memory budget of 4.0 GiB"));
    EXPECT_FALSE(fs::exists(path("out")));
  }
}

TEST_F(CliLimits, ABalloonTooLargeExits2NamingRingsAndBenchTakesTheOptionToo) {
  auto r = run("validate " + limitsScene("balloon_4096.json") + " --max-memory 512M");
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/objects/0/rings: the scene needs an estimated "));
  EXPECT_THAT(r.err, HasSubstr("above the memory budget of 512.0 MiB"));
  r = run("bench --scene " + limitsScene("balloon_4096.json") + " --max-memory 512M --quiet");
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/objects/0/rings: the scene needs an estimated "));
  r = run("validate " + limitsScene("balloon_4096.json") + " --max-memory lots");
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--max-memory: memory size 'lots': expected a number of bytes"));
}

TEST_F(CliLimits, TethersToAnchorsChosenByABoxAreCountedBeforeTheyAreMade) {
  // 300 anchors x 90000 particles = 27 million tethers, refused under 1 GiB once the box has
  // chosen the anchors; under the default budget the scene is only as large as its cloth.
  const auto r = run("validate " + limitsScene("tethers_box.json") + " --max-memory 1G");
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/objects/0/tethers: the scene needs an estimated "));
  EXPECT_THAT(r.err, HasSubstr("27000000 distance constraints"));
}

TEST_F(CliLimits, AHugeParticleRadiusOnAClothIsRefusedWhenLoadedNamingTheField) {
  const auto r = run("run " + limitsScene("huge_particle_radius.json") + " --out out --quiet");
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/objects/0/particle_radius: is 1000.000000 m, above the mean length of the object's "
                               "links"));
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(CliLimits, AHugeParticleRadiusOnAParticleCloudRefusesTheStepNamingTheContactBound) {
  const auto r = run("run " + limitsScene("huge_particle_radius_cloud.json") + " --out out --quiet");
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("step 1 at t = 0 s refused: particle contacts: more than 3200 pairs"));
  EXPECT_THAT(r.err, HasSubstr("lower particle_radius"));
  const nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  EXPECT_EQ(summary.at("status"), "refused");
  EXPECT_EQ(summary.at("refusal").at("reason"), "contact-overflow");
}

TEST_F(CliLimits, SurfaceBroadPhaseStopsAtItsBoundAndRefusesTheStep) {
  // Item 1: the candidate lists stop growing at 64 per vertex and per edge inside the parallel
  // region; the step is refused (exit 1) instead of an abort after minutes of allocation.
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(threads);
    const auto r =
        run("run " + limitsScene("surface_candidates_overflow.json") + " --out out --quiet --threads " + threads);
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("step 1 at t = 0 s refused: surface contact broad phase: "));
    EXPECT_THAT(r.err, HasSubstr("above the bound of 64 per vertex (204800) and per edge"));
  }
}

TEST_F(CliLimits, ARunawayTimeStepIsRefusedAndTheRunStillWritesEveryOutput) {
  // Item 8: the built-in cloth with a 1 s time step. The old fixed 1000 m bound let every frame
  // through and the run exited 0 with the cloth torn apart.
  const auto r = run("run " + limitsScene("runaway_time_step.json") + " --out out --quiet");
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("runaway_time_step.json: step "));
  EXPECT_THAT(r.err, HasSubstr("refused: "));
  const nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  EXPECT_EQ(summary.at("status"), "refused");
  const nlohmann::json& refusal = summary.at("refusal");
  const int refused = refusal.at("frame");
  const int lastGood = refusal.at("last_good_frame");
  EXPECT_EQ(lastGood, refused - 1);
  EXPECT_EQ(summary.at("last_frame"), lastGood);
  EXPECT_GE(refused, 1);
  EXPECT_LT(refused, 20);  // refused before the 20 frames asked for
  EXPECT_THAT(refusal.at("message").get<std::string>(), HasSubstr("refused"));
  EXPECT_TRUE(refusal.contains("particle") || refusal.contains("constraint"));
  // Every output up to the last good frame: each frame, the collection, the probes (a header and
  // one row per frame 0..lastGood), the final state and the viewer data.
  for (int frame = 0; frame <= lastGood; ++frame) {
    std::ostringstream name;
    name << "out/frames/frame_" << std::setw(6) << std::setfill('0') << frame << ".vtu";
    EXPECT_TRUE(fs::exists(path(name.str()))) << name.str();
  }
  EXPECT_TRUE(fs::exists(path("out/scene.pvd")));
  std::istringstream probes(readFile(path("out/probes.csv")));
  int rows = 0;
  for (std::string line; std::getline(probes, line);) ++rows;
  EXPECT_EQ(rows, 1 + lastGood + 1);
  EXPECT_TRUE(fs::exists(path("out/final_state.csv")));
  EXPECT_TRUE(fs::exists(path("out/viewer-data.json")));
}

}  // namespace
