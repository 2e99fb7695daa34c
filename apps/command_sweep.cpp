// pliant sweep SWEEP --out DIR: run a parameter sweep (pliant/run/sweep.h, docs/sweep.md) on this
// machine's cores, or over the ranks of an MPI job when started by mpirun.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "pliant/error.h"
#include "pliant/parallel.h"
#include "pliant/run/sweep.h"
#include "sweep_driver.h"

namespace fs = std::filesystem;

namespace pliant::cli {
namespace {

struct SweepArguments {
  std::string sweep;
  std::string out;
  int jobs = 0;  // 0 = all cores (1 per rank under MPI)
  bool force = false;
  bool quiet = false;
  std::string maxMemory;
};

// Set by SIGINT / SIGTERM: running cases stop at their next frame, none starts, and the table is
// written as it stands (the stopped cases stay pending, so the same command resumes them).
std::atomic<bool> stopRequested{false};
static_assert(std::atomic<bool>::is_always_lock_free);
extern "C" void onStopSignal(int) { stopRequested.store(true); }

// A file when it names one (or looks like one), else a built-in sweep.
pliant::sweep::Sweep loadSweep(const std::string& argument, const pliant::SceneLoadOptions& options) {
  std::error_code ec;
  const bool looksLikeFile = argument.find('/') != std::string::npos || argument.find('.') != std::string::npos;
  if (fs::exists(argument, ec) || looksLikeFile) return pliant::sweep::loadSweepFile(argument, options);
  const std::string text = pliant::sweep::builtinSweepText(argument);
  if (text.empty()) {
    std::string known;
    for (const std::string& n : pliant::sweep::builtinSweepNames()) known += (known.empty() ? "" : ", ") + n;
    throw pliant::Error("no sweep file '" + argument +
                        "', and no built-in sweep of that name (built-in sweeps: " + known + ")");
  }
  return pliant::sweep::parseSweep(text, "builtin:" + argument, "", options);
}

// Redrawn on a terminal (cases done, failed, time left); nothing otherwise.
class SweepProgress {
 public:
  explicit SweepProgress(bool quiet) : shown_(!quiet && isatty(STDERR_FILENO) != 0) {}
  void update(const pliant::sweep::Progress& p) {
    if (!shown_) return;
    // At most ten redraws a second, however quick the cases.
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && p.done < p.total && now - lastDraw_ < std::chrono::milliseconds(100)) return;
    lastDraw_ = now;
    const double perCase = p.done > 0 ? p.elapsedSeconds / static_cast<double>(p.done) : 0.0;
    const double left = perCase * static_cast<double>(p.total - p.done);
    std::fprintf(stderr, "\rcases %zu/%zu done, %zu failed, %.0f s left   ", p.done, p.total, p.failed, left);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fputc('\n', stderr);
  }

 private:
  bool shown_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point lastDraw_{};
};

int sweepCommand(const SweepArguments& arguments) {
  if (arguments.out.empty()) throw pliant::Error("--out: an empty path; expected an output folder");
  const bool underMpi = launchedByMpi();
#if !defined(PLIANT_WITH_MPI)
  if (underMpi)
    throw pliant::Error(
        "started by mpirun, but this pliant was built without MPI (configure with -DPLIANT_WITH_MPI=ON and "
        "Open MPI's libopenmpi-dev); every rank would run the whole sweep");
#endif
  const pliant::sweep::Sweep sweep = loadSweep(arguments.sweep, sceneLoadOptions(arguments.maxMemory));
  SweepRun run;
  run.sweep = &sweep;
  run.out = arguments.out;
  run.force = arguments.force;
  run.jobs = arguments.jobs > 0 ? arguments.jobs : underMpi ? 1 : pliant::availableCores();
  run.stop = &stopRequested;
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  auto progress = std::make_shared<SweepProgress>(arguments.quiet);
  run.onCase = [progress](const pliant::sweep::Progress& p) { progress->update(p); };
  run.onEnd = [progress, &arguments, &sweep](const pliant::sweep::ResultsTable& table, std::size_t runNow,
                                             bool stopped) {
    progress->finish();
    if (stopped)
      std::cerr << "pliant: sweep stopped: " << table.count("pending")
                << " case(s) pending; run the same command again to resume\n";
    if (arguments.quiet) return;
    std::cout << "sweep " << sweep.name << ": " << sweep.cases.size() << " cases: " << table.count("completed")
              << " completed, " << table.count("refused") << " refused, " << table.count("failed") << " failed, "
              << table.count("error") << " error, " << table.count("pending") << " pending (" << runNow << " to run, "
              << sweep.cases.size() - runNow
              << " already done)\nresults: " << (fs::path(arguments.out) / "results.csv").string() << '\n';
  };
  if (underMpi) {
#if defined(PLIANT_WITH_MPI)
    return runSweepOverRanks(run);
#endif
  }
  std::unique_ptr<pliant::sweep::FolderLock> lock;
  pliant::sweep::ResultsTable table(sweep, run.out, pliant::sweep::prepareFolder(sweep, run.out, run.force, &lock));
  const std::size_t runNow = pliant::sweep::pendingCases(table.results()).size();
  pliant::sweep::LocalOptions options;
  options.jobs = run.jobs;
  options.stop = run.stop;
  options.onCase = run.onCase;
  pliant::sweep::runLocally(sweep, run.out, table, options);
  const bool stopped = stopRequested.load();
  run.onEnd(table, runNow, stopped);
  if (stopped) return 130;
  return table.count("error") > 0 ? kExitInternal : 0;
}

}  // namespace

bool launchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

Command addSweepCommand(CLI::App& app) {
  auto options = std::make_shared<SweepArguments>();
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Run a parameter sweep: many cases of one scene, one results table (mpirun spreads it over ranks)");
  sweep->add_option("sweep", options->sweep, "Sweep file (.json, docs/sweep.md) or built-in sweep name (cloth-sag)")
      ->required();
  sweep->add_option("--out", options->out, "Output folder (a rerun into it resumes)")->required();
  sweep->add_option("-j,--jobs", options->jobs, "Cases at once, one thread each (default: all cores; 1 per MPI rank)")
      ->check(atLeast(1));
  sweep->add_flag("--force", options->force,
                  "Run even if the output folder holds another sweep or other files (unchanged cases are kept)");
  sweep->add_flag("-q,--quiet", options->quiet, "No progress line and no closing summary");
  addMaxMemoryOption(sweep, options->maxMemory);
  return {sweep, [options] { return sweepCommand(*options); }};
}

}  // namespace pliant::cli
