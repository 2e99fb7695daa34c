// Thread control. Pliant parallelises with OpenMP; results are bit-identical for any thread count
// (every parallel loop writes disjoint data with no reduction across threads): per-particle loops
// of large models, and the constraint projection, whose colours are split across threads as
// planned by the Solver from the model (src/core/solve_plan.h, SolverSettings::parallelBlockSize).
#pragma once

namespace pliant {

// Sets the number of worker threads (>= 1) used by Pliant's parallel loops.
void setThreadCount(int threads);
// The number of worker threads Pliant's parallel loops use.
int threadCount();

// Binds each of the threadCount() worker threads (the calling thread is thread 0) to its own CPU
// of those the process may use, round robin. Unbound, the OS moves threads between cores, and each
// move costs the thread its cache (docs/performance.md measures the effect). For benchmarks and machines
// given to the simulation; `pliant bench` calls it unless told not to. Binding is process-wide
// and lasts until the threads end. Returns the number of CPUs used; 0 where binding is not
// supported or was refused (nothing is changed then). Call after setThreadCount.
int pinThreadsToCores();

}  // namespace pliant
