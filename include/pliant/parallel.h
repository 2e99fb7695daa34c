// Thread control. Pliant parallelises with OpenMP; results are bit-identical for any thread count
// (every parallel loop writes disjoint data with no reduction across threads): per-particle loops
// of large models, and the constraint projection, whose colours are split across threads as
// planned when the model is built (Model::solveBatches, Model::parallelBlockSize).
#pragma once

namespace pliant {

// Sets the number of worker threads (>= 1) used by Pliant's parallel loops.
void setThreadCount(int threads);
// The number of worker threads Pliant's parallel loops use.
int threadCount();

}  // namespace pliant
