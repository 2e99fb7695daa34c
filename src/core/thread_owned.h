#pragma once

#include <cstddef>

namespace pliant::detail {

// Bytes in a cache line of the machines built for (x86-64; most ARM64 cores).
inline constexpr std::size_t kCacheLine = 64;

// A thread's own object (most often a list it appends to), on cache lines of its own. Lists kept
// side by side in one vector share lines: every append writes the list's end pointer, and two
// cores writing one line take it from each other on every write (false sharing). Used as
// std::vector<ThreadOwned<std::vector<T>>>; it is a T in every other respect.
template <class T>
struct alignas(kCacheLine) ThreadOwned : T {
  using T::T;
};

}  // namespace pliant::detail
