// The barrier between the parallel batches of a projection pass, met many times per frame: cheaper
// than the OpenMP barrier since two threads exchange one cache line each way (docs/performance.md
// has the measured costs). Waiting threads spin with a pause, then yield their core, so an
// oversubscribed run (more threads than cores) still moves on.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace pliant::detail {

class SpinBarrier {
 public:
  // Blocks until `team` threads (the same number on every call of one round) have called wait.
  // What a thread wrote before wait is visible to every thread after it (release/acquire).
  void wait(int team) {
    if (team <= 1) return;
    const std::uint32_t round = round_.load(std::memory_order_relaxed);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == team) {
      // Last to arrive: the others cannot arrive again before they see the new round.
      arrived_.store(0, std::memory_order_relaxed);
      round_.store(round + 1, std::memory_order_release);
      return;
    }
    int spins = 0;
    while (round_.load(std::memory_order_acquire) == round) {
      if (++spins < kSpinsBeforeYield) pause();
      else std::this_thread::yield();
    }
  }

 private:
  static constexpr int kSpinsBeforeYield = 2000;  // tens of microseconds of pauses
  static void pause() {
#if defined(__x86_64__) && defined(__GNUC__)
    _mm_pause();
#endif
  }
  // On separate cache lines: arrivals do not disturb the threads polling the round.
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> round_{0};
};

}  // namespace pliant::detail
