// Exact-predicate triangle-triangle intersection (see pliant/geometry.h).
//
// The idea: two closed triangles share a point iff an edge of one meets the other triangle (if
// neither holds an edge point of the other, the boundaries are disjoint, and two convex sets with
// disjoint boundaries meet only when one lies inside the other, which in 3D puts its edges inside
// the other too). A segment pq meets a triangle abc when p and q are not strictly on one side of
// its plane and the line pq passes through the triangle, which the three signed volumes
// [p q a b], [p q b c], [p q c a] decide by having one sign (Pluecker coordinates). A segment lying
// in the triangle's plane is decided in 2D, on the coordinate plane the triangle projects to best.
#include "pliant/geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "collision/box_grid.h"

namespace pliant {

namespace {

// Relative to the largest coordinate: how close to a plane a point counts as on it.
constexpr double kPlaneTolerance = 1.0e-12;

double orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) { return (b - a).cross(c - a).dot(d - a); }

struct Vec2 {
  double x;
  double y;
};

double orient2d(const Vec2& a, const Vec2& b, const Vec2& c) {
  return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}

bool sameSignOrZero(double a, double b, double c) {
  return (a >= 0.0 && b >= 0.0 && c >= 0.0) || (a <= 0.0 && b <= 0.0 && c <= 0.0);
}

// Closed 2D segments pq and uv.
bool segmentsMeet2d(const Vec2& p, const Vec2& q, const Vec2& u, const Vec2& v) {
  const double d1 = orient2d(p, q, u), d2 = orient2d(p, q, v);
  const double d3 = orient2d(u, v, p), d4 = orient2d(u, v, q);
  if (((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0)) && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0)))
    return true;
  // Collinear touching: an endpoint on the other segment.
  auto within = [](const Vec2& a, const Vec2& b, const Vec2& c) {
    return std::min(a.x, b.x) <= c.x && c.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= c.y &&
           c.y <= std::max(a.y, b.y);
  };
  return (d1 == 0.0 && within(p, q, u)) || (d2 == 0.0 && within(p, q, v)) || (d3 == 0.0 && within(u, v, p)) ||
         (d4 == 0.0 && within(u, v, q));
}

bool pointInTriangle2d(const Vec2& p, const Vec2& a, const Vec2& b, const Vec2& c) {
  return sameSignOrZero(orient2d(a, b, p), orient2d(b, c, p), orient2d(c, a, p));
}

// The side of a point relative to a plane, as -1, 0 or +1: distances within `tolerance` (m) of the
// plane count as on it.
int side(double distance, double tolerance) { return distance > tolerance ? 1 : distance < -tolerance ? -1 : 0; }

// The closed segment pq against the closed triangle abc of unit normal n.
bool segmentMeetsTriangle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& n,
                          double tolerance) {
  const double dp = n.dot(p - a), dq = n.dot(q - a);
  const int sp = side(dp, tolerance), sq = side(dq, tolerance);
  if (sp * sq > 0) return false;
  // Strictly on opposite sides: the segment crosses the plane between p and q, where the line does.
  if (sp != 0 && sq != 0) return sameSignOrZero(orient3d(p, q, a, b), orient3d(p, q, b, c), orient3d(p, q, c, a));
  // At least one end in the plane (within the tolerance): decided on the coordinate plane the
  // triangle projects to best.
  int drop = 0;
  if (std::abs(n.y()) > std::abs(n[drop])) drop = 1;
  if (std::abs(n.z()) > std::abs(n[drop])) drop = 2;
  const int i = drop == 0 ? 1 : 0, j = drop == 2 ? 1 : 2;
  auto flat = [&](const Vec3& x) { return Vec2{x[i], x[j]}; };
  const Vec2 p2 = flat(p), q2 = flat(q), a2 = flat(a), b2 = flat(b), c2 = flat(c);
  // One end on the plane (within the tolerance) and the other off it: the segment meets the plane
  // where its signed distance crosses zero, or at that end if it does not: that point, over the
  // triangle or not, decides. (The 3D test above judges the infinite line, whose crossing can lie
  // anywhere along a line this close to parallel to the plane: a flat cloth whose points are a
  // rounding off its plane had neighbours side by side counted as crossing.)
  if (sp != 0 || sq != 0) {
    const double t = std::clamp(dp / (dp - dq), 0.0, 1.0);  // dp != dq: one is within the tolerance, one beyond
    return pointInTriangle2d(flat(p + t * (q - p)), a2, b2, c2);
  }
  return pointInTriangle2d(p2, a2, b2, c2) || segmentsMeet2d(p2, q2, a2, b2) || segmentsMeet2d(p2, q2, b2, c2) ||
         segmentsMeet2d(p2, q2, c2, a2);
}

}  // namespace

