// Colliders: rigid obstacles that particles cannot enter (contacts are unilateral constraints
// C >= 0, seed 004). Each collider is an analytic shape given in its own frame, placed in the world
// by a pose (position + rotation), static or kinematic (the pose follows prescribed paths).
//
// Shapes in the collider's frame (the solid is where the signed distance is negative):
//   Plane    the half-space y <= 0; its normal is the frame's +y axis
//   Sphere   centred at the origin, `radius`
//   Box      centred at the origin, half sizes `halfExtents` along the frame's axes
//   Capsule  the segment from (0, -halfHeight, 0) to (0, +halfHeight, 0) swept by `radius`
//   Mesh     a closed triangle mesh given in the frame, through its signed distance grid (built once
//            at load time, see pliant/signed_distance_grid.h; accurate to about a cell size)
//
// A particle of radius r touches a collider when the signed distance phi of its centre is r; its
// contact constraint is C = phi(x) - r >= 0 with gradient n = grad phi (unit, pointing out).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pliant/math.h"
#include "pliant/signed_distance_grid.h"

namespace pliant {

using Quat = Eigen::Quaterniond;

// A prescribed orientation as a function of simulated time (s); must return a unit quaternion.
using RotationFunction = std::function<Quat(double time)>;

enum class ColliderShape : std::uint8_t { Plane, Sphere, Box, Capsule, Mesh };
const char* colliderShapeName(ColliderShape shape);

// Surface material of a contact (Mueller et al. 2020, "Detailed rigid body simulation with XPBD",
// sec. 3.5-3.6): Coulomb friction with a static coefficient (a particle sticks while the tangential
// correction stays below mu_s times the normal one) and a dynamic coefficient (a sliding particle
// loses mu_d |f_n| h / m of tangential speed per substep), and restitution e (the normal velocity
// after an impact is -e times the one before; e is taken as 0 when |v_n| <= 2 |g| h, so resting
// contacts do not jitter).
struct ContactMaterial {
  double staticFriction = 0.0;   // mu_s >= 0, dimensionless
  double dynamicFriction = 0.0;  // mu_d >= 0, dimensionless
  double restitution = 0.0;      // e in [0, 1]
};

// Where a collider is at one instant.
struct ColliderPose {
  Vec3 position = Vec3::Zero();      // m, world position of the collider frame's origin
  Quat rotation = Quat::Identity();  // collider frame -> world
};

struct Collider {
  ColliderShape shape = ColliderShape::Plane;
  ColliderPose pose;                // used while the collider has no path
  double radius = 0.0;              // m, Sphere and Capsule
  double halfHeight = 0.0;          // m, Capsule: half the length of its axis segment
  Vec3 halfExtents = Vec3::Zero();  // m, Box
  // Mesh: the immutable grid, shared by every copy of the collider (copying a Model stays cheap).
  std::shared_ptr<const SignedDistanceGrid> grid;
  ContactMaterial material;
  // Kinematic motion: indices into Model::colliderPaths (the frame origin's position over time)
  // and Model::colliderRotationPaths (its orientation); -1 keeps pose.position / pose.rotation.
  std::int32_t path = -1;
  std::int32_t rotationPath = -1;

  bool kinematic() const { return path >= 0 || rotationPath >= 0; }

  // Definitions in world terms. `normal` need not be unit length (it must not be zero).
  static Collider plane(const Vec3& point, const Vec3& normal, const ContactMaterial& material = {});
  static Collider sphere(const Vec3& centre, double radius, const ContactMaterial& material = {});
  static Collider box(const Vec3& centre, const Vec3& halfExtents, const Quat& rotation = Quat::Identity(),
                      const ContactMaterial& material = {});
  // The capsule around the segment from `a` to `b` (a == b gives a sphere).
  static Collider capsule(const Vec3& a, const Vec3& b, double radius, const ContactMaterial& material = {});
  // A triangle-mesh collider. The mesh's own coordinates (m) are the collider frame, placed in the
  // world at `position` with `rotation`. It must be closed, manifold and consistently oriented (an
  // inward-facing mesh is flipped); SignedDistanceGrid::build says what is refused and throws
  // pliant::Error naming `source` for it.
  static Collider mesh(std::shared_ptr<const SignedDistanceGrid> distanceGrid, const Vec3& position = Vec3::Zero(),
                       const Quat& rotation = Quat::Identity(), const ContactMaterial& material = {});
  static Collider mesh(const std::vector<Vec3>& vertices, const std::vector<std::array<std::uint32_t, 3>>& triangles,
                       const Vec3& position = Vec3::Zero(), const Quat& rotation = Quat::Identity(),
                       const SignedDistanceGridOptions& options = {}, const ContactMaterial& material = {},
                       const std::string& source = "mesh collider");
  // From a Wavefront OBJ file: io::readMeshCollider (pliant/io/mesh_io.h).
};

// Signed distance (m) from the collider's surface to the point x (negative inside) and its outward
// unit normal (the gradient of the distance; on the medial set, where it is not defined, a fixed
// choice: the first axis of largest penetration for a box, the frame's +y axis at a sphere centre,
// the frame's +x axis on a capsule axis; for a mesh, see SignedDistanceGrid::sample).
double colliderDistance(const Collider& collider, const ColliderPose& pose, const Vec3& x, Vec3& normal);

// Where collider c of the model is at `time` (s): its paths evaluated, or its fixed pose.
struct Model;
ColliderPose colliderPose(const Model& model, std::uint32_t collider, double time);

}  // namespace pliant
