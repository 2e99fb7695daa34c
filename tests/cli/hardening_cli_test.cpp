// End-to-end tests of issue 12 items 3, 4, 6 and 7 through the `pliant` executable: special and
// oversized input files, crafted checkpoints, stale temporaries, output paths checked before the run
// (exit 2 naming the path), the --html page never overwriting an input, --no-frames, and the
// messages of attachment, particle-contact and damping errors. docs/reliability.md cites them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_fixture.h"
#include "pliant/io/checkpoint.h"
#include "pliant/io/input_file.h"
#include "pliant/io/scenes.h"
#include "pliant/state.h"
#include "support/crafted_checkpoint.h"

namespace {

namespace fs = std::filesystem;
using pliant::cli_testing::readFile;
using pliant::cli_testing::RunResult;
using pliant::cli_testing::shellQuote;
using pliant::cli_testing::writeFile;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

using CliHardening = pliant::cli_testing::CliFixture;

std::string dataScene(const std::string& name) { return std::string(PLIANT_TEST_DATA_DIR) + "/scenes/" + name; }

std::vector<std::string> namesIn(const fs::path& folder) {
  std::vector<std::string> names;
  if (!fs::exists(folder)) return names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// ---------------------------------------------------------------------------------------------
// Item 6: special files and size limits. Every run has a time limit; a hang (exit 124) is the bug.

TEST_F(CliHardening, SceneMeshAndCheckpointThatAreNotRegularFilesAreRefused) {
  ASSERT_EQ(::mkfifo(path("pipe.json").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(path("pipe.obj").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(path("pipe.ckpt").c_str(), 0600), 0);
  RunResult r = run("run /dev/zero --out out --quiet", 60);
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/dev/zero: is a character device, not a regular file; expected a scene file"));
  r = run("validate pipe.json", 60);
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("pipe.json: is a FIFO (named pipe), not a regular file"));
  // A mesh the scene names.
  writeFile(path("cloth.json"),
            R"({"objects": [{"type": "cloth", "name": "c", "mesh": "pipe.obj", "mass": 0.1}], "frames": 1})");
  r = run("run cloth.json --out out --quiet", 60);
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("pipe.obj: is a FIFO (named pipe), not a regular file; expected an OBJ file"));
  // A checkpoint to resume from.
  r = run("run rope --frames 2 --resume pipe.ckpt --out out --quiet", 60);
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("pipe.ckpt: is a FIFO (named pipe), not a regular file"));
  r = run("run rope --frames 2 --resume /dev/zero --out out --quiet", 60);
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/dev/zero: is a character device"));
  EXPECT_FALSE(fs::exists(path("out")));
}

// `pliant view` and `pliant render` read a run's folder back: a FIFO or device planted in place of
// its files is refused at once, not read until memory runs out or waited on forever.
TEST_F(CliHardening, OutputFolderFilesThatAreNotRegularFilesAreRefusedByViewAndRender) {
  fs::create_directories(path("run"));
  ASSERT_EQ(::mkfifo(path("run/viewer-data.json").c_str(), 0600), 0);
  RunResult r = run("render run --out pngs", 60);
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("viewer-data.json: is a FIFO (named pipe), not a regular file; expected a viewer data"));
#if PLIANT_VIEWER_PAGE
  r = run("run rope --frames 2 --no-frames --out good --quiet", 60);
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  fs::remove(path("good/probes.csv"));
  ASSERT_EQ(::mkfifo(path("good/probes.csv").c_str(), 0600), 0);
  r = run("view good --html page.html", 60);
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("probes.csv: is a FIFO (named pipe), not a regular file; expected a probe file"));
  EXPECT_FALSE(fs::exists(path("page.html")));
#endif
}

TEST_F(CliHardening, OversizedSceneIsRefusedNamingSizeAndLimit) {
  writeFile(path("big.json"), "{");
  fs::resize_file(path("big.json"), pliant::io::kMaxSceneFileBytes + 1);  // sparse
  const RunResult r = run("validate big.json", 60);
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("big.json: 67108865 bytes, more than the 67108864 bytes allowed for a scene file"));
}

// ---------------------------------------------------------------------------------------------
// Item 3: crafted checkpoints (valid checksum and hash, tests/support/crafted_checkpoint.h).

