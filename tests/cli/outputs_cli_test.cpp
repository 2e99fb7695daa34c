// End-to-end: the output folder across runs and when a run stops early (issue 16). A run lists what
// it wrote in manifest.json; the next run into the folder removes exactly that (no stale frames,
// no old scene.pvd after a switch to OBJ) and nothing else (a file of the user's survives, an entry
// pointing out of the folder is not followed). A run that stops early still writes scene.pvd,
// probes.csv and summary.json for the frames that exist, and an output path the run could not
// write (an --html page in /proc) is refused before anything is simulated.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_fixture.h"

namespace fs = std::filesystem;

namespace {

using pliant::cli_testing::readFile;
using pliant::cli_testing::writeFile;
using CliOutputs = pliant::cli_testing::CliFixture;
using ::testing::HasSubstr;

// Every regular file under `folder` (symlinks not followed), relative, sorted.
std::vector<std::string> filesUnder(const fs::path& folder) {
  std::vector<std::string> out;
  if (!fs::exists(folder)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    if (entry.is_regular_file() && !entry.is_symlink()) out.push_back(fs::relative(entry.path(), folder).string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> manifestFiles(const fs::path& folder) {
  const nlohmann::json manifest = nlohmann::json::parse(readFile(folder / "manifest.json"));
  EXPECT_EQ(manifest.at("format"), "pliant-run-manifest");
  std::vector<std::string> files = manifest.at("files").get<std::vector<std::string>>();
  std::sort(files.begin(), files.end());
  return files;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(CliOutputs, ARerunLeavesNoStaleFramesAndTheManifestListsEveryFileWritten) {
  ASSERT_EQ(run("run rope --frames 20 --out out --quiet").exitCode, 0);
  EXPECT_EQ(filesUnder(path("out/frames")).size(), 21u);
  // The manifest lists exactly the files the run left (all but itself).
  std::vector<std::string> written = filesUnder(path("out"));
  written.erase(std::find(written.begin(), written.end(), "manifest.json"));
  EXPECT_EQ(manifestFiles(path("out")), written);

  const auto r = run("run rope --frames 5 --out out --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(filesUnder(path("out/frames")).size(), 6u);
  EXPECT_FALSE(fs::exists(path("out/frames/frame_000006.vtu")));
  EXPECT_EQ(count(readFile(path("out/scene.pvd")), "<DataSet "), 6u);
  written = filesUnder(path("out"));
  written.erase(std::find(written.begin(), written.end(), "manifest.json"));
  EXPECT_EQ(manifestFiles(path("out")), written);
}

TEST_F(CliOutputs, SwitchingToObjRemovesTheOldFramesAndPvdButNotTheUsersFiles) {
  ASSERT_EQ(run("run rope --frames 3 --out out --quiet --checkpoint-at 2").exitCode, 0);
  ASSERT_TRUE(fs::exists(path("out/scene.pvd")));
  // Files the runs did not write: beside the outputs, among the frames, in a folder of the user's.
  writeFile(path("out/notes.txt"), "mine\n");
  writeFile(path("out/frames/frame_000099.vtu"), "mine too\n");
  fs::create_directories(path("out/renders"));
  writeFile(path("out/renders/a.png"), "png\n");

  const auto r = run("run rope --frames 3 --out out --quiet --format obj --no-frames");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_FALSE(fs::exists(path("out/scene.pvd")));
  EXPECT_FALSE(fs::exists(path("out/frames/frame_000000.vtu")));
  EXPECT_FALSE(fs::exists(path("out/checkpoints")));  // emptied by the removal, so removed
  EXPECT_EQ(readFile(path("out/notes.txt")), "mine\n");
  EXPECT_EQ(readFile(path("out/frames/frame_000099.vtu")), "mine too\n");
  EXPECT_EQ(readFile(path("out/renders/a.png")), "png\n");
  EXPECT_EQ(manifestFiles(path("out")),
            (std::vector<std::string>{"final_state.csv", "probes.csv", "summary.json", "viewer-data.json"}));
}

TEST_F(CliOutputs, AManifestEntryOutOfTheFolderIsNotFollowed) {
  fs::create_directories(path("out/frames"));
  fs::create_directories(path("elsewhere"));
  for (const char* name : {"victim.txt", "a.txt", "b.txt", "c.txt"}) writeFile(path("elsewhere") / name, "keep\n");
  writeFile(path("out/frames/frame_000000.vtu"), "old frame\n");
  // A symlink to a folder outside, one to a file outside, and entries that climb out or are absolute.
  fs::create_directory_symlink(path("elsewhere"), path("out/link"));
  fs::create_symlink(path("elsewhere/a.txt"), path("out/frames/frame_000001.vtu"));
  const nlohmann::json manifest = {
      {"format", "pliant-run-manifest"},
      {"version", 1},
      {"files",
       {"../elsewhere/victim.txt", "frames/../../elsewhere/b.txt", "link/c.txt", path("elsewhere/victim.txt").string(),
        "frames/frame_000001.vtu", "link", "frames/frame_000000.vtu"}}};
  writeFile(path("out/manifest.json"), manifest.dump());

  const auto r = run("run rope --frames 0 --out out --quiet --no-frames");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* name : {"victim.txt", "a.txt", "b.txt", "c.txt"})
    EXPECT_EQ(readFile(path("elsewhere") / name), "keep\n") << name;
  EXPECT_TRUE(fs::is_symlink(path("out/link")));
  EXPECT_TRUE(fs::is_symlink(path("out/frames/frame_000001.vtu")));
  EXPECT_FALSE(fs::exists(path("out/frames/frame_000000.vtu")));  // the one listed regular file inside
}

TEST_F(CliOutputs, AManifestThatIsNotARunsIsRefusedBeforeAnythingChanges) {
  fs::create_directories(path("out"));
  writeFile(path("out/manifest.json"), "{\"files\": [\"notes.txt\"]}\n");
  writeFile(path("out/notes.txt"), "mine\n");
  const auto r = run("run rope --frames 2 --out out --quiet");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("manifest.json: \"format\" is not \"pliant-run-manifest\""));
  EXPECT_EQ(filesUnder(path("out")), (std::vector<std::string>{"manifest.json", "notes.txt"}));
}

TEST_F(CliOutputs, ResumingKeepsTheCheckpointResumedFrom) {
  ASSERT_EQ(run("run rope --frames 4 --out out --quiet --checkpoint-at 2").exitCode, 0);
  const auto r = run("run rope --frames 6 --out out --quiet --resume out/checkpoints/frame_000002.ckpt");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("out/checkpoints/frame_000002.ckpt")));
  EXPECT_FALSE(fs::exists(path("out/frames/frame_000000.vtu")));  // the first run's, removed
  const std::vector<std::string> listed = manifestFiles(path("out"));
  EXPECT_NE(std::find(listed.begin(), listed.end(), "checkpoints/frame_000002.ckpt"), listed.end());
}

TEST_F(CliOutputs, ARefusedRunWritesThePvdProbesAndSummaryOfTheFramesThatExist) {
  // Free fall moves the rope g n dt^2 = 2.7 n mm in step n: past the 1 cm bound at step 4.
  writeFile(path("jump.json"), R"({"frames": 8, "solver": {"max_displacement": 0.01},
    "objects": [{"type": "rope", "name": "r", "start": [0, 0, 0], "end": [1, 0, 0], "particles": 5, "mass": 1}],
    "probes": [{"name": "com", "type": "centre_of_mass"}]})");
  const auto r = run("run jump.json --out out --quiet --every 2");
  EXPECT_EQ(r.exitCode, 1) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  EXPECT_EQ(summary.at("status"), "refused");
  const int last = summary.at("last_frame").get<int>();
  EXPECT_GE(last, 1);
  EXPECT_LT(last, 8);
  // Frames 0, 2, ... and the last good one, all in scene.pvd; a probe row per frame 0..last.
  const std::string pvd = readFile(path("out/scene.pvd"));
  EXPECT_EQ(count(pvd, "<DataSet "), filesUnder(path("out/frames")).size());
  EXPECT_THAT(pvd, HasSubstr("frame_00000" + std::to_string(last) + ".vtu"));
  EXPECT_EQ(count(readFile(path("out/probes.csv")), "\n"), static_cast<std::size_t>(last + 2));  // + header
  EXPECT_TRUE(fs::exists(path("out/manifest.json")));
}

TEST_F(CliOutputs, AnHtmlPageWhereNothingCanBeCreatedIsRefusedBeforeSimulating) {
  // access() says /proc is writable to root; creating a file there fails all the same.
  const auto r = run("run rope --frames 2 --out out --quiet --html /proc/pliant-page.html");
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/proc"));
  EXPECT_FALSE(fs::exists(path("out")));
}

}  // namespace
