// The parallel Gauss-Seidel plan: how the Solver cuts each constraint family's array into batches
// it may project in SIMD lanes or on several threads, with results bit-identical to projecting
// every constraint in index order. The plan depends on the model's topology and on which particles
// can move (inverse mass > 0), so the Solver owns it and plans again when masses or pins change.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "pliant/model.h"

namespace pliant::detail {

// A stretch [begin, end) of one constraint family's array that the solver projects as a unit.
// The batches of a family cover its array in order.
struct SolveBatch {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  // No two constraints of the batch share a particle that constraints can move (inverse mass > 0;
  // kernels never write a particle of inverse mass 0). They may then be projected in any order, in
  // SIMD lanes or on several threads, and the result is bit-identical to projecting them in order.
  bool independent = false;
  // Independent and split across the worker threads: at least 2 x the block size long, or, in a plan
  // that has such a batch, at least 2 x SolvePlan::partSize (see planSolve).
  bool parallel = false;
  bool operator==(const SolveBatch&) const = default;
};

struct SolvePlan {
  // Per family, maximal runs of independent constraints (the builders emit constraints in colour
  // order, so a run is a colour) and dependent leftovers. Families without a particle list
  // (global volume, generic: shared scratch, user code) form one serial batch.
  std::array<std::vector<SolveBatch>, kConstraintFamilyCount> batches;
  // Fewest constraints a thread is given of a parallel batch.
  std::uint32_t partSize = 1;
  bool hasParallelBatch() const;  // some batch is split across threads
};

// Plans `model` with its inverse masses and `blockSize` (>= 1, SolverSettings::parallelBlockSize): a
// model goes on the threads when some independent batch is at least 2 x blockSize long; then every
// independent batch of at least 2 x partSize (blockSize / 4) is split too (a batch left to thread 0
// keeps the others waiting at the barrier before the next parallel batch). A particle index out of
// range gives the trivial plan for its family (Model::validate reports the error).
SolvePlan planSolve(const Model& model, std::uint32_t blockSize);

// Fills Model::lambdaOffset from the family sizes (ModelBuilder::build).
void fillLambdaOffsets(Model& model);

}  // namespace pliant::detail
