// Continuous collision detection of a vertex and a triangle, and of two edges, moving on straight
// paths over a substep (Bridson, Fedkiw and Anderson 2002, "Robust treatment of collisions, contact
// and friction for cloth animation", sec. 6.3 and 7.1): four points x_k(t) = x_k^0 + t (x_k^1 - x_k^0)
// are coplanar at the roots in [0, 1] of the cubic det[x_1 - x_0, x_2 - x_0, x_3 - x_0](t); at each
// root, in order, the vertex's distance to the triangle (the edges' distance) decides whether they
// met there. Used by the surface contacts (surface_contacts.cpp) for the pairs whose triangle turns
// or deforms within the substep, where a linear estimate of the signed distance is not exact.
#pragma once

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

// Conservative rejections in front of the two tests above (a separating axis of the swept pair):
// true only when, along the fixed unit `axis`, the vertex (edge a) lies beyond every point of the
// triangle (edge b) by more than the tests' reach (1.1 `tolerance`, with room for the rounding) on
// one side at the start and on the same side at the end. Then the pair is that far apart at every
// time in between and sweptVertexTriangle (sweptEdgeEdge) reports nothing. Any axis is valid;
// the triangle's (the two edges') normal at the start or the end rejects most pairs that face
// each other without crossing. False for non-finite input.
bool sweptVertexTriangleSeparated(const SweptPoints& start, const SweptPoints& end, const Vec3& axis, double tolerance);
bool sweptEdgeEdgeSeparated(const SweptPoints& start, const SweptPoints& end, const Vec3& axis, double tolerance);

}  // namespace pliant::detail
