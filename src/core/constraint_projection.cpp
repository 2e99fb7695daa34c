#include "constraint_projection.h"

#include <algorithm>
#include <utility>

#include "batch_split.h"
#include "pliant/parallel.h"

namespace pliant::detail {

namespace {

// The threads that share a parallel batch of `length` constraints: at most one per `partSize`.
std::uint64_t batchParts(std::uint64_t length, std::uint64_t partSize, int threads) {
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), length / partSize));
}

constexpr std::uint32_t kNoParticle = ~0u;

// The first k of [first, last) where `before` turns false (it is true on a prefix of the range).
template <class Before>
std::uint32_t firstAfter(std::uint32_t first, std::uint32_t last, Before&& before) {
  while (first < last) {
    const std::uint32_t middle = first + (last - first) / 2;
    if (before(middle)) first = middle + 1;
    else last = middle;
  }
  return first;
}

}  // namespace

// Which parts of a pass can touch the same particle. A part of a split batch is a range of its
// constraints; the threads' parts follow each other in index order in every batch, and a model's
// builders emit each colour in memory order, so neighbouring parts meet at a band of particles
// and the rest of each part is its thread's alone. Per constraint, the least and the largest index
// of its movable particles (particles of inverse mass 0 are never written, so sharing them does
// not order anything) bound what it touches. Everything the threads below t touch in the pass has
// an index of at most below(t), the largest index over their parts of every split batch (a
// prefix of each batch: spanHigh_ before t's cut); everything the threads above t touch, at least
// above(t) (spanLow_ from t + 1's cut). A constraint of t's part whose least index is above
// below(t) and largest below above(t) touches nothing of another part of the pass. Since spanLow_
// grows along a batch and spanHigh_ too, the constraints that may share with a lower thread are
// within a prefix of the part, and those that may share with a higher one within a suffix: the
// part is [begin, sharedBelowEnd) shared, [sharedBelowEnd, sharedAboveBegin) its own,
// [sharedAboveBegin, end) shared (a conservative split: a constraint counted shared may touch
// nothing of another part). Two constraints of different threads that share a particle are then
// both in shared ranges, and the pass orders only those (passParallel).
void ConstraintProjection::plan(const Model& model, std::uint32_t blockSize) {
  blockSize_ = std::max<std::uint32_t>(blockSize, 1);
  plan_ = planSolve(model, blockSize_);
  partSize_ = plan_.partSize;
  parallel_ = plan_.hasParallelBatch();
  splitThreads_ = 0;  // the cuts were made for the old plan
  spanLow_.assign(kConstraintFamilyCount, {});
  spanHigh_.assign(kConstraintFamilyCount, {});
  if (!parallel_) return;
  const std::vector<double>& inverseMass = model.inverseMass;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const FamilyKernels& kernels = familyKernels(static_cast<ConstraintFamily>(f));
    std::vector<std::uint32_t>& low = spanLow_[f];
    std::vector<std::uint32_t>& high = spanHigh_[f];
    for (const SolveBatch& batch : plan_.batches[f]) {
      if (!batch.parallel) continue;  // only these are split (and they list their particles)
      if (low.size() < batch.end) {
        low.resize(batch.end, kNoParticle);
        high.resize(batch.end, 0);
      }
      ParticleIndex particles[4];
      for (std::uint32_t c = batch.begin; c < batch.end; ++c) {
        const int k = kernels.particles(model, c, particles);
        std::uint32_t least = kNoParticle, largest = 0;
        for (int i = 0; i < k; ++i)
          if (inverseMass[particles[i]] != 0.0) {
            least = std::min<std::uint32_t>(least, particles[i]);
            largest = std::max<std::uint32_t>(largest, particles[i]);
          }
        low[c] = least;
        high[c] = largest;
      }
      for (std::uint32_t c = batch.begin + 1; c < batch.end; ++c) high[c] = std::max(high[c], high[c - 1]);
      for (std::uint32_t c = batch.end - 1; c > batch.begin; --c) low[c - 1] = std::min(low[c - 1], low[c]);
    }
  }
}

