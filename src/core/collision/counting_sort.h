// The prefix step of a counting sort whose counting was split into parts (threads or lists): each
// part counted its entries per bucket, and entries go bucket by bucket, the parts in order within a
// bucket, so the result does not depend on how the entries were split.
#pragma once

#include <omp.h>

#include <cstddef>
#include <cstdint>

namespace pliant::detail {

// counts[part * buckets + b]: part's entries in bucket b, turned into where the first of them goes.
// start[b]: where bucket b begins; start[buckets]: the total.
inline void partCountsToStarts(std::uint32_t* counts, std::size_t parts, std::size_t buckets, std::uint32_t* start) {
  std::uint32_t next = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    start[b] = next;
    for (std::size_t part = 0; part < parts; ++part) {
      std::uint32_t& slot = counts[part * buckets + b];
      const std::uint32_t count = slot;
      slot = next;
      next += count;
    }
  }
  start[buckets] = next;
}

// partCountsToStarts by every thread of an OpenMP parallel region (a team of any size): each
// turns the counts of a fixed share of the buckets into starts, after the shares before it, and
// fills its share of `start` when one is given (start[buckets] too, by the last thread). `totals`
// holds a count per thread. The same starts as partCountsToStarts; ends with a barrier.
inline void partCountsToStartsShared(std::uint32_t* counts, std::size_t parts, std::size_t buckets,
                                     std::uint32_t* totals, std::uint32_t* start = nullptr) {
  const auto team = static_cast<std::size_t>(omp_get_num_threads());
  const auto thread = static_cast<std::size_t>(omp_get_thread_num());
  const std::size_t begin = buckets * thread / team, end = buckets * (thread + 1) / team;
  std::uint32_t total = 0;
  for (std::size_t part = 0; part < parts; ++part)
    for (std::size_t b = begin; b < end; ++b) total += counts[part * buckets + b];
  totals[thread] = total;
#pragma omp barrier
  std::uint32_t next = 0;
  for (std::size_t t = 0; t < thread; ++t) next += totals[t];
  for (std::size_t b = begin; b < end; ++b) {
    if (start) start[b] = next;
    for (std::size_t part = 0; part < parts; ++part) {
      std::uint32_t& slot = counts[part * buckets + b];
      const std::uint32_t count = slot;
      slot = next;
      next += count;
    }
  }
  if (start && thread + 1 == team) start[buckets] = next;
#pragma omp barrier
}

}  // namespace pliant::detail
