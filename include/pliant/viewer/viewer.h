// The viewer: what `pliant run` records for it, the self-contained HTML page and headless PNG images.
//
// `pliant run` records the frames into a viewer data file, `viewer-data.json` in its output folder:
// JSON holding the topology once, positions per frame as float32 little-endian in base64, the
// colliders with their pose in every recorded frame, and the scene's name and times. The page is a
// template (viewer/web) with three.js (from npm, embedded at build time), that data, the probe CSV
// and the run's summary.json inlined: one file, nothing fetched when it is opened. `pliant view DIR`
// rebuilds the page from the data file, probes.csv and summary.json; `pliant render DIR` draws frames of it to PNG
// (or a video through ffmpeg) with a small software rasteriser, so neither a GPU nor a browser is needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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

// Records the frames [firstFrame, lastFrame] of a run, subsampled to fit `frameBudgetBytes`. An
// object with a skin (io::TopologyPart::skin) is drawn as its skin: its vertices are appended to
// each frame's points after the particles, and its triangles replace the object's tet boundary.
class ViewerRecorder {
 public:
  ViewerRecorder(const Scene& scene, int firstFrame, int lastFrame, std::size_t frameBudgetBytes = kFrameBudgetBytes);
  // Whether `frame` is one of the frames kept (call record for every frame; others are skipped).
  bool keeps(int frame) const;
  void record(int frame, const State& state);
  // The solve's strain residual (ResidualReport::strain, pliant/diagnostics.h) after simulated
  // frame `frame`, for the page's convergence plot: every simulated frame, in order, not only the
  // kept ones (8 bytes a frame).
  void recordResidual(int frame, double strain);
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
  std::vector<std::vector<std::array<double, 7>>> bodyPoses_;      // per body, per frame (shape frame)
  std::vector<std::vector<std::array<double, 6>>> jointAnchors_;   // per joint, per frame: A's, B's (m)
  // Points drawn per frame: the particles, then each skinned object's skin vertices (issue 18).
  std::size_t points_ = 0;
  std::vector<Vec3> drawn_;  // scratch of record(): the particles and skins of one frame
  int firstResidualFrame_ = 0;
  std::vector<double> residuals_;  // strain residual per simulated frame from firstResidualFrame_
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

// Images of recorded frames, drawn headlessly from the viewer data: the same default camera as the
// page, Lambert-shaded surfaces, lines, colliders, and the simulated time in a corner.
struct RenderOptions {
  int width = 960;   // pixels
  int height = 720;  // pixels
  // The camera; what is left unset comes from the default view (framed on the positions of the
  // whole run). Only a target: the default view's direction and distance about it.
  std::optional<Vec3> cameraPosition;  // m
  std::optional<Vec3> cameraTarget;    // m
  double fieldOfViewDegrees = 40.0;    // vertical, degrees (0, 180)
  bool timeOverlay = true;             // "t = 1.250 s" in the top-left corner
};

// Draws the recorded frames of one viewer data file: the data is read and the camera framed once,
// so a video of every frame costs one decode per frame. Throws pliant::Error on a malformed file or
// bad options.
class FrameRenderer {
 public:
  FrameRenderer(const std::string& dataJson, const RenderOptions& options);
  ~FrameRenderer();
  FrameRenderer(const FrameRenderer&) = delete;
  FrameRenderer& operator=(const FrameRenderer&) = delete;
  std::size_t frameCount() const;
  int frameNumber(std::size_t index) const;   // the simulated frame of recorded frame `index`
  double frameTime(std::size_t index) const;  // s
  // The recorded frame nearest to simulated frame `frame` (-1 = the last).
  std::size_t nearestIndex(int frame) const;
  const RenderOptions& options() const;
  // Recorded frame `index` as 8-bit RGB rows, top row first (width * height * 3 bytes).
  std::vector<std::uint8_t> rgb(std::size_t index) const;

 private:
  struct Impl;
  std::unique_ptr<const Impl> impl_;
};

// Renders simulated frame `frame` (the nearest recorded one; -1 = the last) of `dataJson` and
// returns PNG bytes; `shownFrame` receives the frame number drawn.
std::string renderPng(const std::string& dataJson, int frame, const RenderOptions& options, int* shownFrame = nullptr);

// A video of recorded frames [first, last] of `renderer` (indices), encoded by Debian's ffmpeg
// (H.264, yuv420p) into `file` (.mp4, .mov or .mkv) at `framesPerSecond` (0: the run's own pace,
// one second of video per simulated second). Raw RGB frames are piped to ffmpeg, which writes a
// temporary beside `file` that is renamed into place when ffmpeg exits 0, so a failure never leaves
// a half-written video. Throws pliant::Error (ffmpeg missing, odd image size, a bad path: checked
// before any frame is drawn) or pliant::SystemError (ffmpeg failed; its last message included).
// `onFrame(done, total)`, when given, is called after each frame.
void writeVideo(const FrameRenderer& renderer, const std::string& file, double framesPerSecond = 0.0,
                const std::function<void(std::size_t, std::size_t)>& onFrame = {});
// Throws pliant::Error unless `file` can be a video: a known extension and a writable folder, and
// ffmpeg is on PATH. writeVideo checks it too; a command calls it before its slow work.
void checkVideoTarget(const std::string& file);

// The page of a parameter sweep's output folder (pliant/run/sweep.h): one SVG chart per numeric
// metric of results.csv against the first parameter (a log axis when it spans two decades or more),
// one line per value of the other parameters, completed cases only; then the whole table, failed
// cases marked. Self-contained HTML, no script. Throws pliant::Error for a table that is not a sweep's.
std::string buildSweepPage(const std::string& resultsCsv, const std::string& sweepJson);
// Whether `folder` holds a sweep's sweep.json and results.csv.
bool isSweepFolder(const std::string& folder);
// Writes buildSweepPage of `folder`'s files to `htmlFile` atomically.
void writeSweepPage(const std::string& folder, const std::string& htmlFile);

// base64 (RFC 4648, with padding).
std::string base64Encode(std::string_view bytes);
std::string base64Decode(std::string_view text);

// Minimal PNG writer: 8-bit RGB, zlib-compressed.
std::string encodePng(int width, int height, const std::vector<std::uint8_t>& rgb);

}  // namespace pliant::viewer
