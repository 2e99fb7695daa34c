// End-to-end tests of the viewer commands of `pliant`: run --html, view, render, and their bad
// inputs (exit code 2, a message naming the problem, no file written). The page in a real browser
// is tested by tests/browser/viewer_test.mjs.
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
using Result = pliant::cli_testing::RunResult;
using CliViewer = pliant::cli_testing::CliFixture;

TEST_F(CliViewer, RunAlwaysWritesTheViewerDataFile) {
  Result r = run("run rope --out out --frames 5 --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json data = nlohmann::json::parse(readFile(path("out/viewer-data.json")), nullptr, false);
  ASSERT_FALSE(data.is_discarded());
  EXPECT_EQ(data.at("format"), "pliant-viewer");
  EXPECT_EQ(data.at("scene"), "rope");
  EXPECT_EQ(data.at("frames").at("numbers"), nlohmann::json({0, 1, 2, 3, 4, 5}));
  // The strain residual of every simulated frame, for the page's convergence plot.
  EXPECT_EQ(data.at("convergence").at("first_frame"), 1);
  EXPECT_EQ(data.at("convergence").at("strain_residual").size(), 5u);
  EXPECT_EQ(data.at("convergence").at("threshold"), 0.05);
  nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  EXPECT_EQ(summary.at("outputs").at("viewer_frames"), 6);
  EXPECT_EQ(summary.at("outputs").at("viewer_frame_stride"), 1);
  // With --no-frames (and no page) only the first and the last frame (docs/reliability.md).
  r = run("run rope --out bare --frames 5 --no-frames --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  data = nlohmann::json::parse(readFile(path("bare/viewer-data.json")), nullptr, false);
  EXPECT_EQ(data.at("frames").at("numbers"), nlohmann::json({0, 5}));
  EXPECT_EQ(data.at("convergence").at("strain_residual").size(), 5u);  // every frame, kept or not
  summary = nlohmann::json::parse(readFile(path("bare/summary.json")));
  EXPECT_EQ(summary.at("outputs").at("viewer_frames"), 2);
  EXPECT_EQ(summary.at("outputs").at("viewer_frame_stride"), 5);
}

#if PLIANT_VIEWER_PAGE
// The JSON inside <script ... id="ID">...</script> of a page (only the page tests use it: a build
// without node_modules would warn that it is unused).
nlohmann::json scriptJson(const std::string& page, const std::string& id) {
  const std::size_t open = page.find("id=\"" + id + "\">");
  if (open == std::string::npos) return nlohmann::json();
  const std::size_t begin = page.find('>', open) + 1;
  const std::size_t end = page.find("</script>", begin);
  return nlohmann::json::parse(page.substr(begin, end - begin), nullptr, false);
}

TEST_F(CliViewer, HtmlWritesOneSelfContainedPageAndPrintsItsPath) {
  const Result r = run("run cloth-sphere --out out --frames 6 --no-frames --quiet --html out/viewer.html");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "viewer: " + fs::absolute(path("out/viewer.html")).lexically_normal().string() + "\n");
  const std::string page = readFile(path("out/viewer.html"));
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  // Nothing is fetched: no external script, stylesheet or image.
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  const nlohmann::json data = scriptJson(page, "pliant-data");
  ASSERT_FALSE(data.is_discarded());
  EXPECT_EQ(data, nlohmann::json::parse(readFile(path("out/viewer-data.json"))));
  EXPECT_EQ(data.at("frames").at("positions").size(), 7u);
  ASSERT_EQ(data.at("colliders").size(), 2u);
  EXPECT_EQ(data.at("colliders")[0].at("shape"), "plane");
  EXPECT_EQ(data.at("colliders")[1].at("shape"), "sphere");
  const nlohmann::json probes = scriptJson(page, "pliant-probes");
  ASSERT_TRUE(probes.is_string());
  EXPECT_EQ(probes.get<std::string>(), readFile(path("out/probes.csv")));
  EXPECT_EQ(nlohmann::json::parse(readFile(path("out/summary.json"))).at("outputs").at("html"), "out/viewer.html");
  // The page shows the run's summary, the one written to summary.json.
  EXPECT_EQ(scriptJson(page, "pliant-summary"), nlohmann::json::parse(readFile(path("out/summary.json"))));

  // The page may go into the output folder however the folder is spelt (scripts/run.sh writes OUT/viewer.html).
  const Result again = run("run rope --out new/ --frames 1 --no-frames --quiet --html new//./viewer.html");
  ASSERT_EQ(again.exitCode, 0) << again.err;
  EXPECT_TRUE(fs::exists(path("new/viewer.html")));
}

TEST_F(CliViewer, ViewRebuildsTheSamePageFromTheOutputFolder) {
  Result r = run("run rope --out out --frames 4 --no-frames --quiet --html first.html");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  r = run("view out");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "viewer: " + fs::absolute(path("out/viewer.html")).lexically_normal().string() + "\n");
  EXPECT_EQ(readFile(path("out/viewer.html")), readFile(path("first.html")));
  r = run("view out --html again.html");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(readFile(path("again.html")), readFile(path("first.html")));
}
TEST_F(CliViewer, ViewEmbedsTheFoldersSummaryWhenThereIsOne) {
  Result r = run("run rope --out out --frames 3 --no-frames --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // A summary with a convergence section (as a run that checks convergence writes it) is shown as it is.
  nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  summary["convergence"] = {{"converged", false},
                            {"threshold", 1e-3},
                            {"worst_relative_residual", 0.02},
                            {"unconverged_frames", {{1, 2}}},
                            {"advice", "raise substeps"}};
  std::ofstream(path("out/summary.json")) << summary.dump(2);
  r = run("view out");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(scriptJson(readFile(path("out/viewer.html")), "pliant-summary"), summary);

  // Without summary.json the page has none.
  fs::remove(path("out/summary.json"));
  r = run("view out --html bare.html");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(scriptJson(readFile(path("bare.html")), "pliant-summary").is_null());

  // A broken one is bad input, named, and no page is written.
  std::ofstream(path("out/summary.json")) << "{\"scene\": ";
  r = run("view out --html broken.html");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("out/summary.json: not valid JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("broken.html")));
  std::ofstream(path("out/summary.json")) << "[1, 2]";
  r = run("view out --html broken.html");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("out/summary.json: not a JSON object"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("broken.html")));
}
#else
TEST_F(CliViewer, WithoutTheEmbeddedViewerHtmlSaysHowToGetIt) {
  const Result r = run("run rope --out out --frames 2 --quiet --html out/viewer.html");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("npm ci"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out")));
}
#endif

TEST_F(CliViewer, RenderWritesPngImagesOfTheChosenFrames) {
  Result r = run("run rope --out out --frames 8 --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  r = run("render out --frames 0,last --size 200x150");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("frame_000000.png"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frame_000008.png"), std::string::npos) << r.out;
  for (const char* name : {"out/render/frame_000000.png", "out/render/frame_000008.png"}) {
    const std::string png = readFile(path(name));
    ASSERT_GT(png.size(), 33u) << name;
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(png.substr(12, 4), "IHDR");
    EXPECT_EQ(png.substr(16, 8), std::string("\0\0\0\xc8\0\0\0\x96", 8));  // 200 x 150
  }
  EXPECT_NE(readFile(path("out/render/frame_000000.png")), readFile(path("out/render/frame_000008.png")));
  r = run("render out --frames 3 --out pictures");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("pictures/frame_000003.png")));
}

