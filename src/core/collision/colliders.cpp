// Signed distance functions of the analytic collider shapes, evaluated in the collider's frame
// (the world point is brought in by the inverse pose, the normal taken back out by the rotation).
#include "pliant/colliders.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pliant/error.h"
#include "pliant/model.h"

namespace pliant {

const char* colliderShapeName(ColliderShape shape) {
  switch (shape) {
    case ColliderShape::Plane:
      return "plane";
    case ColliderShape::Sphere:
      return "sphere";
    case ColliderShape::Box:
      return "box";
    case ColliderShape::Capsule:
      return "capsule";
    case ColliderShape::Mesh:
      return "mesh";
  }
  return "unknown";
}

Collider Collider::plane(const Vec3& point, const Vec3& normal, const ContactMaterial& material) {
  Collider c;
  c.shape = ColliderShape::Plane;
  c.pose.position = point;
  // The frame's +y axis becomes the normal. A zero or non-finite normal leaves a NaN rotation for
  // Model::validate to report.
  if (normal.allFinite() && normal.norm() > 0.0)
    c.pose.rotation = Quat::FromTwoVectors(Vec3::UnitY(), normal.normalized());
  else c.pose.rotation.coeffs().setConstant(std::numeric_limits<double>::quiet_NaN());
  c.material = material;
  return c;
}

Collider Collider::sphere(const Vec3& centre, double radius, const ContactMaterial& material) {
  Collider c;
  c.shape = ColliderShape::Sphere;
  c.pose.position = centre;
  c.radius = radius;
  c.material = material;
  return c;
}

Collider Collider::box(const Vec3& centre, const Vec3& halfExtents, const Quat& rotation,
                       const ContactMaterial& material) {
  Collider c;
  c.shape = ColliderShape::Box;
  c.pose.position = centre;
  c.pose.rotation = rotation;
  c.halfExtents = halfExtents;
  c.material = material;
  return c;
}

Collider Collider::capsule(const Vec3& a, const Vec3& b, double radius, const ContactMaterial& material) {
  Collider c;
  c.shape = ColliderShape::Capsule;
  c.pose.position = 0.5 * (a + b);
  const Vec3 axis = b - a;
  c.halfHeight = 0.5 * axis.norm();
  if (c.halfHeight > 0.0) c.pose.rotation = Quat::FromTwoVectors(Vec3::UnitY(), axis / axis.norm());
  c.radius = radius;
  c.material = material;
  return c;
}

Collider Collider::mesh(std::shared_ptr<const SignedDistanceGrid> distanceGrid, const Vec3& position,
                        const Quat& rotation, const ContactMaterial& material) {
  Collider c;
  c.shape = ColliderShape::Mesh;
  c.pose.position = position;
  c.pose.rotation = rotation;
  c.grid = std::move(distanceGrid);
  c.material = material;
  return c;
}

Collider Collider::mesh(const std::vector<Vec3>& vertices, const std::vector<std::array<std::uint32_t, 3>>& triangles,
                        const Vec3& position, const Quat& rotation, const SignedDistanceGridOptions& options,
                        const ContactMaterial& material, const std::string& source) {
  return mesh(
      std::make_shared<const SignedDistanceGrid>(SignedDistanceGrid::build(vertices, triangles, options, source)),
      position, rotation, material);
}

double colliderDistance(const Collider& collider, const ColliderPose& pose, const Vec3& x, Vec3& normal) {
  // An unrotated pose (most static colliders) skips both rotations: rotating by the identity
  // changes no value (at most the sign of a zero).
  const bool unrotated = pose.rotation.w() == 1.0 && pose.rotation.vec() == Vec3::Zero();
  const Vec3 q = unrotated ? Vec3(x - pose.position) : Vec3(pose.rotation.conjugate() * (x - pose.position));
  Vec3 n = Vec3::UnitY();
  double distance = 0.0;
  switch (collider.shape) {
    case ColliderShape::Plane:
      distance = q.y();
      break;
    case ColliderShape::Sphere: {
      const double length = q.norm();
      distance = length - collider.radius;
      if (length > 0.0) n = q / length;
      break;
    }
    case ColliderShape::Capsule: {
      const double y = std::clamp(q.y(), -collider.halfHeight, collider.halfHeight);
      const Vec3 d(q.x(), q.y() - y, q.z());
      const double length = d.norm();
      distance = length - collider.radius;
      n = length > 0.0 ? Vec3(d / length) : Vec3(Vec3::UnitX());
      break;
    }
    case ColliderShape::Box: {
      const Vec3 d = q.cwiseAbs() - collider.halfExtents;
      const Vec3 outside = d.cwiseMax(0.0);
      const double outsideLength = outside.norm();
      if (outsideLength > 0.0) {
        distance = outsideLength;
        for (int k = 0; k < 3; ++k) n[k] = q[k] < 0.0 ? -outside[k] : outside[k];
        n /= outsideLength;
      } else {
        // Inside: the nearest face is the one of largest (least negative) d.
        int axis = 0;
        for (int k = 1; k < 3; ++k)
          if (d[k] > d[axis]) axis = k;
        distance = d[axis];
        n = Vec3::Zero();
        n[axis] = q[axis] < 0.0 ? -1.0 : 1.0;
      }
      break;
    }
    case ColliderShape::Mesh:
      distance = collider.grid->sample(q, n);
      break;
  }
  normal = unrotated ? n : Vec3(pose.rotation * n);
  return distance;
}

ColliderPose colliderPose(const Model& model, std::uint32_t collider, double time) {
  const Collider& c = model.colliders[collider];
  ColliderPose pose = c.pose;
  if (c.path >= 0) pose.position = model.colliderPaths[c.path](time);
  if (c.rotationPath >= 0) pose.rotation = model.colliderRotationPaths[c.rotationPath](time).normalized();
  return pose;
}

}  // namespace pliant
