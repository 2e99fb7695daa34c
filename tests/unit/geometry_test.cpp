// Unit tests of pliant/geometry.h: the triangle-triangle intersection test (crossing, disjoint,
// touching, sharing a vertex, coplanar, degenerate) and the pair count over a mesh, which must skip
// neighbours and agree with a brute-force count.
#include "pliant/geometry.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "collision/box_grid.h"
#include "pliant/builders.h"
#include "pliant/model.h"

namespace pliant {
namespace {

using Triangle = std::array<ParticleIndex, 3>;

// Every argument order must give the same answer: the test is symmetric in the two triangles and
// does not depend on the order of the corners.
bool intersectAnyOrder(const std::array<Vec3, 3>& a, const std::array<Vec3, 3>& b) {
  const bool expected = trianglesIntersect(a[0], a[1], a[2], b[0], b[1], b[2]);
  EXPECT_EQ(trianglesIntersect(b[0], b[1], b[2], a[0], a[1], a[2]), expected);
  EXPECT_EQ(trianglesIntersect(a[2], a[0], a[1], b[1], b[0], b[2]), expected);
  EXPECT_EQ(trianglesIntersect(b[2], b[1], b[0], a[1], a[2], a[0]), expected);
  return expected;
}

const std::array<Vec3, 3> kFloor = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 0, 1)};

TEST(TrianglesIntersect, CrossingTrianglesIntersect) {
  // A vertical triangle piercing the floor triangle through its interior.
  EXPECT_TRUE(intersectAnyOrder(kFloor, {Vec3(0.2, -0.5, 0.2), Vec3(0.3, 0.5, 0.2), Vec3(0.2, 0.5, 0.3)}));
  // Interlocked like two links of a chain: each passes through the other, no vertex inside.
  EXPECT_TRUE(intersectAnyOrder({Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3(0, 2, 0)},
                                {Vec3(0, 1, -1), Vec3(0, 1, 1), Vec3(0, -1, 0)}));
}

TEST(TrianglesIntersect, DisjointTrianglesDoNot) {
  // Parallel, 1 mm apart.
  EXPECT_FALSE(intersectAnyOrder(kFloor, {Vec3(0, 0.001, 0), Vec3(1, 0.001, 0), Vec3(0, 0.001, 1)}));
  // Their planes cross, the triangles do not (the crossing line misses the floor triangle).
  EXPECT_FALSE(intersectAnyOrder(kFloor, {Vec3(0.8, -0.5, 0.8), Vec3(0.9, 0.5, 0.8), Vec3(0.8, 0.5, 0.9)}));
  // A vertical triangle whose edge passes just beside the floor's hypotenuse.
  EXPECT_FALSE(intersectAnyOrder(kFloor, {Vec3(0.51, -1, 0.51), Vec3(0.51, 1, 0.51), Vec3(2, 0, 2)}));
}

TEST(TrianglesIntersect, TouchingCountsAsIntersecting) {
  // A vertex resting on the floor triangle's interior.
  EXPECT_TRUE(intersectAnyOrder(kFloor, {Vec3(0.2, 0.0, 0.2), Vec3(0.3, 1.0, 0.2), Vec3(0.2, 1.0, 0.3)}));
  // Raised by 1e-9 m it no longer touches.
  EXPECT_FALSE(intersectAnyOrder(kFloor, {Vec3(0.2, 1e-9, 0.2), Vec3(0.3, 1.0, 0.2), Vec3(0.2, 1.0, 0.3)}));
}

