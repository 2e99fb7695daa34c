// Polytope views, point-to-polytope signed distance and manifold reduction (narrow_phase.h).
#include "narrow_phase.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace pliant::detail {
namespace {

const ConvexHull& unitBox() {
  // Built once (a thread-safe static): the topology every box shares.
  static const ConvexHull box = [] {
    std::vector<Vec3> corners;
    for (int i = 0; i < 8; ++i)
      corners.push_back(Vec3((i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0));
    return buildConvexHull(corners, "unit box");
  }();
  return box;
}

Vec3 closestOnSegment(const Vec3& q, const Vec3& a, const Vec3& b) {
  const Vec3 ab = b - a;
  const double lengthSq = ab.squaredNorm();
  const double t = lengthSq > 0.0 ? std::clamp((q - a).dot(ab) / lengthSq, 0.0, 1.0) : 0.0;
  return a + t * ab;
}

}  // namespace

Polytope hullPolytope(const ConvexHull& hull) {
  Polytope p;
  p.vertices = hull.vertices.data();
  p.vertexCount = static_cast<int>(hull.vertices.size());
  p.faceNormals = hull.faceNormals.data();
  p.faceOffsets = hull.faceOffsets.data();
  p.faceStart = hull.faceStart.data();
  p.faceVertices = hull.faceVertices.data();
  p.faceCount = static_cast<int>(hull.faceNormals.size());
  p.edges = hull.edges.data();
  p.edgeFaces = hull.edgeFaces.data();
  p.edgeCount = static_cast<int>(hull.edges.size());
  p.maxFaceVertices = hull.maxFaceVertices;
  for (const Vec3& v : hull.vertices) p.centre += v;
  if (!hull.vertices.empty()) p.centre /= static_cast<double>(hull.vertices.size());
  for (const Vec3& v : hull.vertices) p.radius = std::max(p.radius, (v - p.centre).norm());
  return p;
}

void makeBoxPolytope(const Vec3& halfExtents, BoxPolytope& box) {
  const ConvexHull& unit = unitBox();
  for (std::size_t i = 0; i < 8; ++i) box.vertices[i] = unit.vertices[i].cwiseProduct(halfExtents);
  for (std::size_t f = 0; f < 6; ++f) box.offsets[f] = unit.faceNormals[f].cwiseAbs().dot(halfExtents);
  static const Polytope unitView = hullPolytope(unit);  // its centre and radius are replaced below
  box.halfExtents = halfExtents;
  box.view = unitView;
  box.view.boxHalfExtents = &box.halfExtents;
  box.view.vertices = box.vertices.data();
  box.view.faceOffsets = box.offsets.data();
  box.view.centre = Vec3::Zero();
  box.view.radius = halfExtents.norm();
}

Polytope shapePolytope(const BodyShape& shape, BoxPolytope& box) {
  if (shape.kind == BodyShapeKind::Box) {
    makeBoxPolytope(shape.halfExtents, box);
    return box.view;
  }
  assert(shape.hull && "a ConvexHull shape needs its hull");
  return hullPolytope(*shape.hull);
}

double polytopeDistance(const Polytope& p, const Vec3& q, Vec3& normal, Vec3& closest) {
  double deepest = -std::numeric_limits<double>::infinity();
  int face = 0;
  for (int f = 0; f < p.faceCount; ++f) {
    const double d = p.faceNormals[f].dot(q) - p.faceOffsets[f];
    if (d > deepest) deepest = d, face = f;
  }
  if (deepest <= 0.0) {  // inside: the nearest face is the least penetrated plane
    normal = p.faceNormals[face];
    closest = q - deepest * normal;
    return deepest;
  }
  // Outside: the nearest point lies on a face whose plane q is in front of; on each such face, the
  // projection if it falls inside the polygon, else the nearest point of its boundary.
  double bestSq = std::numeric_limits<double>::infinity();
  for (int f = 0; f < p.faceCount; ++f) {
    const Vec3& n = p.faceNormals[f];
    const double d = n.dot(q) - p.faceOffsets[f];
    if (d <= 0.0) continue;
    const Vec3 projected = q - d * n;
    const int size = p.faceSize(f);
    bool inside = true;
    for (int i = 0; i < size && inside; ++i) {
      const Vec3& a = p.faceVertex(f, i);
      const Vec3& b = p.faceVertex(f, (i + 1) % size);
      inside = (b - a).cross(n).dot(projected - a) <= 0.0;
    }
    if (inside) {
      if (d * d < bestSq) bestSq = d * d, closest = projected;
      continue;
    }
    for (int i = 0; i < size; ++i) {
      const Vec3 c = closestOnSegment(q, p.faceVertex(f, i), p.faceVertex(f, (i + 1) % size));
      const double dSq = (q - c).squaredNorm();
      if (dSq < bestSq) bestSq = dSq, closest = c;
    }
  }
  const double distance = std::sqrt(bestSq);
  normal = distance > 0.0 ? Vec3((q - closest) / distance) : p.faceNormals[face];
  return distance;
}

void ManifoldBuilder::add(const Vec3& pointA, const Vec3& pointB, const Vec3& normal, double separation) {
  if (!(separation < margin_)) return;
  if (count_ == kCapacity) reduce();
  points_[count_++] = ShapeContactPoint{pointA, pointB, normal, separation};
}

void ManifoldBuilder::reduce() {
  if (count_ <= kMaxManifoldPoints) return;
  auto position = [&](int i) { return Vec3(0.5 * (points_[i].pointA + points_[i].pointB)); };
  int chosen[kMaxManifoldPoints] = {0, -1, -1, -1};
  for (int i = 1; i < count_; ++i)
    if (points_[i].separation < points_[chosen[0]].separation) chosen[0] = i;
  const Vec3 p0 = position(chosen[0]);
  double farthest = 0.0;
  for (int i = 0; i < count_; ++i) {
    const double dSq = (position(i) - p0).squaredNorm();
    if (dSq > farthest) farthest = dSq, chosen[1] = i;
  }
  if (chosen[1] >= 0) {
    const Vec3 p1 = position(chosen[1]);
    const Vec3& n = points_[chosen[0]].normal;
    double most = 0.0, least = 0.0;
    for (int i = 0; i < count_; ++i) {
      const double area = (p1 - p0).cross(position(i) - p0).dot(n);
      if (area > most) most = area, chosen[2] = i;
      if (area < least) least = area, chosen[3] = i;
    }
  }
  std::array<ShapeContactPoint, kMaxManifoldPoints> kept;
  int keptCount = 0;
  for (int c : chosen)
    if (c >= 0) kept[keptCount++] = points_[c];
  for (int i = 0; i < keptCount; ++i) points_[i] = kept[i];
  count_ = keptCount;
}

void ManifoldBuilder::finish(ContactManifold& out) {
  reduce();
  out.count = count_;
  for (int i = 0; i < count_; ++i) out.points[i] = points_[i];
}

}  // namespace pliant::detail
