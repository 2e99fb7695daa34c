// Unit tests of src/run/run.cpp (pliant::runScene): the files a run writes and the report that
// describes them, a run equal to stepping the scene by hand, resuming, a refused step, bad options
// refused before anything is written, and the caller's thread count left as it was.
#include "pliant/run/run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "pliant/error.h"
#include "pliant/io/scenes.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"

namespace pliant {
namespace {

namespace fs = std::filesystem;

std::string readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("pliant_run_test." + std::to_string(::getpid())) / info->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_.parent_path());
  }
  fs::path dir_;
};

// The state after `frames` steps of the scene from its initial state.
State stepped(const Scene& scene, int frames) {
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  for (int i = 0; i < frames; ++i) EXPECT_TRUE(solver.step(state).ok());
  return state;
}

TEST_F(RunTest, WritesTheFilesItsReportDescribes) {
  const Scene scene = makeBuiltinScene("rope");
  RunOptions options;
  options.outputFolder = (dir_ / "out").string();
  options.frames = 7;
  options.frameEvery = 3;
  options.frameFormat = io::FrameFormat::Obj;
  options.checkpointAt = {4};
  options.source = "builtin rope";
  const RunReport report = runScene(scene, options);
  ASSERT_TRUE(report.completed) << report.failure;
  EXPECT_EQ(report.firstFrame, 0);
  EXPECT_EQ(report.lastFrame, 7);
  // The first frame, every third after it, and the last.
  for (int frame : {0, 3, 6, 7}) {
    const fs::path file = dir_ / "out" / "frames" / ("frame_00000" + std::to_string(frame) + ".obj");
    EXPECT_TRUE(fs::exists(file)) << file;
  }
  EXPECT_FALSE(fs::exists(dir_ / "out" / "frames" / "frame_000001.obj"));
  EXPECT_EQ(report.framesWritten, 4u);
  EXPECT_TRUE(fs::exists(dir_ / "out" / "checkpoints" / "frame_000004.ckpt"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "scene.pvd"));  // VTK only
  EXPECT_TRUE(fs::exists(dir_ / "out" / "final_state.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "viewer-data.json"));
  EXPECT_EQ(report.viewerFrames, 8u);
  EXPECT_EQ(report.viewerFrameStride, 1);

  const State expected = stepped(scene, 7);
  EXPECT_EQ(report.finalState.hash(), expected.hash());
  EXPECT_EQ(report.stateHash, expected.hash());
  EXPECT_GT(report.projections, 0u);

  EXPECT_EQ(readBytes(dir_ / "out" / "summary.json"), report.summaryJson);
  const nlohmann::json summary = nlohmann::json::parse(report.summaryJson);
  EXPECT_EQ(summary.at("scene"), "rope");
  EXPECT_EQ(summary.at("source"), "builtin rope");
  EXPECT_EQ(summary.at("frames"), 7);
  EXPECT_EQ(summary.at("outputs").at("format"), "obj");
  EXPECT_EQ(summary.at("outputs").at("frames_written"), 4);
  EXPECT_EQ(summary.at("particles"), scene.model->particleCount());
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(expected.hash()));
  EXPECT_EQ(summary.at("state_hash"), hash);
}

TEST_F(RunTest, ReportsEveryFrameToTheObserverAndResumesBitForBit) {
  const Scene scene = makeBuiltinScene("beam");
  RunOptions options;
  options.outputFolder = (dir_ / "first").string();
  options.frames = 6;
  options.writeFrames = false;
  options.checkpointEvery = 3;
  std::vector<std::pair<int, int>> seen;  // (frame, lastFrame)
  options.onFrame = [&](int frame, int first, int last) {
    EXPECT_EQ(first, 0);
    seen.emplace_back(frame, last);
  };
  const RunReport straight = runScene(scene, options);
  ASSERT_TRUE(straight.completed);
  ASSERT_EQ(seen.size(), 7u);
  for (int k = 0; k <= 6; ++k) EXPECT_EQ(seen[static_cast<std::size_t>(k)], std::make_pair(k, 6));
  EXPECT_EQ(straight.framesWritten, 0u);
  EXPECT_FALSE(fs::exists(dir_ / "first" / "frames" / "frame_000000.vtu"));

  RunOptions resumed;
  resumed.outputFolder = (dir_ / "second").string();
  resumed.frames = 6;
  resumed.resumeFrom = (dir_ / "first" / "checkpoints" / "frame_000003.ckpt").string();
  const RunReport second = runScene(scene, resumed);
  ASSERT_TRUE(second.completed);
  EXPECT_EQ(second.firstFrame, 3);
  EXPECT_EQ(second.stateHash, straight.stateHash);
  // Frames 3 (where it resumed) to 6, listed in the ParaView collection.
  EXPECT_EQ(second.framesWritten, 4u);
  EXPECT_NE(readBytes(dir_ / "second" / "scene.pvd").find("frames/frame_000003.vtu"), std::string::npos);
}

TEST_F(RunTest, ARefusedStepIsReportedAndTheOutputsUpToTheLastGoodFrameAreWritten) {
  Scene scene = parseScene(R"({"name": "runaway", "solver": {"max_displacement": 1e-6}, "frames": 5,
      "objects": [{"type": "rope", "name": "r", "start": [0, 0, 0], "end": [1, 0, 0], "particles": 5, "mass": 1}]})",
                           "runaway.json", "");
  RunOptions options;
  options.outputFolder = (dir_ / "out").string();
  const RunReport report = runScene(scene, options);
  EXPECT_FALSE(report.completed);
  EXPECT_NE(report.failure.find("displacement"), std::string::npos) << report.failure;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "frames" / "frame_000000.vtu"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "frames" / "frame_000001.vtu"));
  EXPECT_EQ(report.lastFrame, 0);
  // The end-of-run files describe the last good state (frame 0) and say the run was refused.
  EXPECT_TRUE(fs::exists(dir_ / "out" / "final_state.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "viewer-data.json"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "scene.pvd"));
  const std::string summary = readBytes(dir_ / "out" / "summary.json");
  EXPECT_EQ(summary, report.summaryJson);
  EXPECT_NE(summary.find("\"status\": \"refused\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"reason\": \"excessive-displacement\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"frame\": 1"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"last_good_frame\": 0"), std::string::npos) << summary;
  EXPECT_EQ(report.stateHash, report.finalState.hash());
}

// Issue 16: a run stopped by an exception (a frame it cannot write, a callback that throws) writes
// scene.pvd, probes, final state and summary.json ("status": "stopped") for the frames that exist,
// then rethrows.
TEST_F(RunTest, ARunStoppedByAnExceptionWritesItsEndFilesAndRethrows) {
  Scene scene = makeBuiltinScene("rope");
  RunOptions options;
  options.outputFolder = (dir_ / "out").string();
  options.frames = 6;
  // A folder where frame 2 goes: its write fails.
  fs::create_directories(dir_ / "out" / "frames" / "frame_000002.vtu");
  EXPECT_THROW(runScene(scene, options), Error);
  nlohmann::json summary = nlohmann::json::parse(readBytes(dir_ / "out" / "summary.json"));
  EXPECT_EQ(summary.at("status"), "stopped");
  EXPECT_NE(summary.at("error").get<std::string>().find("frame_000002.vtu"), std::string::npos) << summary.dump();
  EXPECT_EQ(summary.at("last_frame"), 2);  // simulated, not written
  const std::string pvd = readBytes(dir_ / "out" / "scene.pvd");
  EXPECT_NE(pvd.find("frame_000001.vtu"), std::string::npos);
  EXPECT_EQ(pvd.find("frame_000002.vtu"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "out" / "final_state.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "manifest.json"));

  // A callback that throws stops the run at its frame; the exception is the caller's own.
  fs::remove_all(dir_ / "out");
  struct Stop {};
  options.onFrame = [](int frame, int, int) {
    if (frame == 3) throw Stop{};
  };
  EXPECT_THROW(runScene(scene, options), Stop);
  summary = nlohmann::json::parse(readBytes(dir_ / "out" / "summary.json"));
  EXPECT_EQ(summary.at("status"), "stopped");
  EXPECT_EQ(summary.at("last_frame"), 3);
  EXPECT_NE(readBytes(dir_ / "out" / "scene.pvd").find("frame_000003.vtu"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "frames" / "frame_000004.vtu"));
}

TEST_F(RunTest, BadOptionsAreRefusedBeforeAnythingIsWritten) {
  const Scene scene = makeBuiltinScene("rope");
  const auto refused = [&](auto change, const std::string& expected) {
    RunOptions options;
    options.outputFolder = (dir_ / "out").string();
    change(options);
    try {
      runScene(scene, options);
      ADD_FAILURE() << "no error for " << expected;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir_ / "out")) << expected;
  };
  refused([](RunOptions& o) { o.frameEvery = 0; }, "frameEvery must be >= 1, got 0");
  refused([](RunOptions& o) { o.frames = -2; }, "frames must be >= 0");
  refused([](RunOptions& o) { o.threads = -1; }, "threads must be >= 1");
  refused([](RunOptions& o) { o.checkpointAt = {0}; }, "checkpointAt frames must be >= 1, got 0");
  refused([&](RunOptions& o) { o.resumeFrom = (dir_ / "missing.ckpt").string(); }, "missing.ckpt");
}

// Issue 12 item 7: every output path is checked before anything is simulated or created, as
// pliant::Error naming the path (src/run/run_outputs.h).
TEST_F(RunTest, OutputPathsAreCheckedBeforeAnythingIsCreated) {
  Scene scene = makeBuiltinScene("rope");
  const auto refused = [&](const RunOptions& options, const std::string& expected) {
    try {
      runScene(scene, options);
      ADD_FAILURE() << "no error for " << expected;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  std::ofstream(dir_ / "taken") << "a file\n";
  RunOptions options;
  options.frames = 2;
  options.outputFolder = (dir_ / "taken").string();
  refused(options, "output folder '" + (dir_ / "taken").string() + "' exists and is not a folder");
  // A scene's input file (as loadSceneFile records it) is never an output.
  const std::string input = (dir_ / "scene.json").string();
  std::ofstream(input) << "{}\n";
  scene.inputFiles = {input};
  options.outputFolder = (dir_ / "out").string();
  options.htmlPage = (dir_ / "." / "scene.json").string();
  refused(options, "is the input file '" + input + "'");
  options.htmlPage.clear();
  options.outputFolder = dir_.string();
  scene.inputFiles = {(dir_ / "final_state.csv").string()};
  std::ofstream(dir_ / "final_state.csv") << "x\n";
  refused(options, "is the input file");
  EXPECT_EQ(readBytes(dir_ / "final_state.csv"), "x\n");
  EXPECT_EQ(readBytes(dir_ / "scene.json"), "{}\n");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  EXPECT_FALSE(fs::exists(dir_ / "frames"));
}

TEST_F(RunTest, LeavesTheCallersThreadCountAsItWas) {
  const int before = threadCount();
  const Scene scene = makeBuiltinScene("rope");
  RunOptions options;
  options.outputFolder = (dir_ / "out").string();
  options.frames = 2;
  options.threads = before == 1 ? 2 : 1;
  const RunReport report = runScene(scene, options);
  ASSERT_TRUE(report.completed);
  EXPECT_EQ(nlohmann::json::parse(report.summaryJson).at("settings").at("threads"), options.threads);
  EXPECT_EQ(threadCount(), before);
}

}  // namespace
}  // namespace pliant
