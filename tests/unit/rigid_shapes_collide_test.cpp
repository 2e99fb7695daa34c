// The narrow phase between body shapes (collideShapes): analytic depths and normals for each pair
// of primitives, manifolds for resting boxes, swapping A and B, consistency with shapeDistance.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "pliant/rigid_shapes.h"
#include "rigid_shapes_test_meshes.h"

namespace pliant {
namespace {

const double kSqrt2 = std::sqrt(2.0);

BodyShape sphere(double r) {
  BodyShape s;
  s.kind = BodyShapeKind::Sphere;
  s.radius = r;
  return s;
}
BodyShape capsule(double r, double h) {
  BodyShape s;
  s.kind = BodyShapeKind::Capsule;
  s.radius = r;
  s.halfHeight = h;
  return s;
}
BodyShape box(const Vec3& half) {
  BodyShape s;
  s.kind = BodyShapeKind::Box;
  s.halfExtents = half;
  return s;
}
BodyShape plane() {
  BodyShape s;
  s.kind = BodyShapeKind::Plane;
  return s;
}
BodyShape hullOfBox(const Vec3& half) {
  std::vector<Vec3> corners;
  for (int i = 0; i < 8; ++i)
    corners.push_back(
        Vec3((i & 1) ? half.x() : -half.x(), (i & 2) ? half.y() : -half.y(), (i & 4) ? half.z() : -half.z()));
  BodyShape s;
  s.kind = BodyShapeKind::ConvexHull;
  s.hull = std::make_shared<const ConvexHull>(buildConvexHull(corners, "box hull"));
  return s;
}
BodyShape meshBox(const Vec3& half) {
  const test::TriangleMesh m = test::boxMesh(half);
  SignedDistanceGridOptions options;
  options.maxCellsPerAxis = 32;
  BodyShape s;
  s.kind = BodyShapeKind::Mesh;
  s.grid = std::make_shared<const SignedDistanceGrid>(
      SignedDistanceGrid::build(m.vertices, m.triangles, options, "box mesh"));
  return s;
}
ColliderPose at(const Vec3& p, const Quat& q = Quat::Identity()) { return ColliderPose{p, q}; }
Quat about(double angle, const Vec3& axis) { return Quat(Eigen::AngleAxisd(angle, axis.normalized())); }

ContactManifold collide(const BodyShape& a, const ColliderPose& pa, const BodyShape& b, const ColliderPose& pb,
                        double margin = 0.0) {
  ContactManifold m;
  collideShapes(a, pa, b, pb, margin, m);
  return m;
}

// Every point: unit normal, separation = (pointB - pointA) . normal.
void expectConsistent(const ContactManifold& m) {
  for (int i = 0; i < m.count; ++i) {
    const ShapeContactPoint& p = m.points[i];
    EXPECT_NEAR(p.normal.norm(), 1.0, 1e-12);
    EXPECT_NEAR((p.pointB - p.pointA).dot(p.normal), p.separation, 1e-9);
  }
}

void expectPoint(const ShapeContactPoint& p, const Vec3& normal, double separation, double tolerance = 1e-9) {
  EXPECT_LT((p.normal - normal).norm(), tolerance) << p.normal.transpose();
  EXPECT_NEAR(p.separation, separation, tolerance);
}

TEST(RigidShapesCollide, SphereSphere) {
  const ContactManifold m = collide(sphere(1.0), at(Vec3::Zero()), sphere(1.0), at(Vec3(1.5, 0, 0)));
  ASSERT_EQ(m.count, 1);
  expectPoint(m.points[0], Vec3::UnitX(), -0.5);
  EXPECT_LT((m.points[0].pointA - Vec3(1, 0, 0)).norm(), 1e-12);
  EXPECT_LT((m.points[0].pointB - Vec3(0.5, 0, 0)).norm(), 1e-12);
  EXPECT_EQ(collide(sphere(1.0), at(Vec3::Zero()), sphere(1.0), at(Vec3(2.5, 0, 0)), 0.4).count, 0);
  const ContactManifold near = collide(sphere(1.0), at(Vec3::Zero()), sphere(1.0), at(Vec3(2.3, 0, 0)), 0.4);
  ASSERT_EQ(near.count, 1);
  EXPECT_NEAR(near.points[0].separation, 0.3, 1e-12);
}

TEST(RigidShapesCollide, SphereCapsuleAndCapsuleCapsule) {
  const ContactManifold sc = collide(capsule(0.5, 1.0), at(Vec3::Zero()), sphere(0.5), at(Vec3(0.8, 0.3, 0)));
  ASSERT_EQ(sc.count, 1);
  expectPoint(sc.points[0], Vec3::UnitX(), -0.2);
  // Beyond the end cap: along the axis.
  const ContactManifold cap = collide(capsule(0.5, 1.0), at(Vec3::Zero()), sphere(0.5), at(Vec3(0, 1.9, 0)));
  ASSERT_EQ(cap.count, 1);
  expectPoint(cap.points[0], Vec3::UnitY(), -0.1);
  // Crossed capsules: one point at the common perpendicular.
  const ContactManifold crossed = collide(capsule(0.5, 1.0), at(Vec3::Zero()), capsule(0.5, 1.0),
                                          at(Vec3(0.9, 0, 0), about(M_PI / 2, Vec3::UnitX())));
  ASSERT_EQ(crossed.count, 1);
  expectPoint(crossed.points[0], Vec3::UnitX(), -0.1);
  // Side by side: two points at the ends of the overlap.
  const ContactManifold parallel =
      collide(capsule(0.5, 1.0), at(Vec3::Zero()), capsule(0.5, 1.0), at(Vec3(0.9, 0.5, 0)));
  ASSERT_EQ(parallel.count, 2);
  std::vector<double> heights;
  for (int i = 0; i < 2; ++i) {
    expectPoint(parallel.points[i], Vec3::UnitX(), -0.1);
    heights.push_back(parallel.points[i].pointA.y());
  }
  std::sort(heights.begin(), heights.end());
  EXPECT_NEAR(heights[0], -0.5, 1e-12);
  EXPECT_NEAR(heights[1], 1.0, 1e-12);
  expectConsistent(parallel);
}

TEST(RigidShapesCollide, SphereBox) {
  const BodyShape b = box(Vec3(1, 1, 1));
  const ContactManifold face = collide(b, at(Vec3::Zero()), sphere(0.5), at(Vec3(1.3, 0.2, 0.1)));
  ASSERT_EQ(face.count, 1);
  expectPoint(face.points[0], Vec3::UnitX(), -0.2);
  const ContactManifold edge = collide(b, at(Vec3::Zero()), sphere(0.5), at(Vec3(1.3, 1.3, 0)));
  ASSERT_EQ(edge.count, 1);
  expectPoint(edge.points[0], Vec3(1, 1, 0).normalized(), std::sqrt(0.18) - 0.5);
  // Centre inside: through the nearest face.
  const ContactManifold deep = collide(b, at(Vec3::Zero()), sphere(0.5), at(Vec3(0.8, 0.1, 0)));
  ASSERT_EQ(deep.count, 1);
  expectPoint(deep.points[0], Vec3::UnitX(), -0.7);
  // Posed: the same contact turned and moved.
  const Quat q = about(0.6, Vec3(1, 1, 0));
  const ContactManifold posed =
      collide(b, at(Vec3(3, 4, 5), q), sphere(0.5), at(Vec3(3, 4, 5) + q * Vec3(1.3, 0.2, 0.1)));
  ASSERT_EQ(posed.count, 1);
  expectPoint(posed.points[0], q * Vec3::UnitX(), -0.2);
  expectConsistent(posed);
}

TEST(RigidShapesCollide, CapsuleBox) {
  // Lying flat on the top face: two points at the axis ends.
  const ContactManifold flat = collide(box(Vec3(2, 1, 2)), at(Vec3::Zero()), capsule(0.5, 1.0),
                                       at(Vec3(0, 1.4, 0), about(M_PI / 2, Vec3::UnitZ())));
  ASSERT_EQ(flat.count, 2);
  for (int i = 0; i < 2; ++i) {
    expectPoint(flat.points[i], Vec3::UnitY(), -0.1);
    EXPECT_NEAR(std::abs(flat.points[i].pointB.x()), 1.0, 1e-9);
  }
  // Overhanging a narrower box: clipped at the box's sides.
  const ContactManifold overhang = collide(box(Vec3(0.5, 1, 2)), at(Vec3::Zero()), capsule(0.5, 1.0),
                                           at(Vec3(0, 1.4, 0), about(M_PI / 2, Vec3::UnitZ())));
  ASSERT_EQ(overhang.count, 2);
  for (int i = 0; i < 2; ++i) {
    expectPoint(overhang.points[i], Vec3::UnitY(), -0.1);
    EXPECT_NEAR(std::abs(overhang.points[i].pointB.x()), 0.5, 1e-9);
  }
  // Standing on its end cap: one point.
  const ContactManifold standing =
      collide(box(Vec3(2, 1, 2)), at(Vec3::Zero()), capsule(0.5, 1.0), at(Vec3(0.3, 2.45, 0)));
  ASSERT_EQ(standing.count, 1);
  expectPoint(standing.points[0], Vec3::UnitY(), -0.05);
  // Across an edge of the box: depth from the edge.
  const ContactManifold edge = collide(box(Vec3(1, 1, 1)), at(Vec3::Zero()), capsule(0.5, 0.8),
                                       at(Vec3(1.2, 1.2, 0), about(M_PI / 2, Vec3::UnitX())));
  ASSERT_GE(edge.count, 1);
  for (int i = 0; i < edge.count; ++i)
    expectPoint(edge.points[i], Vec3(1, 1, 0).normalized(), std::sqrt(0.08) - 0.5, 1e-8);
  expectConsistent(edge);
}

TEST(RigidShapesCollide, BoxRestingOnABoxGivesTheOverlapCorners) {
  const BodyShape a = box(Vec3(1, 0.5, 1)), b = box(Vec3(0.5, 0.5, 0.5));
  const ContactManifold m = collide(a, at(Vec3::Zero()), b, at(Vec3(0.3, 0.99, 0.2)));
  ASSERT_EQ(m.count, 4);
  std::vector<std::pair<double, double>> corners;
  for (int i = 0; i < 4; ++i) {
    expectPoint(m.points[i], Vec3::UnitY(), -0.01);
    EXPECT_NEAR(m.points[i].pointA.y(), 0.5, 1e-12);
    corners.push_back({m.points[i].pointB.x(), m.points[i].pointB.z()});
  }
  std::sort(corners.begin(), corners.end());
  const std::vector<std::pair<double, double>> expected = {{-0.2, -0.3}, {-0.2, 0.7}, {0.8, -0.3}, {0.8, 0.7}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(corners[i].first, expected[i].first, 1e-12);
    EXPECT_NEAR(corners[i].second, expected[i].second, 1e-12);
  }
  expectConsistent(m);
  // Offset so that only a strip overlaps: the strip's corners (clipped to A's top face).
  const ContactManifold strip = collide(a, at(Vec3::Zero()), box(Vec3(1, 0.5, 1)), at(Vec3(1.5, 0.99, 0.5)));
  ASSERT_EQ(strip.count, 4);
  for (int i = 0; i < 4; ++i) {
    expectPoint(strip.points[i], Vec3::UnitY(), -0.01);
    EXPECT_TRUE(std::abs(strip.points[i].pointA.x() - 0.5) < 1e-12 ||
                std::abs(strip.points[i].pointA.x() - 1.0) < 1e-12);
    EXPECT_TRUE(std::abs(strip.points[i].pointA.z() + 0.5) < 1e-12 ||
                std::abs(strip.points[i].pointA.z() - 1.0) < 1e-12);
  }
  // Turned 45 degrees: the octagon of overlap is reduced to 4 points that keep its spread.
  const ContactManifold turned =
      collide(a, at(Vec3::Zero()), box(Vec3(0.9, 0.5, 0.9)), at(Vec3(0, 0.99, 0), about(M_PI / 4, Vec3::UnitY())));
  ASSERT_EQ(turned.count, 4);
  double spread = 0.0;
  for (int i = 0; i < 4; ++i) {
    expectPoint(turned.points[i], Vec3::UnitY(), -0.01);
    for (int j = 0; j < 4; ++j) spread = std::max(spread, (turned.points[i].pointA - turned.points[j].pointA).norm());
  }
  EXPECT_GT(spread, 2.0);
}

TEST(RigidShapesCollide, BoxBoxEdgeAgainstEdge) {
  // A's top edge runs along z at height sqrt 2, B's bottom edge along x 0.1 lower.
  const BodyShape b = box(Vec3(1, 1, 1));
  const ContactManifold m = collide(b, at(Vec3::Zero(), about(M_PI / 4, Vec3::UnitZ())), b,
                                    at(Vec3(0.05, 2 * kSqrt2 - 0.1, -0.03), about(M_PI / 4, Vec3::UnitX())));
  ASSERT_EQ(m.count, 1);
  expectPoint(m.points[0], Vec3::UnitY(), -0.1);
  EXPECT_LT((m.points[0].pointA - Vec3(0, kSqrt2, -0.03)).norm(), 1e-9);
  EXPECT_LT((m.points[0].pointB - Vec3(0, kSqrt2 - 0.1, -0.03)).norm(), 1e-9);
}

TEST(RigidShapesCollide, HullEdgeAgainstHullEdge) {
  // A tetrahedron with its top edge along x at y = 1 and its bottom edge along z at y = -1; a
  // second one above it, its bottom edge across the first's top edge, 0.1 m lower: the edge pair
  // is the axis of least penetration (y), not any of the inclined faces.
  BodyShape tetra;
  tetra.kind = BodyShapeKind::ConvexHull;
  tetra.hull = std::make_shared<const ConvexHull>(
      buildConvexHull({Vec3(-1, 1, 0), Vec3(1, 1, 0), Vec3(0, -1, -1), Vec3(0, -1, 1)}, "tetrahedron"));
  ASSERT_EQ(tetra.hull->faceNormals.size(), 4u);
  const ContactManifold m = collide(tetra, at(Vec3::Zero()), tetra, at(Vec3(0.1, 1.9, 0.2)));
  ASSERT_EQ(m.count, 1);
  expectPoint(m.points[0], Vec3::UnitY(), -0.1);
  EXPECT_LT((m.points[0].pointA - Vec3(0.1, 1, 0)).norm(), 1e-9);
  EXPECT_LT((m.points[0].pointB - Vec3(0.1, 0.9, 0)).norm(), 1e-9);
  // Moved apart beyond the margin: nothing; within it: the same pair, separated.
  EXPECT_EQ(collide(tetra, at(Vec3::Zero()), tetra, at(Vec3(0.1, 2.2, 0.2)), 0.1).count, 0);
  const ContactManifold near = collide(tetra, at(Vec3::Zero()), tetra, at(Vec3(0.1, 2.05, 0.2)), 0.1);
  ASSERT_EQ(near.count, 1);
  expectPoint(near.points[0], Vec3::UnitY(), 0.05);
}

TEST(RigidShapesCollide, PlaneContacts) {
  const BodyShape ground = plane();
  // A box resting flat: its 4 bottom corners.
  const ContactManifold flat = collide(ground, at(Vec3::Zero()), box(Vec3(1, 1, 1)), at(Vec3(0, 0.99, 0)));
  ASSERT_EQ(flat.count, 4);
  for (int i = 0; i < 4; ++i) expectPoint(flat.points[i], Vec3::UnitY(), -0.01);
  // A box on one edge: the edge's 2 end points.
  const ContactManifold edge = collide(ground, at(Vec3::Zero()), box(Vec3(1, 1, 1)),
                                       at(Vec3(0, kSqrt2 - 0.01, 0), about(M_PI / 4, Vec3::UnitZ())));
  ASSERT_EQ(edge.count, 2);
  for (int i = 0; i < 2; ++i) {
    expectPoint(edge.points[i], Vec3::UnitY(), -0.01);
    EXPECT_NEAR(std::abs(edge.points[i].pointB.z()), 1.0, 1e-12);
  }
  // A tilted plane (normal (1,1,0)/sqrt 2 through (1,0,0)) and a sphere, a capsule lying on it.
  const Collider tilted = Collider::plane(Vec3(1, 0, 0), Vec3(1, 1, 0));
  const Vec3 n = Vec3(1, 1, 0).normalized();
  const ContactManifold s = collide(ground, tilted.pose, sphere(0.5), at(Vec3(1, 0, 0) + 0.4 * n));
  ASSERT_EQ(s.count, 1);
  expectPoint(s.points[0], n, -0.1);
  const ContactManifold c =
      collide(ground, at(Vec3::Zero()), capsule(0.25, 1.0), at(Vec3(0, 0.2, 0), about(M_PI / 2, Vec3::UnitX())));
  ASSERT_EQ(c.count, 2);
  for (int i = 0; i < 2; ++i) expectPoint(c.points[i], Vec3::UnitY(), -0.05);
  // Hull and plane: like the box.
  EXPECT_EQ(collide(ground, at(Vec3::Zero()), hullOfBox(Vec3(1, 1, 1)), at(Vec3(0, 0.99, 0))).count, 4);
  expectConsistent(flat);
  expectConsistent(s);
}

TEST(RigidShapesCollide, SeparatedBeyondTheMarginGiveNothing) {
  const double margin = 0.05;
  EXPECT_EQ(collide(box(Vec3(1, 1, 1)), at(Vec3::Zero()), box(Vec3(1, 1, 1)), at(Vec3(0.3, 2.06, 0)), margin).count, 0);
  EXPECT_EQ(collide(box(Vec3(1, 1, 1)), at(Vec3::Zero()), sphere(0.5), at(Vec3(1.35, 1.35, 1.35)), margin).count, 0);
  EXPECT_EQ(collide(box(Vec3(1, 1, 1)), at(Vec3::Zero()), capsule(0.5, 1), at(Vec3(0, 0, 1.6), about(1, Vec3::UnitZ())),
                    margin)
                .count,
            0);
  EXPECT_EQ(collide(capsule(0.5, 1), at(Vec3::Zero()), capsule(0.5, 1), at(Vec3(1.1, 0, 0)), margin).count, 0);
  EXPECT_EQ(collide(plane(), at(Vec3::Zero()), box(Vec3(1, 1, 1)), at(Vec3(0, 1.06, 0))).count, 0);
  EXPECT_EQ(collide(hullOfBox(Vec3(1, 1, 1)), at(Vec3::Zero()), hullOfBox(Vec3(1, 1, 1)),
                    at(Vec3(2.1, 2.1, 0), about(0.3, Vec3::UnitZ())), margin)
                .count,
            0);
  // Within the margin: points with a positive separation.
  const ContactManifold near =
      collide(box(Vec3(1, 1, 1)), at(Vec3::Zero()), box(Vec3(1, 1, 1)), at(Vec3(0.3, 2.03, 0)), margin);
  ASSERT_EQ(near.count, 4);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(near.points[i].separation, 0.03, 1e-12);
}

TEST(RigidShapesCollide, HullsCollideLikeTheBoxesTheyAre) {
  const Vec3 half(1, 0.5, 0.75);
  const BodyShape hb = hullOfBox(half), bb = box(half);
  const ColliderPose pa = at(Vec3(0.1, 0.2, 0.3), about(0.3, Vec3(1, 2, 3)));
  const ColliderPose pb =
      at(Vec3(0.1, 0.2, 0.3) + pa.rotation * Vec3(0.4, 0.97, 0.2), pa.rotation * about(0.2, Vec3::UnitY()));
  const ContactManifold boxes = collide(bb, pa, bb, pb), hulls = collide(hb, pa, hb, pb),
                        mixed = collide(bb, pa, hb, pb);
  ASSERT_EQ(boxes.count, 4);
  ASSERT_EQ(hulls.count, 4);
  ASSERT_EQ(mixed.count, 4);
  double lowBoxes = 0.0, lowHulls = 0.0, lowMixed = 0.0;
  for (int i = 0; i < 4; ++i) {
    lowBoxes = std::min(lowBoxes, boxes.points[i].separation);
    lowHulls = std::min(lowHulls, hulls.points[i].separation);
    lowMixed = std::min(lowMixed, mixed.points[i].separation);
    EXPECT_LT((hulls.points[i].normal - pa.rotation * Vec3::UnitY()).norm(), 1e-9);
  }
  EXPECT_NEAR(lowHulls, lowBoxes, 1e-9);
  EXPECT_NEAR(lowMixed, lowBoxes, 1e-9);
  expectConsistent(hulls);
  // A sphere against the hull: as against the box.
  const ContactManifold hs = collide(hb, at(Vec3::Zero()), sphere(0.5), at(Vec3(1.3, 0.6, 0)));
  ASSERT_EQ(hs.count, 1);
  expectPoint(hs.points[0], Vec3(0.3, 0.1, 0).normalized(), std::sqrt(0.1) - 0.5);
}

// Boxes take shortcuts in the separating axis test (the lowest vertex along an axis from the signs
// of its coordinates; edge pairs pre-tested by one product, collide.cpp); a hull of the same
// corners takes the generic loops. Over random poses (touching, deep, edge on edge, within the
// margin) both give the same manifold.
TEST(RigidShapesCollide, BoxShortcutsAgreeWithTheGenericHullPath) {
  std::mt19937 random(17);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const Vec3 halfA(0.5, 0.3, 0.4), halfB(0.35, 0.45, 0.25);
  const BodyShape boxA = box(halfA), boxB = box(halfB), hullA = hullOfBox(halfA), hullB = hullOfBox(halfB);
  int touching = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const ColliderPose pa = at(Vec3(unit(random), unit(random), unit(random)) * 0.1,
                               about(3.0 * unit(random), Vec3(unit(random), unit(random), unit(random) + 2.0)));
    const ColliderPose pb = at(pa.position + 0.9 * Vec3(unit(random), unit(random), unit(random)),
                               about(3.0 * unit(random), Vec3(unit(random) + 2.0, unit(random), unit(random))));
    const ContactManifold boxes = collide(boxA, pa, boxB, pb, 0.05), hulls = collide(hullA, pa, hullB, pb, 0.05);
    ASSERT_EQ(boxes.count, hulls.count) << trial;
    touching += boxes.count > 0;
    // The same points, perhaps in another order (the hull's faces list their corners in its own).
    for (int i = 0; i < boxes.count; ++i) {
      double nearest = std::numeric_limits<double>::infinity();
      int match = 0;
      for (int j = 0; j < hulls.count; ++j) {
        const double d = (boxes.points[i].pointA - hulls.points[j].pointA).norm();
        if (d < nearest) nearest = d, match = j;
      }
      EXPECT_LT(nearest, 1e-12) << trial;
      EXPECT_LT((boxes.points[i].pointB - hulls.points[match].pointB).norm(), 1e-12) << trial;
      EXPECT_LT((boxes.points[i].normal - hulls.points[match].normal).norm(), 1e-12) << trial;
      EXPECT_NEAR(boxes.points[i].separation, hulls.points[match].separation, 1e-12) << trial;
    }
  }
  EXPECT_GT(touching, 100);  // the poses do meet
}

TEST(RigidShapesCollide, SwappingFlipsTheManifold) {
  const BodyShape shapes[] = {sphere(0.5), capsule(0.4, 0.6), box(Vec3(0.5, 0.4, 0.6)), hullOfBox(Vec3(0.6, 0.5, 0.4)),
                              meshBox(Vec3(0.5, 0.5, 0.5))};
  const ColliderPose pa = at(Vec3(0.1, -0.2, 0.05), about(0.4, Vec3(1, 2, 0)));
  const ColliderPose pb = at(Vec3(0.3, 0.55, -0.1), about(-0.7, Vec3(0, 1, 3)));
  int touching = 0;
  for (const BodyShape& a : shapes)
    for (const BodyShape& b : shapes) {
      const ContactManifold ab = collide(a, pa, b, pb, 0.01), ba = collide(b, pb, a, pa, 0.01);
      ASSERT_EQ(ab.count, ba.count) << bodyShapeKindName(a.kind) << " " << bodyShapeKindName(b.kind);
      touching += ab.count > 0;
      for (int i = 0; i < ab.count; ++i) {
        EXPECT_EQ(ab.points[i].pointA, ba.points[i].pointB);
        EXPECT_EQ(ab.points[i].pointB, ba.points[i].pointA);
        EXPECT_EQ(ab.points[i].normal, -ba.points[i].normal);
        EXPECT_EQ(ab.points[i].separation, ba.points[i].separation);
      }
      expectConsistent(ab);
    }
  EXPECT_EQ(touching, 25);
  // Planes: with the plane on either side.
  const ContactManifold pb1 = collide(plane(), at(Vec3::Zero()), box(Vec3(1, 1, 1)), at(Vec3(0, 0.99, 0)));
  const ContactManifold pb2 = collide(box(Vec3(1, 1, 1)), at(Vec3(0, 0.99, 0)), plane(), at(Vec3::Zero()));
  ASSERT_EQ(pb2.count, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(pb1.points[i].normal, -pb2.points[i].normal);
  EXPECT_EQ(collide(plane(), at(Vec3::Zero()), plane(), at(Vec3::Zero())).count, 0);
}

TEST(RigidShapesCollide, SeparationAgreesWithShapeDistance) {
  const BodyShape shapes[] = {box(Vec3(1, 0.7, 0.5)), hullOfBox(Vec3(0.8, 0.6, 0.9)), capsule(0.5, 0.7), sphere(0.8)};
  const ColliderPose pose = at(Vec3(0.2, -0.1, 0.3), about(0.5, Vec3(2, 1, -1)));
  for (const BodyShape& s : shapes) {
    for (const Vec3& centre : {Vec3(1.2, 0.3, 0.1), Vec3(0.9, 0.9, 0.4), Vec3(0.1, 0.2, 0.0), Vec3(-1.0, -0.8, 0.5)}) {
      Vec3 normal;
      const double expected = shapeDistance(s, pose, centre, normal) - 0.3;
      const ContactManifold m = collide(s, pose, sphere(0.3), at(centre), 1.0);
      ASSERT_EQ(m.count, 1) << bodyShapeKindName(s.kind);
      EXPECT_NEAR(m.points[0].separation, expected, 1e-9) << bodyShapeKindName(s.kind);
    }
  }
  // Box on box: each point's separation is A's signed distance at B's point.
  const BodyShape a = box(Vec3(1, 0.5, 1));
  const ColliderPose pa = at(Vec3(0, 0, 0), about(0.2, Vec3(1, 0, 1)));
  const ContactManifold m =
      collide(a, pa, box(Vec3(0.4, 0.4, 0.4)), at(pa.rotation * Vec3(0.1, 0.88, 0.1), pa.rotation));
  ASSERT_EQ(m.count, 4);
  for (int i = 0; i < 4; ++i) {
    Vec3 normal;
    EXPECT_NEAR(shapeDistance(a, pa, m.points[i].pointB, normal), m.points[i].separation, 1e-9);
  }
}

TEST(RigidShapesCollide, MeshAgainstShapesThroughItsGrid) {
  const BodyShape mesh = meshBox(Vec3(1, 1, 1));
  const double cell = mesh.grid->cellSize;
  // A sphere on the top face.
  const ContactManifold s = collide(mesh, at(Vec3::Zero()), sphere(0.5), at(Vec3(0.1, 1.3, -0.2)));
  ASSERT_GE(s.count, 1);
  double lowest = 1.0;
  for (int i = 0; i < s.count; ++i) lowest = std::min(lowest, s.points[i].separation);
  EXPECT_NEAR(lowest, -0.2, 0.1 * cell);
  // A box resting on it: points spread over the bottom face, depth about 0.01.
  const ContactManifold b = collide(mesh, at(Vec3::Zero()), box(Vec3(0.5, 0.5, 0.5)), at(Vec3(0.2, 1.49, 0.1)));
  ASSERT_EQ(b.count, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(b.points[i].separation, -0.01, 0.1 * cell);
    EXPECT_GT(b.points[i].normal.y(), 0.99);
  }
  // On a plane: its 4 bottom vertices.
  const ContactManifold p = collide(plane(), at(Vec3::Zero()), mesh, at(Vec3(0, 0.98, 0)));
  ASSERT_EQ(p.count, 4);
  for (int i = 0; i < 4; ++i) expectPoint(p.points[i], Vec3::UnitY(), -0.02);
  // Far apart: nothing.
  EXPECT_EQ(collide(mesh, at(Vec3::Zero()), box(Vec3(0.5, 0.5, 0.5)), at(Vec3(0.2, 1.6, 0.1)), 0.05).count, 0);
  // Mesh against mesh: vertices of each inside the other (here one corner of each: the other
  // corners of the overlap are edge crossings, which vertex sampling does not see).
  const ContactManifold mm = collide(mesh, at(Vec3::Zero()), mesh, at(Vec3(0.5, 1.98, 0.5)));
  ASSERT_EQ(mm.count, 2);
  for (int i = 0; i < mm.count; ++i) EXPECT_NEAR(mm.points[i].separation, -0.02, 0.1 * cell);
}

TEST(RigidShapesCollide, AnalyticCasesMovedAsAWholeGiveTheMovedManifold) {
  // The analytic cases above, with both poses moved by one rigid motion G: the same depths, the
  // normals turned by G, the points moved by G (compared as sorted midpoints, since the order of
  // two shapes of one kind follows their poses).
  struct Case {
    BodyShape a, b;
    ColliderPose pa, pb;
  };
  const Case cases[] = {
      {capsule(0.5, 1.0), capsule(0.5, 1.0), at(Vec3::Zero()), at(Vec3(0.9, 0, 0), about(M_PI / 2, Vec3::UnitX()))},
      {capsule(0.5, 1.0), capsule(0.5, 1.0), at(Vec3::Zero()), at(Vec3(0.9, 0.5, 0))},
      {box(Vec3(1, 0.5, 1)), box(Vec3(0.5, 0.5, 0.5)), at(Vec3::Zero()), at(Vec3(0.3, 0.99, 0.2))},
      {box(Vec3(1, 1, 1)), box(Vec3(1, 1, 1)), at(Vec3::Zero(), about(M_PI / 4, Vec3::UnitZ())),
       at(Vec3(0.05, 2 * kSqrt2 - 0.1, -0.03), about(M_PI / 4, Vec3::UnitX()))},
      {box(Vec3(2, 1, 2)), capsule(0.5, 1.0), at(Vec3::Zero()), at(Vec3(0, 1.4, 0), about(M_PI / 2, Vec3::UnitZ()))},
      {box(Vec3(1, 1, 1)), sphere(0.5), at(Vec3::Zero()), at(Vec3(1.3, 1.3, 0))},
      {hullOfBox(Vec3(1, 0.5, 1)), sphere(0.5), at(Vec3::Zero()), at(Vec3(0.2, 0.9, 0.1))},
  };
  const Quat g = about(0.8, Vec3(1, 2, 3));
  const Vec3 shift(3, -2, 5);
  auto move = [&](const ColliderPose& p) { return at(g * p.position + shift, g * p.rotation); };
  for (const Case& c : cases) {
    const ContactManifold m1 = collide(c.a, c.pa, c.b, c.pb), m2 = collide(c.a, move(c.pa), c.b, move(c.pb));
    ASSERT_GT(m1.count, 0);
    ASSERT_EQ(m1.count, m2.count) << bodyShapeKindName(c.a.kind) << " " << bodyShapeKindName(c.b.kind);
    std::vector<std::array<double, 7>> r1, r2;  // separation, midpoint, normal
    for (int i = 0; i < m1.count; ++i) {
      const Vec3 mid1 = g * (0.5 * (m1.points[i].pointA + m1.points[i].pointB)) + shift;
      const Vec3 n1 = g * m1.points[i].normal;
      const Vec3 mid2 = 0.5 * (m2.points[i].pointA + m2.points[i].pointB);
      const Vec3& n2 = m2.points[i].normal;
      r1.push_back({std::round(m1.points[i].separation * 1e6), std::round(mid1.x() * 1e6), std::round(mid1.y() * 1e6),
                    std::round(mid1.z() * 1e6), std::round(n1.x() * 1e6), std::round(n1.y() * 1e6),
                    std::round(n1.z() * 1e6)});
      r2.push_back({std::round(m2.points[i].separation * 1e6), std::round(mid2.x() * 1e6), std::round(mid2.y() * 1e6),
                    std::round(mid2.z() * 1e6), std::round(n2.x() * 1e6), std::round(n2.y() * 1e6),
                    std::round(n2.z() * 1e6)});
    }
    std::sort(r1.begin(), r1.end());
    std::sort(r2.begin(), r2.end());
    for (int i = 0; i < m1.count; ++i)
      for (int k = 0; k < 7; ++k) EXPECT_NEAR(r1[i][k], r2[i][k], 1.0) << bodyShapeKindName(c.a.kind) << " " << k;
  }
}

TEST(RigidShapesCollide, RandomAndDegeneratePosesGiveFiniteConsistentManifolds) {
  // Every pair at random poses, and at the same pose (coincident centres, parallel axes): finite
  // points, unit normals, separation = (pointB - pointA) . normal, at most 4 points, and a
  // separation never above the margin.
  const BodyShape shapes[] = {sphere(0.5),
                              capsule(0.3, 0.6),
                              box(Vec3(0.5, 0.3, 0.4)),
                              hullOfBox(Vec3(0.4, 0.5, 0.3)),
                              meshBox(Vec3(0.5, 0.4, 0.3)),
                              plane()};
  std::mt19937 random(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto randomPose = [&] {
    return at(Vec3(u(random), u(random), u(random)), Quat(u(random), u(random), u(random), u(random)).normalized());
  };
  const double margin = 0.05;
  int touching = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const ColliderPose pa = randomPose();
    const ColliderPose pb = trial == 0 ? pa : randomPose();
    for (const BodyShape& a : shapes)
      for (const BodyShape& b : shapes) {
        const ContactManifold m = collide(a, pa, b, pb, margin);
        ASSERT_LE(m.count, kMaxManifoldPoints);
        touching += m.count > 0;
        for (int i = 0; i < m.count; ++i) {
          const ShapeContactPoint& p = m.points[i];
          ASSERT_TRUE(p.pointA.allFinite() && p.pointB.allFinite() && p.normal.allFinite() &&
                      std::isfinite(p.separation))
              << bodyShapeKindName(a.kind) << " " << bodyShapeKindName(b.kind) << " trial " << trial;
          EXPECT_NEAR(p.normal.norm(), 1.0, 1e-9);
          EXPECT_NEAR((p.pointB - p.pointA).dot(p.normal), p.separation, 1e-9);
          EXPECT_LT(p.separation, margin);
        }
      }
  }
  EXPECT_GT(touching, 400);
}

TEST(RigidShapesCollide, BoundsContainTheShape) {
  const Quat q = about(0.7, Vec3(1, 2, 3));
  const ColliderPose pose = at(Vec3(1, 2, 3), q);
  const BodyShape shapes[] = {sphere(0.5), capsule(0.4, 0.6), box(Vec3(0.5, 0.4, 0.6)), hullOfBox(Vec3(0.6, 0.5, 0.4)),
                              meshBox(Vec3(0.5, 0.5, 0.5))};
  for (const BodyShape& s : shapes) {
    Vec3 lower, upper;
    shapeBounds(s, pose, 0.1, lower, upper);
    // Points on the surface (shapeDistance ~ 0 along rays from the centre) stay inside the box.
    for (int i = 0; i < 200; ++i) {
      const Vec3 dir =
          Vec3(std::sin(i * 1.3) * std::cos(i * 0.7), std::cos(i * 1.3), std::sin(i * 1.3) * std::sin(i * 0.7))
              .normalized();
      double lo = 0.0, hi = 3.0;
      for (int k = 0; k < 60; ++k) {
        Vec3 n;
        const double mid = 0.5 * (lo + hi);
        (shapeDistance(s, pose, pose.position + mid * dir, n) < 0.0 ? lo : hi) = mid;
      }
      const Vec3 surface = pose.position + lo * dir;
      EXPECT_TRUE((surface.array() >= lower.array() + 0.1 - 1e-6).all() &&
                  (surface.array() <= upper.array() - 0.1 + 1e-6).all())
          << bodyShapeKindName(s.kind);
    }
  }
  // A ground plane is bounded above only.
  Vec3 lower, upper;
  shapeBounds(plane(), at(Vec3(0, 0.5, 0)), 0.1, lower, upper);
  EXPECT_DOUBLE_EQ(upper.y(), 0.6);
  EXPECT_TRUE(std::isinf(lower.y()) && std::isinf(upper.x()));
}

}  // namespace
}  // namespace pliant
