// Convex hulls by quickhull (Barber, Dobkin & Huhdanpaa 1996, "The quickhull algorithm for convex
// hulls", ACM TOMS 22(4)): start from a tetrahedron of extreme points; each face keeps the outside
// points that see it (its conflict list); repeatedly take a face's farthest point, remove every
// face that point sees (a connected set, found by walking neighbours) and fan new triangles from
// the point to the horizon, handing the removed faces' points to the new faces.
//
// Robustness: every plane test uses a tolerance relative to the points' extent. A point counts as
// outside only when farther than it from a face, so duplicates and points within it of the hull
// are dropped, and a triangle that a point sees by less than round-off is kept (the hull may be
// concave by at most the tolerance; the merge below flattens it). Afterwards, adjacent triangles
// whose vertices lie within the tolerance of one plane become one face with one plane and a
// boundary polygon: a box's hull has 6 faces.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>

#include "pliant/error.h"
#include "pliant/rigid_shapes.h"

namespace pliant {
namespace {

struct Triangle {
  std::array<std::uint32_t, 3> v;
  Vec3 normal;
  double offset = 0.0;
  bool alive = true;
  std::vector<std::uint32_t> outside;  // conflict list: points farther than the tolerance
};

std::uint64_t edgeKey(std::uint32_t u, std::uint32_t v) { return (std::uint64_t{u} << 32) | v; }

class Quickhull {
 public:
  Quickhull(const std::vector<Vec3>& points, double tolerance) : points_(points), tolerance_(tolerance) {}

  // Returns the alive triangles (indices into the input points).
  std::vector<std::array<std::uint32_t, 3>> run(const std::array<std::uint32_t, 4>& simplex) {
    const Vec3 inside = 0.25 * (points_[simplex[0]] + points_[simplex[1]] + points_[simplex[2]] + points_[simplex[3]]);
    const std::array<std::array<int, 3>, 4> faces = {{{0, 1, 2}, {0, 3, 1}, {1, 3, 2}, {2, 3, 0}}};
    std::vector<std::uint32_t> created;
    for (const auto& f : faces) {
      std::array<std::uint32_t, 3> v = {simplex[f[0]], simplex[f[1]], simplex[f[2]]};
      const Vec3 n = (points_[v[1]] - points_[v[0]]).cross(points_[v[2]] - points_[v[0]]);
      if (n.dot(points_[v[0]] - inside) < 0.0) std::swap(v[1], v[2]);
      created.push_back(addTriangle(v));
    }
    std::vector<std::uint32_t> all;
    for (std::uint32_t i = 0; i < points_.size(); ++i)
      if (std::find(simplex.begin(), simplex.end(), i) == simplex.end()) all.push_back(i);
    assignOutside(all, created);

    std::vector<std::uint32_t> visible, stack, orphans;
    std::vector<std::array<std::uint32_t, 2>> horizon;
    // One pass suffices: points only ever move to new triangles, which are appended and so visited
    // later in the same pass.
    for (std::size_t t = 0; t < triangles_.size(); ++t) {
      if (!triangles_[t].alive || triangles_[t].outside.empty()) continue;
      // The farthest point of this face's conflict list.
      std::uint32_t eye = triangles_[t].outside[0];
      double farthest = -1.0;
      for (std::uint32_t p : triangles_[t].outside) {
        const double d = distance(triangles_[t], p);
        if (d > farthest) farthest = d, eye = p;
      }
      // The faces the eye sees, connected through neighbours, and the horizon between them and
      // the rest (edges kept in the visible face's direction, so the new fans face outward).
      visible.clear();
      horizon.clear();
      stack.assign(1, static_cast<std::uint32_t>(t));
      triangles_[t].alive = false;
      while (!stack.empty()) {
        const std::uint32_t f = stack.back();
        stack.pop_back();
        visible.push_back(f);
        for (int k = 0; k < 3; ++k) {
          const std::uint32_t u = triangles_[f].v[k], w = triangles_[f].v[(k + 1) % 3];
          const std::uint32_t g = edges_.at(edgeKey(w, u));
          if (!triangles_[g].alive) {
            continue;  // already visible
          }
          if (distance(triangles_[g], eye) > roundoff()) {
            triangles_[g].alive = false;
            stack.push_back(g);
          } else {
            horizon.push_back({u, w});
          }
        }
      }
      // A neighbour seen from the other side of a horizon edge may have been marked visible after
      // the edge was recorded: keep only edges whose far triangle is still alive.
      orphans.clear();
      for (std::uint32_t f : visible) {
        for (int k = 0; k < 3; ++k) edges_.erase(edgeKey(triangles_[f].v[k], triangles_[f].v[(k + 1) % 3]));
        orphans.insert(orphans.end(), triangles_[f].outside.begin(), triangles_[f].outside.end());
        triangles_[f].outside.clear();
        triangles_[f].outside.shrink_to_fit();
      }
      created.clear();
      for (const auto& e : horizon) {
        const auto far = edges_.find(edgeKey(e[1], e[0]));
        if (far == edges_.end() || !triangles_[far->second].alive) continue;
        created.push_back(addTriangle({e[0], e[1], eye}));
      }
      std::erase(orphans, eye);
      assignOutside(orphans, created);
    }
    std::vector<std::array<std::uint32_t, 3>> result;
    for (const Triangle& tri : triangles_)
      if (tri.alive) result.push_back(tri.v);
    return result;
  }

