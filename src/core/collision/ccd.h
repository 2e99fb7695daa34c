// Continuous collision detection of a vertex and a triangle, and of two edges, moving on straight
// paths over a substep (Bridson, Fedkiw and Anderson 2002, "Robust treatment of collisions, contact
// and friction for cloth animation", sec. 6.3 and 7.1): four points x_k(t) = x_k^0 + t (x_k^1 - x_k^0)
// are coplanar at the roots in [0, 1] of the cubic det[x_1 - x_0, x_2 - x_0, x_3 - x_0](t); at each
// root, in order, the vertex's distance to the triangle (the edges' distance) decides whether they
// met there. Used by the surface contacts (surface_contacts.cpp) for the pairs whose triangle turns
// or deforms within the substep, where a linear estimate of the signed distance is not exact.
#pragma once

#include <algorithm>
#include <array>

#include "pliant/math.h"

namespace pliant::detail {

// The first meeting found: when, where and from which side.
struct SweptHit {
  double time = 0.0;  // fraction of the substep in [0, 1]
  // Unit normal of the triangle (of the two edges' directions, edge a's cross edge b's) at `time`,
  // pointing to the side the vertex (edge a) was on just before.
  Vec3 normal = Vec3::Zero();
  // Weights c_k of the four points at `time` (as SurfaceContact::weights): vertex-triangle
  // 1, -b_0, -b_1, -b_2 (barycentric weights of the closest point of the triangle); edge-edge
  // 1 - s, s, -(1 - u), -u (parameters of the closest points on edge a and edge b).
  std::array<double, 4> weights{};
};

// Points of a pair at the start of the substep and at its end (the prediction): vertex-triangle
// {vertex, corner 0, corner 1, corner 2}; edge-edge {edge a's ends, edge b's ends} (m).
using SweptPoints = std::array<Vec3, 4>;

// Whether the vertex passes through the triangle on the straight paths: at some time in [0, 1]
// the four points are coplanar and the vertex is within `tolerance` (m) of the triangle. The test
// is conservative: each root is bracketed by the cubic's monotone pieces (split at the roots of
// its derivative) and bisected until the points move less than a tenth of `tolerance` across
// the bracket, and the distance is compared with tolerance plus that motion, so a pass within
// `tolerance` of the triangle is never missed (up to the rounding of the cubic's coefficients);
// a pass up to 1.1 `tolerance` beside it may count too. A vertex that only touches the plane
// (a double root, no crossing) is not a pass. `hit` gets the earliest pass.
bool sweptVertexTriangle(const SweptPoints& start, const SweptPoints& end, double tolerance, SweptHit& hit);

// The same for two edges: at some time the four ends are coplanar and the segments come within
// `tolerance` (m) of each other. Edges parallel at that time are not tested (their ends meet the
// triangles beside them first).
bool sweptEdgeEdge(const SweptPoints& start, const SweptPoints& end, double tolerance, SweptHit& hit);

// Conservative rejections in front of the two tests above (a separating axis of the swept pair,
// ccd.cpp): true only when, along the fixed unit `axis`, the vertex (edge a) lies beyond every
// point of the triangle (edge b) by more than the tests' reach on one side at the start and on the
// same side at the end. Then the pair is that far apart at every time in between and
// sweptVertexTriangle (sweptEdgeEdge) reports nothing, provided no point moves more than
// kSeparationMotion tolerances over the substep (the caller checks that once for all its points).
// Any axis is valid; the triangle's (the two edges') normal at the start rejects most pairs that
// face each other without crossing. False for non-finite input.
//
// The reach: a hit is within the tolerance plus the slack of the root's bracket, at most a tenth of
// the tolerance once the bisection converged (it does unless a point moves more than
// 0.1 tolerance 2^64); 1.125 leaves 0.025 tolerance for the rounding of the coordinates and of a
// unit axis.
inline constexpr double kSeparationReach = 1.125;
inline constexpr double kSeparationMotion = 1.0e17;  // tolerances, far below 0.1 2^64

namespace ccd_detail {
// Whether the first kNear points lie beyond the others along `axis` by more than reach, on one side
// at the start and on the same side at the end.
template <int kNear>
inline bool separated(const SweptPoints& start, const SweptPoints& end, const Vec3& axis, double reach) {
  double up[2], down[2];  // per end: gaps with the near points above the far ones, and below
  for (int time = 0; time < 2; ++time) {
    const SweptPoints& x = time == 0 ? start : end;
    double c[4];
    for (int k = 0; k < 4; ++k) c[k] = axis.dot(x[k]);
    double nearLow = c[0], nearHigh = c[0], farLow = c[kNear], farHigh = c[kNear];
    for (int k = 1; k < kNear; ++k) {
      nearLow = std::min(nearLow, c[k]);
      nearHigh = std::max(nearHigh, c[k]);
    }
    for (int k = kNear + 1; k < 4; ++k) {
      farLow = std::min(farLow, c[k]);
      farHigh = std::max(farHigh, c[k]);
    }
    up[time] = nearLow - farHigh;
    down[time] = farLow - nearHigh;
  }
  return (up[0] > reach && up[1] > reach) || (down[0] > reach && down[1] > reach);  // false for NaN
}
}  // namespace ccd_detail

inline bool sweptVertexTriangleSeparated(const SweptPoints& start, const SweptPoints& end, const Vec3& axis,
                                         double tolerance) {
  return ccd_detail::separated<1>(start, end, axis, kSeparationReach * tolerance);
}
inline bool sweptEdgeEdgeSeparated(const SweptPoints& start, const SweptPoints& end, const Vec3& axis,
                                   double tolerance) {
  return ccd_detail::separated<2>(start, end, axis, kSeparationReach * tolerance);
}

}  // namespace pliant::detail