void ConstraintProjection::classifyParts() {
  const auto threads = static_cast<std::size_t>(splitThreads_);
  const std::size_t stride = threads + 1;
  // upTo[t]: the largest particle index threads 0 .. t touch (touchUpTo[t]: whether they touch
  // any); from[t]: the least index threads t .. threads - 1 touch. Both grow with t.
  std::vector<std::uint32_t>& upTo = threadUpTo_;
  std::vector<std::uint32_t>& from = threadFrom_;
  std::vector<std::uint8_t>& touchUpTo = threadTouchUpTo_;
  upTo.assign(threads, 0);
  from.assign(threads, kNoParticle);
  touchUpTo.assign(threads, 0);
  for (std::size_t t = 0; t < threads; ++t)
    for (std::size_t b = 0; b < split_.size(); ++b) {
      const SplitBatch& batch = split_[b];
      const std::uint32_t* cuts = cuts_.data() + b * stride;
      if (cuts[t + 1] > batch.begin) {
        upTo[t] = std::max(upTo[t], spanHigh_[batch.family][cuts[t + 1] - 1]);
        touchUpTo[t] = 1;
      }
      if (cuts[t] < batch.end) from[t] = std::min(from[t], spanLow_[batch.family][cuts[t]]);
    }
  std::vector<std::uint32_t>& belowEnd = sharedBelowEnd_;
  std::vector<std::uint32_t>& aboveBegin = sharedAboveBegin_;
  belowEnd.resize(split_.size() * threads);
  aboveBegin.resize(split_.size() * threads);
  waitFirst_.resize(threads);
  waitLast_.resize(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    // below: the largest particle index the threads before t touch; above: the least after it.
    const bool anyBelow = t > 0 && touchUpTo[t - 1];
    const std::uint32_t below = t > 0 ? upTo[t - 1] : 0;
    const std::uint32_t above = t + 1 < threads ? from[t + 1] : kNoParticle;
    for (std::size_t b = 0; b < split_.size(); ++b) {
      const std::uint32_t* cuts = cuts_.data() + b * stride;
      const std::uint32_t* low = spanLow_[split_[b].family].data();
      const std::uint32_t* high = spanHigh_[split_[b].family].data();
      std::uint32_t c = cuts[t];
      const std::uint32_t end = cuts[t + 1];
      // The prefix whose least index (from there on) is at most `below`, then the rest before the
      // first constraint whose largest index (up to there) is at least `above`.
      if (anyBelow) c = firstAfter(c, end, [&](std::uint32_t k) { return low[k] <= below; });
      belowEnd[b * threads + t] = c;
      aboveBegin[b * threads + t] = firstAfter(c, end, [&](std::uint32_t k) { return high[k] < above; });
    }
    // The threads t waits for: those that may touch a particle t touches. Thread t touches indices
    // from from[t] to upTo[t]; threads 0 .. u touch none of them once upTo[u] < from[t], threads
    // w .. threads - 1 none once from[w] > upTo[t]. Where two threads share a particle, each is
    // in the other's range.
    std::size_t first = t;
    while (first > 0 && touchUpTo[first - 1] && upTo[first - 1] >= from[t]) --first;
    std::size_t last = t;
    while (last + 1 < threads && from[last + 1] <= upTo[t]) ++last;
    waitFirst_[t] = static_cast<int>(first);
    waitLast_[t] = static_cast<int>(last);
  }
}

std::pair<int, int> ConstraintProjection::waitedThreads(int thread) const {
  return {waitFirst_[static_cast<std::size_t>(thread)], waitLast_[static_cast<std::size_t>(thread)]};
}

void ConstraintProjection::prepare(int threads) {
  if (threads == splitThreads_) return;
  shareShort_ = threads <= availableCores();
  const std::uint64_t partSize = partSize_;
  const auto stride = static_cast<std::size_t>(threads);
  cuts_.clear();
  split_.clear();
  for (int f = 0; f < kConstraintFamilyCount; ++f)
    for (const SolveBatch& batch : plan_.batches[f]) {
      if (!splitOverTeam(batch)) continue;
      split_.push_back({f, batch.begin, batch.end});
      // Even cuts to start with; a thread beyond the batch's parts gets an empty range at its end.
      const std::uint64_t length = batch.end - batch.begin;
      const std::uint64_t parts = batchParts(length, partSize, threads);
      for (std::uint64_t t = 0; t <= stride; ++t)
        cuts_.push_back(static_cast<std::uint32_t>(batch.begin + length * std::min(t, parts) / parts));
    }
  // Rows of whole cache lines and a line apart (the vector need not start on a line).
  constexpr std::size_t kTicksPerLine = 64 / sizeof(std::uint64_t);
  tickRow_ = (split_.size() + kTicksPerLine - 1) / kTicksPerLine * kTicksPerLine + kTicksPerLine;
  ticks_.assign(tickRow_ * stride, 0);
  partTicks_.assign(stride, 0);
  cutScratch_.assign(stride + 1, 0.0);
  splitThreads_ = threads;
  passesSinceRebalance_ = 0;
  progress_->reset(threads);
  classifyParts();
}

// The cuts move every few passes, on the parts' times summed over them: less noise per move, and
// the parts' shared ranges are found again (a few microseconds of binary searches) only then.
void ConstraintProjection::finishPass() {
  if (++passesSinceRebalance_ < kPassesPerRebalance) return;
  passesSinceRebalance_ = 0;
  const auto threads = static_cast<std::size_t>(splitThreads_);
  for (std::size_t b = 0; b < split_.size(); ++b) {
    const std::size_t parts = batchParts(split_[b].end - split_[b].begin, partSize_, splitThreads_);
    for (std::size_t t = 0; t < parts; ++t) partTicks_[t] = std::exchange(ticks_[t * tickRow_ + b], 0);
    rebalanceCuts({cuts_.data() + b * (threads + 1), parts + 1}, {partTicks_.data(), parts},
                  {cutScratch_.data(), parts + 1});
  }
  classifyParts();
}

