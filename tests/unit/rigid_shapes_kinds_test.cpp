// Shape kinds and the shapes of colliders (include/pliant/rigid_shapes.h).
#include <gtest/gtest.h>

#include <string>

#include "pliant/rigid_shapes.h"

namespace pliant {
namespace {

TEST(RigidShapesKinds, ShapeFromColliderKeepsTheGeometry) {
  const BodyShape box = shapeFromCollider(Collider::box(Vec3(1, 2, 3), Vec3(0.5, 0.25, 2.0)));
  EXPECT_EQ(box.kind, BodyShapeKind::Box);
  EXPECT_EQ(box.halfExtents, Vec3(0.5, 0.25, 2.0));
  const BodyShape capsule = shapeFromCollider(Collider::capsule(Vec3(0, -1, 0), Vec3(0, 1, 0), 0.3));
  EXPECT_EQ(capsule.kind, BodyShapeKind::Capsule);
  EXPECT_DOUBLE_EQ(capsule.radius, 0.3);
  EXPECT_DOUBLE_EQ(capsule.halfHeight, 1.0);
  EXPECT_EQ(shapeFromCollider(Collider::sphere(Vec3::Zero(), 2.0)).kind, BodyShapeKind::Sphere);
  EXPECT_EQ(shapeFromCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY())).kind, BodyShapeKind::Plane);
  EXPECT_EQ(std::string(bodyShapeKindName(BodyShapeKind::ConvexHull)), "convex hull");
}

}  // namespace
}  // namespace pliant
