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
  nlohmann::json summary = nlohmann::json::parse(readFile(path("out/summary.json")));
  EXPECT_EQ(summary.at("outputs").at("viewer_frames"), 6);
  EXPECT_EQ(summary.at("outputs").at("viewer_frame_stride"), 1);
  // With --no-frames (and no page) only the first and the last frame (docs/reliability.md).
  r = run("run rope --out bare --frames 5 --no-frames --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  data = nlohmann::json::parse(readFile(path("bare/viewer-data.json")), nullptr, false);
  EXPECT_EQ(data.at("frames").at("numbers"), nlohmann::json({0, 5}));
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
