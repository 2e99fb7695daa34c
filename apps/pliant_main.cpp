// The pliant command-line tool.
//   pliant run [SCENE] ...   simulate a scene file or a built-in scene (the default one when omitted)
//   pliant scenes [NAME]     list built-in scenes, or print one as JSON
//   pliant validate FILE     check a scene file without running it
//   pliant info FILE         print a scene's size
//   pliant view DIR          write the HTML viewer page of a run's output folder
//   pliant render DIR        write PNG images of frames of a run's output folder
//   pliant bench             time the benchmark scenes on 1 and 2 threads, CSV to stdout or --csv
// Exit codes: 0 success, 2 bad input (scene, mesh, arguments), 1 internal failure (including a
// refused step). Progress goes to stderr, data to files.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pliant/geometry.h"
#include "pliant/io/output.h"
#include "pliant/parallel.h"
#include "pliant/pliant.h"
#include "pliant/run/run.h"
#include "viewer.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

// A scene argument is a file when it names one (or looks like one), else a built-in name.
pliant::Scene loadScene(const std::string& argument) {
  if (argument.empty()) return pliant::makeBuiltinScene(pliant::builtinSceneNames().front());
  std::error_code ec;
  const bool looksLikeFile = argument.find('/') != std::string::npos || argument.find('.') != std::string::npos;
  if (fs::exists(argument, ec) || looksLikeFile) return pliant::loadSceneFile(argument);
  return pliant::makeBuiltinScene(argument);
}

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

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
  std::string html;  // the viewer page to write; "" = none
};

int runCommand(const RunArguments& arguments) {
  // Everything that can be wrong with the input is checked before the output folder is touched.
  const pliant::Scene scene = loadScene(arguments.scene);
  pliant::RunOptions options;
  options.outputFolder = arguments.out;
  options.frames = arguments.frames;
  if (arguments.format == "obj") options.frameFormat = pliant::io::FrameFormat::Obj;
  else if (arguments.format == "ply") options.frameFormat = pliant::io::FrameFormat::Ply;
  options.writeFrames = !arguments.noFrames;
  options.frameEvery = arguments.every;
  options.threads = arguments.threads;
  options.checkpointEvery = arguments.checkpointEvery;
  options.checkpointAt = arguments.checkpointAt;
  options.resumeFrom = arguments.resume;
  options.htmlPage = arguments.html;
  options.source = arguments.scene.empty() ? "builtin:" + pliant::builtinSceneNames().front() : arguments.scene;
  Progress progress(arguments.quiet);
  options.onFrame = [&](int frame, int first, int last) { progress.update(frame, first, last); };
  const pliant::RunReport report = pliant::runScene(scene, options);
  progress.finish();
  if (!report.completed) {
    std::cerr << "pliant: " << (arguments.scene.empty() ? "default scene" : arguments.scene) << ": " << report.failure
              << '\n';
    return kExitInternal;
  }
  if (!arguments.quiet) {
    std::cout << "scene " << scene.name << ": frames " << report.firstFrame << ".." << report.lastFrame << ", "
              << scene.model->particleCount() << " particles, " << std::fixed << std::setprecision(2)
              << report.msPerFrame << " ms/frame, state hash " << hex(report.stateHash) << "\nwrote "
              << report.framesWritten << " frames and summary.json to " << fs::path(arguments.out).string() << '\n';
    if (report.viewerFrameStride > 1)
      std::cout << "viewer: frames subsampled (1 frame in " << report.viewerFrameStride << " of "
                << report.lastFrame - report.firstFrame + 1 << ") to stay under "
                << pliant::viewer::kFrameBudgetBytes / 1000000 << " MB of frame data\n";
  }
  // The page's path goes to stdout even with --quiet: it is what the caller opens.
  if (!arguments.html.empty())
    std::cout << "viewer: " << fs::absolute(arguments.html).lexically_normal().string() << '\n';
  return 0;
}

