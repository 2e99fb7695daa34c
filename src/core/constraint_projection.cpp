#include "constraint_projection.h"

#include <algorithm>

#include "batch_split.h"
#include "pliant/parallel.h"

namespace pliant::detail {

namespace {

// The threads that share a parallel batch of `length` constraints: at most one per `partSize`.
std::uint64_t batchParts(std::uint64_t length, std::uint64_t partSize, int threads) {
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), length / partSize));
}

}  // namespace

void ConstraintProjection::plan(const Model& model, std::uint32_t blockSize) {
  blockSize_ = std::max<std::uint32_t>(blockSize, 1);
  plan_ = planSolve(model, blockSize_);
  partSize_ = plan_.partSize;
  parallel_ = plan_.hasParallelBatch();
  splitThreads_ = 0;  // the cuts were made for the old plan
}

void ConstraintProjection::prepare(int threads) {
  if (threads == splitThreads_) return;
  shareShort_ = threads <= availableCores();
  const std::uint64_t partSize = partSize_;
  const auto stride = static_cast<std::size_t>(threads);
  cuts_.clear();
  for (const std::vector<SolveBatch>& batches : plan_.batches)
    for (const SolveBatch& batch : batches) {
      if (!splitOverTeam(batch)) continue;
      // Even cuts to start with; a thread beyond the batch's parts gets an empty range at its end.
      const std::uint64_t length = batch.end - batch.begin;
      const std::uint64_t parts = batchParts(length, partSize, threads);
      for (std::uint64_t t = 0; t <= stride; ++t)
        cuts_.push_back(static_cast<std::uint32_t>(batch.begin + length * std::min(t, parts) / parts));
    }
  ticks_.assign(cuts_.size() / (stride + 1) * stride, 0);
  cutScratch_.assign(stride + 1, 0.0);
  splitThreads_ = threads;
}

void ConstraintProjection::passSerial(const Model& model, const SolveContext& shared, double* lambda,
                                      bool resetLambda) {
  SolveContext ctx = shared;
  ctx.multipliersFresh = resetLambda;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const std::vector<SolveBatch>& batches = plan_.batches[f];
    if (batches.empty()) continue;
    const FamilyKernels& kernels = familyKernels(static_cast<ConstraintFamily>(f));
    ctx.lambda = lambda + model.lambdaOffset[f];
    const std::uint32_t perEntry = constraintsPerEntry(static_cast<ConstraintFamily>(f));
    for (const SolveBatch& batch : batches) {
      if (resetLambda && !(batch.independent && kernels.independentStartsFresh))
        std::fill(ctx.lambda + batch.begin * perEntry, ctx.lambda + batch.end * perEntry, 0.0);
      if (batch.independent) kernels.projectIndependent(model, ctx, batch.begin, batch.end);
      else kernels.project(model, ctx, batch.begin, batch.end);
    }
  }
}

// Each family's batches run in order. A parallel batch is split at the cuts, which follow the
// measured time (batch_split.h); the batches between two parallel ones are projected by thread 0
// while the others wait at the next barrier. A barrier follows every parallel batch and precedes
// one when thread 0 has just done serial work, so no thread reads a position another is still
// writing.
void ConstraintProjection::passParallel(const Model& model, const SolveContext& shared, double* lambda, int thread,
                                        int team, int threads, bool resetLambda) {
  SolveContext ctx = shared;
  ctx.multipliersFresh = resetLambda;
  const auto stride = static_cast<std::size_t>(threads);
  std::size_t parallelBatch = 0;
  bool serialWorkPending = false;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const std::vector<SolveBatch>& batches = plan_.batches[f];
    if (batches.empty()) continue;
    const FamilyKernels& kernels = familyKernels(static_cast<ConstraintFamily>(f));
    ctx.lambda = lambda + model.lambdaOffset[f];
    const std::uint32_t perEntry = constraintsPerEntry(static_cast<ConstraintFamily>(f));
    for (const SolveBatch& batch : batches) {
      if (splitOverTeam(batch)) {
        if (serialWorkPending) {
          barrier_->wait(team);
          serialWorkPending = false;
        }
        std::uint32_t* cuts = cuts_.data() + parallelBatch * (stride + 1);
        std::uint64_t* partTicks = ticks_.data() + parallelBatch * stride;
        ++parallelBatch;
        // Part t is thread t's; a team smaller than asked for (OpenMP may give one) takes the
        // parts round robin.
        for (std::size_t t = static_cast<std::size_t>(thread); t < stride; t += static_cast<std::size_t>(team)) {
          const std::uint32_t begin = cuts[t];
          const std::uint32_t end = cuts[t + 1];
          const std::uint64_t start = ticks();
          if (resetLambda && !kernels.independentStartsFresh)
            std::fill(ctx.lambda + begin * perEntry, ctx.lambda + end * perEntry, 0.0);
          if (begin < end) kernels.projectIndependent(model, ctx, begin, end);
          partTicks[t] = ticks() - start;
        }
        barrier_->wait(team);
        // The cuts are read again only in the next pass, which a join or barrier separates from here.
        if (thread == 0) {
          const std::size_t parts = batchParts(batch.end - batch.begin, partSize_, threads);
          rebalanceCuts({cuts, parts + 1}, {partTicks, parts}, {cutScratch_.data(), parts + 1});
        }
        continue;
      }
      serialWorkPending = true;
      if (thread != 0) continue;
      if (resetLambda && !(batch.independent && kernels.independentStartsFresh))
        std::fill(ctx.lambda + batch.begin * perEntry, ctx.lambda + batch.end * perEntry, 0.0);
      if (batch.independent) kernels.projectIndependent(model, ctx, batch.begin, batch.end);
      else kernels.project(model, ctx, batch.begin, batch.end);
    }
  }
}

bool ConstraintProjection::passTraced(const Model& model, SolveContext& ctx, State& state, StepTrace& trace) {
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const auto family = static_cast<ConstraintFamily>(f);
    const std::uint32_t count = entryCount(model, family);
    const std::uint32_t perEntry = constraintsPerEntry(family);
    const FamilyKernels& kernels = familyKernels(family);
    ctx.lambda = state.lambda.data() + model.lambdaOffset[f];
    for (std::uint32_t c = 0; c < count; ++c) {
      kernels.project(model, ctx, c, c + 1);
      // An entry's constraints share its particles: its first names them (and the culprit).
      kernels.evaluate(model, ctx.x, ctx.attachmentTarget, c * perEntry, traceParticles_, traceGradient_);
      for (ParticleIndex p : traceParticles_)
        if (trace.check(state, p, StepTrace::Culprit::Constraint)) {
          trace.constraint = {family, c * perEntry};
          return false;
        }
    }
  }
  return true;
}

}  // namespace pliant::detail
