#include "thread_tuner.h"

#include <algorithm>

namespace pliant::detail {

namespace {
constexpr double kWeight = 0.25;  // of the newest step in a mean
}

ThreadTuner::Mean& ThreadTuner::meanOf(int threads) {
  return means_[static_cast<std::size_t>(std::clamp(threads, 0, maxThreads_))];
}

void ThreadTuner::reset() {
  current_ = 0;
  probing_ = 0;
  stepsSinceProbe_ = 0;
  probeInterval_ = kProbeInterval;
  stepsSeen_ = 0;
  probeNow_ = false;
  std::fill(means_.begin(), means_.end(), Mean{});
}

int ThreadTuner::choose(int maxThreads) {
  maxThreads = std::max(maxThreads, 1);
  if (maxThreads != maxThreads_) {
    reset();
    maxThreads_ = maxThreads;
    means_.assign(static_cast<std::size_t>(maxThreads) + 1, Mean{});
  }
  if (current_ == 0) current_ = maxThreads;  // a quiet machine is the common case
  if (maxThreads == 1) return 1;
  const bool due = stepsSeen_ == kFirstProbe || stepsSinceProbe_ >= probeInterval_ || probeNow_;
  if (!due || meanOf(current_).samples == 0) return current_;
  // Probe the other end: one thread when running several, all of them when running one.
  probing_ = current_ == 1 ? maxThreads : 1;
  return probing_;
}

void ThreadTuner::record(int threads, double seconds) {
  if (threads < 1 || threads > maxThreads_) return;  // not a count this tuner chose
  ++stepsSeen_;
  if (stepsSeen_ == 1) return;  // the first step sizes scratch memory: not representative
  Mean& mean = meanOf(threads);
  const double before = meanOf(current_).seconds;
  if (probing_ != 0 && threads == probing_) {
    // What this count measured before the last probes is stale (the load may have changed since).
    mean.seconds = seconds;
    mean.samples = 1;
    probing_ = 0;
    probeNow_ = false;
    stepsSinceProbe_ = 0;
    const Mean& here = meanOf(current_);
    const bool faster = here.samples > 0 && mean.seconds < kMargin * here.seconds;
    if (faster) {
      current_ = threads;
      probeInterval_ = kProbeInterval;
    } else if (threads > current_) {
      probeInterval_ = std::min(2 * probeInterval_, kMaxProbeInterval);
    }
    return;
  }
  mean.seconds = mean.samples == 0 ? seconds : (1.0 - kWeight) * mean.seconds + kWeight * seconds;
  ++mean.samples;
  ++stepsSinceProbe_;
  if (threads == current_ && current_ > 1 && meanOf(current_).samples > 2 && seconds > kSlowdown * before)
    probeNow_ = true;
}

}  // namespace pliant::detail
