// Building and sampling signed distance grids (see pliant/signed_distance_grid.h).
//
// Build, once per mesh:
//   1. check the input (indices, finite vertices, at least one non-degenerate triangle);
//   2. check that the mesh is closed and consistently oriented: every undirected edge is used by
//      exactly two triangles, once in each direction; flip the whole mesh if it encloses a negative
//      volume (it faces inward);
//   3. compute the angle-weighted pseudo-normals of faces, edges and vertices (Baerentzen & Aanaes
//      2005): a face's normal, the sum of an edge's two face normals, and at a vertex the sum of the
//      incident face normals weighted by the incident angles;
//   4. for every grid node, find the nearest triangle through a bounding-volume hierarchy (exact
//      point-triangle distance, the Voronoi-region method of Ericson 2005, "Real-Time Collision
//      Detection", sec. 5.1.5), and take the sign from the pseudo-normal of the nearest feature.
// Nodes are independent, so the parallel loop gives the same grid for any thread count.
#include "pliant/signed_distance_grid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <tuple>

#include "collision/closest_on_triangle.h"
#include "pliant/error.h"

namespace pliant {

namespace {

using Triangle = std::array<std::uint32_t, 3>;

// Where on a triangle the nearest point lies: a corner (0..2), an edge (3 + e, edge e from corner e
// to corner e + 1 mod 3) or the interior (detail::closestOnTriangle).
enum Feature : int {
  kCorner0 = detail::kTriangleCorner0,
  kEdge0 = detail::kTriangleEdge0,
  kFace = detail::kTriangleFace
};

struct Nearest {
  Vec3 point = Vec3::Zero();
  int feature = kFace;
};

Nearest nearestOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const detail::TriangleClosest t = detail::closestOnTriangle(p, a, b, c);
  switch (t.feature) {
    case kCorner0:
      return {a, t.feature};
    case kCorner0 + 1:
      return {b, t.feature};
    case kCorner0 + 2:
      return {c, t.feature};
    case kEdge0:
      return {a + t.v * (b - a), t.feature};
    case kEdge0 + 1:
      return {b + t.v * (c - b), t.feature};
    case kEdge0 + 2:
      return {a + t.v * (c - a), t.feature};
    default:
      return {a + (b - a) * t.v + (c - a) * t.w, kFace};
  }
}

// A bounding-volume hierarchy over triangles: flat nodes, children of an inner node at `first` and
// `first + 1`, a leaf's triangles at order[first .. first + count).
struct BvhNode {
  Vec3 lower, upper;
  std::uint32_t first = 0;
  std::uint32_t count = 0;  // 0: inner node
};

class TriangleBvh {
 public:
  TriangleBvh(const std::vector<Vec3>& vertices, const std::vector<Triangle>& triangles,
              std::vector<std::uint32_t> subset)
      : vertices_(vertices), triangles_(triangles), order_(std::move(subset)) {
    centroid_.resize(triangles.size());
    for (std::uint32_t t : order_) {
      const Triangle& tri = triangles[t];
      centroid_[t] = (vertices[tri[0]] + vertices[tri[1]] + vertices[tri[2]]) / 3.0;
    }
    nodes_.reserve(2 * order_.size());
    nodes_.emplace_back();
    split(0, 0, static_cast<std::uint32_t>(order_.size()));
  }

  // The nearest triangle to p: its index, the nearest point and feature. Ties keep the triangle met
  // first, and the traversal order depends only on the mesh, so the result is deterministic.
  std::uint32_t nearest(const Vec3& p, Nearest& best) const {
    double bestSquared = std::numeric_limits<double>::infinity();
    std::uint32_t bestTriangle = 0;
    std::uint32_t stack[128];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const BvhNode& node = nodes_[stack[--top]];
      if (boxSquaredDistance(node, p) >= bestSquared) continue;
      if (node.count > 0) {
        for (std::uint32_t i = node.first; i < node.first + node.count; ++i) {
          const Triangle& tri = triangles_[order_[i]];
          const Nearest n = nearestOnTriangle(p, vertices_[tri[0]], vertices_[tri[1]], vertices_[tri[2]]);
          const double squared = (n.point - p).squaredNorm();
          if (squared < bestSquared) {
            bestSquared = squared;
            bestTriangle = order_[i];
            best = n;
          }
        }
        continue;
      }
      // Visit the nearer child first (pushed last).
      const double left = boxSquaredDistance(nodes_[node.first], p);
      const double right = boxSquaredDistance(nodes_[node.first + 1], p);
      if (left <= right) {
        stack[top++] = node.first + 1;
        stack[top++] = node.first;
      } else {
        stack[top++] = node.first;
        stack[top++] = node.first + 1;
      }
    }
    return bestTriangle;
  }