// ffprobe's reading of a video: frames counted by decoding, size and duration (s).
struct VideoProbe {
  int frames = -1, width = -1, height = -1;
  double duration = -1.0;
};
VideoProbe probeVideo(const fs::path& video) {
  const fs::path report = video.string() + ".probe.json";
  const std::string command =
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
      "stream=nb_read_frames,width,height -show_entries format=duration -of json " +
      pliant::cli_testing::shellQuote(video.string()) + " >" + pliant::cli_testing::shellQuote(report.string());
  VideoProbe probe;
  if (std::system(command.c_str()) != 0) return probe;
  const nlohmann::json j = nlohmann::json::parse(readFile(report), nullptr, false);
  fs::remove(report);
  if (j.is_discarded() || j.at("streams").empty()) return probe;
  const auto& stream = j.at("streams").at(0);
  probe.frames = std::stoi(stream.at("nb_read_frames").get<std::string>());
  probe.width = stream.at("width").get<int>();
  probe.height = stream.at("height").get<int>();
  probe.duration = std::stod(j.at("format").at("duration").get<std::string>());
  return probe;
}

TEST_F(CliViewer, RenderVideoHoldsEveryRecordedFrameAtTheRunsPace) {
  Result r = run("run rope --out out --frames 12 --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  r = run("render out --video clip.mp4 --size 160x120");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "render: clip.mp4\n");
  // 13 recorded frames 1/60 s apart: 13/60 s of video, one second per simulated second.
  VideoProbe probe = probeVideo(path("clip.mp4"));
  EXPECT_EQ(probe.frames, 13);
  EXPECT_EQ(probe.width, 160);
  EXPECT_EQ(probe.height, 120);
  EXPECT_NEAR(probe.duration, 13.0 / 60.0, 0.02);
  // A chosen pace, a camera and no time overlay; the video replaces the earlier one.
  r =
      run("render out --video clip.mp4 --size 200x100 --fps 10 --camera-position 0,1,6 --camera-target 0,1.5,0 "
          "--fov 60 --no-time");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  probe = probeVideo(path("clip.mp4"));
  EXPECT_EQ(probe.frames, 13);
  EXPECT_EQ(probe.width, 200);
  EXPECT_NEAR(probe.duration, 1.3, 0.02);
  // Nothing but the video is left beside it (no temporary, no ffmpeg log).
  std::size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(path(""))) entries += entry.path().filename() != "out" ? 1 : 0;
  EXPECT_EQ(entries, 1u);
}

