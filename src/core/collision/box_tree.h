// A bounding-box hierarchy over a fixed set of primitives whose boxes move: built once from the
// primitives' rest positions, refitted from their current boxes when needed, queried with a box.
//
// Why not only the uniform grid (box_grid.h): the surface contact broad phase asks, for every vertex
// and every edge of a cloth, which triangles (edges) come near, with boxes about the size of the
// mesh spacing. A grid query then scans every entry of 8 to 27 cells; the tree visits only the
// nodes that overlap, and a mesh keeps its neighbours near each other however it folds, so a tree
// built on the rest layout stays tight after refitting. Build: top-down, split at the median of
// the longest axis of the primitive centres, at most kLeafSize primitives per leaf, nodes in
// depth-first order (a node's children come after it). Refit: children before parents. Queries
// report primitives in a fixed order; nothing depends on threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "collision/box_grid.h"

namespace pliant::detail {

class BoxTree {
 public:
  static constexpr std::uint32_t kLeafSize = 4;

  // Builds the hierarchy over primitives 0 .. centres.size() - 1 placed at `centres` (m).
  void build(std::span<const Vec3> centres) {
    order_.resize(centres.size());
    std::iota(order_.begin(), order_.end(), 0u);
    nodes_.clear();
    nodes_.reserve(2 * centres.size() / kLeafSize + 2);
    if (!centres.empty()) split(centres, 0, static_cast<std::uint32_t>(centres.size()));
  }

  // Recomputes every node's box from the primitives' current boxes (indexed like the centres).
  void refit(std::span<const Aabb> boxes) {
    for (std::size_t k = nodes_.size(); k-- > 0;) {
      Node& n = nodes_[k];
      Aabb box;
      if (n.leaf) {
        for (std::uint32_t i = n.first; i < n.first + n.count; ++i) box.add(boxes[order_[i]]);
      } else {
        box = nodes_[k + 1].box;
        box.add(nodes_[n.first].box);
      }
      n.box = box;
    }
  }

  // Calls visit(id) for every primitive whose box (as last refitted, passed again as `boxes`)
  // overlaps `query`, each once.
  template <class Visit>
  void query(const Aabb& query, std::span<const Aabb> boxes, Visit&& visit) const {
    if (nodes_.empty()) return;
    std::uint32_t stack[64];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const Node& n = nodes_[stack[--top]];
      if (!n.box.overlaps(query)) continue;
      if (n.leaf) {
        for (std::uint32_t i = n.first; i < n.first + n.count; ++i)
          if (boxes[order_[i]].overlaps(query)) visit(order_[i]);
        continue;
      }
      const auto self = static_cast<std::uint32_t>(&n - nodes_.data());
      stack[top++] = n.first;  // right child, visited after the left one
      stack[top++] = self + 1;
    }
  }

 private:
  struct Node {
    Aabb box;
    std::uint32_t first = 0;  // leaf: first entry in order_; internal: index of the right child
    std::uint32_t count = 0;  // leaf: number of primitives
    bool leaf = false;
  };

  // Adds the node for order_[begin, end) and its subtree; returns its index.
  std::uint32_t split(std::span<const Vec3> centres, std::uint32_t begin, std::uint32_t end) {
    const auto index = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    if (end - begin <= kLeafSize) {
      nodes_[index].leaf = true;
      nodes_[index].first = begin;
      nodes_[index].count = end - begin;
      return index;
    }
    Aabb bounds;
    for (std::uint32_t i = begin; i < end; ++i) bounds.add(centres[order_[i]]);
    int axis = 0;
    const Vec3 size = bounds.max - bounds.min;
    if (size.y() > size[axis]) axis = 1;
    if (size.z() > size[axis]) axis = 2;
    const std::uint32_t middle = begin + (end - begin) / 2;
    // Ties broken by index, so the split does not depend on the sort's implementation.
    std::nth_element(order_.begin() + begin, order_.begin() + middle, order_.begin() + end,
                     [&](std::uint32_t a, std::uint32_t b) {
                       const double ca = centres[a][axis], cb = centres[b][axis];
                       return ca != cb ? ca < cb : a < b;
                     });
    split(centres, begin, middle);
    const std::uint32_t right = split(centres, middle, end);
    nodes_[index].first = right;
    return index;
  }

  std::vector<Node> nodes_;
  std::vector<std::uint32_t> order_;
};

}  // namespace pliant::detail
