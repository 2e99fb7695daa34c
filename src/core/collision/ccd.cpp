// Continuous collision detection over straight-line motion (ccd.h). The idea:
// - Four points are coplanar when det[x_1 - x_0, x_2 - x_0, x_3 - x_0] = 0. Each column is linear
//   in t, so the determinant is a cubic f(t) (Bridson, Fedkiw and Anderson 2002, sec. 6.3); it is
//   f = (p - a) . ((b - a) x (c - a)) for a vertex p and a triangle (a, b, c), the signed distance
//   times the normal's length, and f = (p_a - p_b) . (d_a x d_b) for two edges.
// - First a cheap exclusion: on [0, 1] a cubic lies within the convex hull of its four Bernstein
//   coefficients, so if they share one strict sign there is no root (most pairs stop here).
// - Otherwise [0, 1] is cut at the roots of f' into pieces on which f is monotone: each holds at
//   most one root, present exactly when f changes sign over it (a double root, where the vertex
//   touches the plane and turns back, is not a crossing and is skipped). The root is bisected until
//   no point moves more than a tenth of the tolerance across the bracket; the proximity test at
//   the bracket's middle then adds that motion to the tolerance, so it cannot miss a meeting at the
//   true root (both points of a distance move at most that much between the two times).
// - In front of both, a separating axis of the swept pair (sweptVertexTriangleSeparated,
//   sweptEdgeEdgeSeparated): along a fixed axis each point's coordinate is linear in t, so the
//   gap between the vertex (edge a) and the farthest point of the triangle (edge b) towards it,
//   a minimum of linear functions of t, is concave and smallest at t = 0 or t = 1; every point of
//   a primitive is a convex combination of its corners, and a distance is at least its component
//   along a unit axis. Two endpoint checks bound the distance over the whole substep.
#include "collision/ccd.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "collision/closest_on_triangle.h"

