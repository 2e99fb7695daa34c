// Mass properties of body shapes: closed forms, exact polyhedral integration, principal axes.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "pliant/error.h"
#include "pliant/rigid_shapes.h"
#include "rigid_shapes_test_meshes.h"

namespace pliant {
namespace {

constexpr double kPi = std::numbers::pi;

double relativeError(const Mat3& a, const Mat3& b) { return (a - b).norm() / b.norm(); }

TEST(RigidShapesMass, SphereClosedForm) {
  BodyShape s;
  s.kind = BodyShapeKind::Sphere;
  s.radius = 0.5;
  const MassProperties p = massProperties(s, 1000.0);
  const double m = 1000.0 * 4.0 / 3.0 * kPi * 0.125;
  EXPECT_NEAR(p.mass, m, 1e-12 * m);
  EXPECT_EQ(p.centreOfMass, Vec3::Zero());
  EXPECT_LT(relativeError(p.inertia, Mat3::Identity() * 0.4 * m * 0.25), 1e-14);
}

TEST(RigidShapesMass, BoxClosedFormAndItsMeshAgreeExactly) {
  BodyShape s;
  s.kind = BodyShapeKind::Box;
  s.halfExtents = Vec3(0.5, 1.0, 1.5);  // 1 x 2 x 3 m
  const MassProperties p = massProperties(s, 2.0);
  EXPECT_NEAR(p.mass, 12.0, 1e-12);
  const Mat3 expected = Vec3(12.0 / 12.0 * (4 + 9), 12.0 / 12.0 * (1 + 9), 12.0 / 12.0 * (1 + 4)).asDiagonal();
  EXPECT_LT(relativeError(p.inertia, expected), 1e-14);
  const test::TriangleMesh mesh = test::boxMesh(s.halfExtents);
  const MassProperties q = massProperties(mesh.vertices, mesh.triangles, 2.0, "box mesh");
  EXPECT_NEAR(q.mass, p.mass, 1e-12 * p.mass);
  EXPECT_LT(q.centreOfMass.norm(), 1e-14);
  EXPECT_LT(relativeError(q.inertia, p.inertia), 1e-12);
}

TEST(RigidShapesMass, CapsuleClosedFormMatchesAFineMesh) {
  BodyShape s;
  s.kind = BodyShapeKind::Capsule;
  s.radius = 0.5;
  s.halfHeight = 0.5;
  const MassProperties p = massProperties(s, 1.0);
  const double volume = kPi * 0.25 * 1.0 + 4.0 / 3.0 * kPi * 0.125;
  EXPECT_NEAR(p.mass, volume, 1e-12);
  EXPECT_DOUBLE_EQ(p.inertia(0, 0), p.inertia(2, 2));
  // The tessellation converges as the square of the angle step: 128 x 2*32 is within ~0.1%, where a
  // cap's parallel-axis term taken about the wrong point moves the transverse moment by ~10%.
  const test::TriangleMesh mesh = test::capsuleMesh(0.5, 0.5, 128, 32);
  const MassProperties q = massProperties(mesh.vertices, mesh.triangles, 1.0, "capsule mesh");
  EXPECT_NEAR(q.mass / p.mass, 1.0, 2e-3);
  // Normalised by mass, the tessellation deficit mostly cancels.
  EXPECT_NEAR(q.inertia(0, 0) / q.mass / (p.inertia(0, 0) / p.mass), 1.0, 1e-3);
  EXPECT_NEAR(q.inertia(1, 1) / q.mass / (p.inertia(1, 1) / p.mass), 1.0, 1e-3);
  // With no cylinder a capsule is a sphere.
  s.halfHeight = 0.0;
  BodyShape sphere;
  sphere.radius = 0.5;
  EXPECT_LT(relativeError(massProperties(s, 3.0).inertia, massProperties(sphere, 3.0).inertia), 1e-14);
}

TEST(RigidShapesMass, IcosphereAgreesWithItsOwnPolyhedron) {
  const test::TriangleMesh mesh = test::icosphere(1.0, 3);
  const MassProperties p = massProperties(mesh.vertices, mesh.triangles, 1.0, "icosphere");
  // Its volume as pyramids from the centre: area times the face plane's distance over 3.
  double volume = 0.0;
  for (const auto& t : mesh.triangles) {
    const Vec3 a = mesh.vertices[t[0]], b = mesh.vertices[t[1]], c = mesh.vertices[t[2]];
    const Vec3 n = (b - a).cross(c - a);
    volume += n.norm() / 2.0 * n.normalized().dot(a) / 3.0;
  }
  EXPECT_NEAR(p.mass, volume, 1e-12 * volume);
  EXPECT_LT(p.centreOfMass.norm(), 1e-14);
  // Icosahedral symmetry makes the inertia isotropic; inscribed in the unit sphere it lies just
  // below the ball's 2/5 m r^2.
  EXPECT_LT(relativeError(p.inertia, Mat3::Identity() * p.inertia.trace() / 3.0), 1e-12);
  const double perMass = p.inertia(0, 0) / p.mass;
  EXPECT_LT(perMass, 0.4);
  EXPECT_GT(perMass, 0.4 * 0.98);
  EXPECT_NEAR(p.mass, 4.0 / 3.0 * kPi, 0.02 * 4.0 / 3.0 * kPi);
}

TEST(RigidShapesMass, OffsetRotatedMeshMovesTheCentreAndRotatesTheInertia) {
  const Vec3 half(0.3, 0.7, 1.1);
  const Quat rotation = Quat(Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()));
  const Vec3 offset(5.0, -3.0, 12.0);
  const test::TriangleMesh box = test::boxMesh(half);
  const test::TriangleMesh moved = test::transformed(box, rotation, offset);
  const MassProperties p = massProperties(box.vertices, box.triangles, 500.0, "box");
  const MassProperties q = massProperties(moved.vertices, moved.triangles, 500.0, "moved box");
  EXPECT_NEAR(q.mass, p.mass, 1e-12 * p.mass);
  EXPECT_LT((q.centreOfMass - offset).norm(), 1e-12);
  const Mat3 r = rotation.toRotationMatrix();
  EXPECT_LT(relativeError(q.inertia, r * p.inertia * r.transpose()), 1e-12);
}

TEST(RigidShapesMass, TwoBoxesFollowTheParallelAxisTheorem) {
  // One mesh of two separate boxes: its inertia about the common centre is the sum of each box's
  // own plus m (|d|^2 1 - d d^T) for its offset d.
  const Vec3 h1(0.5, 0.5, 0.5), h2(0.25, 1.0, 0.5);
  const Vec3 c1(-1.0, 0.2, 0.0), c2(2.0, -0.4, 1.0);
  test::TriangleMesh both = test::transformed(test::boxMesh(h1), Quat::Identity(), c1);
  const test::TriangleMesh second = test::transformed(test::boxMesh(h2), Quat::Identity(), c2);
  const auto base = static_cast<std::uint32_t>(both.vertices.size());
  both.vertices.insert(both.vertices.end(), second.vertices.begin(), second.vertices.end());
  for (auto t : second.triangles) both.triangles.push_back({t[0] + base, t[1] + base, t[2] + base});
  const MassProperties p = massProperties(both.vertices, both.triangles, 1.0, "two boxes");
  BodyShape b1, b2;
  b1.kind = b2.kind = BodyShapeKind::Box;
  b1.halfExtents = h1;
  b2.halfExtents = h2;
  const MassProperties p1 = massProperties(b1, 1.0), p2 = massProperties(b2, 1.0);
  EXPECT_NEAR(p.mass, p1.mass + p2.mass, 1e-12);
  const Vec3 centre = (p1.mass * c1 + p2.mass * c2) / (p1.mass + p2.mass);
  EXPECT_LT((p.centreOfMass - centre).norm(), 1e-12);
  auto shifted = [](const MassProperties& own, const Vec3& d) {
    return Mat3(own.inertia + own.mass * (d.squaredNorm() * Mat3::Identity() - d * d.transpose()));
  };
  EXPECT_LT(relativeError(p.inertia, shifted(p1, c1 - centre) + shifted(p2, c2 - centre)), 1e-12);
}

TEST(RigidShapesMass, BadMeshesAreRefusedNamingTheSource) {
  test::TriangleMesh box = test::boxMesh(Vec3(1, 1, 1));
  auto message = [](const test::TriangleMesh& m) {
    try {
      massProperties(m.vertices, m.triangles, 1.0, "crate.obj");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  test::TriangleMesh open = box;
  open.triangles.pop_back();
  EXPECT_NE(message(open).find("crate.obj"), std::string::npos);
  EXPECT_NE(message(open).find("closed"), std::string::npos);
  test::TriangleMesh flippedOne = box;
  std::swap(flippedOne.triangles[3][1], flippedOne.triangles[3][2]);
  EXPECT_NE(message(flippedOne).find("same direction"), std::string::npos);
  test::TriangleMesh inward = box;
  for (auto& t : inward.triangles) std::swap(t[1], t[2]);
  EXPECT_NE(message(inward).find("positive volume"), std::string::npos);
  test::TriangleMesh flat = box;
  for (Vec3& v : flat.vertices) v.z() = 0.0;
  EXPECT_NE(message(flat).find("positive volume"), std::string::npos);
  test::TriangleMesh badIndex = box;
  badIndex.triangles[0][0] = 99;
  EXPECT_NE(message(badIndex).find("vertex 99"), std::string::npos);
  BodyShape plane;
  plane.kind = BodyShapeKind::Plane;
  EXPECT_THROW(massProperties(plane, 1.0), Error);
  EXPECT_THROW(massProperties(BodyShape{}, -1.0), Error);
}

TEST(RigidShapesMass, PrincipalInertiaIsAProperRotation) {
  const Quat rotation = Quat(Eigen::AngleAxisd(1.1, Vec3(-1, 0.5, 2).normalized()));
  const Mat3 r = rotation.toRotationMatrix();
  const Mat3 inertia = r * Vec3(3.0, 1.0, 2.0).asDiagonal() * r.transpose();
  const PrincipalInertia p = principalInertia(inertia);
  EXPECT_LT((p.moments - Vec3(1.0, 2.0, 3.0)).norm(), 1e-12);
  const Mat3 axes = p.rotation.toRotationMatrix();
  EXPECT_NEAR(axes.determinant(), 1.0, 1e-12);
  EXPECT_LT(relativeError(axes * p.moments.asDiagonal() * axes.transpose(), inertia), 1e-12);
  // A mirrored eigenbasis (det -1) still comes back as a rotation.
  const PrincipalInertia diagonal = principalInertia(Vec3(1.0, 2.0, 3.0).asDiagonal());
  EXPECT_NEAR(diagonal.rotation.toRotationMatrix().determinant(), 1.0, 1e-12);
}

}  // namespace
}  // namespace pliant
