// The boundary of a tet mesh: its faces used by one tet only, oriented outward (see pliant/geometry.h).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "pliant/geometry.h"

namespace pliant {

std::vector<std::array<std::uint32_t, 3>> boundaryTriangles(const std::vector<std::array<std::uint32_t, 4>>& tets) {
  // For a positive tet (x1-x0).((x2-x0)x(x3-x0)) > 0 these faces have outward normals (right-hand rule).
  static constexpr int kFace[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
  struct Entry {
    std::array<std::uint32_t, 3> key;  // sorted vertices
    std::size_t face;                  // 4 * tet + local face
  };
  std::vector<Entry> entries;
  entries.reserve(4 * tets.size());
  for (std::size_t t = 0; t < tets.size(); ++t)
    for (int f = 0; f < 4; ++f) {
      std::array<std::uint32_t, 3> key{tets[t][kFace[f][0]], tets[t][kFace[f][1]], tets[t][kFace[f][2]]};
      std::sort(key.begin(), key.end());
      entries.push_back({key, 4 * t + static_cast<std::size_t>(f)});
    }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  std::vector<char> boundary(entries.size(), 0);
  for (std::size_t i = 0; i < entries.size();) {
    std::size_t j = i + 1;
    while (j < entries.size() && entries[j].key == entries[i].key) ++j;
    if (j == i + 1) boundary[entries[i].face] = 1;
    i = j;
  }
  // Output in tet order, so the result does not depend on the sort.
  std::vector<std::array<std::uint32_t, 3>> surface;
  for (std::size_t t = 0; t < tets.size(); ++t)
    for (int f = 0; f < 4; ++f)
      if (boundary[4 * t + static_cast<std::size_t>(f)])
        surface.push_back({tets[t][kFace[f][0]], tets[t][kFace[f][1]], tets[t][kFace[f][2]]});
  return surface;
}

}  // namespace pliant
