// The continuous collision tests of src/core/collision/ccd.h: a vertex through a triangle and an
// edge across an edge on straight paths, translating, turning and deforming, against the analytic
// time of the meeting and against a dense sampling of the motion (nothing missed, nothing false).
#include "collision/ccd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "collision/closest_on_triangle.h"

namespace pliant::detail {
namespace {

// The reference distance at time t (0..1 of the substep) of the moving pair: the vertex to the
// triangle, or edge a to edge b sampled at `samples` + 1 points of edge a (only for the tests).
double referenceDistance(const SweptPoints& start, const SweptPoints& end, bool edges, double t, int samples) {
  const auto point = [&](int k) { return Vec3(start[k] + t * (end[k] - start[k])); };
  if (!edges) {
    const Vec3 p = point(0), a = point(1), b = point(2), c = point(3);
    const Vec3 w = triangleWeights(closestOnTriangle(p, a, b, c));
    return (p - (w[0] * a + w[1] * b + w[2] * c)).norm();
  }
  double best = 1e9;
  const Vec3 pa = point(0), qa = point(1), pb = point(2), qb = point(3);
  for (int i = 0; i <= samples; ++i) {
    const Vec3 x = pa + (static_cast<double>(i) / samples) * (qa - pa);
    const Vec3 d = qb - pb;
    const double u = std::clamp((x - pb).dot(d) / d.squaredNorm(), 0.0, 1.0);
    best = std::min(best, (x - (pb + u * d)).norm());
  }
  return best;
}

const double kPi = std::acos(-1.0);

Vec3 turnedAboutX(const Vec3& point, double degrees) {
  const double angle = degrees * kPi / 180.0;
  return Vec3(point.x(), std::cos(angle) * point.y() - std::sin(angle) * point.z(),
              std::sin(angle) * point.y() + std::cos(angle) * point.z());
}

TEST(SweptVertexTriangle, VertexFallingThroughAStillTriangleMeetsItWhereItCrosses) {
  SweptPoints start = {Vec3(0.2, 0.3, 1.0), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
  SweptPoints end = start;
  end[0] = Vec3(0.2, 0.3, -3.0);  // crosses z = 0 at t = 1/4
  SweptHit hit;
  ASSERT_TRUE(sweptVertexTriangle(start, end, 0.01, hit));
  EXPECT_NEAR(hit.time, 0.25, 0.01 / 4.0 * 0.1 + 1e-12);  // within the bracket: 0.1 tolerance of motion
  EXPECT_NEAR(hit.normal.z(), 1.0, 1e-12);                // towards where the vertex came from
  EXPECT_NEAR(hit.weights[0], 1.0, 0.0);
  EXPECT_NEAR(hit.weights[1], -0.5, 1e-12);
  EXPECT_NEAR(hit.weights[2], -0.2, 1e-12);
  EXPECT_NEAR(hit.weights[3], -0.3, 1e-12);
  // From below, the normal points down.
  std::swap(end[0], start[0]);
  ASSERT_TRUE(sweptVertexTriangle(start, end, 0.01, hit));
  EXPECT_NEAR(hit.normal.z(), -1.0, 1e-12);
}

TEST(SweptVertexTriangle, APassBesideTheTriangleCountsOnlyWithinTheTolerance) {
  // The vertex crosses the plane 0.9 and 1.2 tolerances beyond the edge x + y = 1.
  const double tolerance = 0.01;
  for (const double beyond : {0.9, 1.2}) {
    const double offset = 1.0 + beyond * tolerance * std::sqrt(2.0);
    const Vec3 crossing(0.5 * offset, 0.5 * offset, 0.0);
    const SweptPoints start = {crossing + Vec3(0, 0, 0.5), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
    SweptPoints end = start;
    end[0] = crossing - Vec3(0, 0, 0.5);
    SweptHit hit;
    EXPECT_EQ(sweptVertexTriangle(start, end, tolerance, hit), beyond < 1.0) << beyond;
  }
}

TEST(SweptVertexTriangle, TriangleTurningThroughAStillVertexIsFoundAtTheCubicsRoot) {
  // A flap hinged on the x axis turns by 150 degrees (its free corner on the chord of the arc):
  // the vertex is on one side of the plane at both ends, as measured along the normal at the start.
  const Vec3 p(0.5, 0.15, 0.1);
  const Vec3 c0(0.5, 1.0, 0.0), c1 = turnedAboutX(c0, 150.0);
  const SweptPoints start = {p, Vec3(0, 0, 0), Vec3(1, 0, 0), c0};
  const SweptPoints end = {p, Vec3(0, 0, 0), Vec3(1, 0, 0), c1};
  SweptHit hit;
  ASSERT_TRUE(sweptVertexTriangle(start, end, 0.005, hit));
  // Coplanar when c(t) = c0 + t (c1 - c0) is along p's direction in (y, z): linear in t here.
  const Vec3 dc = c1 - c0;
  const double exact = (p.z() * c0.y() - p.y() * c0.z()) / (p.y() * dc.z() - p.z() * dc.y());
  EXPECT_NEAR(hit.time, exact, 1e-3);
  // The normal at that time, towards the vertex's side before it (+z at the start).
  const Vec3 c = c0 + hit.time * dc;
  const Vec3 n = Vec3(1, 0, 0).cross(c).normalized();
  EXPECT_NEAR(hit.normal.dot(n), 1.0, 1e-9);
  // Turning only 30 degrees it stops short of the vertex: no hit.
  const SweptPoints short_end = {p, Vec3(0, 0, 0), Vec3(1, 0, 0), turnedAboutX(c0, 30.0)};
  EXPECT_FALSE(sweptVertexTriangle(start, short_end, 0.005, hit));
}

TEST(SweptVertexTriangle, DeformingTriangleThatAVertexCrossesTwiceIsFoundTheFirstTime) {
  // Corner a still, b and c rising and folding the triangle while the vertex sinks: the vertex
  // passes through the triangle at t ~ 0.485 and back through it at t ~ 0.958, ending on the side
  // it started on (as most linear estimates would see it: nothing happened).
  const SweptPoints start = {Vec3(0.3, 0.3, 0.2), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
  const SweptPoints end = {Vec3(0.1, 0.0, 0.1), Vec3(0, 0, 0), Vec3(0.9, 0.1, 0.9), Vec3(0.2, 0.7, 0.8)};
  auto coplanarity = [&](double t) {
    SweptPoints x;
    for (int k = 0; k < 4; ++k) x[k] = start[k] + t * (end[k] - start[k]);
    return (x[0] - x[1]).dot((x[2] - x[1]).cross(x[3] - x[1]));
  };
  // The sign changes, found by dense sampling.
  std::vector<double> roots;
  for (int i = 0; i < 100000; ++i)
    if ((coplanarity(i * 1e-5) > 0.0) != (coplanarity((i + 1) * 1e-5) > 0.0)) roots.push_back((i + 0.5) * 1e-5);
  ASSERT_EQ(roots.size(), 2u);
  ASSERT_GT(coplanarity(0.0), 0.0);
  ASSERT_GT(coplanarity(1.0), 0.0);
  SweptHit hit;
  ASSERT_TRUE(sweptVertexTriangle(start, end, 0.005, hit));
  EXPECT_NEAR(hit.time, roots[0], 1e-3);
  // Pointing to the positive side of (b - a) x (c - a) there, where the vertex came from.
  SweptPoints x;
  for (int k = 0; k < 4; ++k) x[k] = start[k] + hit.time * (end[k] - start[k]);
  EXPECT_GT(hit.normal.dot((x[2] - x[1]).cross(x[3] - x[1])), 0.0);
}

TEST(SweptEdgeEdge, EdgeFallingAcrossAStillEdgeMeetsItWhereItCrosses) {
  const SweptPoints start = {Vec3(0.3, -1, 0.5), Vec3(0.3, 1, 0.5), Vec3(-1, 0, 0), Vec3(1, 0, 0)};
  SweptPoints end = start;
  end[0].z() = end[1].z() = -1.5;  // crosses at t = 1/4
  SweptHit hit;
  ASSERT_TRUE(sweptEdgeEdge(start, end, 0.01, hit));
  EXPECT_NEAR(hit.time, 0.25, 0.01 / 2.0 * 0.1 + 1e-12);
  EXPECT_NEAR(hit.weights[0], 0.5, 1e-9);
  EXPECT_NEAR(hit.weights[1], 0.5, 1e-9);
  EXPECT_NEAR(hit.weights[2], -0.35, 1e-9);  // x = 0.3 on edge b, from -1 to 1
  EXPECT_NEAR(hit.weights[3], -0.65, 1e-9);
  EXPECT_NEAR(hit.normal.z(), 1.0, 1e-12);  // edge a came from above
  // Shifted beyond edge b's end by 2 tolerances: no hit.
  SweptPoints beside = start, besideEnd = end;
  for (int k = 0; k < 2; ++k) {
    beside[k].x() = besideEnd[k].x() = 1.02;
  }
  EXPECT_FALSE(sweptEdgeEdge(beside, besideEnd, 0.01, hit));
}

TEST(SweptEdgeEdge, EdgeTurningAcrossAnEdgeIsFound) {
  // Edge a hinged at h turns by 120 degrees about an axis along x through h, across edge b on the
  // x axis (the scenario of tests/scenario/self_collision_test.cpp, scaled up).
  const Vec3 h(0.0, 0.3, 0.2);
  const Vec3 from = h + Vec3(0, -0.8, 0), to = h + turnedAboutX(Vec3(0, -0.8, 0), 120.0);
  const SweptPoints start = {h, from, Vec3(-1, 0, 0), Vec3(1, 0, 0)};
  const SweptPoints end = {h, to, Vec3(-1, 0, 0), Vec3(1, 0, 0)};
  SweptHit hit;
  ASSERT_TRUE(sweptEdgeEdge(start, end, 0.003, hit));
  // It passes the x axis when the free end is on the ray from h through the origin.
  const Vec3 d = to - from;
  const double exact = (-h.y() * (from.z() - h.z()) + h.z() * (from.y() - h.y())) / (h.y() * d.z() - h.z() * d.y());
  EXPECT_NEAR(hit.time, exact, 1e-3);
  EXPECT_NEAR(hit.weights[2] + hit.weights[3], -1.0, 1e-12);
  EXPECT_NEAR(hit.weights[3], -0.5, 1e-3);  // at x = 0, the middle of edge b
}

// Random pairs, each turning and deforming: every crossing of the triangle (of the other edge)
// that a dense sampling of the motion finds well within the tolerance is found, at or before that
// time, and every hit reported is within 1.1 tolerances of the triangle (edge) at its time.
TEST(SweptContinuousCollision, NeverMissesACrossingThatDenseSamplingFinds) {
  std::mt19937 random(14);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const double tolerance = 0.02;
  const int samples = 4000;
  int crossings[2] = {0, 0};
  for (int trial = 0; trial < 1000; ++trial) {
    const bool edges = trial % 2 == 1;
    SweptPoints start, end;
    for (int k = 0; k < 4; ++k) {
      start[k] = Vec3(unit(random), unit(random), unit(random));
      // Large motions: up to a body length per substep, so the planes turn a lot.
      end[k] = start[k] + Vec3(unit(random), unit(random), unit(random));
    }
    auto point = [&](int k, double t) { return Vec3(start[k] + t * (end[k] - start[k])); };
    auto distance = [&](double t) { return referenceDistance(start, end, edges, t, 200); };
    auto coplanarity = [&](double t) {
      if (!edges) {
        const Vec3 p = point(0, t), a = point(1, t), b = point(2, t), c = point(3, t);
        return (p - a).dot((b - a).cross(c - a));
      }
      const Vec3 pa = point(0, t), qa = point(1, t), pb = point(2, t), qb = point(3, t);
      return (pa - pb).dot((qa - pa).cross(qb - pb));
    };
    // The first sampled sign change of the coplanarity at which the pair is within half the
    // tolerance (so well inside, whatever the sampling's error).
    double first = -1.0;
    for (int i = 0; i < samples && first < 0.0; ++i) {
      const double t0 = double(i) / samples, t1 = double(i + 1) / samples;
      const double f0 = coplanarity(t0), f1 = coplanarity(t1);
      if ((f0 > 0.0) == (f1 > 0.0)) continue;
      const double t = t0 + (t1 - t0) * f0 / (f0 - f1);
      if (distance(t) < 0.5 * tolerance) first = t;
    }
    SweptHit hit;
    const bool found =
        edges ? sweptEdgeEdge(start, end, tolerance, hit) : sweptVertexTriangle(start, end, tolerance, hit);
    if (first >= 0.0) {
      ++crossings[edges];
      ASSERT_TRUE(found) << "trial " << trial;
      // At or before it, give or take the sampling and the bracket (points move at most a tenth
      // of the tolerance across it).
      double motion = 0.0;
      for (int k = 0; k < 4; ++k) motion = std::max(motion, (end[k] - start[k]).norm());
      EXPECT_LE(hit.time, first + 2.0 / samples + 0.1 * tolerance / motion) << "trial " << trial;
    }
    if (found) {
      EXPECT_LE(distance(hit.time), 1.1 * tolerance + 0.01) << "trial " << trial;
      EXPECT_NEAR(hit.normal.norm(), 1.0, 1e-12);
      // The normal points to the side of the crossing the pair was on just before.
      const double before = coplanarity(std::max(0.0, hit.time - 1e-3));
      if (hit.time > 2e-3 && std::abs(before) > 1e-9) {
        Vec3 n;
        if (!edges) {
          n = (point(2, hit.time) - point(1, hit.time)).cross(point(3, hit.time) - point(1, hit.time));
        } else {
          n = (point(1, hit.time) - point(0, hit.time)).cross(point(3, hit.time) - point(2, hit.time));
        }
        EXPECT_GT(hit.normal.dot(n) * before, 0.0) << "trial " << trial;
      }
    }
  }
  // The random pairs did cross (so the checks above ran).
  EXPECT_GT(crossings[0], 20);
  EXPECT_GT(crossings[1], 20);
}

// The separating-axis rejections in front of the swept tests (ccd.h) are conservative: over many
// random pairs that turn (a rigid rotation of up to 120 degrees, its start and end joined by
// straight paths) and deform (each point moved at random too), placed about a tolerance apart,
// no pair rejected along any of three axes (the normal at the start, at the end, a random one) is
// one the exact swept test reports, nor comes within 1.1 tolerances at any sampled time. The
// pairs are drawn so that both answers are common and many rejections are near misses, so a
// rejection that checked only the start, or ignored the motion in between, would fail here.
TEST(SweptContinuousCollision, SeparatedPairsAreNeverOnesTheSweptTestsFind) {
  std::mt19937 random(2026);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const double tolerance = 0.05;
  auto randomUnit = [&]() {
    Vec3 v;
    do v = Vec3(unit(random), unit(random), unit(random));
    while (v.squaredNorm() < 1e-3 || v.squaredNorm() > 1.0);
    return Vec3(v.normalized());
  };
  auto rotate = [](const Vec3& p, const Vec3& axis, double angle) {  // Rodrigues
    return Vec3(std::cos(angle) * p + std::sin(angle) * axis.cross(p) + (1.0 - std::cos(angle)) * axis.dot(p) * axis);
  };
  int rejected[2] = {0, 0}, nearMisses[2] = {0, 0}, hits[2] = {0, 0}, rejectedAtEnds[2] = {0, 0};
  for (int trial = 0; trial < 40000; ++trial) {
    const bool edges = trial % 2 == 1;
    // A triangle (edge b) in the plane z = 0 about the origin, the vertex (edge a) above or below
    // it by up to a few tolerances.
    SweptPoints start;
    const double height = 4.0 * tolerance * unit(random);
    if (!edges) {
      start = {Vec3(0.3 * unit(random), 0.3 * unit(random), height), Vec3(-0.5, -0.4, 0.0), Vec3(0.5, -0.3, 0.0),
               Vec3(0.1 * unit(random), 0.5, 0.0)};
    } else {
      const Vec3 a = Vec3(unit(random), unit(random), 0.0).normalized(), b = Vec3(unit(random), unit(random), 0.0);
      start = {Vec3(0.2 * unit(random), 0.2 * unit(random), height) - 0.5 * a,
               Vec3(0.2 * unit(random), 0.2 * unit(random), height) + 0.5 * a, -0.5 * b.normalized(),
               0.5 * b.normalized()};
    }
    // The end: the whole pair turned about a random axis through a random point, each point
    // displaced a little more, and the vertex (edge a) moved towards or away from the rest.
    const Vec3 axis = randomUnit(), pivot = 0.3 * Vec3(unit(random), unit(random), unit(random));
    const double angle = (trial % 3 == 0 ? 0.05 : 2.1) * unit(random);
    SweptPoints end;
    for (int k = 0; k < 4; ++k) {
      end[k] = pivot + rotate(start[k] - pivot, axis, angle) +
               2.0 * tolerance * Vec3(unit(random), unit(random), unit(random));
      if (k < (edges ? 2 : 1)) end[k].z() += 3.0 * tolerance * unit(random);
    }
    auto point = [&](int k, double t) { return Vec3(start[k] + t * (end[k] - start[k])); };
    auto distance = [&](double t) { return referenceDistance(start, end, edges, t, 100); };
    auto normalAt = [&](double t) {
      const Vec3 n = edges ? Vec3((point(1, t) - point(0, t)).cross(point(3, t) - point(2, t)))
                           : Vec3((point(2, t) - point(1, t)).cross(point(3, t) - point(1, t)));
      return Vec3(n.normalized());
    };
    SweptHit hit;
    const bool found =
        edges ? sweptEdgeEdge(start, end, tolerance, hit) : sweptVertexTriangle(start, end, tolerance, hit);
    hits[edges] += found;
    for (const Vec3& separatingAxis : {normalAt(0.0), normalAt(1.0), randomUnit()}) {
      const bool separated = edges ? sweptEdgeEdgeSeparated(start, end, separatingAxis, tolerance)
                                   : sweptVertexTriangleSeparated(start, end, separatingAxis, tolerance);
      if (!separated) continue;
      ++rejected[edges];
      ASSERT_FALSE(found) << "trial " << trial << (edges ? " (edges)" : " (vertex-triangle)");
      double closest = 1e9;
      for (int i = 0; i <= 200; ++i) closest = std::min(closest, distance(i / 200.0));
      ASSERT_GT(closest, 1.1 * tolerance) << "trial " << trial;
      nearMisses[edges] += closest < 2.0 * tolerance;
      // Near at the start or the end within 2 tolerances: where checking one end alone is not enough.
      rejectedAtEnds[edges] += std::min(distance(0.0), distance(1.0)) < 2.0 * tolerance;
    }
  }
  for (int edges : {0, 1}) {
    SCOPED_TRACE(edges ? "edges" : "vertex-triangle");
    EXPECT_GT(hits[edges], 1000);
    EXPECT_GT(rejected[edges], 1000);
    EXPECT_GT(nearMisses[edges], 100);
    EXPECT_GT(rejectedAtEnds[edges], 100);
  }
}

// The rejection looks at both ends of the substep: a vertex far above a triangle at the start
// that ends far below it passed through, and is not rejected (the swept test finds it).
TEST(SweptContinuousCollision, APairOnOppositeSidesAtTheEndsIsNotSeparated) {
  const SweptPoints start = {Vec3(0.2, 0.3, 1.0), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
  SweptPoints end = start;
  end[0] = Vec3(0.2, 0.3, -1.0);
  EXPECT_FALSE(sweptVertexTriangleSeparated(start, end, Vec3::UnitZ(), 0.01));
  SweptHit hit;
  EXPECT_TRUE(sweptVertexTriangle(start, end, 0.01, hit));
  // Beside it all the way (along x), the same motion is rejected along x.
  SweptPoints beside = start, besideEnd = end;
  beside[0].x() = besideEnd[0].x() = 1.5;
  EXPECT_TRUE(sweptVertexTriangleSeparated(beside, besideEnd, Vec3::UnitX(), 0.01));
  EXPECT_FALSE(sweptVertexTriangle(beside, besideEnd, 0.01, hit));
}

}  // namespace
}  // namespace pliant::detail