int renderFolder(const std::string& dir, std::vector<std::string> frames, const std::string& out,
                 const std::string& size) {
  pliant::viewer::RenderOptions render;
  {
    const std::size_t x = size.find('x');
    std::size_t used = 0;
    bool ok = x != std::string::npos;
    try {
      if (ok) render.width = std::stoi(size.substr(0, x), &used);
      ok = ok && used == x;
      if (ok) render.height = std::stoi(size.substr(x + 1), &used);
      ok = ok && used == size.size() - x - 1;
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok) throw pliant::Error("--size: expected WIDTHxHEIGHT (e.g. 960x720), got '" + size + "'");
  }
  std::vector<int> numbers;
  if (frames.empty()) frames = {"0", "last"};
  for (const std::string& f : frames) {
    if (f == "last") {
      numbers.push_back(-1);
      continue;
    }
    std::size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(f, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != f.size() || used == 0 || value < 0)
      throw pliant::Error("--frames: expected frame numbers or `last`, got '" + f + "'");
    numbers.push_back(value);
  }
  const fs::path folder(dir);
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw pliant::Error(dir + ": no such folder (expected the output folder of `pliant run`)");
  const fs::path dataFile = folder / pliant::viewer::kDataFileName;
  std::ifstream in(dataFile, std::ios::binary);
  if (!in)
    throw pliant::Error(dir + ": no " + std::string(pliant::viewer::kDataFileName) +
                        " in it (expected the output folder of `pliant run`)");
  std::ostringstream text;
  text << in.rdbuf();
  const fs::path outDir = out.empty() ? folder / "render" : fs::path(out);
  fs::create_directories(outDir, ec);
  if (ec || !fs::is_directory(outDir)) throw pliant::Error(outDir.string() + ": cannot create the folder");
  for (int number : numbers) {
    int shown = 0;
    std::string png;
    try {
      png = pliant::viewer::renderPng(text.str(), number, render, &shown);
    } catch (const nlohmann::json::exception& e) {
      throw pliant::Error(dataFile.string() + ": not a valid viewer data file (" + e.what() + ")");
    }
    std::ostringstream name;
    name << "frame_" << std::setw(6) << std::setfill('0') << shown << ".png";
    pliant::io::writeFileAtomically((outDir / name.str()).string(), png);
    std::cout << "render: " << (outDir / name.str()).string() << '\n';
  }
  return 0;
}

struct BenchOptions {
  std::vector<std::string> scenes;  // empty: pliant::benchmarkSceneNames()
  std::vector<int> threads{1, 2};
  int frames = 0;   // 0: each scene's default
  std::string csv;  // "" = stdout
  bool quiet = false;
  bool pin = true;  // bind worker threads to cores (pliant::pinThreadsToCores)
};

// Runs every scene on every thread count, one CSV row each (pliant/benchmark.h says what is measured).
// Names are checked before anything runs, so a typo costs nothing.
int runBench(const BenchOptions& options) {
  const std::vector<std::string> names = options.scenes.empty() ? pliant::benchmarkSceneNames() : options.scenes;
  std::vector<std::string> known = pliant::benchmarkSceneNames();
  for (const std::string& name : pliant::builtinSceneNames()) known.push_back(name);
  // Every scene is built (a file loaded like `pliant run` loads it) before anything runs, so a typo
  // or a bad file costs nothing.
  std::vector<pliant::Scene> scenes;
  for (const std::string& name : names) {
    if (std::find(known.begin(), known.end(), name) != known.end()) {
      scenes.push_back(pliant::makeBenchmarkScene(name));
    } else if (name.find('/') != std::string::npos || name.ends_with(".json")) {
      scenes.push_back(pliant::loadSceneFile(name));
      scenes.back().name = name;  // rows name the file as given
    } else {
      pliant::makeBenchmarkScene(name);  // throws, listing the benchmark scenes
    }
  }
  if (!options.csv.empty()) {
    const fs::path folder = fs::absolute(options.csv).parent_path();
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      throw pliant::Error("--csv " + options.csv + ": no such folder " + folder.string());
  }
  if (options.pin) {
    // Every run uses the first threads of the largest team, so binding that team once binds them all.
    const int saved = pliant::threadCount();
    pliant::setThreadCount(*std::max_element(options.threads.begin(), options.threads.end()));
    pliant::pinThreadsToCores();
    pliant::setThreadCount(saved);
  }
  std::string csv = pliant::benchmarkCsvHeader();
  if (options.csv.empty()) std::cout << csv << std::flush;  // rows follow as they are measured
  for (const pliant::Scene& scene : scenes) {
    const int frames = options.frames > 0 ? options.frames : scene.frames;
    for (int threads : options.threads) {
      const pliant::BenchmarkResult result = pliant::runBenchmark(scene, threads, frames);
      csv += pliant::benchmarkCsvRow(result);
      if (!options.quiet)
        std::fprintf(stderr, "bench: %s, %d thread%s, %d frames: %.3f ms/frame, mean strain %.3g\n", scene.name.c_str(),
                     threads, threads == 1 ? "" : "s", frames, result.msPerFrame, result.strain.mean);
      if (options.csv.empty()) std::cout << pliant::benchmarkCsvRow(result) << std::flush;
    }
  }
  if (!options.csv.empty()) pliant::io::writeFileAtomically(options.csv, csv);
  return 0;
}

