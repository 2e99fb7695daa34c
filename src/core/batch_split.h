// Where the threads' parts of a parallel batch begin and end. A parallel batch's constraints share
// no movable particle, so any cut between the threads gives the same bits (the AVX kernels group
// lanes from any start, see distance.cpp); the cuts are therefore free to follow measured time.
// Even cuts leave threads waiting where work per constraint is uneven, e.g. tethers, which cost
// a slackness test where slack and a projection where taut, and are taut near the pins.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>

#if defined(__x86_64__) && defined(__GNUC__)
#include <x86intrin.h>
#endif

namespace pliant::detail {

// A cheap monotonic tick count in unspecified units (only ratios of ticks are used).
inline std::uint64_t ticks() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// Moves the inner cuts of a batch split into cuts.size() - 1 parts halfway toward the cuts that
// would have equalised the measured times (ticks[t]: time of part [cuts[t], cuts[t + 1])), taking
// each part's time per constraint as uniform within it. Halfway damps timer noise and preemption;
// cuts stay ordered, on multiples of 4 from the first (whole SIMD groups), and the outer cuts stay.
// `target` is scratch of the same size as cuts.
inline void rebalanceCuts(std::span<std::uint32_t> cuts, std::span<const std::uint64_t> ticks,
                          std::span<double> target) {
  const std::size_t parts = cuts.size() - 1;
  if (parts < 2) return;
  double total = 0.0;
  for (std::size_t t = 0; t < parts; ++t) total += static_cast<double>(ticks[t]);
  if (!(total > 0.0)) return;
  std::size_t part = 0;
  double before = 0.0;  // time of the parts before `part`
  for (std::size_t k = 1; k < parts; ++k) {
    const double goal = total * static_cast<double>(k) / static_cast<double>(parts);
    while (part + 1 < parts && before + static_cast<double>(ticks[part]) < goal)
      before += static_cast<double>(ticks[part++]);
    const double spent = static_cast<double>(ticks[part]);
    const double fraction = spent > 0.0 ? std::clamp((goal - before) / spent, 0.0, 1.0) : 0.5;
    target[k] = cuts[part] + fraction * (cuts[part + 1] - cuts[part]);
  }
  const std::uint32_t first = cuts[0];
  const std::uint32_t last = cuts[parts];
  for (std::size_t k = 1; k < parts; ++k) {
    const double moved = 0.5 * (static_cast<double>(cuts[k]) + target[k]) - first;
    const auto quads = static_cast<std::uint32_t>(moved / 4.0 + 0.5);
    cuts[k] = std::clamp<std::uint32_t>(first + 4 * quads, cuts[k - 1], last);
  }
}

}  // namespace pliant::detail
