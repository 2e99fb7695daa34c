// Shape kinds, shapes of colliders, signed distance to a point and bounding boxes.
#include <cmath>
#include <limits>

#include "pliant/error.h"
#include "pliant/rigid_shapes.h"

namespace pliant {

const char* bodyShapeKindName(BodyShapeKind kind) {
  switch (kind) {
    case BodyShapeKind::Sphere:
      return "sphere";
    case BodyShapeKind::Box:
      return "box";
    case BodyShapeKind::Capsule:
      return "capsule";
    case BodyShapeKind::ConvexHull:
      return "convex hull";
    case BodyShapeKind::Mesh:
      return "mesh";
    case BodyShapeKind::Plane:
      return "plane";
  }
  return "unknown";
}

BodyShape shapeFromCollider(const Collider& collider) {
  BodyShape shape;
  switch (collider.shape) {
    case ColliderShape::Plane:
      shape.kind = BodyShapeKind::Plane;
      break;
    case ColliderShape::Sphere:
      shape.kind = BodyShapeKind::Sphere;
      break;
    case ColliderShape::Box:
      shape.kind = BodyShapeKind::Box;
      break;
    case ColliderShape::Capsule:
      shape.kind = BodyShapeKind::Capsule;
      break;
    case ColliderShape::Mesh:
      shape.kind = BodyShapeKind::Mesh;
      break;
  }
  shape.radius = collider.radius;
  shape.halfHeight = collider.halfHeight;
  shape.halfExtents = collider.halfExtents;
  shape.grid = collider.grid;
  return shape;
}

double shapeDistance(const BodyShape&, const ColliderPose&, const Vec3&, Vec3& normal) {
  normal = Vec3::UnitY();
  throw Error("shapeDistance: not yet implemented");
}

void shapeBounds(const BodyShape&, const ColliderPose&, double, Vec3& lower, Vec3& upper) {
  lower.setZero();
  upper.setZero();
  throw Error("shapeBounds: not yet implemented");
}

}  // namespace pliant
