#include "solve_plan.h"

#include <algorithm>

#include "constraints/families.h"

namespace pliant::detail {

namespace {

// Runs shorter than this are not worth a batch of their own: they join a dependent batch, which
// the solver projects with the plain in-order kernel (a family built in no particular order then
// costs one kernel call, not one per constraint).
constexpr std::uint32_t kMinIndependentRun = 16;

// A plan with a parallel batch shares its independent batches down to 2 x blockSize / this, in
// parts of at least blockSize / this: a batch left to thread 0 keeps the others waiting at the
// barrier before the next parallel batch, so sharing it costs no more than a barrier of its own
// (issue 14: 8 of contact-sphere-80's 18 bending colours were one thread's).
constexpr std::uint32_t kPartsPerBlock = 4;

// Cuts one family's array into batches (kernels.particles lists each constraint's particles). A
// run ends where a constraint touches a movable particle that an earlier constraint of the run
// touched; particles of inverse mass 0 are never written by a projection, so sharing them does not
// make constraints dependent. A particle index out of range gives the trivial plan (one dependent
// batch); validate() reports the error. `runOf` is scratch of one entry per particle.
std::vector<SolveBatch> planFamily(const Model& model, const FamilyKernels& kernels, std::uint32_t count,
                                   std::uint32_t blockSize, std::vector<std::uint32_t>& runOf) {
  const std::vector<double>& inverseMass = model.inverseMass;
  std::vector<SolveBatch> batches;
  auto close = [&](std::uint32_t begin, std::uint32_t end) {
    if (end == begin) return;
    const std::uint32_t length = end - begin;
    if (length < kMinIndependentRun) {
      // Short runs merge into one dependent batch.
      if (!batches.empty() && !batches.back().independent) batches.back().end = end;
      else batches.push_back({begin, end, false, false});
      return;
    }
    batches.push_back({begin, end, true, length >= 2 * std::uint64_t{blockSize}});
  };
  runOf.assign(inverseMass.size(), ~0u);  // the run that last touched a particle
  std::uint32_t run = 0, runBegin = 0;
  ParticleIndex particles[4];
  for (std::uint32_t c = 0; c < count; ++c) {
    const int k = kernels.particles(model, c, particles);
    for (int i = 0; i < k; ++i)
      if (particles[i] >= inverseMass.size()) return {{0, count, false, false}};
    bool conflict = false;
    for (int i = 0; i < k; ++i) conflict = conflict || (inverseMass[particles[i]] != 0.0 && runOf[particles[i]] == run);
    if (conflict) {
      close(runBegin, c);
      runBegin = c;
      ++run;
    }
    for (int i = 0; i < k; ++i) runOf[particles[i]] = run;
  }
  close(runBegin, count);
  return batches;
}

}  // namespace

SolvePlan planSolve(const Model& model, std::uint32_t blockSize) {
  SolvePlan plan;
  const std::uint32_t block = std::max<std::uint32_t>(blockSize, 1);
  plan.partSize = std::max<std::uint32_t>(block / kPartsPerBlock, 1);
  std::vector<std::uint32_t> runOf;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const auto family = static_cast<ConstraintFamily>(f);
    const std::uint32_t count = entryCount(model, family);
    if (count == 0) continue;
    const FamilyKernels& kernels = familyKernels(family);
    if (kernels.particles == nullptr) plan.batches[f].push_back({0, count, false, false});
    else plan.batches[f] = planFamily(model, kernels, count, block, runOf);
  }
  if (!plan.hasParallelBatch()) return plan;
  for (auto& family : plan.batches)
    for (SolveBatch& b : family) b.parallel = b.independent && b.end - b.begin >= 2 * std::uint64_t{plan.partSize};
  return plan;
}

bool SolvePlan::hasParallelBatch() const {
  for (const auto& family : batches)
    for (const SolveBatch& b : family)
      if (b.parallel) return true;
  return false;
}

}  // namespace pliant::detail