 private:
  static double boxSquaredDistance(const BvhNode& node, const Vec3& p) {
    const Vec3 d = (node.lower - p).cwiseMax(p - node.upper).cwiseMax(0.0);
    return d.squaredNorm();
  }

  // Median split along the longest axis of the centroids' box; the depth stays about log2(n), far
  // below the traversal stack's size.
  void split(std::uint32_t index, std::uint32_t first, std::uint32_t count) {
    Vec3 lower = Vec3::Constant(std::numeric_limits<double>::infinity()), upper = -lower;
    Vec3 centreLower = lower, centreUpper = upper;
    for (std::uint32_t i = first; i < first + count; ++i) {
      const std::uint32_t t = order_[i];
      for (std::uint32_t v : triangles_[t]) {
        lower = lower.cwiseMin(vertices_[v]);
        upper = upper.cwiseMax(vertices_[v]);
      }
      centreLower = centreLower.cwiseMin(centroid_[t]);
      centreUpper = centreUpper.cwiseMax(centroid_[t]);
    }
    nodes_[index].lower = lower;
    nodes_[index].upper = upper;
    if (count <= 4) {
      nodes_[index].first = first;
      nodes_[index].count = count;
      return;
    }
    int axis = 0;
    const Vec3 extent = centreUpper - centreLower;
    for (int k = 1; k < 3; ++k)
      if (extent[k] > extent[axis]) axis = k;
    const std::uint32_t half = count / 2;
    // The index breaks ties so that the order is a function of the mesh alone.
    std::nth_element(order_.begin() + first, order_.begin() + first + half, order_.begin() + first + count,
                     [&](std::uint32_t s, std::uint32_t t) {
                       const double cs = centroid_[s][axis], ct = centroid_[t][axis];
                       return cs < ct || (cs == ct && s < t);
                     });
    const auto children = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    nodes_.emplace_back();
    nodes_[index].first = children;
    nodes_[index].count = 0;
    split(children, first, half);
    split(children + 1, first + half, count - half);
  }

  const std::vector<Vec3>& vertices_;
  const std::vector<Triangle>& triangles_;
  std::vector<std::uint32_t> order_;
  std::vector<Vec3> centroid_;
  std::vector<BvhNode> nodes_;
};

// One triangle's use of an undirected edge (lo, hi).
struct EdgeUse {
  std::uint32_t lo, hi;
  std::uint32_t triangle;
  std::uint8_t slot;  // edge slot in the triangle: corner slot -> corner slot + 1
  bool forward;       // the triangle walks lo -> hi
};

std::string edgeName(const EdgeUse& e) {
  return "the edge between vertices " + std::to_string(e.lo + 1) + " and " + std::to_string(e.hi + 1);
}

[[noreturn]] void failMesh(const std::string& source, const std::string& what) { throw Error(source + ": " + what); }

constexpr const char* kNumbering = " (vertices and triangles count from 1, as in OBJ files)";

