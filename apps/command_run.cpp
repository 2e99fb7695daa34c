// pliant run [SCENE]: simulate a scene file or a built-in scene into an output folder
// (pliant::runScene, pliant/run/run.h), with progress on stderr.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "pliant/error.h"
#include "pliant/run/run.h"
#include "pliant/viewer/viewer.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace pliant::cli {
namespace {

// Progress on stderr: a redrawn line on a terminal, a line every 10% otherwise; shown only once a
// run has taken more than a second. Fed by RunOptions::onFrame; the clock starts at its first call.
class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), terminal_(isatty(STDERR_FILENO) != 0) {}
  void update(int frame, int first, int last) {
    if (quiet_) return;
    const auto now = Clock::now();
    if (!started_) {
      started_ = true;
      start_ = now;
    }
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < 1.0) return;
    const int done = frame - first;
    const int total = last - first;
    const int percent = total > 0 ? 100 * done / total : 100;
    if (terminal_) {
      if (std::chrono::duration<double>(now - lastDraw_).count() < 0.1 && frame != last) return;
      lastDraw_ = now;
    } else {
      if (percent < nextPercent_ && frame != last) return;
      nextPercent_ = (percent / 10 + 1) * 10;
    }
    const double rate = done / elapsed;
    const double eta = rate > 0.0 ? (last - frame) / rate : 0.0;
    std::fprintf(stderr, "%sframe %d/%d  %3d%%  %.1f frames/s  ETA %.1f s%s", terminal_ ? "\r" : "", frame, last,
                 percent, rate, eta, terminal_ ? "   " : "\n");
    drawn_ = true;
  }
  void finish() {
    if (drawn_ && terminal_) std::fputc('\n', stderr);
  }

 private:
  bool quiet_, terminal_;
  bool started_ = false;
  Clock::time_point start_{}, lastDraw_{};
  int nextPercent_ = 0;
  bool drawn_ = false;
};

struct RunArguments {
  std::string scene;
  std::string out = "out";
  int frames = -1;
  std::string format = "vtk";
  int every = 1;
  int threads = 0;
  bool quiet = false;
  int checkpointEvery = 0;
  std::vector<int> checkpointAt;
  std::string resume;
  bool noFrames = false;
  bool uncompressed = false;  // --uncompressed: raw .vtu arrays
  bool noColliders = false;   // --no-colliders: no collider parts in the frames
  std::string html;           // the viewer page to write; "" = none
  bool htmlGiven = false;
  std::string maxMemory;  // --max-memory; "" = the default budget
};

