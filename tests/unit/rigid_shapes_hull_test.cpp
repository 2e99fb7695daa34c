// Convex hulls by quickhull (buildConvexHull).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "pliant/error.h"
#include "pliant/rigid_shapes.h"

namespace pliant {
namespace {

// V - E + F = 2 for the merged faces and for the triangles; every directed triangle edge has its
// reverse (closed and consistently oriented).
void expectClosedPolytope(const ConvexHull& hull) {
  const auto v = static_cast<long>(hull.vertices.size());
  const auto f = static_cast<long>(hull.faceNormals.size());
  EXPECT_EQ(v - static_cast<long>(hull.edges.size()) + f, 2);
  std::set<std::pair<std::uint32_t, std::uint32_t>> directed;
  for (const auto& t : hull.triangles)
    for (int k = 0; k < 3; ++k) EXPECT_TRUE(directed.insert({t[k], t[(k + 1) % 3]}).second);
  for (const auto& [a, b] : directed) EXPECT_TRUE(directed.count({b, a}));
  EXPECT_EQ(v - static_cast<long>(directed.size() / 2) + static_cast<long>(hull.triangles.size()), 2);
  EXPECT_EQ(hull.faceStart.size(), hull.faceNormals.size() + 1);
  EXPECT_EQ(hull.triangleFace.size(), hull.triangles.size());
  // Each triangle faces the way of its face's plane, and every vertex is inside every plane.
  for (std::size_t t = 0; t < hull.triangles.size(); ++t) {
    const auto& tri = hull.triangles[t];
    const Vec3 n = (hull.vertices[tri[1]] - hull.vertices[tri[0]]).cross(hull.vertices[tri[2]] - hull.vertices[tri[0]]);
    EXPECT_GT(n.normalized().dot(hull.faceNormals[hull.triangleFace[t]]), 0.999);
  }
}

double outsideDistance(const ConvexHull& hull, const Vec3& p) {
  double worst = -1e300;
  for (std::size_t f = 0; f < hull.faceNormals.size(); ++f)
    worst = std::max(worst, hull.faceNormals[f].dot(p) - hull.faceOffsets[f]);
  return worst;
}

TEST(RigidShapesHull, RandomPointsInACubeAreAllInside) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Vec3> points;
  for (int i = 0; i < 500; ++i) points.push_back(Vec3(u(random), u(random), u(random)) + Vec3(10, 0, -3));
  const ConvexHull hull = buildConvexHull(points, "cloud");
  expectClosedPolytope(hull);
  EXPECT_GT(hull.vertices.size(), 20u);
  for (const Vec3& p : points) EXPECT_LE(outsideDistance(hull, p), 1e-9);
  // Every hull vertex is an input point and lies on some face.
  for (const Vec3& v : hull.vertices) EXPECT_GT(outsideDistance(hull, v), -1e-9);
  for (std::size_t f = 0; f < hull.faceNormals.size(); ++f) EXPECT_NEAR(hull.faceNormals[f].norm(), 1.0, 1e-12);
}

TEST(RigidShapesHull, CubeWithDuplicatesAndCoplanarPointsHasSixFaces) {
  std::vector<Vec3> points;
  for (int i = 0; i < 8; ++i) {
    const Vec3 corner((i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0);
    points.push_back(corner);
    points.push_back(corner);                  // a duplicate
    points.push_back(corner * (1.0 + 1e-14));  // a near duplicate
  }
  std::mt19937 random(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < 200; ++i) {
    Vec3 p(u(random), u(random), u(random));
    points.push_back(0.9 * p);                                    // inside
    p[i % 3] = (i % 2 ? 1.0 : -1.0) * (1.0 + 1e-13 * u(random));  // on a face, within round-off
    points.push_back(p);
  }
  const ConvexHull hull = buildConvexHull(points, "cube");
  EXPECT_EQ(hull.vertices.size(), 8u);
  EXPECT_EQ(hull.faceNormals.size(), 6u);
  EXPECT_EQ(hull.edges.size(), 12u);
  EXPECT_EQ(hull.maxFaceVertices, 4);
  expectClosedPolytope(hull);
  for (std::size_t f = 0; f < 6; ++f) {
    EXPECT_NEAR(hull.faceNormals[f].cwiseAbs().maxCoeff(), 1.0, 1e-12);
    EXPECT_NEAR(hull.faceOffsets[f], 1.0, 1e-12);
    EXPECT_EQ(hull.faceStart[f + 1] - hull.faceStart[f], 4u);
  }
  // Its mass properties are the box's.
  BodyShape shape;
  shape.kind = BodyShapeKind::ConvexHull;
  shape.hull = std::make_shared<const ConvexHull>(hull);
  const MassProperties p = massProperties(shape, 1.0);
  EXPECT_NEAR(p.mass, 8.0, 1e-12);
  EXPECT_NEAR(p.inertia(1, 1), 8.0 / 3.0 * 2.0, 1e-12);
}

TEST(RigidShapesHull, DegenerateInputIsAnErrorNamingTheSource) {
  auto message = [](const std::vector<Vec3>& points) {
    try {
      buildConvexHull(points, "rock.obj");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)}).find("rock.obj"), std::string::npos);
  EXPECT_NE(message({Vec3(1, 2, 3), Vec3(1, 2, 3), Vec3(1, 2, 3), Vec3(1, 2, 3)}).find("coincide"), std::string::npos);
  EXPECT_NE(message({Vec3(0, 0, 0), Vec3(1, 1, 1), Vec3(2, 2, 2), Vec3(3, 3, 3)}).find("collinear"), std::string::npos);
  std::vector<Vec3> flat;
  for (int i = 0; i < 20; ++i) flat.push_back(Vec3(i % 5, 1e-13 * (i % 3), i / 5));
  EXPECT_NE(message(flat).find("coplanar"), std::string::npos);
  EXPECT_NE(message({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, NAN)}).find("not finite"),
            std::string::npos);
}

