// Stage 5's constraint part: Gauss-Seidel passes over every constraint family, a part of the Solver
// that owns the parallel plan (solve_plan.h), the per-thread cuts of each parallel batch (moved
// toward equal measured time every few passes, batch_split.h), which parts of them other threads'
// parts touch (constraint_projection.cpp) and the waits between threads (spin_barrier.h). Three
// variants of a pass: serial, parallel (one call per thread of a parallel region) and traced (one
// constraint at a time, checking each particle it moved). All give the same bits: an independent
// batch shares no movable particle, so any split of it, and any SIMD grouping, projects the same
// numbers as the serial loop in index order, and a thread waits for another only where their
// constraints share a movable particle, so each constraint reads what the serial order gives it.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "constraints/families.h"
#include "solve_plan.h"
#include "spin_barrier.h"
#include "step_check.h"

namespace pliant::detail {

class ConstraintProjection {
 public:
  // Plans `model` (its topology and which particles move) for batches of at least `blockSize`.
  void plan(const Model& model, std::uint32_t blockSize);
  const SolvePlan& solvePlan() const { return plan_; }
  // Some batch is long enough to split across threads.
  bool parallel() const { return parallel_; }

  // One pass on the calling thread. With resetLambda (the first pass of a substep) each range's
  // multipliers are zeroed just before it is projected.
  void passSerial(const Model& model, const SolveContext& ctx, double* lambda, bool resetLambda);
  // One pass as thread `thread` of a parallel region of `team` threads (team may be smaller than
  // `threads`, the parts each batch is cut into). Call prepare(threads) before the region.
  void passParallel(const Model& model, const SolveContext& ctx, double* lambda, int thread, int team, int threads,
                    bool resetLambda);
  // Makes the cuts for `threads` threads when they were made for another count or plan.
  void prepare(int threads);
  // After a parallel pass's region: every kPassesPerRebalance passes, moves the cuts toward equal
  // measured time.
  void finishPass();
  static constexpr int kPassesPerRebalance = 4;
  // Whether prepare's team also splits the batches shorter than 2 x blockSize (only while each
  // thread has a processor of its own, see shareShort_).
  bool sharesShortBatches() const { return shareShort_; }
  SpinBarrier& barrier() { return *barrier_; }
  // The parallel batches split over the team (in plan order) and, for tests, thread t's part of
  // split batch b: [begin, end), of which [sharedBelowEnd, sharedAboveBegin) shares no movable
  // particle with another part of the pass; setCuts replaces a split batch's threads + 1 cuts
  // (ordered, from its begin to its end) and classifies the parts again.
  struct PartRanges {
    int family = 0;  // ConstraintFamily of the batch
    std::uint32_t begin = 0, sharedBelowEnd = 0, sharedAboveBegin = 0, end = 0;
  };
  std::size_t splitBatchCount() const;
  PartRanges partRanges(std::size_t batch, int thread) const;
  void setCuts(std::size_t batch, const std::vector<std::uint32_t>& cuts);
  // For tests: the threads [first, last] whose parts may share a particle with thread t's in the
  // pass (t among them), the only ones it waits for.
  std::pair<int, int> waitedThreads(int thread) const;
  // One pass in index order, one constraint at a time, stopping at the first that makes a
  // particle bad (false: `trace` holds the culprit). The multipliers must have been reset.
  bool passTraced(const Model& model, SolveContext& ctx, State& state, StepTrace& trace);

 private:
  SolvePlan plan_;
  std::uint32_t blockSize_ = 1;
  std::uint32_t partSize_ = 1;  // plan_.partSize
  bool parallel_ = false;
  // The batches shorter than 2 x blockSize_ are shared only while each thread has a processor of
  // its own: a barrier between threads that share a core costs a time slice, not a microsecond
  // (contact-fold-64 at 3 threads on 2 cores: 3x slower with them shared).
  bool shareShort_ = true;
  bool splitOverTeam(const SolveBatch& batch) const {
    return batch.parallel && (shareShort_ || batch.end - batch.begin >= 2 * std::uint64_t{blockSize_});
  }
  // Where each thread's part of each parallel batch begins (threads + 1 cuts per batch, in plan
  // order) and the ticks it took since the cuts last moved (per thread, a row of its own:
  // [thread][batch]).
  std::vector<std::uint32_t> cuts_;
  std::vector<std::uint64_t> ticks_;
  std::size_t tickRow_ = 0;       // entries per thread's row of ticks_, a whole number of cache lines
  int passesSinceRebalance_ = 0;  // the ticks are summed over these passes
  std::vector<std::uint64_t> partTicks_;
  std::vector<double> cutScratch_;
  // The parts' shared constraints (constraint_projection.cpp). Per family, over each split
  // batch: the least movable particle index of the constraints from each one to the batch's end
  // (spanLow_), the largest from the batch's start to each one (spanHigh_). Per split batch and
  // thread: where the part's first constraint that can share a particle with no lower-numbered
  // thread's part is (sharedBelowEnd_) and where the first that can share one with a
  // higher-numbered thread's is (sharedAboveBegin_); the part between them touches no particle of
  // another part of the pass. Remade with the cuts (classifyParts).
  std::vector<std::vector<std::uint32_t>> spanLow_;
  std::vector<std::vector<std::uint32_t>> spanHigh_;
  struct SplitBatch {
    int family = 0;
    std::uint32_t begin = 0, end = 0;
  };
  std::vector<SplitBatch> split_;  // the batches split over the team, in plan order
  std::vector<int> waitFirst_;     // per thread, see waitedThreads
  std::vector<int> waitLast_;
  std::vector<std::uint32_t> threadUpTo_;  // classifyParts' scratch, per thread
  std::vector<std::uint32_t> threadFrom_;
  std::vector<std::uint8_t> threadTouchUpTo_;
  std::vector<std::uint32_t> sharedBelowEnd_;
  std::vector<std::uint32_t> sharedAboveBegin_;
  void classifyParts();
  int splitThreads_ = 0;  // the thread count the cuts are for; 0: none made
  std::unique_ptr<SpinBarrier> barrier_ = std::make_unique<SpinBarrier>();
  std::unique_ptr<ProgressFlags> progress_ = std::make_unique<ProgressFlags>();
  // Gradient buffers of the traced pass (allocated only when a refused step is replayed).
  std::vector<ParticleIndex> traceParticles_;
  std::vector<Vec3> traceGradient_;
};

}  // namespace pliant::detail