namespace pliant::detail {

namespace {

// f(t) = U(t) . (V(t) x W(t)) with U, V, W linear in t.
struct Cubic {
  double c[4] = {0.0, 0.0, 0.0, 0.0};  // power basis: c0 + c1 t + c2 t^2 + c3 t^3
  double operator()(double t) const { return ((c[3] * t + c[2]) * t + c[1]) * t + c[0]; }
};

Cubic tripleProduct(const Vec3& u0, const Vec3& du, const Vec3& v0, const Vec3& dv, const Vec3& w0, const Vec3& dw) {
  const Vec3 x00 = v0.cross(w0), x01 = v0.cross(dw) + dv.cross(w0), x11 = dv.cross(dw);
  Cubic f;
  f.c[0] = u0.dot(x00);
  f.c[1] = du.dot(x00) + u0.dot(x01);
  f.c[2] = u0.dot(x11) + du.dot(x01);
  f.c[3] = du.dot(x11);
  return f;
}

// The coplanarity cubic of the points with `origin` as x_0 and u, v, w as the other three.
Cubic coplanarity(const SweptPoints& start, const SweptPoints& end, int origin, int u, int v, int w) {
  const Vec3 o0 = start[origin], od = end[origin] - start[origin];
  auto column = [&](int k, Vec3& at0, Vec3& rate) {
    at0 = start[k] - o0;
    rate = (end[k] - start[k]) - od;
  };
  Vec3 u0, du, v0, dv, w0, dw;
  column(u, u0, du);
  column(v, v0, dv);
  column(w, w0, dw);
  return tripleProduct(u0, du, v0, dv, w0, dw);
}

double sign(double x) { return x > 0.0 ? 1.0 : -1.0; }

// Calls test(t, slack, side) at each crossing of zero of f in [0, 1], earliest first, until it
// returns true: t within the root's bracket, slack (m) the most any point moves between t and the
// root, side the sign of f just before the root.
template <class Test>
bool eachCrossing(const Cubic& f, double motion, double tolerance, Test test) {
  // Bernstein coefficients on [0, 1] (convex hull property).
  const double b0 = f.c[0], b1 = f.c[0] + f.c[1] / 3.0, b2 = f.c[0] + (2.0 * f.c[1] + f.c[2]) / 3.0,
               b3 = f.c[0] + f.c[1] + f.c[2] + f.c[3];
  if (!std::isfinite(b0) || !std::isfinite(b1) || !std::isfinite(b2) || !std::isfinite(b3)) return false;
  if ((b0 > 0.0 && b1 > 0.0 && b2 > 0.0 && b3 > 0.0) || (b0 < 0.0 && b1 < 0.0 && b2 < 0.0 && b3 < 0.0)) return false;
  // Pieces between the roots of f'(t) = c1 + 2 c2 t + 3 c3 t^2 in (0, 1).
  double cuts[4] = {0.0, 1.0, 1.0, 1.0};
  int count = 1;
  const double qa = 3.0 * f.c[3], qb = 2.0 * f.c[2], qc = f.c[1];
  auto addCut = [&](double t) {
    if (t > 0.0 && t < 1.0) cuts[count++] = t;
  };
  if (qa != 0.0) {
    const double discriminant = qb * qb - 4.0 * qa * qc;
    if (discriminant > 0.0) {
      const double q = -0.5 * (qb + std::copysign(std::sqrt(discriminant), qb));  // no cancellation
      addCut(q / qa);
      if (q != 0.0) addCut(qc / q);
    }
  } else if (qb != 0.0) {
    addCut(-qc / qb);
  }
  if (count == 3 && cuts[2] < cuts[1]) std::swap(cuts[1], cuts[2]);
  cuts[count++] = 1.0;
  for (int piece = 0; piece + 1 < count; ++piece) {
    double lo = cuts[piece], hi = cuts[piece + 1];
    double fLo = f(lo);
    const double fHi = f(hi);
    if ((fLo > 0.0 && fHi > 0.0) || (fLo < 0.0 && fHi < 0.0) || (fLo == 0.0 && fHi == 0.0)) continue;
    const double side = fLo != 0.0 ? sign(fLo) : -sign(fHi);
    if (fLo == 0.0) hi = lo;  // the root is the piece's start
    for (int halving = 0; halving < 64 && motion * (hi - lo) > 0.1 * tolerance; ++halving) {
      const double mid = 0.5 * (lo + hi);
      const double fMid = f(mid);
      if (fMid == 0.0) {
        lo = hi = mid;
      } else if ((fMid > 0.0) == (fLo > 0.0)) {
        lo = mid;
        fLo = fMid;
      } else {
        hi = mid;
      }
    }
    if (test(0.5 * (lo + hi), motion * (hi - lo), side)) return true;
  }
  return false;
}

// The most any of the four points moves over the substep (m).
double largestMotion(const SweptPoints& start, const SweptPoints& end) {
  double largest = 0.0;
  for (int k = 0; k < 4; ++k) largest = std::max(largest, (end[k] - start[k]).squaredNorm());
  return std::sqrt(largest);
}

Vec3 at(const SweptPoints& start, const SweptPoints& end, int k, double t) {
  return start[k] + t * (end[k] - start[k]);
}

// Relative tolerance below which two edges count as parallel (sin of the angle between them), as
// in surface_contacts.cpp.
constexpr double kParallel = 1.0e-6;

}  // namespace

bool sweptVertexTriangle(const SweptPoints& start, const SweptPoints& end, double tolerance, SweptHit& hit) {
  // f = det[b - a, c - a, p - a] = (p - a) . ((b - a) x (c - a)).
  const Cubic f = coplanarity(start, end, 1, 2, 3, 0);
  return eachCrossing(f, largestMotion(start, end), tolerance, [&](double t, double slack, double side) {
    const Vec3 p = at(start, end, 0, t), a = at(start, end, 1, t), b = at(start, end, 2, t), c = at(start, end, 3, t);
    const Vec3 n = (b - a).cross(c - a);
    const double length = n.norm();
    if (!(length > 0.0)) return false;  // degenerate at that time: its edges meet the vertex's edges
    const Vec3 w = triangleWeights(closestOnTriangle(p, a, b, c));
    const Vec3 offset = p - (w[0] * a + w[1] * b + w[2] * c);
    const double reach = tolerance + slack;
    if (offset.squaredNorm() > reach * reach) return false;
    hit.time = t;
    hit.normal = (side / length) * n;
    hit.weights = {1.0, -w[0], -w[1], -w[2]};
    return true;
  });
}

bool sweptEdgeEdge(const SweptPoints& start, const SweptPoints& end, double tolerance, SweptHit& hit) {
  // f = det[p_a - p_b, q_a - p_b, q_b - p_b] = (p_a - p_b) . (d_a x d_b).
  const Cubic f = coplanarity(start, end, 2, 0, 1, 3);
  return eachCrossing(f, largestMotion(start, end), tolerance, [&](double t, double slack, double side) {
    const Vec3 pa = at(start, end, 0, t), qa = at(start, end, 1, t), pb = at(start, end, 2, t),
               qb = at(start, end, 3, t);
    const Vec3 da = qa - pa, db = qb - pb;
    const Vec3 n = da.cross(db);
    const double length = n.norm();
    const double A = da.squaredNorm(), C = db.squaredNorm();
    if (!(length > kParallel * std::sqrt(A * C))) return false;  // parallel: vertex-triangle pairs cover it
    // Closest points of the two segments (Ericson, "Real-time collision detection", sec. 5.1.9).
    const Vec3 r = pa - pb;
    const double B = da.dot(db), D = da.dot(r), E = db.dot(r);
    double s = std::clamp((B * E - C * D) / (A * C - B * B), 0.0, 1.0);
    double u = (B * s + E) / C;
    if (u < 0.0) {
      u = 0.0;
      s = std::clamp(-D / A, 0.0, 1.0);
    } else if (u > 1.0) {
      u = 1.0;
      s = std::clamp((B - D) / A, 0.0, 1.0);
    }
    const Vec3 gap = (pa + s * da) - (pb + u * db);
    const double reach = tolerance + slack;
    if (gap.squaredNorm() > reach * reach) return false;
    hit.time = t;
    hit.normal = (side / length) * n;
    hit.weights = {1.0 - s, s, -(1.0 - u), -u};
    return true;
  });
}

}  // namespace pliant::detail