TEST(TrianglesIntersect, SharedVertexMeetsThereAndPairCountSkipsIt) {
  // Two triangles of a mesh that share a vertex do meet there: the predicate says so, and the pair
  // count skips such neighbours by design.
  const std::array<Vec3, 3> other = {Vec3(0, 0, 0), Vec3(-1, 0.5, 0), Vec3(0, 0.5, -1)};
  EXPECT_TRUE(intersectAnyOrder(kFloor, other));
  const std::vector<Vec3> positions = {kFloor[0], kFloor[1], kFloor[2], other[1], other[2]};
  const std::vector<Triangle> triangles = {{0, 1, 2}, {0, 3, 4}};
  EXPECT_EQ(countIntersectingTrianglePairs(positions, triangles), 0u);
  // A shared vertex does not hide a real crossing elsewhere from the predicate either.
  EXPECT_TRUE(
      trianglesIntersect(kFloor[0], kFloor[1], kFloor[2], Vec3(0, 0, 0), Vec3(0.5, -0.5, 0.5), Vec3(0.5, 0.5, 0.1)));
}

TEST(TrianglesIntersect, CoplanarTriangles) {
  // Overlapping in the floor plane (edges cross).
  EXPECT_TRUE(intersectAnyOrder(kFloor, {Vec3(0.3, 0, -0.5), Vec3(0.3, 0, 0.5), Vec3(-0.5, 0, 0.3)}));
  // One inside the other: no edges cross.
  EXPECT_TRUE(intersectAnyOrder(kFloor, {Vec3(0.1, 0, 0.1), Vec3(0.3, 0, 0.1), Vec3(0.1, 0, 0.3)}));
  // Side by side in the plane.
  EXPECT_FALSE(intersectAnyOrder(kFloor, {Vec3(0.6, 0, 0.6), Vec3(1.5, 0, 0.6), Vec3(0.6, 0, 1.5)}));
  // Coplanar in a tilted plane (no axis-aligned shortcut).
  // Dyadic coordinates keep the points exactly coplanar in double precision.
  auto at = [](double s, double t) { return Vec3(s, s + t, t); };  // s (1, 1, 0) + t (0, 1, 1)
  EXPECT_TRUE(intersectAnyOrder({at(0, 0), at(1, 0), at(0, 1)}, {at(0.25, 0.25), at(2, 0.25), at(0.25, 2)}));
  EXPECT_FALSE(intersectAnyOrder({at(0, 0), at(1, 0), at(0, 1)}, {at(0.625, 0.625), at(2, 0.625), at(0.625, 2)}));
}

TEST(TrianglesIntersect, DegenerateTriangleActsAsItsSegment) {
  // A zero-area triangle (a segment) piercing the floor, and one lying beside it.
  EXPECT_TRUE(intersectAnyOrder(kFloor, {Vec3(0.2, -1, 0.2), Vec3(0.2, 1, 0.2), Vec3(0.2, 0, 0.2)}));
  EXPECT_FALSE(intersectAnyOrder(kFloor, {Vec3(2, -1, 2), Vec3(2, 1, 2), Vec3(2, 0, 2)}));
}

