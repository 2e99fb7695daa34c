// Shared pieces of the narrow phase (private to src/core/rigid/shapes): a uniform view of a convex
// polytope (a box or a hull), the exact signed distance from a point to it, and the fixed-size
// buffer that gathers candidate contact points and reduces them to a manifold.
#pragma once

#include <array>
#include <cstdint>

#include "pliant/rigid_shapes.h"

namespace pliant::detail {

// A convex polytope in its own frame: the hull's arrays, or the box's (the unit box's topology with
// its vertices and offsets scaled into a small fixed buffer).
struct Polytope {
  const Vec3* vertices = nullptr;
  int vertexCount = 0;
  const Vec3* faceNormals = nullptr;
  const double* faceOffsets = nullptr;
  const std::uint32_t* faceStart = nullptr;
  const std::uint32_t* faceVertices = nullptr;
  int faceCount = 0;
  const std::array<std::uint32_t, 2>* edges = nullptr;
  const std::array<std::uint32_t, 2>* edgeFaces = nullptr;
  int edgeCount = 0;
  int maxFaceVertices = 0;
  Vec3 centre = Vec3::Zero();  // an interior point (the vertex mean)
  double radius = 0.0;         // m, largest distance of a vertex from `centre`
  // A box's half extents (m; its vertices are exactly (+-x, +-y, +-z)), or null for a hull: lets
  // the separating axis test find a box's lowest vertex along an axis without visiting all eight.
  const Vec3* boxHalfExtents = nullptr;

  int faceSize(int f) const { return static_cast<int>(faceStart[f + 1] - faceStart[f]); }
  const Vec3& faceVertex(int f, int i) const { return vertices[faceVertices[faceStart[f] + i]]; }
};

// Storage for a box's polytope (no allocation).
struct BoxPolytope {
  Vec3 halfExtents = Vec3::Zero();
  std::array<Vec3, 8> vertices;
  std::array<double, 6> offsets;
  Polytope view;
};
void makeBoxPolytope(const Vec3& halfExtents, BoxPolytope& box);
Polytope hullPolytope(const ConvexHull& hull);
// The polytope of a Box or ConvexHull shape (`box` holds a box's storage).
Polytope shapePolytope(const BodyShape& shape, BoxPolytope& box);

// Exact signed distance (m) from q to the polytope's surface (negative inside), its outward unit
// normal (the face of least penetration inside; (q - c) / |q - c| outside) and the nearest surface
// point c.
double polytopeDistance(const Polytope& p, const Vec3& q, Vec3& normal, Vec3& closest);

// Candidate contact points, gathered into a fixed buffer; when it fills, it is reduced to
// kMaxManifoldPoints and gathering goes on, so any number of candidates costs no allocation.
class ManifoldBuilder {
 public:
  explicit ManifoldBuilder(double margin) : margin_(margin) {}
  // Adds a point if its separation is below the margin.
  void add(const Vec3& pointA, const Vec3& pointB, const Vec3& normal, double separation);
  // Reduces to at most kMaxManifoldPoints (the deepest, the farthest from it, then the two that
  // span the largest area on either side: Gregorius 2015, "Robust contact creation for physics
  // simulations", GDC) and writes `out`.
  void finish(ContactManifold& out);

 private:
  void reduce();
  static constexpr int kCapacity = 32;
  double margin_;
  int count_ = 0;
  std::array<ShapeContactPoint, kCapacity> points_;
};

}  // namespace pliant::detail