TEST_F(CliViewer, RenderVideoRefusesBadTargetsBeforeDrawing) {
  Result r = run("run rope --out out --frames 3 --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c :
       {Case{"--video clip.avi", "unknown video extension '.avi'"},
        Case{"--video missing/clip.mp4", "folder missing does not exist"}, Case{"--video out", "is a folder"},
        Case{"--video clip.mp4 --size 161x120", "video size must be even"},
        Case{"--video clip.mp4 --frames 2", "--frames"}, Case{"--video clip.mp4 --fps -1", "frames per second"},
        Case{"--camera-position 1,2", "--camera-position: expected three numbers"},
        Case{"--camera-target 1,2,x", "--camera-target: expected three numbers"},
        Case{"--camera-position 0,1,0 --camera-target 0,1,0", "camera position and target must differ"},
        Case{"--fov 180", "--fov"}}) {
    r = run(std::string("render out ") + c.args);
    EXPECT_EQ(r.exitCode, 2) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(path("clip.mp4")));
  EXPECT_FALSE(fs::exists(path("clip.avi")));
  EXPECT_FALSE(fs::exists(path("out/render")));
  // Without ffmpeg on PATH: a message saying how to get it, exit 2, no file.
  const std::string savedPath = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  ::setenv("PATH", path("no-such-folder").c_str(), 1);
  r = run("render out --video clip.mp4");
  ::setenv("PATH", savedPath.c_str(), 1);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("ffmpeg was not found on PATH"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("clip.mp4")));
}

TEST_F(CliViewer, BadInputExits2WithAMessageAndWritesNothing) {
  Result r = run("view missing");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("missing: no such folder"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("missing")));

  fs::create_directories(path("empty"));
  r = run("view empty");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("no viewer-data.json"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("empty/viewer.html")));
  r = run("render empty");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("no viewer-data.json"), std::string::npos) << r.err;

  fs::create_directories(path("broken"));
  std::ofstream(path("broken/viewer-data.json")) << "{\"format\": \"pliant-viewer\", \"frames\": ";
  r = run("render broken");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("broken/viewer-data.json"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("broken/render/frame_000000.png")));
#if PLIANT_VIEWER_PAGE
  r = run("view broken");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("broken/viewer.html")));

  // An --html that cannot be written is refused before anything is simulated or written.
  std::ofstream(path("plain-file")) << "x";
  r = run("run rope --out out --frames 2 --quiet --html plain-file/viewer.html");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("plain-file/viewer.html"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out")));
  r = run("run rope --out out --frames 2 --quiet --html out");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r.err;
#endif

  r = run("run rope --out good --frames 2 --no-frames --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  r = run("render good --size 10by10");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--size"), std::string::npos) << r.err;
  r = run("render good --frames first");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--frames"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("good/render")));
}

}  // namespace
