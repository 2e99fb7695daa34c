// The narrow phase: contact manifolds between two posed body shapes.
//
// Each pair of kinds has one routine, written for one order of the pair; the other order calls it
// with the shapes swapped and flips the result (points swapped, normal negated). Pairs of the same
// kind are put in a fixed order by their poses, so swapping A and B always flips the manifold
// exactly. The routines:
//   plane - any         the other shape's points against the plane: sphere centre, capsule end
//                       points, box/hull/mesh vertices
//   mesh - any          the mesh's vertices against the other's shapeDistance, and the other's
//                       points (sphere centre, capsule axis points, polytope vertices and face
//                       centres, mesh vertices) against the mesh's signed distance grid
//   round - round       sphere/capsule pairs: the closest points of their axis segments (two
//                       points where capsules lie side by side)
//   polytope - round    the deepest point of the sphere centre / capsule axis under the exact
//                       point-to-polytope signed distance (convex along the axis, so a golden-section
//                       search finds it), the axis end points, and the axis clipped to a face it
//                       lies along (two points, so a capsule lying on a box rests)
//   polytope - polytope boxes and hulls: the separating axis test over both shapes' face normals
//                       and the cross products of edge pairs that form a face of the Minkowski
//                       difference (Gregorius 2013, "The separating axis test between convex
//                       polyhedra", GDC), then reference-face clipping (Sutherland-Hodgman) of the
//                       incident face, or the closest points of the two edges for an edge pair.
//                       Chosen over GJK+EPA because it is exact in deep penetration, yields the
//                       feature pair that clipping needs and has no iteration tolerances.
// Candidates go through detail::ManifoldBuilder (fixed buffer, reduction to kMaxManifoldPoints).
// No allocation, no exceptions.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <optional>

#include "narrow_phase.h"
#include "pliant/rigid_shapes.h"

