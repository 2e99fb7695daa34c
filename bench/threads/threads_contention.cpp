// Threads must never make a run slower (issue 14): scene A and the default cloth, stepped with the
// automatic thread count, with one thread and with every core, on a quiet machine and beside a busy
// process that keeps one core taken. Writes CSV (stdout, or --csv FILE):
//   scene,load,mode,frames,ms_per_frame,threads_last,state_hash
// with the median of --repeats interleaved runs. Target: automatic within 1.2x of one thread when
// busy, and as fast as every core when quiet.
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "pliant/bench/benchmark.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace {

using namespace pliant;

// A child process spinning on the last CPU this process may use, until stopped.
class BusyCore {
 public:
  BusyCore() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    sched_getaffinity(0, sizeof(allowed), &allowed);
    int last = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed)) last = cpu;
    child_ = fork();
    if (child_ == 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(last, &one);
      sched_setaffinity(0, sizeof(one), &one);
      volatile unsigned long long spin = 0;
      for (;;) spin = spin + 1;
    }
  }
  ~BusyCore() {
    if (child_ > 0) {
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
  }
  BusyCore(const BusyCore&) = delete;
  BusyCore& operator=(const BusyCore&) = delete;

 private:
  pid_t child_ = -1;
};

struct Measured {
  double msPerFrame = 0.0;
  int threadsLast = 0;
  std::uint64_t hash = 0;
};

// mode: 0 automatic, otherwise a fixed thread count.
Measured measure(const Scene& scene, int mode, int frames) {
  if (mode == 0) setAutomaticThreadCount();
  else setThreadCount(mode);
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  const auto start = std::chrono::steady_clock::now();
  for (int f = 0; f < frames; ++f)
    if (!solver.step(state).ok()) {
      std::cerr << "threads_contention: a step was refused\n";
      std::exit(1);
    }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {1e3 * seconds / frames, solver.lastThreadCount(), state.hash()};
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 3;
  std::string csvPath;
  std::vector<std::string> scenes = {"cloth-100-2m", "cloth"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--csv" && i + 1 < argc) csvPath = argv[++i];
    else if (arg == "--scene" && i + 1 < argc) scenes = {argv[++i]};
    else {
      std::cerr << "usage: pliant_threads_contention [--repeats N] [--csv FILE] [--scene NAME]\n";
      return 2;
    }
  }
  setAutomaticThreadCount();
  const int cores = threadCount();
  std::ostringstream csv;
  csv << "scene,load,mode,frames,ms_per_frame,threads_last,state_hash\n";
  for (const std::string& name : scenes) {
    const Scene scene = makeBenchmarkScene(name);
    const int frames = std::min(scene.frames, 300);
    for (const char* load : {"quiet", "busy"}) {
      const std::vector<int> modes = {0, 1, cores};
      std::vector<std::vector<Measured>> runs(modes.size());
      {
        std::unique_ptr<BusyCore> busy;
        if (std::string(load) == "busy") busy = std::make_unique<BusyCore>();
        for (int r = 0; r < repeats; ++r)  // interleaved: each repeat runs every mode once
          for (std::size_t m = 0; m < modes.size(); ++m) runs[m].push_back(measure(scene, modes[m], frames));
      }
      for (std::size_t m = 0; m < modes.size(); ++m) {
        std::vector<Measured>& r = runs[m];
        std::sort(r.begin(), r.end(), [](const Measured& a, const Measured& b) { return a.msPerFrame < b.msPerFrame; });
        const Measured& median = r[r.size() / 2];
        char hash[20];
        std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(median.hash));
        csv << name << ',' << load << ',' << (modes[m] == 0 ? std::string("auto") : std::to_string(modes[m])) << ','
            << frames << ',' << median.msPerFrame << ',' << median.threadsLast << ',' << hash << '\n';
        std::cerr << csv.str().substr(csv.str().rfind('\n', csv.str().size() - 2) + 1);
      }
    }
  }
  if (csvPath.empty()) std::cout << csv.str();
  else std::ofstream(csvPath) << csv.str();
  return 0;
}
