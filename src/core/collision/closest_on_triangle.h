// Nearest point of a triangle (a, b, c) to a point p, by the Voronoi regions of its corners, edges
// and face (Ericson, Real-Time Collision Detection, 5.1.5). Shared by the signed distance grid of
// mesh colliders and by cloth surface contact; each forms the point (or weights) it needs.
#pragma once

#include "pliant/math.h"

namespace pliant::detail {

// feature: kTriangleCorner0 + i for corner i; kTriangleEdge0 + e for edge e (0: a-b, 1: b-c,
// 2: c-a); kTriangleFace. The point is a + v (b - a) on edge 0, b + v (c - b) on edge 1,
// a + v (c - a) on edge 2, and a + v (b - a) + w (c - a) on the face.
enum TriangleFeature : int { kTriangleCorner0 = 0, kTriangleEdge0 = 3, kTriangleFace = 6 };

struct TriangleClosest {
  int feature = kTriangleFace;
  double v = 0.0;
  double w = 0.0;
};

// Inlined where it is called: the narrow phase of surface contact calls it for most vertex-triangle
// pairs, and GCC's limits on a file's growth stopped inlining it there.
[[gnu::always_inline]] inline TriangleClosest closestOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b,
                                                                const Vec3& c) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return {kTriangleCorner0};
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return {kTriangleCorner0 + 1};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return {kTriangleEdge0, d1 / (d1 - d3)};
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return {kTriangleCorner0 + 2};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return {kTriangleEdge0 + 2, d2 / (d2 - d6)};
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) return {kTriangleEdge0 + 1, (d4 - d3) / ((d4 - d3) + (d5 - d6))};
  const double scale = 1.0 / (va + vb + vc);
  return {kTriangleFace, vb * scale, vc * scale};
}

// The closest point as barycentric weights of (a, b, c).
inline Vec3 triangleWeights(const TriangleClosest& t) {
  switch (t.feature) {
    case kTriangleCorner0:
      return Vec3(1.0, 0.0, 0.0);
    case kTriangleCorner0 + 1:
      return Vec3(0.0, 1.0, 0.0);
    case kTriangleCorner0 + 2:
      return Vec3(0.0, 0.0, 1.0);
    case kTriangleEdge0:
      return Vec3(1.0 - t.v, t.v, 0.0);
    case kTriangleEdge0 + 1:
      return Vec3(0.0, 1.0 - t.v, t.v);
    case kTriangleEdge0 + 2:
      return Vec3(1.0 - t.v, 0.0, t.v);
    default:
      return Vec3(1.0 - t.v - t.w, t.v, t.w);
  }
}

}  // namespace pliant::detail