namespace pliant {
namespace {

using detail::BoxPolytope;
using detail::ManifoldBuilder;
using detail::Polytope;

// A rigid transform (rotation matrix + translation): x -> rotation x + translation.
struct Transform {
  Mat3 rotation;
  Vec3 translation;
  Vec3 operator*(const Vec3& x) const { return rotation * x + translation; }
};

Transform transformOf(const ColliderPose& pose) { return {pose.rotation.toRotationMatrix(), pose.position}; }

// b's frame -> a's frame.
Transform relative(const Transform& a, const Transform& b) {
  return {a.rotation.transpose() * b.rotation, a.rotation.transpose() * (b.translation - a.translation)};
}

void flip(ContactManifold& m) {
  for (int i = 0; i < m.count; ++i) {
    std::swap(m.points[i].pointA, m.points[i].pointB);
    m.points[i].normal = -m.points[i].normal;
  }
}

bool isRound(BodyShapeKind k) { return k == BodyShapeKind::Sphere || k == BodyShapeKind::Capsule; }
bool isPolytope(BodyShapeKind k) { return k == BodyShapeKind::Box || k == BodyShapeKind::ConvexHull; }

// The order in which a pair's routine takes its shapes.
int rank(BodyShapeKind k) {
  switch (k) {
    case BodyShapeKind::Plane:
      return 0;
    case BodyShapeKind::Mesh:
      return 1;
    case BodyShapeKind::Box:
    case BodyShapeKind::ConvexHull:
      return 2;
    case BodyShapeKind::Sphere:
    case BodyShapeKind::Capsule:
      return 3;
  }
  return 4;
}

// A fixed, arbitrary order of two poses (for pairs of the same rank).
bool poseBefore(const ColliderPose& a, const ColliderPose& b) {
  for (int k = 0; k < 3; ++k)
    if (a.position[k] != b.position[k]) return a.position[k] < b.position[k];
  for (int k = 0; k < 4; ++k)
    if (a.rotation.coeffs()[k] != b.rotation.coeffs()[k]) return a.rotation.coeffs()[k] < b.rotation.coeffs()[k];
  return false;
}

// World end points of a sphere's (degenerate) or capsule's axis segment.
void axisSegment(const BodyShape& s, const ColliderPose& pose, Vec3& p0, Vec3& p1) {
  const double h = s.kind == BodyShapeKind::Capsule ? s.halfHeight : 0.0;
  const Vec3 axis = pose.rotation * Vec3(0.0, h, 0.0);
  p0 = pose.position - axis;
  p1 = pose.position + axis;
}

// Closest points of segments p0-p1 and q0-q1: parameters s, t (Ericson 2005, "Real-Time Collision
// Detection", sec. 5.1.9).
void closestSegmentParameters(const Vec3& p0, const Vec3& p1, const Vec3& q0, const Vec3& q1, double& s, double& t) {
  const Vec3 d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
  const double a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  constexpr double tiny = 1e-300;
  if (a <= tiny && e <= tiny) {
    s = t = 0.0;
    return;
  }
  if (a <= tiny) {
    s = 0.0;
    t = std::clamp(f / e, 0.0, 1.0);
    return;
  }
  const double c = d1.dot(r);
  if (e <= tiny) {
    t = 0.0;
    s = std::clamp(-c / a, 0.0, 1.0);
    return;
  }
  const double b = d1.dot(d2), denominator = a * e - b * b;
  s = denominator > 0.0 ? std::clamp((b * f - c * e) / denominator, 0.0, 1.0) : 0.0;
  t = (b * s + f) / e;
  if (t < 0.0) {
    t = 0.0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1.0) {
    t = 1.0;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
}

// ---- plane - any -----------------------------------------------------------------------------

void collidePlane(const ColliderPose& plane, const BodyShape& b, const ColliderPose& poseB, ManifoldBuilder& out) {
  const Vec3 n = plane.rotation * Vec3::UnitY();
  const Vec3& o = plane.position;
  auto addPoint = [&](const Vec3& x, double radius) {  // a point x of B's surface inflated by radius
    const double height = n.dot(x - o);
    out.add(x - height * n, x - radius * n, n, height - radius);
  };
  switch (b.kind) {
    case BodyShapeKind::Sphere:
    case BodyShapeKind::Capsule: {
      Vec3 p0, p1;
      axisSegment(b, poseB, p0, p1);
      addPoint(p0, b.radius);
      if (b.kind == BodyShapeKind::Capsule && b.halfHeight > 0.0) addPoint(p1, b.radius);
      return;
    }
    case BodyShapeKind::Box:
    case BodyShapeKind::ConvexHull: {
      BoxPolytope box;
      const Polytope p = detail::shapePolytope(b, box);
      const Transform t = transformOf(poseB);
      for (int i = 0; i < p.vertexCount; ++i) addPoint(t * p.vertices[i], 0.0);
      return;
    }
    case BodyShapeKind::Mesh: {
      const Transform t = transformOf(poseB);
      for (const Vec3& v : b.grid->vertices) addPoint(t * v, 0.0);
      return;
    }
    case BodyShapeKind::Plane:
      return;
  }
}

// ---- mesh - any ------------------------------------------------------------------------------

void collideMesh(const BodyShape& mesh, const ColliderPose& poseA, const BodyShape& b, const ColliderPose& poseB,
                 double margin, ManifoldBuilder& out) {
  assert(mesh.grid && "a Mesh shape needs its signed distance grid");
  const SignedDistanceGrid& grid = *mesh.grid;
  const Transform ta = transformOf(poseA);
  // The other shape's point x, inflated by radius, against the mesh's grid.
  auto sampleAgainstMesh = [&](const Vec3& x, double radius) {
    Vec3 gradient;
    const double phi = grid.sample(ta.rotation.transpose() * (x - ta.translation), gradient);
    if (!(phi - radius < margin)) return;
    const Vec3 n = ta.rotation * gradient;
    out.add(x - phi * n, x - radius * n, n, phi - radius);
  };
  // 1. The mesh's vertices within the other's bounds against its signed distance.
  Vec3 lower, upper;
  shapeBounds(b, poseB, margin, lower, upper);
  for (const Vec3& v : grid.vertices) {
    const Vec3 x = ta * v;
    if ((x.array() < lower.array()).any() || (x.array() > upper.array()).any()) continue;
    Vec3 nB;
    const double d = shapeDistance(b, poseB, x, nB);
    out.add(x, x - d * nB, -nB, d);
  }
  // 2. The other's points against the mesh's grid.
  const Transform tb = transformOf(poseB);
  switch (b.kind) {
    case BodyShapeKind::Sphere:
      sampleAgainstMesh(poseB.position, b.radius);
      return;
    case BodyShapeKind::Capsule: {
      Vec3 p0, p1;
      axisSegment(b, poseB, p0, p1);
      for (int i = 0; i <= 4; ++i) sampleAgainstMesh(p0 + 0.25 * i * (p1 - p0), b.radius);
      return;
    }
    case BodyShapeKind::Box:
    case BodyShapeKind::ConvexHull: {
      BoxPolytope box;
      const Polytope p = detail::shapePolytope(b, box);
      for (int i = 0; i < p.vertexCount; ++i) sampleAgainstMesh(tb * p.vertices[i], 0.0);
      for (int f = 0; f < p.faceCount; ++f) {
        Vec3 centre = Vec3::Zero();
        for (int i = 0; i < p.faceSize(f); ++i) centre += p.faceVertex(f, i);
        sampleAgainstMesh(tb * (centre / p.faceSize(f)), 0.0);
      }
      return;
    }
    case BodyShapeKind::Mesh:
      for (const Vec3& v : b.grid->vertices) sampleAgainstMesh(tb * v, 0.0);
      return;
    case BodyShapeKind::Plane:
      return;
  }
}

// ---- round - round ---------------------------------------------------------------------------

// Contact of two spheres of radii ra, rb centred at pa, pb (points of the two axes).
void addRoundPair(const Vec3& pa, double ra, const Vec3& pb, double rb, const Vec3& fallback, ManifoldBuilder& out) {
  const Vec3 d = pb - pa;
  const double length = d.norm();
  const Vec3 n = length > 0.0 ? Vec3(d / length) : fallback;
  out.add(pa + ra * n, pb - rb * n, n, length - ra - rb);
}

void collideRound(const BodyShape& a, const ColliderPose& poseA, const BodyShape& b, const ColliderPose& poseB,
                  ManifoldBuilder& out) {
  Vec3 a0, a1, b0, b1;
  axisSegment(a, poseA, a0, a1);
  axisSegment(b, poseB, b0, b1);
  const Vec3 da = a1 - a0, db = b1 - b0;
  // Where the axes meet, the normal is their common perpendicular (or the world +y).
  Vec3 fallback = da.cross(db);
  if (fallback.norm() > 0.0) fallback.normalize();
  else fallback = Vec3::UnitY();
  if (fallback.dot(poseB.position - poseA.position) < 0.0) fallback = -fallback;
  const double la = da.norm(), lb = db.norm();
  if (la > 0.0 && lb > 0.0 && da.cross(db).norm() <= 1e-6 * la * lb) {
    // Side by side: the two ends of the overlap of b's axis projected on a's.
    const double t0 = da.dot(b0 - a0) / (la * la), t1 = da.dot(b1 - a0) / (la * la);
    const double lo = std::max(0.0, std::min(t0, t1)), hi = std::min(1.0, std::max(t0, t1));
    if (hi > lo) {
      for (const double t : {lo, hi}) {
        const Vec3 pa = a0 + t * da;
        const double u = std::clamp(db.dot(pa - b0) / (lb * lb), 0.0, 1.0);
        addRoundPair(pa, a.radius, b0 + u * db, b.radius, fallback, out);
      }
      return;
    }
  }
  double s = 0.0, t = 0.0;
  closestSegmentParameters(a0, a1, b0, b1, s, t);
  addRoundPair(a0 + s * da, a.radius, b0 + t * db, b.radius, fallback, out);
}

// ---- polytope - round ------------------------------------------------------------------------

void collidePolytopeRound(const BodyShape& a, const ColliderPose& poseA, const BodyShape& b, const ColliderPose& poseB,
                          double margin, ManifoldBuilder& out) {
  BoxPolytope box;
  const Polytope p = detail::shapePolytope(a, box);
  const Transform ta = transformOf(poseA);
  Vec3 w0, w1;
  axisSegment(b, poseB, w0, w1);
  // The axis in the polytope's frame.
  const Vec3 s0 = ta.rotation.transpose() * (w0 - ta.translation);
  const Vec3 s1 = ta.rotation.transpose() * (w1 - ta.translation);
  const Vec3 axis = s1 - s0;
  const double length = axis.norm();
  const double r = b.radius;
  Vec3 n, c;
  auto distanceAt = [&](double t) { return detail::polytopeDistance(p, s0 + t * axis, n, c); };
  auto addAt = [&](double t) {
    const double d = distanceAt(t);
    const Vec3 x = s0 + t * axis;
    out.add(ta * c, ta * Vec3(x - r * n), ta.rotation * n, d - r);
  };
  // The signed distance to a convex set is convex along a line: golden-section search for its
  // minimum over the axis.
  double best = 0.0;
  if (length > 0.0) {
    constexpr double golden = 0.6180339887498949;
    double lo = 0.0, hi = 1.0;
    double x1 = hi - golden * (hi - lo), x2 = lo + golden * (hi - lo);
    double f1 = distanceAt(x1), f2 = distanceAt(x2);
    while ((hi - lo) * length > 1e-12 * (length + p.radius)) {
      if (f1 <= f2) {
        hi = x2, x2 = x1, f2 = f1;
        x1 = hi - golden * (hi - lo);
        f1 = distanceAt(x1);
      } else {
        lo = x1, x1 = x2, f1 = f2;
        x2 = lo + golden * (hi - lo);
        f2 = distanceAt(x2);
      }
    }
    best = 0.5 * (lo + hi);
    // The ends, where the minimum often lies, are tried exactly.
    const double mid = distanceAt(best), at0 = distanceAt(0.0), at1 = distanceAt(1.0);
    if (at0 <= mid && at0 <= at1) best = 0.0;
    else if (at1 < mid) best = 1.0;
  }
  const double deepest = distanceAt(best);
  if (!(deepest - r < margin)) return;
  const Vec3 bestNormal = n;
  if (length > 0.0) {
    // An axis lying along a face (within ~2 degrees): clip it to the face's prism, two points.
    int face = -1;
    for (int f = 0; f < p.faceCount; ++f)
      if (p.faceNormals[f].dot(bestNormal) > 1.0 - 1e-9) face = f;
    if (face >= 0 && std::abs(p.faceNormals[face].dot(axis)) <= 0.035 * length) {
      const Vec3& fn = p.faceNormals[face];
      double lo = 0.0, hi = 1.0;
      const int size = p.faceSize(face);
      for (int i = 0; i < size && lo <= hi; ++i) {
        const Vec3& va = p.faceVertex(face, i);
        const Vec3 side = (p.faceVertex(face, (i + 1) % size) - va).cross(fn);  // outward in the face plane
        const double g0 = side.dot(s0 - va), slope = side.dot(axis);
        if (slope > 0.0) hi = std::min(hi, -g0 / slope);
        else if (slope < 0.0) lo = std::max(lo, -g0 / slope);
        else if (g0 > 0.0) hi = -1.0;
      }
      if (hi - lo > 1e-9) {
        for (const double t : {lo, hi}) {
          const Vec3 x = s0 + t * axis;
          const double height = fn.dot(x) - p.faceOffsets[face];
          out.add(ta * Vec3(x - height * fn), ta * Vec3(x - r * fn), ta.rotation * fn, height - r);
        }
        return;
      }
    }
  }
  addAt(best);
  if (length > 0.0) {
    const double tolerance = 1e-9;
    if (best > tolerance) addAt(0.0);
    if (best < 1.0 - tolerance) addAt(1.0);
  }
}

// ---- polytope - polytope ---------------------------------------------------------------------

constexpr int kMaxClipVertices = 256;
using ClipPolygon = std::array<Vec3, kMaxClipVertices>;

// Keeps the part of polygon `in` (count n) where side . (x - point) <= 0; returns the new count.
// Clipping a convex polygon by a half-space adds at most one vertex; past the buffer's end the
// extra vertices are dropped (faces of more than ~128 vertices lose exactness, not safety).
int clipPolygon(const ClipPolygon& in, int n, const Vec3& side, const Vec3& point, ClipPolygon& out) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const Vec3& p = in[i];
    const Vec3& q = in[(i + 1) % n];
    const double dp = side.dot(p - point), dq = side.dot(q - point);
    if (dp <= 0.0 && m < kMaxClipVertices) out[m++] = p;
    if ((dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0)) {
      if (m < kMaxClipVertices) out[m++] = p + (dp / (dp - dq)) * (q - p);
    }
  }
  return m;
}

// Gauss-map test: do the arcs a-b (one edge's face normals) and c-d (the other's, negated) cross?
// (Gregorius 2013.) b_x_a and d_x_c are the arcs' plane normals.
bool isMinkowskiFace(const Vec3& a, const Vec3& b, const Vec3& bxa, const Vec3& c, const Vec3& d, const Vec3& dxc) {
  const double cba = c.dot(bxa), dba = d.dot(bxa), adc = a.dot(dxc), bdc = b.dot(dxc);
  return cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0;
}

// The face of `p` with the largest separation from `other`, given other's frame -> p's frame.
double bestFace(const Polytope& p, const Polytope& other, const Transform& otherToP, int& face) {
  double best = -std::numeric_limits<double>::infinity();
  face = 0;
  for (int f = 0; f < p.faceCount; ++f) {
    const Vec3& n = p.faceNormals[f];
    const Vec3 nOther = otherToP.rotation.transpose() * n;  // n in other's frame
    double lowest = std::numeric_limits<double>::infinity();
    if (other.boxHalfExtents) {
      // A box's lowest vertex along nOther has each coordinate's sign opposite to nOther's (the
      // same value the loop below finds: the rounded dot product is monotone in each term).
      const Vec3& e = *other.boxHalfExtents;
      lowest = nOther.dot(Vec3(nOther.x() > 0.0 ? -e.x() : e.x(), nOther.y() > 0.0 ? -e.y() : e.y(),
                               nOther.z() > 0.0 ? -e.z() : e.z()));
    } else {
      for (int i = 0; i < other.vertexCount; ++i) lowest = std::min(lowest, nOther.dot(other.vertices[i]));
    }
    const double separation = lowest + n.dot(otherToP.translation) - p.faceOffsets[f];
    if (separation > best) best = separation, face = f;
  }
  return best;
}

// Clips the incident polytope's most anti-parallel face to the reference face `face` of `ref`;
// `incToRef` maps the incident frame into the reference frame, `refPose` the reference frame to the
// world. `refIsA` says which of the pair the reference is, for the direction of the normal.
void clipFaces(const Polytope& ref, int face, const Transform& refPose, const Polytope& inc, const Transform& incToRef,
               bool refIsA, ManifoldBuilder& out) {
  const Vec3& n = ref.faceNormals[face];
  const Vec3 nInc = incToRef.rotation.transpose() * n;
  int incident = 0;
  double lowest = std::numeric_limits<double>::infinity();
  for (int f = 0; f < inc.faceCount; ++f) {
    const double d = inc.faceNormals[f].dot(nInc);
    if (d < lowest) lowest = d, incident = f;
  }
  // Two buffers, read from one and written to the other in turn.
  ClipPolygon buffers[2];
  ClipPolygon* polygonPtr = &buffers[0];
  int count = std::min(inc.faceSize(incident), kMaxClipVertices);
  for (int i = 0; i < count; ++i) buffers[0][i] = incToRef * inc.faceVertex(incident, i);
  const int size = ref.faceSize(face);
  for (int i = 0; i < size && count > 0; ++i) {
    const Vec3& va = ref.faceVertex(face, i);
    const Vec3 side = (ref.faceVertex(face, (i + 1) % size) - va).cross(n);
    ClipPolygon* next = polygonPtr == &buffers[0] ? &buffers[1] : &buffers[0];
    count = clipPolygon(*polygonPtr, count, side, va, *next);
    polygonPtr = next;
  }
  const ClipPolygon& polygon = *polygonPtr;
  const Vec3 worldNormal = refPose.rotation * n;
  for (int i = 0; i < count; ++i) {
    const double depth = n.dot(polygon[i]) - ref.faceOffsets[face];
    const Vec3 onInc = refPose * polygon[i];
    const Vec3 onRef = refPose * Vec3(polygon[i] - depth * n);
    if (refIsA) out.add(onRef, onInc, worldNormal, depth);
    else out.add(onInc, onRef, -worldNormal, depth);
  }
}

// A box's edge for the Gauss-map test when its face normals are exact axes: na = aSign e_a,
// nb = bSign e_b and bxa = nb x na = alongSign e_along exactly, so each dot product of
// isMinkowskiFace is one signed coordinate (bit for bit, up to the sign of a zero, which no test
// there depends on).
struct AxisEdge {
  int along = 0, a = 0, b = 0;
  double alongSign = 0.0, aSign = 0.0, bSign = 0.0;
};
int exactAxis(const Vec3& v) {
  for (int k = 0; k < 3; ++k)
    if (std::abs(v[k]) == 1.0 && v[(k + 1) % 3] == 0.0 && v[(k + 2) % 3] == 0.0) return k;
  return -1;
}
// The table for the box topology (makeBoxPolytope), or null if its normals are not exact axes.
const std::array<AxisEdge, 12>* boxAxisEdges() {
  static const std::optional<std::array<AxisEdge, 12>> table = []() -> std::optional<std::array<AxisEdge, 12>> {
    BoxPolytope box;
    detail::makeBoxPolytope(Vec3::Ones(), box);
    const Polytope& p = box.view;
    if (p.edgeCount != 12) return std::nullopt;
    std::array<AxisEdge, 12> result{};
    for (std::size_t i = 0; i < 12; ++i) {
      const Vec3& na = p.faceNormals[p.edgeFaces[i][0]];
      const Vec3& nb = p.faceNormals[p.edgeFaces[i][1]];
      const Vec3 bxa = nb.cross(na);
      AxisEdge& e = result[i];
      e.along = exactAxis(bxa);
      e.a = exactAxis(na);
      e.b = exactAxis(nb);
      if (e.along < 0 || e.a < 0 || e.b < 0) return std::nullopt;
      e.alongSign = bxa[e.along];
      e.aSign = na[e.a];
      e.bSign = nb[e.b];
    }
    return result;
  }();
  return table ? &*table : nullptr;
}

void collidePolytopes(const BodyShape& a, const ColliderPose& poseA, const BodyShape& b, const ColliderPose& poseB,
                      double margin, ManifoldBuilder& out) {
  BoxPolytope boxA, boxB;
  const Polytope pa = detail::shapePolytope(a, boxA);
  const Polytope pb = detail::shapePolytope(b, boxB);
  const Transform ta = transformOf(poseA), tb = transformOf(poseB);
  const Transform bToA = relative(ta, tb), aToB = relative(tb, ta);
  int faceA = 0, faceB = 0;
  const double separationA = bestFace(pa, pb, bToA, faceA);
  if (separationA > margin) return;
  const double separationB = bestFace(pb, pa, aToB, faceB);
  if (separationB > margin) return;
  // Edge pairs, in a's frame.
  double separationEdge = -std::numeric_limits<double>::infinity();
  int edgeA = -1, edgeB = -1;
  Vec3 edgeAxis = Vec3::Zero();
  Vec3 bestA0, bestA1, bestB0, bestB1;  // the best pair's edges (a's, b's), in a's frame
  if (pa.boxHalfExtents && pb.boxHalfExtents) {
    // Two boxes: every pair of edge directions (a's axis i, b's axis j) spans a face of their
    // Minkowski difference, so the best edge pair's separation is the separating axis test's over
    // the 9 axes e_i x R_j (Gottschalk, Lin, Manocha 1996): |L . t| - r_a(L) - r_b(L), L unit and
    // turned towards b; the supporting edges follow from the signs of L's coordinates in each box.
    const Vec3& ha = *pa.boxHalfExtents;
    const Vec3& hb = *pb.boxHalfExtents;
    const Mat3& r = bToA.rotation;  // columns: b's axes in a's frame
    const Vec3& t = bToA.translation;
    const auto towards = [](double x) { return x < 0.0 ? -1.0 : 1.0; };  // the corner's side along a coordinate
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        Vec3 axis = Vec3::Unit(i).cross(r.col(j));
        const double axisLength = axis.norm();
        if (axisLength <= 1e-9) continue;  // parallel: a face axis covers them
        axis /= axisLength;
        if (axis.dot(t) < 0.0) axis = -axis;
        const Vec3 inB = r.transpose() * axis;
        const double separation = axis.dot(t) - ha.dot(axis.cwiseAbs()) - hb.dot(inB.cwiseAbs());
        if (!(separation > separationEdge)) continue;
        separationEdge = separation, edgeA = i, edgeB = j, edgeAxis = axis;
        // a's edge along axis i at the corner coordinates towards the axis, b's along its axis j away from it.
        Vec3 cornerA = ha.cwiseProduct(axis.unaryExpr(towards));
        cornerA[i] = ha[i];
        bestA0 = cornerA;
        bestA0[i] = -ha[i];
        bestA1 = cornerA;
        Vec3 cornerB = -hb.cwiseProduct(inB.unaryExpr(towards));
        cornerB[j] = -hb[j];
        bestB0 = bToA * cornerB;
        cornerB[j] = hb[j];
        bestB1 = bToA * cornerB;
      }
  } else {
    // b's edges are brought into a's frame once per chunk of a fixed buffer (their negated face
    // normals, the arc's plane normal, start point and direction), not once per pair.
    constexpr int kChunk = 32;
    struct EdgeOfB {
      Vec3 c, d, dxc, start, direction;
    };
    std::array<EdgeOfB, kChunk> chunk;
    const std::array<AxisEdge, 12>* axisEdges = pa.boxHalfExtents ? boxAxisEdges() : nullptr;
    for (int first = 0; first < pb.edgeCount; first += kChunk) {
      const int size = std::min(kChunk, pb.edgeCount - first);
      for (int k = 0; k < size; ++k) {
        const int j = first + k;
        EdgeOfB& e = chunk[k];
        e.c = -(bToA.rotation * pb.faceNormals[pb.edgeFaces[j][0]]);
        e.d = -(bToA.rotation * pb.faceNormals[pb.edgeFaces[j][1]]);
        e.dxc = e.d.cross(e.c);
        e.start = bToA * pb.vertices[pb.edges[j][0]];
        e.direction = bToA.rotation * (pb.vertices[pb.edges[j][1]] - pb.vertices[pb.edges[j][0]]);
      }
      for (int i = 0; i < pa.edgeCount; ++i) {
        const Vec3& p0 = pa.vertices[pa.edges[i][0]];
        const Vec3 ea = pa.vertices[pa.edges[i][1]] - p0;
        const Vec3& na = pa.faceNormals[pa.edgeFaces[i][0]];
        const Vec3& nb = pa.faceNormals[pa.edgeFaces[i][1]];
        const Vec3 bxa = nb.cross(na);
        const AxisEdge* axisEdge = axisEdges ? &(*axisEdges)[static_cast<std::size_t>(i)] : nullptr;
        for (int k = 0; k < size; ++k) {
          const EdgeOfB& e = chunk[k];
          if (axisEdge) {  // isMinkowskiFace with its dot products as signed coordinates
            const double cba = axisEdge->alongSign * e.c[axisEdge->along],
                         dba = axisEdge->alongSign * e.d[axisEdge->along];
            if (!(cba * dba < 0.0)) continue;
            const double adc = axisEdge->aSign * e.dxc[axisEdge->a], bdc = axisEdge->bSign * e.dxc[axisEdge->b];
            if (!(adc * bdc < 0.0 && cba * bdc > 0.0)) continue;
          } else if (!isMinkowskiFace(na, nb, bxa, e.c, e.d, e.dxc)) {
            continue;
          }
          Vec3 axis = ea.cross(e.direction);
          const double axisLength = axis.norm();
          if (axisLength <= 1e-9 * ea.norm() * e.direction.norm()) continue;  // parallel: a face axis covers them
          axis /= axisLength;
          if (axis.dot(p0 - pa.centre) < 0.0) axis = -axis;
          const double separation = axis.dot(e.start - p0);
          if (separation > separationEdge) separationEdge = separation, edgeA = i, edgeB = first + k, edgeAxis = axis;
        }
      }
    }
    if (edgeA >= 0) {
      bestA0 = pa.vertices[pa.edges[edgeA][0]];
      bestA1 = pa.vertices[pa.edges[edgeA][1]];
      bestB0 = bToA * pb.vertices[pb.edges[edgeB][0]];
      bestB1 = bToA * pb.vertices[pb.edges[edgeB][1]];
    }
  }
  if (separationEdge > margin) return;
  // Faces are preferred (a stable manifold); an edge pair wins only when clearly more separating,
  // and b's face over a's likewise (a little hysteresis against flip-flopping between frames).
  const double bias = 1e-6 * (pa.radius + pb.radius);
  const double faceSeparation = std::max(separationA, separationB);
  if (edgeA >= 0 && separationEdge > faceSeparation + 10.0 * bias) {
    double s = 0.0, t = 0.0;
    closestSegmentParameters(bestA0, bestA1, bestB0, bestB1, s, t);
    const Vec3 onA = bestA0 + s * (bestA1 - bestA0), onB = bestB0 + t * (bestB1 - bestB0);
    out.add(ta * onA, ta * onB, ta.rotation * edgeAxis, edgeAxis.dot(onB - onA));
    return;
  }
  if (separationB > separationA + bias) clipFaces(pb, faceB, tb, pa, aToB, false, out);
  else clipFaces(pa, faceA, ta, pb, bToA, true, out);
}

