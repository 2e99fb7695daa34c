// The viewer: what `pliant run` records for it, the self-contained HTML page and headless PNG images.
//
// `pliant run` records the frames into a viewer data file, `viewer-data.json` in its output folder:
// JSON holding the topology once, positions per frame as float32 little-endian in base64, the
// colliders with their pose in every recorded frame, and the scene's name and times. The page is a
// template (viewer/web) with three.js (from npm, embedded at build time), that data, the probe CSV
// and the run's summary.json inlined: one file, nothing fetched when it is opened. `pliant view DIR`
// rebuilds the page from the data file, probes.csv and summary.json; `pliant render DIR` draws frames of it to PNG with
// a small software rasteriser, so neither a GPU nor a browser is needed for report images.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pliant/io/scenes.h"
#include "pliant/state.h"

namespace pliant::viewer {

// Frames are kept while their base64 text stays within this many bytes; above it every k-th frame
// is kept (and the first and last), and the page says so. With three.js (about 3 MB) the page stays
// under 50 MB.
constexpr std::size_t kFrameBudgetBytes = 40'000'000;

// Name of the viewer data file inside a run's output folder.
constexpr const char* kDataFileName = "viewer-data.json";

// Records the frames [firstFrame, lastFrame] of a run, subsampled to fit `frameBudgetBytes`.
class ViewerRecorder {
 public:
  ViewerRecorder(const Scene& scene, int firstFrame, int lastFrame, std::size_t frameBudgetBytes = kFrameBudgetBytes);
  // Whether `frame` is one of the frames kept (call record for every frame; others are skipped).
  bool keeps(int frame) const;
  void record(int frame, const State& state);
  int stride() const { return stride_; }
  std::size_t recordedFrames() const { return positions_.size(); }
  // The viewer data file's text (JSON).
  std::string json() const;

 private:
  const Scene* scene_;
  int firstFrame_, lastFrame_, stride_ = 1;
  std::size_t budget_;
  std::vector<int> numbers_;
  std::vector<double> times_;
  std::vector<std::string> positions_;
  std::vector<std::vector<std::array<double, 7>>> colliderPoses_;  // per collider, per frame
};

// True when this build embeds three.js and the page template (node_modules was present at
// configure time). Without it writePage throws pliant::Error saying how to get it.
bool pageAvailable();

// The self-contained HTML page for viewer data `dataJson`, probe CSV text (may be empty) and the
// run's summary.json text (may be empty: the page then shows no summary nor convergence).
std::string buildPage(const std::string& dataJson, const std::string& probesCsv, const std::string& summaryJson = "");

// Throws pliant::Error naming `file` unless its folder exists and is writable, so a run can refuse
// a bad --html before simulating.
void checkWritable(const std::string& file);

// Reads DIR/viewer-data.json (and DIR/probes.csv and DIR/summary.json when present) and writes the
// page to `htmlFile` atomically. Throws pliant::Error naming the folder or file on bad input.
void writePageFromFolder(const std::string& folder, const std::string& htmlFile);

// PNG images of recorded frames, drawn headlessly from the viewer data: the same default camera
// as the page, Lambert-shaded surfaces, lines, colliders.
struct RenderOptions {
  int width = 960;   // pixels
  int height = 720;  // pixels
};
// Renders simulated frame `frame` (the nearest recorded one; -1 = the last) of `dataJson` and
// returns PNG bytes; `shownFrame` receives the frame number drawn.
std::string renderPng(const std::string& dataJson, int frame, const RenderOptions& options, int* shownFrame = nullptr);

// base64 (RFC 4648, with padding).
std::string base64Encode(std::string_view bytes);
std::string base64Decode(std::string_view text);

// Minimal PNG writer: 8-bit RGB, zlib-compressed.
std::string encodePng(int width, int height, const std::vector<std::uint8_t>& rgb);

}  // namespace pliant::viewer
