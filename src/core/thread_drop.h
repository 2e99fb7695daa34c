// When a step in automatic thread mode (pliant/parallel.h) goes on with one thread: once the
// constraint barrier's waiters have gone to sleep this many times in the step (solver.cpp,
// Solver::advance). Beside a process that holds a core, nearly every barrier sleeps (a few dozen a
// substep); on a quiet machine a wait sleeps only when an interrupt stretches a batch past the spin
// budget, a few times a step at most. Every thread count gives the same bits, so the drop changes
// only the speed. A setting for tests, which set 0 to drop in every step after its first substep.
#pragma once

#include <atomic>

namespace pliant::detail {

inline std::atomic<int>& threadDropSleeps() {
  static std::atomic<int> sleeps{8};
  return sleeps;
}

}  // namespace pliant::detail