TEST(RigidShapesHull, PrismCapsAreOneFaceEach) {
  // A 40-sided prism: its caps merge 40 (nearly) coplanar points each into one face; two such
  // prisms resting cap on cap clip one 40-gon against the other.
  std::vector<Vec3> points;
  for (int i = 0; i < 40; ++i) {
    const double phi = 2.0 * 3.141592653589793 * i / 40;
    for (const double y : {-0.5, 0.5})
      points.push_back(Vec3(std::cos(phi), y * (1.0 + 1e-14 * (i % 3)), std::sin(phi)));
    points.push_back(Vec3(0.3 * std::cos(phi), 0.5, 0.3 * std::sin(phi)));  // on the top cap
  }
  const ConvexHull hull = buildConvexHull(points, "prism");
  EXPECT_EQ(hull.vertices.size(), 80u);
  EXPECT_EQ(hull.faceNormals.size(), 42u);
  EXPECT_EQ(hull.maxFaceVertices, 40);
  expectClosedPolytope(hull);
  BodyShape prism;
  prism.kind = BodyShapeKind::ConvexHull;
  prism.hull = std::make_shared<const ConvexHull>(hull);
  ContactManifold m;
  collideShapes(prism, ColliderPose{}, prism,
                ColliderPose{Vec3(0.2, 0.99, 0.0), Quat(Eigen::AngleAxisd(0.05, Vec3::UnitY()))}, 0.0, m);
  ASSERT_EQ(m.count, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(m.points[i].separation, -0.01, 1e-9);
    EXPECT_NEAR(m.points[i].normal.y(), 1.0, 1e-9);
  }
}

TEST(RigidShapesHull, SphereSamplesKeepEveryPoint) {
  // Points on a sphere are all extreme: the hull keeps each one.
  std::vector<Vec3> points;
  const int n = 300;
  for (int i = 0; i < n; ++i) {  // a Fibonacci sphere
    const double y = 1.0 - 2.0 * (i + 0.5) / n;
    const double r = std::sqrt(1.0 - y * y);
    const double phi = 2.399963229728653 * i;
    points.push_back(Vec3(r * std::cos(phi), y, r * std::sin(phi)));
  }
  const ConvexHull hull = buildConvexHull(points, "sphere");
  EXPECT_EQ(hull.vertices.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(hull.triangles.size(), static_cast<std::size_t>(2 * n - 4));
  expectClosedPolytope(hull);
}

}  // namespace
}  // namespace pliant