// Dispatch for a pair already in routine order (rank(a) <= rank(b)).
void collideOrdered(const BodyShape& a, const ColliderPose& poseA, const BodyShape& b, const ColliderPose& poseB,
                    double margin, ManifoldBuilder& out) {
  if (a.kind == BodyShapeKind::Plane) {
    collidePlane(poseA, b, poseB, out);
  } else if (a.kind == BodyShapeKind::Mesh) {
    collideMesh(a, poseA, b, poseB, margin, out);
  } else if (isPolytope(a.kind) && isPolytope(b.kind)) {
    collidePolytopes(a, poseA, b, poseB, margin, out);
  } else if (isPolytope(a.kind) && isRound(b.kind)) {
    collidePolytopeRound(a, poseA, b, poseB, margin, out);
  } else {
    collideRound(a, poseA, b, poseB, out);
  }
}

}  // namespace

void collideShapes(const BodyShape& a, const ColliderPose& poseA, const BodyShape& b, const ColliderPose& poseB,
                   double margin, ContactManifold& out) {
  out.count = 0;
  ManifoldBuilder builder(margin);
  const int ra = rank(a.kind), rb = rank(b.kind);
  const bool swap = rb < ra || (ra == rb && poseBefore(poseB, poseA));
  if (swap) {
    collideOrdered(b, poseB, a, poseA, margin, builder);
    builder.finish(out);
    flip(out);
  } else {
    collideOrdered(a, poseA, b, poseB, margin, builder);
    builder.finish(out);
  }
}

}  // namespace pliant
