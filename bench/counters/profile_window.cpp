// A window of frames of a benchmark scene, for profiles of a later phase of a run (issue 14: the
// folded cloth of contact-fold-64 costs most after frame 40): runs the first --skip frames, then
// the next --frames frames, and prints the window's wall ms/frame and the state hash at its end.
// Under `valgrind --tool=callgrind --instr-atstart=no` only the window is counted.
//
// Usage: pliant_profile_window [--skip N] [--frames M] [--threads T] SCENE
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pliant/bench/benchmark.h"
#include "pliant/error.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define PLIANT_WINDOW_START() CALLGRIND_START_INSTRUMENTATION
#define PLIANT_WINDOW_STOP() CALLGRIND_STOP_INSTRUMENTATION
#else
#define PLIANT_WINDOW_START()
#define PLIANT_WINDOW_STOP()
#endif

int main(int argc, char** argv) {
  int skip = 0, frames = 1, threads = 1;
  std::string scene;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto count = [&](int least) {
      const int value = i + 1 < argc ? std::atoi(argv[++i]) : -1;
      if (value < least) {
        std::fprintf(stderr, "pliant_profile_window: %s expects an integer of at least %d\n", arg.c_str(), least);
        std::exit(2);
      }
      return value;
    };
    if (arg == "--skip") skip = count(0);
    else if (arg == "--frames") frames = count(1);
    else if (arg == "--threads") threads = count(1);
    else if (arg == "--help" || arg == "-h") {
      std::printf("Usage: pliant_profile_window [--skip N] [--frames M] [--threads T] SCENE\n");
      return 0;
    } else scene = arg;
  }
  if (scene.empty()) {
    std::fprintf(stderr, "pliant_profile_window: name a benchmark scene\n");
    return 2;
  }
  try {
    pliant::setThreadCount(threads);
    const pliant::Scene s = pliant::makeBenchmarkScene(scene);
    pliant::Solver solver(s.model, s.settings);
    pliant::State state = pliant::State::fromModel(*s.model);
    auto step = [&] {
      const pliant::StepResult r = solver.step(state);
      if (!r.ok()) throw pliant::Error(scene + ": " + r.message);
    };
    for (int frame = 0; frame < skip; ++frame) step();
    const auto start = std::chrono::steady_clock::now();
    PLIANT_WINDOW_START();
    for (int frame = 0; frame < frames; ++frame) step();
    PLIANT_WINDOW_STOP();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("scene,threads,skip,frames,ms_per_frame,state_hash\n%s,%d,%d,%d,%.4f,%016llx\n", scene.c_str(), threads,
                skip, frames, 1e3 * seconds / frames, static_cast<unsigned long long>(state.hash()));
    return 0;
  } catch (const pliant::Error& e) {
    std::fprintf(stderr, "pliant_profile_window: %s\n", e.what());
    return 1;
  }
}
