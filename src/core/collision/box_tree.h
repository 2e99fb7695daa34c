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
//
// Pairs: every pair of overlapping boxes between two trees (or within one) is found by descending
// both trees at once (pairs of nodes whose boxes overlap), so the work shared by neighbouring
// primitives is done once, not once per query. The descent is cut into independent tasks (pairs
// of nodes) that threads can take in any order; a task reports its pairs in a fixed order, but
// callers that split tasks over threads must order the pairs themselves. A self search may be
// given a flag per node (`skip`): the pairs within a flagged subtree are left out (the subtree
// with itself is not descended), those between it and the rest are not.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
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
    parent_.assign(nodes_.size(), 0);
    leafOf_.assign(centres.size(), 0);
    for (std::uint32_t k = 0; k < nodes_.size(); ++k) {
      const Node& n = nodes_[k];
      if (n.leaf) {
        for (std::uint32_t i = n.first; i < n.first + n.count; ++i) leafOf_[order_[i]] = k;
      } else {
        parent_[k + 1] = k;
        parent_[n.first] = k;
      }
    }
    pathMark_.assign(nodes_.size(), 0);
    path_.reserve(nodes_.size());
  }

  // Recomputes every node's box from the primitives' current boxes (indexed like the centres).
  void refit(std::span<const Aabb> boxes) {
    for (std::size_t k = nodes_.size(); k-- > 0;) refitNode(k, boxes);
  }

  // Recomputes the boxes of the nodes above `changed` primitives only (those whose boxes changed
  // since the last refit): the same boxes as refit(boxes) when no other primitive's box changed.
  void refitAbove(std::span<const std::uint32_t> changed, std::span<const Aabb> boxes) {
    path_.clear();
    for (std::uint32_t primitive : changed)
      for (std::uint32_t k = leafOf_[primitive]; !pathMark_[k]; k = parent_[k]) {
        pathMark_[k] = 1;
        path_.push_back(k);
        if (k == 0) break;
      }
    // Children come after their parents: descending order refits them first.
    std::sort(path_.begin(), path_.end(), std::greater<>());
    for (std::uint32_t k : path_) {
      pathMark_[k] = 0;
      refitNode(k, boxes);
    }
  }

  // A pair of subtrees to compare: `a` of this tree and `b` of the other one, or (self pairs) two
  // disjoint subtrees of this tree, or one subtree with itself when a == b.
  struct Task {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
  };

  // Tasks that together cover every overlapping pair of primitives of this tree and `other`
  // (`self`: of this tree with itself, each unordered pair once), at least `minTasks` of them
  // unless the trees are too small: pairs of nodes expanded level by level from the roots.
  // `tasks` receives them; `next` is scratch.
  void pairTasks(const BoxTree& other, bool self, std::size_t minTasks, std::vector<Task>& tasks,
                 std::vector<Task>& next, std::span<const std::uint8_t> skip = {}) const {
    tasks.clear();
    if (nodes_.empty() || other.nodes_.empty()) return;
    if (self && !skip.empty() && skip[0]) return;
    tasks.push_back({0, 0});
    bool grew = true;
    while (grew && tasks.size() < minTasks) {
      next.clear();
      grew = false;
      for (const Task& t : tasks) {
        if (expand(other, self, t, next, skip)) grew = true;
        else next.push_back(t);
      }
      tasks.swap(next);
    }
  }

  // Calls visit(a, b) for every primitive a of this tree and b of `other` (self: a and b of this
  // tree, a != b, each unordered pair once) under `task` whose boxes (as last refitted, passed
  // again) overlap.
  template <class Visit>
  void pairs(const BoxTree& other, bool self, Task task, std::span<const Aabb> boxes, std::span<const Aabb> otherBoxes,
             Visit&& visit, std::span<const std::uint8_t> skip = {}) const {
    Task stack[kPairStack];
    int top = 0;
    stack[top++] = task;
    while (top > 0) {
      const Task t = stack[--top];
      const Node& na = nodes_[t.a];
      if (self && t.a == t.b) {
        if (!skip.empty() && skip[t.a]) continue;
        if (na.leaf) {
          for (std::uint32_t i = na.first; i < na.first + na.count; ++i)
            for (std::uint32_t j = i + 1; j < na.first + na.count; ++j)
              if (boxes[order_[i]].overlaps(boxes[order_[j]])) visit(order_[i], order_[j]);
        } else {
          stack[top++] = {t.a + 1, na.first};
          stack[top++] = {na.first, na.first};
          stack[top++] = {t.a + 1, t.a + 1};
        }
        continue;
      }
      const Node& nb = other.nodes_[t.b];
      if (!na.box.overlaps(nb.box)) continue;
      if (na.leaf && nb.leaf) {
        for (std::uint32_t i = na.first; i < na.first + na.count; ++i) {
          const Aabb& box = boxes[order_[i]];
          if (!box.overlaps(nb.box)) continue;
          for (std::uint32_t j = nb.first; j < nb.first + nb.count; ++j)
            if (box.overlaps(otherBoxes[other.order_[j]])) visit(order_[i], other.order_[j]);
        }
      } else if (nb.leaf || (!na.leaf && na.count >= nb.count)) {
        stack[top++] = {na.first, t.b};
        stack[top++] = {t.a + 1, t.b};
      } else {
        stack[top++] = {t.a, nb.first};
        stack[top++] = {t.a, t.b + 1};
      }
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

  // The nodes, for callers that keep data per node: depth-first, node k's children are k + 1 and
  // right(k), a child after its parent; primitives(k) are the primitives under node k.
  std::size_t nodeCount() const { return nodes_.size(); }
  bool leaf(std::uint32_t k) const { return nodes_[k].leaf; }
  std::uint32_t right(std::uint32_t k) const { return nodes_[k].first; }
  std::span<const std::uint32_t> primitives(std::uint32_t k) const {
    return std::span<const std::uint32_t>(order_).subspan(nodes_[k].begin, nodes_[k].count);
  }

 private:
  struct Node {
    Aabb box;
    std::uint32_t first = 0;  // leaf: first entry in order_; internal: index of the right child
    std::uint32_t begin = 0;  // first entry in order_ of the primitives under the node
    std::uint32_t count = 0;  // primitives under the node
    bool leaf = false;
  };
  // A pair descent pushes at most three tasks per level of either tree; the trees are balanced
  // (median splits), so 40 levels each (10^12 primitives) fit.
  static constexpr int kPairStack = 256;

  void refitNode(std::size_t k, std::span<const Aabb> boxes) {
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

  // Appends the children of `t` to `tasks` as pairs pops them; false when `t` is a pair of leaves
  // (or a leaf with itself). Pairs whose boxes do not overlap are dropped.
  bool expand(const BoxTree& other, bool self, const Task& t, std::vector<Task>& tasks,
              std::span<const std::uint8_t> skip) const {
    const Node& na = nodes_[t.a];
    if (self && t.a == t.b) {
      if (na.leaf) return false;
      if (skip.empty() || !skip[t.a + 1]) tasks.push_back({t.a + 1, t.a + 1});
      if (skip.empty() || !skip[na.first]) tasks.push_back({na.first, na.first});
      tasks.push_back({t.a + 1, na.first});
      return true;
    }
    const Node& nb = other.nodes_[t.b];
    if (na.leaf && nb.leaf) return false;
    if (!na.box.overlaps(nb.box)) return true;
    if (nb.leaf || (!na.leaf && na.count >= nb.count)) {
      tasks.push_back({t.a + 1, t.b});
      tasks.push_back({na.first, t.b});
    } else {
      tasks.push_back({t.a, t.b + 1});
      tasks.push_back({t.a, nb.first});
    }
    return true;
  }

  // Adds the node for order_[begin, end) and its subtree; returns its index.
  std::uint32_t split(std::span<const Vec3> centres, std::uint32_t begin, std::uint32_t end) {
    const auto index = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    nodes_[index].begin = begin;
    if (end - begin <= kLeafSize) {
      nodes_[index].leaf = true;
      nodes_[index].first = begin;
      nodes_[index].count = end - begin;
      return index;
    }
    nodes_[index].count = end - begin;
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
  std::vector<std::uint32_t> parent_;  // per node (the root's is 0)
  std::vector<std::uint32_t> leafOf_;  // per primitive: its leaf
  // refitAbove's scratch: the nodes on the changed primitives' paths, marked per node.
  std::vector<std::uint32_t> path_;
  std::vector<std::uint8_t> pathMark_;
};

}  // namespace pliant::detail