int runCommand(const RunArguments& arguments) {
  // Everything that can be wrong with the input is checked before the output folder is touched.
  if (arguments.out.empty()) throw pliant::Error("--out: an empty path; expected an output folder");
  if (arguments.html.empty() && arguments.htmlGiven) throw pliant::Error("--html: an empty path; expected a file name");
  const pliant::Scene scene = loadScene(arguments.scene, arguments.maxMemory);
  pliant::RunOptions options;
  options.outputFolder = arguments.out;
  options.frames = arguments.frames;
  if (arguments.format == "obj") options.frameFormat = pliant::io::FrameFormat::Obj;
  else if (arguments.format == "ply") options.frameFormat = pliant::io::FrameFormat::Ply;
  else if (arguments.format == "glb") options.frameFormat = pliant::io::FrameFormat::Glb;
  options.writeFrames = !arguments.noFrames;
  options.vtuEncoding = arguments.uncompressed ? pliant::io::VtuEncoding::Raw : pliant::io::VtuEncoding::Zlib;
  options.colliderParts = !arguments.noColliders;
  options.frameEvery = arguments.every;
  options.threads = arguments.threads;
  options.checkpointEvery = arguments.checkpointEvery;
  options.checkpointAt = arguments.checkpointAt;
  options.resumeFrom = arguments.resume;
  options.htmlPage = arguments.html;
  options.source = arguments.scene.empty() ? "builtin:" + pliant::builtinSceneNames().front() : arguments.scene;
  // PLY has no polyline the common readers take: say what a rope becomes (docs/output.md).
  if (options.frameFormat == pliant::io::FrameFormat::Ply && options.writeFrames && !arguments.quiet)
    for (const pliant::io::TopologyPart& part : scene.topology.parts)
      if (part.linesEnd > part.linesBegin)
        std::cerr << "pliant: note: PLY has no polylines: '" << part.name
                  << "' is written as points only; use --format vtk or obj for its lines\n";
  Progress progress(arguments.quiet);
  options.onFrame = [&](int frame, int first, int last) { progress.update(frame, first, last); };
  const pliant::RunReport report = pliant::runScene(scene, options);
  progress.finish();
  if (!report.completed) {
    std::cerr << "pliant: " << (arguments.scene.empty() ? "default scene" : arguments.scene) << ": " << report.failure
              << '\n';
    return kExitInternal;
  }
  // The solve's convergence goes to the log even with --quiet: it says the results are off.
  if (!report.convergenceWarning.empty())
    std::cerr << "pliant: warning: " << (arguments.scene.empty() ? "default scene" : arguments.scene) << ": "
              << report.convergenceWarning << " (in " << report.unconvergedFrames.size()
              << " stretch(es) of frames from frame " << report.unconvergedFrames.front().first
              << "; see \"convergence\" in summary.json)\n";
  if (!arguments.quiet) {
    std::cout << "scene " << scene.name << ": frames " << report.firstFrame << ".." << report.lastFrame << ", "
              << scene.model->particleCount() << " particles, " << std::fixed << std::setprecision(2)
              << report.msPerFrame << " ms/frame, state hash " << hex(report.stateHash) << "\nwrote "
              << report.framesWritten << " frames and summary.json to " << fs::path(arguments.out).string() << '\n';
    if (arguments.noFrames) std::cout << "viewer: first and last frames only (--no-frames)\n";
    else if (report.viewerFrameStride > 1)
      std::cout << "viewer: frames subsampled (1 frame in " << report.viewerFrameStride << " of "
                << report.lastFrame - report.firstFrame + 1 << ") to stay under "
                << pliant::viewer::kFrameBudgetBytes / 1000000 << " MB of frame data\n";
  }
  // The page's path goes to stdout even with --quiet: it is what the caller opens.
  if (!arguments.html.empty())
    std::cout << "viewer: " << fs::absolute(arguments.html).lexically_normal().string() << '\n';
  return 0;
}

}  // namespace

Command addRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunArguments>();
  CLI::App* run =
      app.add_subcommand("run", "Simulate a scene file or a built-in scene (the default scene when none is given)");
  run->add_option("scene", options->scene, "Scene file (.json) or built-in scene name (see `pliant scenes`)");
  run->add_option("--out", options->out, "Output folder")->capture_default_str();
  run->add_option("--frames", options->frames, "Number of frames to simulate (default: the scene's)")
      ->check(atLeast(0));
  run->add_option("--format", options->format,
                  "Frame format: vtk (.vtu + scene.pvd), obj, ply, or glb (one animated scene.glb for the run)")
      ->check(CLI::IsMember({"vtk", "obj", "ply", "glb"}))
      ->capture_default_str();
  run->add_option("--every", options->every, "Write every Nth frame")->check(atLeast(1))->capture_default_str();
  run->add_flag("--no-frames", options->noFrames, "Write no frame files (summary, probes and final state only)");
  run->add_flag("--uncompressed", options->uncompressed,
                "Write .vtu frames uncompressed (raw appended data: faster to write, about 2x larger)");
  run->add_flag("--no-colliders", options->noColliders, "Leave the colliders out of the frames (objects only)");
  run->add_option("--threads", options->threads, "Worker threads, fixed (default: automatic, up to all cores)")
      ->check(atLeast(1));
  run->add_option("--checkpoint-every", options->checkpointEvery, "Save a checkpoint every N frames")
      ->check(atLeast(0));
  // One argument per occurrence, split at commas (--checkpoint-at 30,60), so a scene name after it is
  // not taken for a frame.
  run->add_option("--checkpoint-at", options->checkpointAt, "Save checkpoints at these frames (F1,F2,...)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(atLeast(1));
  run->add_option("--resume", options->resume, "Resume from a checkpoint file written by --checkpoint-*");
  run->add_flag("-q,--quiet", options->quiet, "No progress bar and no summary line");
  run->add_option("--html", options->html,
                  "Also write the self-contained HTML viewer page to FILE (e.g. out/viewer.html)")
      ->each([options](const std::string&) { options->htmlGiven = true; });
  addMaxMemoryOption(run, options->maxMemory);
  return {run, [options] { return runCommand(*options); }};
}

}  // namespace pliant::cli
