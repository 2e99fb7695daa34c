// The prefix step of a counting sort whose counting was split into parts (threads or lists): each
// part counted its entries per bucket, and entries go bucket by bucket, the parts in order within a
// bucket, so the result does not depend on how the entries were split.
#pragma once

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

}  // namespace pliant::detail