// Two neighbours of a flat cloth 0.77 m up, side by side (4.4 mm apart in their plane), whose points
// the solver left a rounding (up to 1.2e-12 m) off one plane: one of b's corners counts as on a's
// plane, the others as below it. They were counted as crossing (contact-drape-256 at frame 13).
TEST(TrianglesIntersect, FlatNeighboursARoundingOffTheirPlaneDoNotCross) {
  const std::array<Vec3, 3> a = {Vec3(0.090980392158562962, 0.7685582630421175, -0.29803921568857755),
                                 Vec3(0.084705882350615713, 0.76855826304139618, -0.29176470587639758),
                                 Vec3(0.090980392153381245, 0.76855826304208441, -0.2917647058784813)};
  const std::array<Vec3, 3> b = {Vec3(0.097254901959725706, 0.76855826304159258, -0.2917647058809163),
                                 Vec3(0.090980392148199515, 0.76855826304205133, -0.28549019606838494),
                                 Vec3(0.09725490196347028, 0.76855826304204233, -0.28549019608375309)};
  EXPECT_FALSE(intersectAnyOrder(a, b));
  // A corner within the tolerance of the other's plane still touches where it lies over it.
  const Vec3 over = (a[0] + a[1] + a[2]) / 3.0 + Vec3(0.0, 1e-13, 0.0);
  EXPECT_TRUE(intersectAnyOrder(a, {over, over + Vec3(0.001, 0.005, 0.0), over + Vec3(0.0, 0.005, 0.001)}));
  // An edge all but parallel to a's plane from 3 mm beside the triangle to 3 mm beyond it, one end
  // 7e-13 m above the plane (within the tolerance, 7.7e-13 m here), the other 9e-13 m below it: it
  // crosses the plane over the triangle, 0.44 of the way along (its ends are not over it).
  const Vec3 normal = (a[1] - a[0]).cross(a[2] - a[0]).normalized();
  const Vec3 along = 0.006 * (a[2] - a[1]).cross(normal).normalized().cross(normal);
  const Vec3 middle = (a[0] + a[1] + a[2]) / 3.0;
  // (A zero-area triangle, so that this edge alone decides.)
  const Vec3 start = middle - 0.5 * along + 7e-13 * normal, end = middle + 0.5 * along - 9e-13 * normal;
  EXPECT_TRUE(intersectAnyOrder(a, {start, end, end}));
  // Moved 2.5 mm further back, it crosses the plane beside the triangle.
  EXPECT_FALSE(intersectAnyOrder(a, {start - 0.4 * along, end - 0.4 * along, end - 0.4 * along}));
}

// A flat cloth high above the origin with its heights jittered by a few roundings: no pair crosses,
// wherever the jitter puts points relative to the tolerance.
TEST(CountIntersectingTrianglePairs, FlatClothARoundingOffItsPlaneHasNone) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 40;
  def.sizeX = def.sizeY = 0.25;
  def.origin = Vec3(0.05, 0.77, -0.3);
  const GeneratedObject cloth = addClothGrid(b, def);
  // Half the points exactly on the plane, the others up to 2e-12 m off it (the tolerance is 1e-12
  // of the largest coordinate, 7.7e-13 m here): lines of the grid pass through points on the plane.
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> jitter(-2e-12, 2e-12);
  std::bernoulli_distribution moved(0.5);
  for (int round = 0; round < 20; ++round) {
    std::vector<Vec3> positions = b.model().initialPosition;
    for (Vec3& x : positions)
      if (moved(random)) x.y() += jitter(random);
    EXPECT_EQ(countIntersectingTrianglePairs(positions, cloth.triangles), 0u) << "round " << round;
  }
}

TEST(CountIntersectingTrianglePairs, FlatClothHasNoneAndAFoldedOneThroughItselfHas) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 12;
  const GeneratedObject cloth = addClothGrid(b, def);
  std::vector<Vec3> positions = b.model().initialPosition;
  EXPECT_EQ(countIntersectingTrianglePairs(positions, cloth.triangles), 0u);
  // Fold the far half back over the near half and push it through: z > 0.5 maps to height
  // (z - 0.5) and depth 1 - z, a sheet rising at 45 degrees through the rows below it.
  for (Vec3& x : positions)
    if (x.z() > 0.5) x = Vec3(x.x(), x.z() - 0.5 - 0.2, 1.0 - x.z());
  EXPECT_GT(countIntersectingTrianglePairs(positions, cloth.triangles), 0u);
}

