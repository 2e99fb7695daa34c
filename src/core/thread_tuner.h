// How many threads a Solver's next step uses in automatic mode (pliant/parallel.h): the most the
// machine gives, unless measuring says fewer are faster. Every count gives the same bits, so the
// choice changes only the speed. The tuner times each step; now and then it runs one step with
// another count (a probe) and moves to the count whose recent steps were fastest, by a margin. A
// step much slower than the recent ones (another process took a core) triggers a probe at once.
// No clock is read here: the solver passes the durations, so tests can feed any sequence.
#pragma once

#include <cstdint>
#include <vector>

namespace pliant::detail {

class ThreadTuner {
 public:
  // The team size for the next step, in [1, maxThreads].
  int choose(int maxThreads);
  // The wall-clock time (s) of the step just run with `threads` threads.
  void record(int threads, double seconds);
  // Forgets what was measured (the model or the settings changed the work per step).
  void reset();

  // A probe every this many steps while the choice holds; the first probe comes early. A probe of
  // more threads that loses doubles the interval, up to kMaxProbeInterval: on a machine whose other
  // cores stay busy, a many-thread probe can cost ten one-thread steps, so it must become rare.
  static constexpr int kProbeInterval = 64;
  static constexpr int kMaxProbeInterval = 512;
  static constexpr int kFirstProbe = 2;
  // Another count must be this much faster (ratio of mean step times) to be chosen.
  static constexpr double kMargin = 0.9;
  // A step this many times slower than the current mean triggers a probe of one thread (while
  // running several: another process took a core). On one thread a slow step is left to the
  // regular probes, since more threads rarely help a loaded machine.
  static constexpr double kSlowdown = 2.0;

 private:
  struct Mean {
    double seconds = 0.0;  // exponential moving average of the step time
    int samples = 0;
  };
  Mean& meanOf(int threads);
  int current_ = 0;  // 0: not chosen yet
  int maxThreads_ = 0;
  int probing_ = 0;  // the count of the probe step under way, 0 when none
  int stepsSinceProbe_ = 0;
  int probeInterval_ = kProbeInterval;
  int stepsSeen_ = 0;
  bool probeNow_ = false;
  std::vector<Mean> means_;  // index: thread count
};

}  // namespace pliant::detail
