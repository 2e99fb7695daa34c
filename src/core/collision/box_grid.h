// Axis-aligned boxes (Aabb), and a uniform grid of them for broad phases: which boxes of a set
// overlap a query box. countIntersectingTrianglePairs (geometry.cpp) uses the grid over a mesh's
// triangles, built anew for each count; the surface contact broad phase, run over and over on the
// same mesh, uses the hierarchy of box_tree.h instead.
//
// Every box is entered in each cell it overlaps (cells hashed into buckets by a counting sort, as
// the particle grid in particle_contacts.cpp). A query visits the cells the query box overlaps and reports
// each overlapping box once: a pair of overlapping boxes is reported only from the cell that holds
// the lowest corner of their intersection, so no sort or "seen" set is needed. Boxes that would
// span more than kMaxCellsPerBox cells (a particle flung far in one step) are kept in an oversize
// list that every query checks.
//
// The order of reports depends only on the boxes and the query, never on threads. build() reuses
// its arrays: once they have grown to the largest set seen, building allocates nothing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "collision/cell_hash.h"
#include "pliant/math.h"

namespace pliant::detail {

struct Aabb {
  Vec3 min = Vec3::Constant(std::numeric_limits<double>::infinity());   // m
  Vec3 max = Vec3::Constant(-std::numeric_limits<double>::infinity());  // m

  void add(const Vec3& p) {
    min = min.cwiseMin(p);
    max = max.cwiseMax(p);
  }
  void add(const Aabb& b) {
    min = min.cwiseMin(b.min);
    max = max.cwiseMax(b.max);
  }
  void inflate(double r) {
    min.array() -= r;
    max.array() += r;
  }
  void inflate(const Vec3& r) {
    min -= r;
    max += r;
  }
  bool overlaps(const Aabb& b) const {
    return min.x() <= b.max.x() && b.min.x() <= max.x() && min.y() <= b.max.y() && b.min.y() <= max.y() &&
           min.z() <= b.max.z() && b.min.z() <= max.z();
  }
  bool contains(const Vec3& p) const {
    return min.x() <= p.x() && p.x() <= max.x() && min.y() <= p.y() && p.y() <= max.y() && min.z() <= p.z() &&
           p.z() <= max.z();
  }
  bool finite() const { return min.allFinite() && max.allFinite(); }
};

class BoxGrid {
 public:
  static constexpr std::int64_t kMaxCellsPerBox = 512;

  // Enters `boxes` (ids are their indices) in cells of `cellSize` m (> 0). Non-finite boxes are
  // left out: no query reports them.
  void build(std::span<const Aabb> boxes, double cellSize) {
    boxes_ = boxes;
    inverseCellSize_ = 1.0 / cellSize;
    entries_.clear();
    oversize_.clear();
    for (std::uint32_t id = 0; id < boxes.size(); ++id) {
      const Aabb& b = boxes[id];
      if (!b.finite()) continue;
      Range r = range(b);
      if (r.count() > kMaxCellsPerBox) {
        oversize_.push_back(id);
        continue;
      }
      for (std::int64_t z = r.lo[2]; z <= r.hi[2]; ++z)
        for (std::int64_t y = r.lo[1]; y <= r.hi[1]; ++y)
          for (std::int64_t x = r.lo[0]; x <= r.hi[0]; ++x) entries_.push_back({id, key(x, y, z)});
    }
    // Counting sort of the entries by bucket; within a bucket they keep their (id) order.
    std::size_t buckets = 1;
    while (buckets < 2 * entries_.size()) buckets *= 2;
    mask_ = buckets - 1;
    start_.assign(buckets + 1, 0);
    for (const Entry& e : entries_) ++start_[bucket(e.key) + 1];
    for (std::size_t b = 0; b < buckets; ++b) start_[b + 1] += start_[b];
    sorted_.resize(entries_.size());
    cursor_.assign(start_.begin(), start_.end() - 1);
    for (const Entry& e : entries_) sorted_[cursor_[bucket(e.key)]++] = e;
  }

  // Calls visit(id) once for every box that overlaps `query`, in an order fixed by the data.
  template <class Visit>
  void query(const Aabb& query, Visit&& visit) const {
    if (!query.finite()) return;
    for (std::uint32_t id : oversize_)
      if (boxes_[id].overlaps(query)) visit(id);
    if (sorted_.empty()) return;
    const Range r = range(query);
    if (r.count() > kMaxCellsPerBox) {
      // A huge query: test every box directly, each once.
      std::uint32_t previous = ~0u;
      for (const Entry& e : entries_) {
        if (e.id == previous) continue;
        previous = e.id;
        if (boxes_[e.id].overlaps(query)) visit(e.id);
      }
      return;
    }
    for (std::int64_t z = r.lo[2]; z <= r.hi[2]; ++z)
      for (std::int64_t y = r.lo[1]; y <= r.hi[1]; ++y)
        for (std::int64_t x = r.lo[0]; x <= r.hi[0]; ++x) {
          const std::uint64_t k = key(x, y, z);
          const std::uint64_t b = bucket(k);
          for (std::uint32_t s = start_[b]; s < start_[b + 1]; ++s) {
            const Entry& e = sorted_[s];
            if (e.key != k) continue;
            const Aabb& box = boxes_[e.id];
            if (!box.overlaps(query)) continue;
            // Report from the cell holding the lowest corner of the intersection only.
            const Vec3 corner = box.min.cwiseMax(query.min);
            if (cell(corner.x()) != x || cell(corner.y()) != y || cell(corner.z()) != z) continue;
            visit(e.id);
          }
        }
  }

 private:
  struct Entry {
    std::uint32_t id = 0;
    std::uint64_t key = 0;
  };
  struct Range {
    std::int64_t lo[3];
    std::int64_t hi[3];
    std::int64_t count() const { return (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1); }
  };

  std::int64_t cell(double x) const { return cellCoordinate(x, inverseCellSize_); }
  Range range(const Aabb& b) const {
    Range r;
    for (int k = 0; k < 3; ++k) {
      r.lo[k] = cell(b.min[k]);
      r.hi[k] = cell(b.max[k]);
      // Keeps count() from overflowing for enormous boxes; such boxes are oversize anyway.
      r.hi[k] = std::min(r.hi[k], r.lo[k] + kMaxCellsPerBox);
    }
    return r;
  }
  static std::uint64_t key(std::int64_t x, std::int64_t y, std::int64_t z) { return cellKey(x, y, z); }
  std::uint64_t bucket(std::uint64_t k) const { return keyHash(k) & mask_; }
  std::span<const Aabb> boxes_;
  double inverseCellSize_ = 1.0;
  std::uint64_t mask_ = 0;
  std::vector<Entry> entries_;  // in id order
  std::vector<Entry> sorted_;   // by bucket
  std::vector<std::uint32_t> start_;
  std::vector<std::uint32_t> cursor_;
  std::vector<std::uint32_t> oversize_;  // ids, ascending
};

}  // namespace pliant::detail