TEST_F(CliHardening, CraftedCheckpointsAreRefusedNamingTheField) {
  RunResult r = run("run rope --frames 4 --checkpoint-at 2 --no-frames --out a --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  const pliant::Scene rope = pliant::makeBuiltinScene("rope");
  const pliant::State saved = pliant::io::readCheckpoint(path("a/checkpoints/frame_000002.ckpt"), *rope.model);
  struct Case {
    const char* name;
    void (*craft)(pliant::State&);
    const char* expected;
  };
  const Case cases[] = {
      {"huge frame counter", [](pliant::State& s) { s.stepCount = 0xffffffff80000001ull; },
       "frame counter (stepCount, header byte 56) is 18446744071562067969"},
      {"frame counter 2^64-1", [](pliant::State& s) { s.stepCount = ~std::uint64_t{0}; }, "frame counter"},
      {"NaN time", [](pliant::State& s) { s.time = std::nan(""); }, "time (header byte 40) is nan"},
      {"time of another frame", [](pliant::State& s) { s.time *= 3.0; }, "frames of the scene's time_step"},
      {"NaN velocity", [](pliant::State& s) { s.velocity[4].x() = std::nan(""); }, "velocity[4] is (nan"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pliant::State crafted = saved;
    c.craft(crafted);
    writeFile(path("crafted.ckpt"), pliant::testing::craftCheckpoint(crafted));
    r = run("run rope --frames 4 --resume crafted.ckpt --out b --quiet");
    EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
    EXPECT_THAT(r.err, StartsWith("pliant: checkpoint 'crafted.ckpt': "));
    EXPECT_THAT(r.err, HasSubstr(c.expected));
    EXPECT_FALSE(fs::exists(path("b")));
  }
}

// ---------------------------------------------------------------------------------------------
// Item 4: stale temporaries of killed runs.

TEST_F(CliHardening, ARunRemovesTemporariesThatKilledRunsLeftInItsFolders) {
  // A pid that is no process any more: a child that has exited and been reaped.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::string dead = std::to_string(child);
  const std::string live = std::to_string(::getpid());
  fs::create_directories(path("out/frames"));
  fs::create_directories(path("out/checkpoints"));
  writeFile(path("out/summary.json.tmp-" + dead + "-00000000deadbeef"), "partial");
  writeFile(path("out/frames/frame_000001.vtu.tmp-" + dead + "-0123456789abcdef"), "partial");
  writeFile(path("out/checkpoints/frame_000001.ckpt.tmp-" + dead + "-fedcba9876543210"), "partial");
  writeFile(path("out/summary.json.tmp-" + live + "-00000000deadbeef"), "a live writer's");
  writeFile(path("out/notes.tmp-1"), "not a temporary of ours");
  const RunResult r = run("run rope --frames 2 --checkpoint-at 2 --out out --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(namesIn(path("out/frames")),
            (std::vector<std::string>{"frame_000000.vtu", "frame_000001.vtu", "frame_000002.vtu"}));
  EXPECT_EQ(namesIn(path("out/checkpoints")), std::vector<std::string>{"frame_000002.ckpt"});
  const std::vector<std::string> top = namesIn(path("out"));
  EXPECT_EQ(std::count(top.begin(), top.end(), "summary.json.tmp-" + dead + "-00000000deadbeef"), 0);
  EXPECT_EQ(std::count(top.begin(), top.end(), "summary.json.tmp-" + live + "-00000000deadbeef"), 1);
  EXPECT_EQ(std::count(top.begin(), top.end(), "notes.tmp-1"), 1);
}

// ---------------------------------------------------------------------------------------------
// Item 7: output paths, checked before the run (exit 2 naming the path, nothing simulated).

TEST_F(CliHardening, OutAtAFileUnderAFileOrUnwritableIsExit2NamingThePath) {
  writeFile(path("taken"), "a regular file\n");
  RunResult r = run("run rope --frames 2 --out taken --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("output folder 'taken' exists and is not a folder"));
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
  EXPECT_EQ(readFile(path("taken")), "a regular file\n");
  r = run("run rope --frames 2 --out taken/sub --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("output folder 'taken/sub' cannot be created: 'taken' is not a folder"));
  // /sys refuses new folders even to root (for whom access() says every folder is writable).
  r = run("run rope --frames 2 --out /sys/pliant-test-out --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/sys/pliant-test-out"));
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
  // A folder without write permission (root may write anywhere, so only checked for other users).
  if (::geteuid() != 0) {
    fs::create_directories(path("locked"));
    fs::permissions(path("locked"), fs::perms::owner_read | fs::perms::owner_exec);
    r = run("run rope --frames 2 --out locked --quiet");
    fs::permissions(path("locked"), fs::perms::owner_all);
    EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
    EXPECT_THAT(r.err, HasSubstr("output folder 'locked' is not writable"));
  }
  // An output file that is a folder is found before simulating, not after.
  fs::create_directories(path("out/summary.json"));
  r = run("run rope --frames 2 --out out --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("output file 'out/summary.json' is a folder"));
  EXPECT_FALSE(fs::exists(path("out/frames")));
}

TEST_F(CliHardening, EmptyOutIsRefused) {
  const RunResult r = run("run rope --frames 2 --out '' --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--out: an empty path"));
  EXPECT_EQ(namesIn(dir_), std::vector<std::string>{});
}

TEST_F(CliHardening, HtmlOrOutputsNeverOverwriteAnInput) {
  fs::copy_file(dataScene("meshes.json"), path("scene.json"));
  fs::create_directories(path("meshes"));
  for (const auto& entry : fs::directory_iterator(dataScene("meshes"))) fs::copy(entry.path(), path("meshes"));
  const std::string before = readFile(path("scene.json"));
  RunResult r = run("run scene.json --frames 1 --out out --html scene.json --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("'scene.json' is the input file 'scene.json'"));
  // However it is spelt.
  r = run("run scene.json --frames 1 --out out --html ./meshes/../scene.json --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_EQ(readFile(path("scene.json")), before);
  EXPECT_FALSE(fs::exists(path("out")));
  // A mesh the scene reads, and the .ele that goes with the .node it names.
  for (const std::string& mesh : {std::string("meshes/square.obj"), std::string("meshes/two_tets.ele")}) {
    const std::string meshBefore = readFile(path(mesh));
    r = run("run scene.json --frames 1 --out out --html " + mesh + " --quiet");
    EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
    EXPECT_THAT(r.err, HasSubstr("is the input file"));
    EXPECT_EQ(readFile(path(mesh)), meshBefore);
  }
  // The checkpoint resumed from, and a page over the run's own summary.
  r = run("run rope --frames 2 --checkpoint-at 1 --no-frames --out a --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  r =
      run("run rope --frames 2 --resume a/checkpoints/frame_000001.ckpt --out b --html a/checkpoints/frame_000001.ckpt "
          "--quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("is the input file 'a/checkpoints/frame_000001.ckpt'"));
  r = run("run rope --frames 2 --out b --html b/summary.json --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("is the run's own output file"));
  // A scene inside the output folder under an output's name.
  fs::create_directories(path("c"));
  fs::copy_file(path("scene.json"), path("c/summary.json"));
  fs::create_directories(path("c/meshes"));
  for (const auto& entry : fs::directory_iterator(path("meshes"))) fs::copy(entry.path(), path("c/meshes"));
  r = run("run c/summary.json --frames 1 --out c --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("output file 'c/summary.json' is the input file 'c/summary.json'"));
  EXPECT_EQ(readFile(path("c/summary.json")), before);
}

// `pliant view DIR --html FILE` never writes the page over a file it is built from.
TEST_F(CliHardening, ViewNeverWritesThePageOverItsInputs) {
  RunResult r = run("run rope --frames 2 --no-frames --out out --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  for (const char* input : {"out/summary.json", "out/viewer-data.json", "out/probes.csv"}) {
    SCOPED_TRACE(input);
    const std::string before = readFile(path(input));
    r = run(std::string("view out --html ") + input);
    EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
#if PLIANT_VIEWER_PAGE
    EXPECT_THAT(r.err, HasSubstr("is the input file"));
#endif
    EXPECT_EQ(readFile(path(input)), before);
  }
}

// --no-frames: no frames/ folder, no scene.pvd, and viewer-data.json with the first and last frames
// only (the viewer shows the start and the end).
TEST_F(CliHardening, NoFramesCreatesNoFrameFolderAndKeepsTwoViewerFrames) {
  const RunResult r = run("run rope --frames 30 --no-frames --out out");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_FALSE(fs::exists(path("out/frames")));
  EXPECT_FALSE(fs::exists(path("out/scene.pvd")));
  EXPECT_THAT(r.out, HasSubstr("viewer: first and last frames only (--no-frames)"));
  const nlohmann::json data = nlohmann::json::parse(readFile(path("out/viewer-data.json")));
  EXPECT_EQ(data.at("frames").at("numbers"), (std::vector<int>{0, 30}));
  const nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  EXPECT_EQ(summary.at("outputs").at("viewer_frames"), 2);
  EXPECT_EQ(summary.at("outputs").at("frames_written"), 0);
}

// ---------------------------------------------------------------------------------------------
// Item 7: messages.

TEST_F(CliHardening, AttachmentAndParticleContactErrorsNameFileAndJsonPath) {
  RunResult r = run("validate " + shellQuote(dataScene("bad/attachment_target_overflow.json")));
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("attachment_target_overflow.json: /attachments/1: "));
  r = run("validate " + shellQuote(dataScene("bad/particle_contact_without_radius.json")));
  EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr("particle_contact_without_radius.json: /particle_contact: no object has a "
                               "\"particle_radius\" > 0"));
}

TEST_F(CliHardening, AStepRefusedByObjectDampingNamesTheParticleAndTheObject) {
  const RunResult r = run("run " + shellQuote(dataScene("damping_overflow.json")) + " --out out --quiet");
  EXPECT_EQ(r.exitCode, kExitInternal) << r.err;
  EXPECT_THAT(r.err, HasSubstr("refused: non-finite position or velocity at particle 0 after the per-object damping "
                               "of object 0 'far_pair'"));
}

}  // namespace
