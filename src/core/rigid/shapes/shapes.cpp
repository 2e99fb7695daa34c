// Shape kinds, shapes of colliders, signed distance to a point and bounding boxes.
#include <cmath>
#include <limits>

#include "narrow_phase.h"
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

double shapeDistance(const BodyShape& shape, const ColliderPose& pose, const Vec3& x, Vec3& normal) {
  if (shape.kind == BodyShapeKind::ConvexHull) {
    const Vec3 q = pose.rotation.conjugate() * (x - pose.position);
    Vec3 n, closest;
    const double d = detail::polytopeDistance(detail::hullPolytope(*shape.hull), q, n, closest);
    normal = pose.rotation * n;
    return d;
  }
  // The collider kinds share the colliders' distance functions (a Collider on the stack: no allocation).
  Collider c;
  switch (shape.kind) {
    case BodyShapeKind::Sphere:
      c.shape = ColliderShape::Sphere;
      break;
    case BodyShapeKind::Box:
      c.shape = ColliderShape::Box;
      break;
    case BodyShapeKind::Capsule:
      c.shape = ColliderShape::Capsule;
      break;
    case BodyShapeKind::Mesh:
      c.shape = ColliderShape::Mesh;
      break;
    case BodyShapeKind::Plane:
    case BodyShapeKind::ConvexHull:
      c.shape = ColliderShape::Plane;
      break;
  }
  c.radius = shape.radius;
  c.halfHeight = shape.halfHeight;
  c.halfExtents = shape.halfExtents;
  c.grid = shape.grid;
  return colliderDistance(c, pose, x, normal);
}

void shapeBounds(const BodyShape& shape, const ColliderPose& pose, double margin, Vec3& lower, Vec3& upper) {
  const Mat3 r = pose.rotation.toRotationMatrix();
  const Vec3 pad = Vec3::Constant(margin);
  switch (shape.kind) {
    case BodyShapeKind::Sphere:
      lower = pose.position - pad - Vec3::Constant(shape.radius);
      upper = pose.position + pad + Vec3::Constant(shape.radius);
      return;
    case BodyShapeKind::Capsule: {
      const Vec3 axis = r.col(1) * shape.halfHeight;
      const Vec3 extent = axis.cwiseAbs() + Vec3::Constant(shape.radius) + pad;
      lower = pose.position - extent;
      upper = pose.position + extent;
      return;
    }
    case BodyShapeKind::Box: {
      const Vec3 extent = r.cwiseAbs() * shape.halfExtents + pad;
      lower = pose.position - extent;
      upper = pose.position + extent;
      return;
    }
    case BodyShapeKind::ConvexHull: {
      lower = Vec3::Constant(std::numeric_limits<double>::infinity());
      upper = -lower;
      for (const Vec3& v : shape.hull->vertices) {
        const Vec3 w = r * v;
        lower = lower.cwiseMin(w);
        upper = upper.cwiseMax(w);
      }
      lower += pose.position - pad;
      upper += pose.position + pad;
      return;
    }
    case BodyShapeKind::Mesh: {
      // The grid's box (the mesh bounds plus the grid's padding): conservative and O(1).
      const Vec3 centre = 0.5 * (shape.grid->lower() + shape.grid->upper());
      const Vec3 half = 0.5 * (shape.grid->upper() - shape.grid->lower());
      const Vec3 extent = r.cwiseAbs() * half + pad;
      lower = pose.position + r * centre - extent;
      upper = pose.position + r * centre + extent;
      return;
    }
    case BodyShapeKind::Plane: {
      // Unbounded, except across the plane when its normal is a world axis.
      const double inf = std::numeric_limits<double>::infinity();
      lower = Vec3::Constant(-inf);
      upper = Vec3::Constant(inf);
      const Vec3 n = r.col(1);
      for (int k = 0; k < 3; ++k) {
        if (n[k] == 1.0) upper[k] = pose.position[k] + margin;
        if (n[k] == -1.0) lower[k] = pose.position[k] - margin;
      }
      return;
    }
  }
}

}  // namespace pliant
