// The barrier between the parallel batches of a projection pass, met many times per frame: cheaper
// than the OpenMP barrier since two threads exchange one cache line each way (docs/performance.md
// has the measured costs). Waiting threads spin a bounded time with a pause, then block in the
// kernel (C++20 atomic wait, a futex on Linux), so a run beside other work, or with more threads
// than cores, never burns a core another thread needs.
#pragma once

#include <atomic>
#include <cstdint>

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
      round_.store(round + 1, std::memory_order_seq_cst);
      // A sleeper registers before it checks the round (both seq_cst), so either it sees the new
      // round and does not sleep, or this sees it registered and wakes it.
      if (sleepers_.load(std::memory_order_seq_cst) > 0) round_.notify_all();
      return;
    }
    for (int spins = 0; spins < kSpinsBeforeSleep; ++spins) {
      if (round_.load(std::memory_order_acquire) != round) return;
      pause();
    }
    // Spun long enough: another process may need this core; block in the kernel (a futex).
    slept_.fetch_add(1, std::memory_order_relaxed);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (round_.load(std::memory_order_seq_cst) == round) round_.wait(round, std::memory_order_seq_cst);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }
  // How many waits went to sleep since the last resetSlept (read between parallel regions): a
  // partner that keeps arriving a time slice late means the cores are taken.
  int slept() const { return slept_.load(std::memory_order_relaxed); }
  void resetSlept() { slept_.store(0, std::memory_order_relaxed); }

 private:
  // About the time a parallel batch takes on a small model: threads arriving close together never
  // sleep; a thread whose partner was descheduled stops taking the core from whoever runs instead.
  static constexpr int kSpinsBeforeSleep = 4000;
  static void pause() {
#if defined(__x86_64__) && defined(__GNUC__)
    _mm_pause();
#endif
  }
  // On separate cache lines: arrivals do not disturb the threads polling the round.
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> round_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<int> slept_{0};  // beside sleepers_: written only on the way to sleep
};

}  // namespace pliant::detail