TEST(CountIntersectingTrianglePairs, AgreesWithBruteForceOnARandomSoup) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> coordinate(0.0, 1.0), offset(-0.15, 0.15);
  std::vector<Vec3> positions;
  std::vector<Triangle> triangles;
  for (ParticleIndex t = 0; t < 300; ++t) {
    const Vec3 centre(coordinate(random), coordinate(random), coordinate(random));
    for (int k = 0; k < 3; ++k) positions.push_back(centre + Vec3(offset(random), offset(random), offset(random)));
    triangles.push_back({3 * t, 3 * t + 1, 3 * t + 2});
  }
  std::size_t brute = 0;
  for (std::size_t i = 0; i < triangles.size(); ++i)
    for (std::size_t j = i + 1; j < triangles.size(); ++j) {
      const Triangle &a = triangles[i], &c = triangles[j];
      brute += trianglesIntersect(positions[a[0]], positions[a[1]], positions[a[2]], positions[c[0]], positions[c[1]],
                                  positions[c[2]]);
    }
  EXPECT_GT(brute, 10u);
  EXPECT_EQ(countIntersectingTrianglePairs(positions, triangles), brute);
}

}  // namespace
}  // namespace pliant

// The AVX2 lanes of the surface narrow phase (collision/surface_contacts.cpp) repeat the scalar
// code's arithmetic bit for bit, which holds only while Eigen forms a 3-vector's dot product and
// squared norm as (x x' + y y') + z z' and its cross product component by component as written.
// 10^5 seeded random pairs of very different magnitudes, where the other order of the sum would
// differ in about a quarter of them.
TEST(EigenOrder, DotProductsSumLeftToRightAsTheSurfaceLanesAssume) {
  std::mt19937_64 random(14);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  int otherOrderDiffers = 0;
  for (int i = 0; i < 100000; ++i) {
    const pliant::Vec3 a(unit(random), unit(random), unit(random));
    const pliant::Vec3 b(1e3 * unit(random), unit(random), 1e-3 * unit(random));
    ASSERT_EQ(a.dot(b), (a.x() * b.x() + a.y() * b.y()) + a.z() * b.z());
    ASSERT_EQ(b.squaredNorm(), (b.x() * b.x() + b.y() * b.y()) + b.z() * b.z());
    const pliant::Vec3 c = a.cross(b);
    ASSERT_EQ(c.x(), a.y() * b.z() - a.z() * b.y());
    ASSERT_EQ(c.y(), a.z() * b.x() - a.x() * b.z());
    ASSERT_EQ(c.z(), a.x() * b.y() - a.y() * b.x());
    otherOrderDiffers += a.dot(b) != a.x() * b.x() + (a.y() * b.y() + a.z() * b.z());
  }
  EXPECT_GT(otherOrderDiffers, 10000);  // the test can tell the two orders apart
}

// The AVX2 box lanes of the surface contacts (substep boxes, collision/surface_contacts.cpp) take
// Aabb::add's union as std::min(box, part) and std::max(box, part) per coordinate, blends on the same
// comparisons, so ties between +0 and -0 and NaN come out as in the scalar code. That holds while
// Eigen's cwiseMin and cwiseMax of 3-vectors are those calls; the ties and NaN below tell them from
// the hardware's min and max (which return the second operand on both).
TEST(EigenOrder, BoxUnionIsStdMinAndMaxAsTheBoxLanesAssume) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double values[] = {0.0, -0.0, 1.0, -1.0, nan, 2.5};
  auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  int differsFromHardware = 0;
  for (double first : values)
    for (double second : values) {
      pliant::detail::Aabb box;
      box.min = box.max = pliant::Vec3(first, second, first);
      pliant::detail::Aabb part;
      part.min = part.max = pliant::Vec3(second, first, second);
      box.add(part);
      for (int k = 0; k < 3; ++k) {
        const double a = k == 1 ? second : first, b = k == 1 ? first : second;
        ASSERT_TRUE(same(box.min[k], std::min(a, b))) << a << " " << b;
        ASSERT_TRUE(same(box.max[k], std::max(a, b))) << a << " " << b;
        const double hardwareMin = a < b ? a : b;  // minsd a, b: the second operand unless a < b
        differsFromHardware += !same(box.min[k], hardwareMin);
      }
    }
  EXPECT_GT(differsFromHardware, 0);  // the test tells std::min from the hardware's order
}