// The trilinear interpolant in the cell containing q (clamped to the grid) and its gradient.
double interpolate(const SignedDistanceGrid& g, const Vec3& q, Vec3& gradient) {
  const Vec3 s = (q - g.origin) / g.cellSize;
  int i[3];
  double t[3];
  for (int k = 0; k < 3; ++k) {
    const double cell = std::floor(s[k]);
    i[k] = static_cast<int>(std::clamp(cell, 0.0, static_cast<double>(g.nodes[k] - 2)));
    t[k] = std::clamp(s[k] - i[k], 0.0, 1.0);
  }
  const std::size_t nx = static_cast<std::size_t>(g.nodes[0]);
  const std::size_t nxy = nx * static_cast<std::size_t>(g.nodes[1]);
  const std::size_t base =
      static_cast<std::size_t>(i[0]) + nx * static_cast<std::size_t>(i[1]) + nxy * static_cast<std::size_t>(i[2]);
  const double* d = g.distance.data();
  const double c000 = d[base], c100 = d[base + 1], c010 = d[base + nx], c110 = d[base + nx + 1];
  const double c001 = d[base + nxy], c101 = d[base + nxy + 1], c011 = d[base + nxy + nx], c111 = d[base + nxy + nx + 1];
  const double x = t[0], y = t[1], z = t[2];
  // Interpolate along x, then y, then z; the gradient is the derivative of the same polynomial.
  const double c00 = c000 + x * (c100 - c000), c10 = c010 + x * (c110 - c010);
  const double c01 = c001 + x * (c101 - c001), c11 = c011 + x * (c111 - c011);
  const double c0 = c00 + y * (c10 - c00), c1 = c01 + y * (c11 - c01);
  const double dx00 = c100 - c000, dx10 = c110 - c010, dx01 = c101 - c001, dx11 = c111 - c011;
  const double dx0 = dx00 + y * (dx10 - dx00), dx1 = dx01 + y * (dx11 - dx01);
  const double dy0 = c10 - c00, dy1 = c11 - c01;
  gradient = Vec3(dx0 + z * (dx1 - dx0), dy0 + z * (dy1 - dy0), c1 - c0) / g.cellSize;
  return c0 + z * (c1 - c0);
}

}  // namespace