std::size_t ConstraintProjection::splitBatchCount() const { return split_.size(); }

ConstraintProjection::PartRanges ConstraintProjection::partRanges(std::size_t batch, int thread) const {
  const auto threads = static_cast<std::size_t>(splitThreads_);
  const auto t = static_cast<std::size_t>(thread);
  const std::uint32_t* cuts = cuts_.data() + batch * (threads + 1);
  return {split_[batch].family, cuts[t], sharedBelowEnd_[batch * threads + t], sharedAboveBegin_[batch * threads + t],
          cuts[t + 1]};
}

void ConstraintProjection::setCuts(std::size_t batch, const std::vector<std::uint32_t>& cuts) {
  const auto stride = static_cast<std::size_t>(splitThreads_) + 1;
  std::copy(cuts.begin(), cuts.begin() + static_cast<std::ptrdiff_t>(std::min(cuts.size(), stride)),
            cuts_.begin() + static_cast<std::ptrdiff_t>(batch * stride));
  classifyParts();
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
// measured time (batch_split.h, finishPass); the batches between two parallel ones are projected
// by thread 0 while the others wait at a barrier, with a barrier before them too. A team as large
// as the cuts meets nowhere else: in each batch a thread projects its part's shared ranges (see
// classifyParts) once every other thread has published that it projected its shared ranges of
// the batches before, publishes the same, then projects the rest of its part, which no other part
// of the pass touches. So whoever shares a particle with a constraint has done every constraint
// that comes before it in index order, and does none that comes after it before it is done; and a
// thread that is slow in one batch holds the others back only once its lag exceeds the time of a
// part's own range, not at every batch. A smaller team (OpenMP may give one) takes the parts round
// robin, with a barrier after each batch.
void ConstraintProjection::passParallel(const Model& model, const SolveContext& shared, double* lambda, int thread,
                                        int team, int threads, bool resetLambda) {
  SolveContext ctx = shared;
  ctx.multipliersFresh = resetLambda;
  const auto stride = static_cast<std::size_t>(threads);
  const bool pointToPoint = team == threads;
  const std::uint64_t published = pointToPoint ? progress_->count(thread) : 0;  // as every thread's
  std::size_t parallelBatch = 0;
  bool serialWorkPending = false;
  bool parallelWorkPending = false;  // parts projected without a barrier after them
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const std::vector<SolveBatch>& batches = plan_.batches[f];
    if (batches.empty()) continue;
    const FamilyKernels& kernels = familyKernels(static_cast<ConstraintFamily>(f));
    ctx.lambda = lambda + model.lambdaOffset[f];
    const std::uint32_t perEntry = constraintsPerEntry(static_cast<ConstraintFamily>(f));
    auto project = [&](std::uint32_t begin, std::uint32_t end) {
      if (begin >= end) return;
      if (resetLambda && !kernels.independentStartsFresh)
        std::fill(ctx.lambda + begin * perEntry, ctx.lambda + end * perEntry, 0.0);
      kernels.projectIndependent(model, ctx, begin, end);
    };
    for (const SolveBatch& batch : batches) {
      if (splitOverTeam(batch)) {
        if (serialWorkPending) {
          barrier_->wait(team);
          serialWorkPending = false;
        }
        const std::size_t b = parallelBatch++;
        const std::uint32_t* cuts = cuts_.data() + b * (stride + 1);
        if (pointToPoint) {
          const auto t = static_cast<std::size_t>(thread);
          const std::uint32_t begin = cuts[t], end = cuts[t + 1];
          const std::uint32_t belowEnd = sharedBelowEnd_[b * stride + t];
          const std::uint32_t aboveBegin = sharedAboveBegin_[b * stride + t];
          if (b > 0 && (begin < belowEnd || aboveBegin < end))
            for (int other = waitFirst_[t]; other <= waitLast_[t]; ++other)
              if (other != thread && progress_->waitFor(other, published + b)) barrier_->countSleep();
          const std::uint64_t start = ticks();
          project(begin, belowEnd);
          project(aboveBegin, end);
          progress_->publish(thread, published + b + 1);
          project(belowEnd, aboveBegin);
          ticks_[t * tickRow_ + b] += ticks() - start;
          parallelWorkPending = true;
          continue;
        }
        // Part t is thread t's; a smaller team takes the parts round robin.
        for (std::size_t t = static_cast<std::size_t>(thread); t < stride; t += static_cast<std::size_t>(team)) {
          const std::uint64_t start = ticks();
          project(cuts[t], cuts[t + 1]);
          ticks_[t * tickRow_ + b] += ticks() - start;
        }
        barrier_->wait(team);
        continue;
      }
      if (parallelWorkPending) {
        barrier_->wait(team);
        parallelWorkPending = false;
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
