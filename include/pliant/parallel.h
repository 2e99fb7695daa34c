// Thread control. Pliant parallelises with OpenMP; results are bit-identical for any thread count
// (every parallel loop writes disjoint data with no reduction across threads): per-particle loops
// of large models, and the constraint projection, whose colours are split across threads as
// planned by the Solver from the model (src/core/solve_plan.h, SolverSettings::parallelBlockSize).
#pragma once

namespace pliant {

// Sets a fixed number of worker threads (>= 1): every step of every Solver uses exactly this many
// (where its model has work to split).
void setThreadCount(int threads);
// Automatic thread count, the default: each Solver uses up to threadCount() threads and chooses per
// step how many, by the model's size (a model with nothing worth splitting runs on one) and by
// timing its own steps, falling back to fewer threads when other work takes the cores and back up
// when they are free (src/core/thread_tuner.h). Results are the same bits whatever it chooses.
void setAutomaticThreadCount();
// True unless setThreadCount fixed the count.
bool automaticThreadCount();
// The most threads a step uses: the fixed count, or in automatic mode the OpenMP default (the
// cores the process may run on, or OMP_NUM_THREADS).
int threadCount();

// The CPUs the process may run on (its affinity mask when first asked, at least 1). Unlike
// omp_get_num_procs(), which counts the calling thread's CPUs, it does not drop to 1 once
// pinThreadsToCores has bound the calling thread to one core: both read the mask once, first.
int availableCores();

// Binds each of the threadCount() worker threads (the calling thread is thread 0) to its own CPU
// of those the process may use, round robin. Unbound, the OS moves threads between cores, and each
// move costs the thread its cache (docs/performance.md measures the effect). For benchmarks and machines
// given to the simulation; `pliant bench` calls it unless told not to. Binding is process-wide
// and lasts until the threads end. Returns the number of CPUs used; 0 where binding is not
// supported or was refused (nothing is changed then). Call after setThreadCount; calling it again
// (for a larger team) binds over the same CPUs.
int pinThreadsToCores();

}  // namespace pliant