 private:
  double distance(const Triangle& t, std::uint32_t p) const { return t.normal.dot(points_[p]) - t.offset; }
  // Visibility is decided at round-off, membership of conflict lists at the (larger) tolerance.
  double roundoff() const { return 1e-3 * tolerance_; }

  std::uint32_t addTriangle(const std::array<std::uint32_t, 3>& v) {
    Triangle t;
    t.v = v;
    const Vec3 n = (points_[v[1]] - points_[v[0]]).cross(points_[v[2]] - points_[v[0]]);
    const double length = n.norm();
    t.normal = length > 0.0 ? Vec3(n / length) : Vec3(Vec3::Zero());
    t.offset = t.normal.dot(points_[v[0]]);
    const auto index = static_cast<std::uint32_t>(triangles_.size());
    for (int k = 0; k < 3; ++k) edges_[edgeKey(v[k], v[(k + 1) % 3])] = index;
    triangles_.push_back(std::move(t));
    return index;
  }

  void assignOutside(const std::vector<std::uint32_t>& candidates, const std::vector<std::uint32_t>& faces) {
    for (std::uint32_t p : candidates) {
      for (std::uint32_t f : faces) {
        if (distance(triangles_[f], p) > tolerance_) {
          triangles_[f].outside.push_back(p);
          break;
        }
      }
    }
  }

