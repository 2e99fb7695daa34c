// The joints' part of stage 5 ([M20] sec. 3.3): every joint of Model::joints projected in index
// order, on one thread, within the same Gauss-Seidel pass as the particle constraint families
// (after them, before the contacts).
#pragma once

#include <cstdint>

#include "constraints/families.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant::detail {

// Zeroes the joints' multipliers and correction sums (stage 4).
void resetJoints(const Model& model, State& state);
// One pass over the joints. Returns the index of the first joint after whose projection a body it
// moves holds a non-finite pose, or -1 (checked only when `check` is set: the traced replay).
std::int64_t projectJoints(const Model& model, const SolveContext& ctx, State& state, bool check);

}  // namespace pliant::detail