SignedDistanceGrid SignedDistanceGrid::build(const std::vector<Vec3>& vertices, const std::vector<Triangle>& triangles,
                                             const SignedDistanceGridOptions& options, const std::string& source) {
  auto fail = [&](const std::string& what) { failMesh(source, what); };
  if (!(options.cellSize >= 0.0) || !std::isfinite(options.cellSize))
    fail("cell size must be a finite number > 0 m (or 0 for automatic), got " + formatNumber(options.cellSize));
  if (options.maxCellsPerAxis < 1 || options.maxCellsPerAxis > 4096)
    fail("max cells per axis must be in [1, 4096], got " + std::to_string(options.maxCellsPerAxis));
  if (!std::isfinite(options.padding)) fail("padding must be a finite number (m; < 0 for automatic)");
  if (vertices.empty() || triangles.empty()) fail("the mesh is empty; expected a closed triangle mesh");
  for (std::size_t v = 0; v < vertices.size(); ++v)
    if (!vertices[v].allFinite()) fail("vertex " + std::to_string(v + 1) + " is not finite" + kNumbering);
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const Triangle& tri = triangles[t];
    for (std::uint32_t v : tri)
      if (v >= vertices.size())
        fail("triangle " + std::to_string(t + 1) + " uses vertex " + std::to_string(v + 1) + " of " +
             std::to_string(vertices.size()) + kNumbering);
    if (tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2])
      fail("triangle " + std::to_string(t + 1) + " repeats a vertex" + kNumbering);
  }

  SignedDistanceGrid grid;
  grid.vertices = vertices;
  grid.triangles = triangles;
  Vec3 lower = Vec3::Constant(std::numeric_limits<double>::infinity()), upper = -lower;
  for (const Triangle& tri : triangles)
    for (std::uint32_t v : tri) {
      lower = lower.cwiseMin(vertices[v]);
      upper = upper.cwiseMax(vertices[v]);
    }
  const double diagonal = (upper - lower).norm();

  // Degenerate triangles (a segment or a point) close the mesh topologically but add no surface.
  std::vector<Vec3> faceNormal(triangles.size(), Vec3::Zero());
  std::vector<std::uint32_t> solid;
  for (std::uint32_t t = 0; t < triangles.size(); ++t) {
    const Triangle& tri = triangles[t];
    const Vec3 n = (vertices[tri[1]] - vertices[tri[0]]).cross(vertices[tri[2]] - vertices[tri[0]]);
    if (n.norm() > 1e-12 * diagonal * diagonal) {
      faceNormal[t] = n.normalized();
      solid.push_back(t);
    }
  }
  if (solid.empty()) fail("every triangle is degenerate (zero area); expected a closed mesh enclosing a volume");

  // Closed and consistently oriented: sort the edge uses so each undirected edge's uses are adjacent.
  std::vector<EdgeUse> uses;
  uses.reserve(3 * triangles.size());
  for (std::uint32_t t = 0; t < triangles.size(); ++t)
    for (std::uint8_t e = 0; e < 3; ++e) {
      const std::uint32_t a = triangles[t][e], b = triangles[t][(e + 1) % 3];
      uses.push_back({std::min(a, b), std::max(a, b), t, e, a < b});
    }
  std::sort(uses.begin(), uses.end(), [](const EdgeUse& x, const EdgeUse& y) {
    return std::tie(x.lo, x.hi, x.triangle, x.slot) < std::tie(y.lo, y.hi, y.triangle, y.slot);
  });
  // Pseudo-normal of each triangle edge slot: the sum of the two incident face normals.
  std::vector<std::array<Vec3, 3>> edgeNormal(triangles.size());
  for (std::size_t i = 0; i < uses.size();) {
    std::size_t j = i;
    while (j < uses.size() && uses[j].lo == uses[i].lo && uses[j].hi == uses[i].hi) ++j;
    const std::size_t count = j - i;
    if (count == 1)
      fail("not closed: " + edgeName(uses[i]) + " belongs to 1 triangle (triangle " +
           std::to_string(uses[i].triangle + 1) + ")" + kNumbering);
    if (count > 2)
      fail("not manifold: " + edgeName(uses[i]) + " belongs to " + std::to_string(count) + " triangles" + kNumbering);
    if (uses[i].forward == uses[i + 1].forward)
      fail("inconsistent orientation: " + edgeName(uses[i]) + " is walked in the same direction by triangles " +
           std::to_string(uses[i].triangle + 1) + " and " + std::to_string(uses[i + 1].triangle + 1) +
           "; expected each edge once in each direction" + kNumbering);
    const Vec3 sum = faceNormal[uses[i].triangle] + faceNormal[uses[i + 1].triangle];
    edgeNormal[uses[i].triangle][uses[i].slot] = sum;
    edgeNormal[uses[i + 1].triangle][uses[i + 1].slot] = sum;
    i = j;
  }

  // Enclosed volume by the divergence theorem; negative means the triangles face inward.
  double volume = 0.0;
  for (const Triangle& tri : triangles) volume += vertices[tri[0]].dot(vertices[tri[1]].cross(vertices[tri[2]])) / 6.0;
  const Vec3 size = upper - lower;
  if (!(std::abs(volume) > 1e-12 * diagonal * diagonal * diagonal))
    fail("the mesh encloses no volume; expected a closed solid");
  if (volume < 0.0) {
    grid.flipped = true;
    for (Triangle& tri : grid.triangles) std::swap(tri[1], tri[2]);
    for (std::size_t t = 0; t < triangles.size(); ++t) {
      faceNormal[t] = -faceNormal[t];
      // Slots 0 (c0->c1) and 2 (c2->c0) swap places when corners 1 and 2 swap; slot 1 stays.
      std::swap(edgeNormal[t][0], edgeNormal[t][2]);
      for (Vec3& n : edgeNormal[t]) n = -n;
    }
  }
  const std::vector<Triangle>& mesh = grid.triangles;

  // Vertex pseudo-normals: incident face normals weighted by the incident angles.
  std::vector<Vec3> vertexNormal(vertices.size(), Vec3::Zero());
  for (std::uint32_t t : solid) {
    const Triangle& tri = mesh[t];
    for (int c = 0; c < 3; ++c) {
      const Vec3 u = vertices[tri[(c + 1) % 3]] - vertices[tri[c]];
      const Vec3 w = vertices[tri[(c + 2) % 3]] - vertices[tri[c]];
      const double angle = std::atan2(u.cross(w).norm(), u.dot(w));
      vertexNormal[tri[c]] += angle * faceNormal[t];
    }
  }

  // Grid size.
  const double longest = size.maxCoeff();
  double padding = options.padding >= 0.0 ? options.padding : 0.1 * longest;
  double h = options.cellSize;
  // longest > 0: a mesh with a non-degenerate triangle has extent.
  if (h == 0.0) h = (longest + 2.0 * padding) / options.maxCellsPerAxis;
  padding = std::max(padding, 2.0 * h);
  std::uint64_t total = 1;
  for (int k = 0; k < 3; ++k) {
    const double cells = std::ceil((size[k] + 2.0 * padding) / h);
    if (!(cells < 1e7)) {
      total = std::numeric_limits<std::uint64_t>::max();
      break;
    }
    grid.nodes[k] = static_cast<int>(cells) + 1;
    total *= static_cast<std::uint64_t>(grid.nodes[k]);
  }
  if (total > kMaxSignedDistanceGridNodes) {
    std::ostringstream what;
    what << "a signed distance grid with cell size " << h << " m over the mesh bounds (" << size.x() << " x "
         << size.y() << " x " << size.z() << " m, padding " << padding << " m) needs ";
    if (total == std::numeric_limits<std::uint64_t>::max()) what << "too many nodes";
    else what << grid.nodes[0] << " x " << grid.nodes[1] << " x " << grid.nodes[2] << " nodes";
    what << ", more than the limit of " << kMaxSignedDistanceGridNodes << " ("
         << (kMaxSignedDistanceGridNodes * 8 >> 20) << " MiB); use a larger cell size";
    fail(what.str());
  }
  grid.cellSize = h;
  // Centre the grid on the mesh so the padding is equal on both sides.
  const Vec3 span = h * Vec3(grid.nodes[0] - 1, grid.nodes[1] - 1, grid.nodes[2] - 1);
  grid.origin = 0.5 * (lower + upper) - 0.5 * span;
  grid.distance.assign(total, 0.0);

  const TriangleBvh bvh(vertices, mesh, solid);
  const int nx = grid.nodes[0], ny = grid.nodes[1], nz = grid.nodes[2];