  const std::vector<Vec3>& points_;
  double tolerance_;
  std::vector<Triangle> triangles_;
  std::unordered_map<std::uint64_t, std::uint32_t> edges_;  // directed edge -> its triangle
};

// Four points spanning a tetrahedron of non-negligible size, or an Error naming `source`.
std::array<std::uint32_t, 4> initialSimplex(const std::vector<Vec3>& points, double tolerance,
                                            const std::string& source) {
  // The two most distant of the six axis-extreme points.
  std::array<std::uint32_t, 6> extremes{};
  for (std::uint32_t i = 0; i < points.size(); ++i)
    for (int k = 0; k < 3; ++k) {
      if (points[i][k] < points[extremes[2 * k]][k]) extremes[2 * k] = i;
      if (points[i][k] > points[extremes[2 * k + 1]][k]) extremes[2 * k + 1] = i;
    }
  std::uint32_t a = 0, b = 0;
  double best = -1.0;
  for (std::uint32_t i : extremes)
    for (std::uint32_t j : extremes)
      if ((points[i] - points[j]).squaredNorm() > best) best = (points[i] - points[j]).squaredNorm(), a = i, b = j;
  if (std::sqrt(best) <= tolerance)
    throw Error(source + ": convex hull: all points coincide, expected 4 points that are not coplanar");
  const Vec3 axis = (points[b] - points[a]).normalized();
  std::uint32_t c = a;
  best = -1.0;
  for (std::uint32_t i = 0; i < points.size(); ++i) {
    const Vec3 d = points[i] - points[a];
    const double off = (d - d.dot(axis) * axis).norm();
    if (off > best) best = off, c = i;
  }
  if (best <= tolerance)
    throw Error(source + ": convex hull: the points are collinear, expected 4 points that are not coplanar");
  const Vec3 normal = (points[b] - points[a]).cross(points[c] - points[a]).normalized();
  std::uint32_t d = a;
  best = -1.0;
  for (std::uint32_t i = 0; i < points.size(); ++i) {
    const double off = std::abs(normal.dot(points[i] - points[a]));
    if (off > best) best = off, d = i;
  }
  if (best <= tolerance)
    throw Error(source + ": convex hull: the points are coplanar, expected 4 points that are not coplanar");
  return {a, b, c, d};
}

}  // namespace

ConvexHull buildConvexHull(const std::vector<Vec3>& points, const std::string& source) {
  if (points.size() < 4)
    throw Error(source + ": convex hull of " + std::to_string(points.size()) +
                " points, expected at least 4 points that are not coplanar");
  Vec3 lower = points[0], upper = points[0];
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].allFinite()) throw Error(source + ": convex hull: point " + std::to_string(i) + " is not finite");
    lower = lower.cwiseMin(points[i]);
    upper = upper.cwiseMax(points[i]);
  }
  // Relative to the extent and to the coordinates' size (round-off of n . x grows with both).
  const double scale = (upper - lower).norm() + lower.cwiseAbs().cwiseMax(upper.cwiseAbs()).maxCoeff();
  const double tolerance = 1e-10 * scale;
  const std::array<std::uint32_t, 4> simplex = initialSimplex(points, tolerance, source);
  Quickhull quickhull(points, tolerance);
  const std::vector<std::array<std::uint32_t, 3>> raw = quickhull.run(simplex);

  ConvexHull hull;
  // Keep only the points on the hull, renumbered in input order.
  std::vector<std::uint32_t> renumber(points.size(), UINT32_MAX);
  for (const auto& t : raw)
    for (std::uint32_t v : t) renumber[v] = 0;
  for (std::uint32_t i = 0; i < points.size(); ++i)
    if (renumber[i] == 0) {
      renumber[i] = static_cast<std::uint32_t>(hull.vertices.size());
      hull.vertices.push_back(points[i]);
    }
  for (const auto& t : raw) hull.triangles.push_back({renumber[t[0]], renumber[t[1]], renumber[t[2]]});

  // Merge coplanar neighbours: grow each face from a seed triangle over edges into triangles whose
  // three vertices lie within the merge tolerance of the seed's plane (and that face the same way).
  const std::size_t triangleCount = hull.triangles.size();
  std::unordered_map<std::uint64_t, std::uint32_t> edgeTriangle;
  std::vector<Vec3> normals(triangleCount);
  std::vector<double> areas(triangleCount);
  for (std::uint32_t t = 0; t < triangleCount; ++t) {
    const auto& v = hull.triangles[t];
    const Vec3 n = (hull.vertices[v[1]] - hull.vertices[v[0]]).cross(hull.vertices[v[2]] - hull.vertices[v[0]]);
    areas[t] = 0.5 * n.norm();
    normals[t] = n.normalized();
    for (int k = 0; k < 3; ++k) edgeTriangle[edgeKey(v[k], v[(k + 1) % 3])] = t;
  }
  const double mergeTolerance = 10.0 * tolerance;
  hull.triangleFace.assign(triangleCount, UINT32_MAX);
  std::vector<std::uint32_t> stack, members;
  hull.faceStart.push_back(0);
  for (std::uint32_t seed = 0; seed < triangleCount; ++seed) {
    if (hull.triangleFace[seed] != UINT32_MAX) continue;
    const auto face = static_cast<std::uint32_t>(hull.faceNormals.size());
    const Vec3 seedNormal = normals[seed];
    const double seedOffset = seedNormal.dot(hull.vertices[hull.triangles[seed][0]]);
    members.clear();
    stack.assign(1, seed);
    hull.triangleFace[seed] = face;
    while (!stack.empty()) {
      const std::uint32_t t = stack.back();
      stack.pop_back();
      members.push_back(t);
      const auto& v = hull.triangles[t];
      for (int k = 0; k < 3; ++k) {
        const std::uint32_t g = edgeTriangle.at(edgeKey(v[(k + 1) % 3], v[k]));
        if (hull.triangleFace[g] != UINT32_MAX || normals[g].dot(seedNormal) <= 0.0) continue;
        bool coplanar = true;
        for (std::uint32_t w : hull.triangles[g])
          coplanar = coplanar && std::abs(seedNormal.dot(hull.vertices[w]) - seedOffset) <= mergeTolerance;
        if (!coplanar) continue;
        hull.triangleFace[g] = face;
        stack.push_back(g);
      }
    }
    // The face's plane: area-weighted normal; offset of its outermost vertex, so every hull vertex
    // is on the inner side.
    Vec3 normal = Vec3::Zero();
    for (std::uint32_t t : members) normal += areas[t] * normals[t];
    normal.normalize();
    // The boundary polygon: member edges whose other side is another face, chained head to tail.
    std::unordered_map<std::uint32_t, std::uint32_t> next;
    double offset = -std::numeric_limits<double>::infinity();
    for (std::uint32_t t : members) {
      const auto& v = hull.triangles[t];
      for (int k = 0; k < 3; ++k) {
        offset = std::max(offset, normal.dot(hull.vertices[v[k]]));
        const std::uint32_t g = edgeTriangle.at(edgeKey(v[(k + 1) % 3], v[k]));
        if (hull.triangleFace[g] != face) next[v[k]] = v[(k + 1) % 3];
      }
    }
    const std::uint32_t start = next.begin()->first;
    std::uint32_t at = start;
    std::size_t guard = 0;
    do {
      hull.faceVertices.push_back(at);
      at = next.at(at);
    } while (at != start && ++guard <= next.size());
    hull.faceNormals.push_back(normal);
    hull.faceOffsets.push_back(offset);
    hull.faceStart.push_back(static_cast<std::uint32_t>(hull.faceVertices.size()));
    hull.maxFaceVertices =
        std::max(hull.maxFaceVertices, static_cast<int>(hull.faceStart.back() - hull.faceStart[face]));
  }
  // A corner of a polytope meets at least three faces. Points kept by quickhull that lie inside a
  // merged face (in no boundary) or on an edge between two faces (within the tolerance) are
  // dropped; the faces are then fanned into triangles again.
  std::vector<int> faceCount(hull.vertices.size(), 0);
  for (std::uint32_t v : hull.faceVertices) ++faceCount[v];
  std::vector<std::uint32_t> keep(hull.vertices.size(), UINT32_MAX);
  std::vector<Vec3> corners;
  for (std::uint32_t i = 0; i < hull.vertices.size(); ++i)
    if (faceCount[i] >= 3) {
      keep[i] = static_cast<std::uint32_t>(corners.size());
      corners.push_back(hull.vertices[i]);
    }
  std::vector<std::uint32_t> loops;
  std::vector<std::uint32_t> loopStart{0};
  hull.triangles.clear();
  hull.triangleFace.clear();
  hull.maxFaceVertices = 0;
  for (std::uint32_t f = 0; f + 1 < hull.faceStart.size(); ++f) {
    const auto begin = static_cast<std::uint32_t>(loops.size());
    for (std::uint32_t i = hull.faceStart[f]; i < hull.faceStart[f + 1]; ++i)
      if (keep[hull.faceVertices[i]] != UINT32_MAX) loops.push_back(keep[hull.faceVertices[i]]);
    const auto end = static_cast<std::uint32_t>(loops.size());
    loopStart.push_back(end);
    hull.maxFaceVertices = std::max(hull.maxFaceVertices, static_cast<int>(end - begin));
    for (std::uint32_t i = begin + 1; i + 1 < end; ++i) {
      hull.triangles.push_back({loops[begin], loops[i], loops[i + 1]});
      hull.triangleFace.push_back(f);
    }
  }
  hull.vertices = std::move(corners);
  hull.faceVertices = std::move(loops);
  hull.faceStart = std::move(loopStart);
  // Edges between faces, once each (both directions are boundary edges of their faces), with the
  // face on each side: edgeFaces[e][0] holds the edge as (u, w), edgeFaces[e][1] as (w, u).
  std::unordered_map<std::uint64_t, std::uint32_t> edgeFace;
  for (std::uint32_t f = 0; f + 1 < hull.faceStart.size(); ++f) {
    const std::uint32_t begin = hull.faceStart[f], end = hull.faceStart[f + 1];
    for (std::uint32_t i = begin; i < end; ++i)
      edgeFace[edgeKey(hull.faceVertices[i], hull.faceVertices[i + 1 < end ? i + 1 : begin])] = f;
  }
  for (std::uint32_t f = 0; f + 1 < hull.faceStart.size(); ++f) {
    const std::uint32_t begin = hull.faceStart[f], end = hull.faceStart[f + 1];
    for (std::uint32_t i = begin; i < end; ++i) {
      const std::uint32_t u = hull.faceVertices[i], w = hull.faceVertices[i + 1 < end ? i + 1 : begin];
      if (u < w) {
        hull.edges.push_back({u, w});
        hull.edgeFaces.push_back({f, edgeFace.at(edgeKey(w, u))});
      }
    }
  }
  return hull;
}

}  // namespace pliant
