// Thread control. Pliant parallelises with OpenMP; results are bit-identical for any thread count
// (every parallel loop writes disjoint data with no reduction across threads).
#pragma once

namespace pliant {

// Sets the number of worker threads (>= 1) used by Pliant's parallel loops.
void setThreadCount(int threads);
// The number of worker threads Pliant's parallel loops use.
int threadCount();

}  // namespace pliant
