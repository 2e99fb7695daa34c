// Hashing of a uniform grid of cells, shared by the particle-contact grid (particle_contacts.cpp) and the
// box grid of the intersection count (box_grid.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace pliant::detail {

// Cell coordinate of x; coordinates far beyond any sensible scene are clamped so the integer
// conversion stays defined.
inline std::int64_t cellCoordinate(double x, double inverseCellSize) {
  constexpr double kCellLimit = 1.0e15;
  return static_cast<std::int64_t>(std::clamp(std::floor(x * inverseCellSize), -kCellLimit, kCellLimit));
}

// A cell's key: its coordinates modulo 2^21 packed in 63 bits. Cells 2^21 apart share a key, which
// only adds candidates that the exact test then rejects.
inline std::uint64_t cellKey(std::int64_t x, std::int64_t y, std::int64_t z) {
  constexpr std::uint64_t kMask = (std::uint64_t{1} << 21) - 1;
  return ((static_cast<std::uint64_t>(x) & kMask) << 42) | ((static_cast<std::uint64_t>(y) & kMask) << 21) |
         (static_cast<std::uint64_t>(z) & kMask);
}

// A 64-bit finaliser of a key (MurmurHash3's fmix64), so the low bits depend on all bits.
inline std::uint64_t keyHash(std::uint64_t key) {
  key ^= key >> 33;
  key *= 0xFF51AFD7ED558CCDull;
  key ^= key >> 33;
  key *= 0xC4CEB9FE1A85EC53ull;
  return key ^ (key >> 33);
}

}  // namespace pliant::detail