int printInfo(const std::string& file) {
  const pliant::Scene scene = loadScene(file);
  const pliant::Model& m = *scene.model;
  std::cout << "scene        " << scene.name << "\n"
            << "description  " << scene.description << "\n"
            << "solver       " << (scene.settings.mode == pliant::SolverMode::Xpbd ? "xpbd" : "pbd") << ", dt "
            << scene.settings.timeStep << " s, " << scene.settings.substeps << " substeps x "
            << scene.settings.iterations << " iterations\n"
            << "frames       " << scene.frames << " (" << scene.frames * scene.settings.timeStep << " s)\n"
            << "objects      " << scene.objects.size() << "\n";
  for (const pliant::SceneObject& o : scene.objects)
    std::cout << "  " << std::left << std::setw(16) << o.name << o.particleCount << " particles\n";
  std::cout << "particles    " << m.particleCount() << "\n";
  for (int f = 0; f < pliant::kConstraintFamilyCount; ++f) {
    const auto family = static_cast<pliant::ConstraintFamily>(f);
    if (m.constraintCount(family) > 0)
      std::cout << "  " << std::left << std::setw(18) << pliant::familyName(family) << m.constraintCount(family)
                << "\n";
  }
  std::cout << "constraints  " << m.totalConstraintCount() << "\n"
            << "triangles    " << scene.topology.triangles.size() << "\n"
            << "tets         " << scene.topology.tets.size() << "\n"
            << "probes       " << scene.probes.size() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Pliant: position-based simulation (PBD, XPBD, small-step XPBD).\n"
      "With no subcommand, runs the default built-in scene into ./out."};
  app.set_version_flag("--version", std::string("pliant ") + PLIANT_VERSION);
  app.require_subcommand(0, 1);

  RunArguments options;
  CLI::App* run =
      app.add_subcommand("run", "Simulate a scene file or a built-in scene (the default scene when none is given)");
  run->add_option("scene", options.scene, "Scene file (.json) or built-in scene name (see `pliant scenes`)");
  run->add_option("--out", options.out, "Output folder")->capture_default_str();
  run->add_option("--frames", options.frames, "Number of frames to simulate (default: the scene's)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--format", options.format, "Frame format")
      ->check(CLI::IsMember({"vtk", "obj", "ply"}))
      ->capture_default_str();
  run->add_option("--every", options.every, "Write every Nth frame")->check(CLI::PositiveNumber)->capture_default_str();
  run->add_flag("--no-frames", options.noFrames, "Write no frame files (summary, probes and final state only)");
  run->add_option("--threads", options.threads, "Worker threads (default: all cores)")->check(CLI::PositiveNumber);
  run->add_option("--checkpoint-every", options.checkpointEvery, "Save a checkpoint every N frames")
      ->check(CLI::NonNegativeNumber);
  // One argument per occurrence, split at commas (--checkpoint-at 30,60), so a scene name after it is
  // not taken for a frame.
  run->add_option("--checkpoint-at", options.checkpointAt, "Save checkpoints at these frames (F1,F2,...)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::PositiveNumber);
  run->add_option("--resume", options.resume, "Resume from a checkpoint file written by --checkpoint-*");
  run->add_flag("-q,--quiet", options.quiet, "No progress bar and no summary line");
  run->add_option("--html", options.html,
                  "Also write the self-contained HTML viewer page to FILE (e.g. out/viewer.html)");

  std::string viewDir, viewHtml;
  CLI::App* view = app.add_subcommand("view", "Write the HTML viewer page of an output folder of `pliant run`");
  view->add_option("dir", viewDir, "Output folder of `pliant run` (holds viewer-data.json)")->required();
  view->add_option("--html", viewHtml, "Page to write (default: DIR/viewer.html)");

  std::string renderDir, renderOut, renderSize = "960x720";
  std::vector<std::string> renderFrames;
  CLI::App* render =
      app.add_subcommand("render", "Write PNG images of frames of an output folder of `pliant run`, headlessly");
  render->add_option("dir", renderDir, "Output folder of `pliant run` (holds viewer-data.json)")->required();
  render
      ->add_option("--frames", renderFrames,
                   "Frames to draw: numbers or `last`, comma-separated (default: first,last); the nearest recorded "
                   "frame is drawn")
      ->delimiter(',')
      ->allow_extra_args(false);
  render->add_option("--out", renderOut, "Folder for the images (default: DIR/render)");
  render->add_option("--size", renderSize, "Image size WIDTHxHEIGHT in pixels")->capture_default_str();

  BenchOptions benchOptions;
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Time benchmark scenes (scene A cloth-100-2m, scene B cloth-100-10m-bending, scaling curves) and write CSV");
  bench
      ->add_option("--scene", benchOptions.scenes,
                   "Scenes to run, repeatable or comma-separated: benchmark or built-in scene names, or scene files "
                   "(default: all benchmark scenes)")
      ->delimiter(',')
      ->allow_extra_args(false);
  bench->add_option("--threads", benchOptions.threads, "Thread counts, repeatable or comma-separated")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--frames", benchOptions.frames, "Frames per run (default: each scene's, see docs/performance.md)")
      ->check(CLI::PositiveNumber);
  bench->add_option("--csv", benchOptions.csv, "Write the CSV to FILE (atomically) instead of stdout");
  bench->add_flag("-q,--quiet", benchOptions.quiet, "No progress lines on stderr");
  bench->add_flag("!--no-pin", benchOptions.pin,
                  "Leave worker threads unbound (by default each is bound to its own core, so that the OS does not "
                  "move it and cost it its cache)");

  std::string sceneToPrint;
  CLI::App* scenes = app.add_subcommand("scenes", "List the built-in scenes, or print one as JSON");
  scenes->add_option("name", sceneToPrint, "Print this built-in scene's JSON");

  std::string validateFile;
  CLI::App* validate = app.add_subcommand("validate", "Check a scene file without running it");
  validate->add_option("file", validateFile, "Scene file")->required();

  std::string infoFile;
  CLI::App* info = app.add_subcommand("info", "Print a scene's size (particles, constraints, frames)");
  info->add_option("file", infoFile, "Scene file or built-in scene name")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  try {
    if (*scenes) {
      if (!sceneToPrint.empty()) {
        const std::string text = pliant::builtinSceneText(sceneToPrint);
        if (text.empty()) throw pliant::Error("unknown built-in scene '" + sceneToPrint + "'");
        std::cout << text;
        return 0;
      }
      const std::vector<std::string> names = pliant::builtinSceneNames();
      std::size_t width = 0;
      for (const std::string& name : names) width = std::max(width, name.size());
      for (const std::string& name : names)
        std::cout << std::left << std::setw(static_cast<int>(width + 2)) << name
                  << pliant::builtinSceneDescription(name) << '\n';
      return 0;
    }
    if (*validate) {
      const pliant::Scene scene = pliant::loadSceneFile(validateFile);
      std::cout << validateFile << ": ok (" << scene.model->particleCount() << " particles, "
                << scene.model->totalConstraintCount() << " constraints, " << scene.frames << " frames)\n";
      return 0;
    }
    if (*info) return printInfo(infoFile);
    if (*view) {
      const std::string html = viewHtml.empty() ? (fs::path(viewDir) / "viewer.html").string() : viewHtml;
      pliant::viewer::writePageFromFolder(viewDir, html);
      std::cout << "viewer: " << fs::absolute(html).lexically_normal().string() << '\n';
      return 0;
    }
    if (*render) return renderFolder(renderDir, renderFrames, renderOut, renderSize);
    if (*bench) return runBench(benchOptions);
    return runCommand(options);
  } catch (const pliant::Error& e) {
    std::cerr << "pliant: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "pliant: internal error: " << e.what() << '\n';
    return kExitInternal;
  }
}
