// The barrier between the parallel batches of a projection pass, met many times per frame: cheaper
// than the OpenMP barrier since two threads exchange one cache line each way (docs/performance.md
// has the measured costs). Waiting threads spin a bounded time with a pause, then block in the
// kernel (C++20 atomic wait, a futex on Linux), so a run beside other work, or with more threads
// than cores, never burns a core another thread needs.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace pliant::detail {

// How long a waiting thread spins before it blocks in the kernel: about the time a parallel batch
// takes on a small model, so threads arriving close together never sleep, and a thread whose
// partner was descheduled stops taking the core from whoever runs instead.
constexpr int kSpinsBeforeSleep = 4000;

inline void spinPause() {
#if defined(__x86_64__) && defined(__GNUC__)
  _mm_pause();
#endif
}

// Waits until done(value) holds: spins a bounded time, then registers in `sleepers` and blocks in
// the kernel (C++20 atomic wait, a futex on Linux). Whoever changes `value` stores it (seq_cst),
// then notifies when it sees a sleeper registered (seq_cst): either the sleeper reads the new value
// before it blocks, or the writer sees it registered and wakes it. True when it slept.
template <class T, class Done>
bool spinThenBlock(std::atomic<T>& value, std::atomic<int>& sleepers, Done done) {
  for (int spins = 0; spins < kSpinsBeforeSleep; ++spins) {
    if (done(value.load(std::memory_order_acquire))) return false;
    spinPause();
  }
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  for (T seen = value.load(std::memory_order_seq_cst); !done(seen); seen = value.load(std::memory_order_seq_cst))
    value.wait(seen, std::memory_order_seq_cst);
  sleepers.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

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
    // Spins, then blocks: another process may need this core.
    if (spinThenBlock(round_, sleepers_, [round](std::uint32_t now) { return now != round; }))
      slept_.fetch_add(1, std::memory_order_relaxed);
  }
  // How many waits went to sleep since the last resetSlept (read between parallel regions): a
  // partner that keeps arriving a time slice late means the cores are taken.
  int slept() const { return slept_.load(std::memory_order_relaxed); }
  void resetSlept() { slept_.store(0, std::memory_order_relaxed); }
  // A wait elsewhere in the pass (ProgressFlags) went to sleep: counted with the barrier's own.
  void countSleep() { slept_.fetch_add(1, std::memory_order_relaxed); }

 private:
  // On separate cache lines: arrivals do not disturb the threads polling the round.
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> round_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<int> slept_{0};  // beside sleepers_: written only by waits that slept
};

// Point-to-point progress between the threads of a projection pass, in place of a barrier after
// each batch: each thread publishes how many parts of the pass it has finished (a count that only
// grows), and a thread that needs another's writes waits for that count alone. Waits spin a
// bounded time, then block in the kernel, as the barrier's do.
class ProgressFlags {
 public:
  // Counts for `threads` threads, all 0. Not while a pass runs.
  void reset(int threads) { slots_ = std::make_unique<Slot[]>(static_cast<std::size_t>(std::max(threads, 1))); }
  // Thread `thread`'s own count (read by that thread only, or between passes).
  std::uint64_t count(int thread) const { return slots_[thread].done.load(std::memory_order_relaxed); }
  // Thread `thread` has finished its first `count` parts: what it wrote before is visible to a
  // thread whose wait for this count returns.
  void publish(int thread, std::uint64_t count) {
    Slot& slot = slots_[thread];
    slot.done.store(count, std::memory_order_seq_cst);
    // See spinThenBlock: a sleeper registers before it reads the count again.
    if (slot.sleepers.load(std::memory_order_seq_cst) > 0) slot.done.notify_all();
  }
  // Blocks until thread `other` has published at least `count`; true when it had to sleep.
  bool waitFor(int other, std::uint64_t count) {
    Slot& slot = slots_[other];
    return spinThenBlock(slot.done, slot.sleepers, [count](std::uint64_t done) { return done >= count; });
  }

 private:
  // One cache line per thread: a thread's publishing disturbs only those polling it.
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> done{0};
    std::atomic<int> sleepers{0};
  };
  std::unique_ptr<Slot[]> slots_ = std::make_unique<Slot[]>(1);
};

}  // namespace pliant::detail
