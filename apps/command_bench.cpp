// pliant bench: time the benchmark scenes on 1 and 2 threads, CSV to stdout or --csv
// (pliant::bench, pliant/bench/benchmark.h).
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "commands.h"
#include "pliant/bench/benchmark.h"
#include "pliant/error.h"
#include "pliant/io/output.h"
#include "pliant/parallel.h"

namespace fs = std::filesystem;

namespace pliant::cli {
namespace {

struct BenchOptions {
  std::vector<std::string> scenes;  // empty: pliant::benchmarkSceneNames()
  std::vector<int> threads{1, 2};
  int frames = 0;   // 0: each scene's default
  std::string csv;  // "" = stdout
  bool quiet = false;
  bool stages = false;    // time the step pipeline's stages (pliant::StageTimes)
  bool pin = true;        // bind worker threads to cores (pliant::pinThreadsToCores)
  std::string maxMemory;  // --max-memory for scene files; "" = the default budget
};

// Runs every scene on every thread count, one CSV row each (pliant/bench/benchmark.h says what is measured).
// Names are checked before anything runs, so a typo costs nothing.
int runBench(const BenchOptions& options) {
  const pliant::SceneLoadOptions load = sceneLoadOptions(options.maxMemory);  // checked before anything runs
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
      scenes.push_back(pliant::loadSceneFile(name, load));
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
  std::string csv = pliant::benchmarkCsvHeader(options.stages);
  if (options.csv.empty()) std::cout << csv << std::flush;  // rows follow as they are measured
  for (const pliant::Scene& scene : scenes) {
    const int frames = options.frames > 0 ? options.frames : scene.frames;
    for (int threads : options.threads) {
      const pliant::BenchmarkResult result = pliant::runBenchmark(scene, threads, frames, options.stages);
      csv += pliant::benchmarkCsvRow(result, options.stages);
      if (!options.quiet)
        std::fprintf(stderr, "bench: %s, %d thread%s, %d frames: %.3f ms/frame, mean strain %.3g\n", scene.name.c_str(),
                     threads, threads == 1 ? "" : "s", frames, result.msPerFrame, result.strain.mean);
      if (options.csv.empty()) std::cout << pliant::benchmarkCsvRow(result, options.stages) << std::flush;
    }
  }
  if (!options.csv.empty()) pliant::io::writeFileAtomically(options.csv, csv);
  return 0;
}

}  // namespace

Command addBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Time benchmark scenes (scene A cloth-100-2m, scene B cloth-100-10m-bending, scaling curves) and write CSV");
  bench
      ->add_option("--scene", options->scenes,
                   "Scenes to run, repeatable or comma-separated: benchmark or built-in scene names, or scene files "
                   "(default: all benchmark scenes)")
      ->delimiter(',')
      ->allow_extra_args(false);
  bench->add_option("--threads", options->threads, "Thread counts, repeatable or comma-separated")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(atLeast(1))
      ->capture_default_str();
  bench->add_option("--frames", options->frames, "Frames per run (default: each scene's, see docs/performance.md)")
      ->check(atLeast(1));
  bench->add_option("--csv", options->csv, "Write the CSV to FILE (atomically) instead of stdout");
  bench->add_flag("-q,--quiet", options->quiet, "No progress lines on stderr");
  bench->add_flag("--stages", options->stages,
                  "Also time the step pipeline's stages: ten more columns, ms per frame in prediction, each kind of "
                  "contact found, constraints, contact projection, velocities, step end and the rest");
  bench->add_flag("!--no-pin", options->pin,
                  "Leave worker threads unbound (by default each is bound to its own core, so that the OS does not "
                  "move it and cost it its cache)");
  addMaxMemoryOption(bench, options->maxMemory);
  return {bench, [options] { return runBench(*options); }};
}

}  // namespace pliant::cli