#pragma omp parallel for schedule(static)
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const Vec3 p = grid.origin + h * Vec3(i, j, k);
        Nearest near;
        const std::uint32_t t = bvh.nearest(p, near);
        const Vec3 n = near.feature == kFace    ? faceNormal[t]
                       : near.feature >= kEdge0 ? edgeNormal[t][near.feature - kEdge0]
                                                : vertexNormal[mesh[t][near.feature]];
        const double unsigned_ = (p - near.point).norm();
        grid.distance[static_cast<std::size_t>(i) +
                      static_cast<std::size_t>(nx) * (static_cast<std::size_t>(j) + static_cast<std::size_t>(ny) * k)] =
            (p - near.point).dot(n) < 0.0 ? -unsigned_ : unsigned_;
      }
  return grid;
}

double SignedDistanceGrid::sample(const Vec3& q, Vec3& gradient) const {
  // A non-finite point (a diverged particle, refused by the solver's checks) must not become a
  // cell index.
  if (!q.allFinite()) {
    gradient = Vec3::UnitY();
    return std::numeric_limits<double>::quiet_NaN();
  }
  const Vec3 lo = lower(), hi = upper();
  const Vec3 clamped = q.cwiseMax(lo).cwiseMin(hi);
  Vec3 g;
  const double inside = interpolate(*this, clamped, g);
  if (g.squaredNorm() < 1e-24) {
    // A medial point of the interpolant: central differences over one cell, then +y.
    Vec3 unused;
    for (int k = 0; k < 3; ++k) {
      Vec3 up = clamped, down = clamped;
      up[k] += cellSize;
      down[k] -= cellSize;
      g[k] = (interpolate(*this, up.cwiseMin(hi), unused) - interpolate(*this, down.cwiseMax(lo), unused)) /
             (2.0 * cellSize);
    }
    if (g.squaredNorm() < 1e-24) g = Vec3::UnitY();
  }
  gradient = g.normalized();
  if (q == clamped) return inside;
  // Beyond the grid: step from the nearest grid point back to the surface along the normal, and
  // measure from there. Equal to the grid value on the box, positive (the box lies in the padding
  // band, outside the mesh), and its direction is nearly the true normal even at grid corners.
  const Vec3 toPoint = q - (clamped - inside * gradient);
  // stableNorm: a far point (|q| ~ 1e300) must not overflow the squared norm to infinity.
  const double length = toPoint.stableNorm();
  if (length > 0.0) gradient = toPoint / length;
  return length;
}

double SignedDistanceGrid::sample(const Vec3& q) const {
  Vec3 unused;
  return sample(q, unused);
}

double bruteForceMeshDistance(const std::vector<Vec3>& vertices, const std::vector<Triangle>& triangles,
                              const Vec3& p) {
  double best = std::numeric_limits<double>::infinity();
  for (const Triangle& tri : triangles)
    best =
        std::min(best, (nearestOnTriangle(p, vertices[tri[0]], vertices[tri[1]], vertices[tri[2]]).point - p).norm());
  return best;
}

}  // namespace pliant
