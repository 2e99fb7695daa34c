// The test behind refused steps (Solver::step) and the trace that names their cause: a particle is
// bad when its position or velocity is not finite, or it moved further than `bound` (m) from where
// the step started.
#pragma once

#include <cstddef>
#include <vector>

#include "pliant/state.h"

namespace pliant::detail {

inline bool particleBad(const State& state, const std::vector<Vec3>& start, std::size_t p, double bound) {
  const Vec3& x = state.position[p];
  if (!x.allFinite() || !state.velocity[p].allFinite()) return true;
  return (x - start[p]).norm() > bound;
}

}  // namespace pliant::detail