bool trianglesIntersect(const Vec3& a0, const Vec3& a1, const Vec3& a2, const Vec3& b0, const Vec3& b1,
                        const Vec3& b2) {
  // Points this close to a plane are on it: rounding in computing coordinates (a grid laid out in a
  // tilted plane) must not decide whether two flat neighbours cross.
  double scale = 0.0;
  for (const Vec3* x : {&a0, &a1, &a2, &b0, &b1, &b2}) scale = std::max(scale, x->cwiseAbs().maxCoeff());
  const double tolerance = kPlaneTolerance * scale;
  Vec3 na = (a1 - a0).cross(a2 - a0);
  Vec3 nb = (b1 - b0).cross(b2 - b0);
  const double la = na.norm(), lb = nb.norm();
  // A zero-area triangle is the segment its edges cover: its edges against the other triangle
  // decide (the other's edges against it add nothing).
  const bool aFlat = !(la > 0.0), bFlat = !(lb > 0.0);
  if (!aFlat) na /= la;
  if (!bFlat) nb /= lb;
  // Quick rejection: one triangle strictly on one side of the other's plane.
  if (!aFlat) {
    const int s0 = side(na.dot(b0 - a0), tolerance), s1 = side(na.dot(b1 - a0), tolerance),
              s2 = side(na.dot(b2 - a0), tolerance);
    if ((s0 > 0 && s1 > 0 && s2 > 0) || (s0 < 0 && s1 < 0 && s2 < 0)) return false;
  }
  if (!bFlat) {
    const int s0 = side(nb.dot(a0 - b0), tolerance), s1 = side(nb.dot(a1 - b0), tolerance),
              s2 = side(nb.dot(a2 - b0), tolerance);
    if ((s0 > 0 && s1 > 0 && s2 > 0) || (s0 < 0 && s1 < 0 && s2 < 0)) return false;
  }
  if (!bFlat && (segmentMeetsTriangle(a0, a1, b0, b1, b2, nb, tolerance) ||
                 segmentMeetsTriangle(a1, a2, b0, b1, b2, nb, tolerance) ||
                 segmentMeetsTriangle(a2, a0, b0, b1, b2, nb, tolerance)))
    return true;
  if (!aFlat && (segmentMeetsTriangle(b0, b1, a0, a1, a2, na, tolerance) ||
                 segmentMeetsTriangle(b1, b2, a0, a1, a2, na, tolerance) ||
                 segmentMeetsTriangle(b2, b0, a0, a1, a2, na, tolerance)))
    return true;
  return false;
}

std::size_t countIntersectingTrianglePairs(std::span<const Vec3> positions,
                                           std::span<const std::array<ParticleIndex, 3>> triangles) {
  const std::size_t count = triangles.size();
  if (count < 2) return 0;
  std::vector<detail::Aabb> boxes(count);
  double extent = 0.0;
  std::size_t finite = 0;
  for (std::size_t t = 0; t < count; ++t) {
    for (ParticleIndex p : triangles[t]) boxes[t].add(positions[p]);
    if (!boxes[t].finite()) continue;
    extent += (boxes[t].max - boxes[t].min).maxCoeff();
    ++finite;
  }
  // Cells about twice the mean triangle size: each box spans few cells.
  const double cellSize = finite > 0 && extent > 0.0 ? 2.0 * extent / static_cast<double>(finite) : 1.0;
  detail::BoxGrid grid;
  grid.build(boxes, cellSize);
  const auto total = static_cast<std::int64_t>(count);
  std::int64_t pairs = 0;
  // An integer sum: the same whatever the thread count.
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : pairs) if (total > 4096)
  for (std::int64_t i = 0; i < total; ++i) {
    const auto& a = triangles[i];
    grid.query(boxes[i], [&](std::uint32_t j) {
      if (j <= i) return;
      const auto& b = triangles[j];
      for (ParticleIndex p : a)
        if (p == b[0] || p == b[1] || p == b[2]) return;
      if (trianglesIntersect(positions[a[0]], positions[a[1]], positions[a[2]], positions[b[0]], positions[b[1]],
                             positions[b[2]]))
        ++pairs;
    });
  }
  return static_cast<std::size_t>(pairs);
}

}  // namespace pliant
