// Rigid bodies and joints, solved in the same substep loop and Gauss-Seidel sweep as the particles
// (Mueller, Macklin, Chentanez, Jeschke, Kim 2020, "Detailed Rigid Body Simulation with Extended
// Position Based Dynamics", SCA; cited below as [M20]).
//
// Frames. A body's shape is given in its shape frame (pliant/rigid_shapes.h, the conventions of
// colliders.h). The body frame has its origin at the centre of mass and its axes along the
// principal axes of inertia, so the inertia tensor is diagonal there; the State holds the pose of
// the body frame (centre of mass and a unit quaternion, body frame -> world). RigidBody keeps the
// fixed placement of the shape frame in the body frame. Users place bodies and joints by the shape
// frame in world terms (BodyDefinition::pose, JointDefinition::anchor); ModelBuilder converts.
//
// Model/state split as for particles: RigidBody and Joint (flat arrays in Model) never change while
// stepping; poses, velocities and joint multipliers are flat arrays in State.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "pliant/colliders.h"
#include "pliant/constraints.h"
#include "pliant/math.h"
#include "pliant/rigid_shapes.h"

namespace pliant {

// A prescribed trajectory: position (m) as a function of simulated time (s) (as in model.h).
using PathFunction = std::function<Vec3(double time)>;

using BodyIndex = std::uint32_t;
// Stands for the world (a fixed frame) as one side of a joint.
inline constexpr BodyIndex kWorldBody = std::numeric_limits<BodyIndex>::max();

// Dynamic bodies move under gravity, joints and contacts; static ones never move; kinematic ones
// follow prescribed paths (like kinematic colliders) and push dynamic ones without being pushed.
enum class BodyMotion : std::uint8_t { Dynamic, Static, Kinematic };
const char* bodyMotionName(BodyMotion motion);

struct RigidBody {
  std::string name;
  BodyShape shape;
  // Placement of the shape frame in the body frame: x_body = shapeRotation x_shape + shapeOffset.
  Vec3 shapeOffset = Vec3::Zero();        // m
  Quat shapeRotation = Quat::Identity();  // shape frame -> body frame
  double mass = 0.0;                      // kg (kept for diagnostics on static and kinematic bodies)
  double inverseMass = 0.0;               // 1/kg, 0 unless dynamic
  Vec3 inertia = Vec3::Zero();            // kg m^2, principal moments (body frame axes)
  Vec3 inverseInertia = Vec3::Zero();     // 1/(kg m^2), 0 unless dynamic
  ContactMaterial material;
  BodyMotion motion = BodyMotion::Dynamic;
  // The body frame's pose and velocity at time 0 (static and kinematic: velocity 0 / from paths).
  Vec3 initialPosition = Vec3::Zero();         // m, centre of mass
  Quat initialRotation = Quat::Identity();     // body frame -> world
  Vec3 initialVelocity = Vec3::Zero();         // m/s, of the centre of mass
  Vec3 initialAngularVelocity = Vec3::Zero();  // rad/s, world axes
  // Kinematic motion: indices into Model::bodyPaths (the shape frame origin's position over time)
  // and Model::bodyRotationPaths (the shape frame's orientation); -1 keeps the initial one.
  std::int32_t path = -1;
  std::int32_t rotationPath = -1;

  bool dynamic() const { return motion == BodyMotion::Dynamic; }
  // The shape frame's pose in the world for a body frame pose (position m, rotation).
  ColliderPose shapePose(const Vec3& position, const Quat& rotation) const {
    return {position + rotation * shapeOffset, rotation * shapeRotation};
  }
};

// What ModelBuilder::addBody takes. Mass properties come from the shape (rigid_shapes.h:
// massProperties): from `density`, or scaled to `mass` when that is > 0.
struct BodyDefinition {
  std::string name;
  BodyShape shape;
  double density = 1000.0;  // kg/m^3, > 0, used when mass is 0
  double mass = 0.0;        // kg, >= 0; > 0 sets the mass (the inertia scales with it)
  BodyMotion motion = BodyMotion::Dynamic;
  ColliderPose pose;                    // the shape frame's pose in the world at time 0
  Vec3 velocity = Vec3::Zero();         // m/s, of the centre of mass (dynamic only)
  Vec3 angularVelocity = Vec3::Zero();  // rad/s, world axes (dynamic only)
  ContactMaterial material;
  // Kinematic only: the shape frame origin's position and the shape frame's orientation over time
  // (either may be empty: that part stays at `pose`).
  PathFunction path;
  RotationFunction rotationPath;
};

// Joints [M20, sec. 3.3]. Each joint holds a frame on each of its two bodies (A and B; either may
// be kWorldBody); the frames' x axis is the joint axis. Every joint keeps the frames' origins
// together (Distance: at restLength) and, depending on its kind, their orientations:
//   Fixed      orientations equal
//   Spherical  free rotation, with an optional swing limit (angle between the two x axes) and
//              twist limits (rotation about the mean x axis)
//   Hinge      x axes aligned; optional limits on the angle of B about the axis (rad, relative to
//              the initial one) and a drive to a target angle or speed
//   Prismatic  orientations equal; B's origin may slide along A's x axis, within optional limits
//              (m, relative to the initial offset)
//   Distance   the two anchors (one per body) at restLength (m), orientations free
enum class JointKind : std::uint8_t { Fixed, Spherical, Hinge, Prismatic, Distance };
const char* jointKindName(JointKind kind);

enum class JointDrive : std::uint8_t { None, Angle, Speed };

struct Joint {
  JointKind kind = JointKind::Fixed;
  BodyIndex bodies[2] = {kWorldBody, kWorldBody};
  // The joint frame on each side, in that body's frame (the world's for kWorldBody).
  Vec3 localAnchor[2] = {Vec3::Zero(), Vec3::Zero()};         // m
  Quat localFrame[2] = {Quat::Identity(), Quat::Identity()};  // joint frame -> body frame
  double restLength = 0.0;                                    // m, Distance
  // Compliance (m/N for positions, rad/(N m) for angles) and damping of the joint's equality
  // parts (ConstraintParameters: damping scales with compliance, Macklin et al. 2016).
  ConstraintParameters params;
  // Hinge: angle of B relative to A about the axis (rad); Prismatic: offset along the axis (m);
  // Spherical: twist angle (rad). -inf / +inf: no limit.
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  double swingLimit = std::numeric_limits<double>::infinity();  // rad, Spherical, in (0, pi]
  // Hinge drive [M20, sec. 3.3.1]: to `driveTarget` rad (Angle) or at `driveTarget` rad/s (Speed),
  // with `driveParams` (compliance rad/(N m), damping).
  JointDrive drive = JointDrive::None;
  double driveTarget = 0.0;
  ConstraintParameters driveParams;
};

// What ModelBuilder::addJoint takes: the joint frame in world terms at time 0.
struct JointDefinition {
  JointKind kind = JointKind::Fixed;
  BodyIndex bodyA = kWorldBody;
  BodyIndex bodyB = kWorldBody;
  Vec3 anchor = Vec3::Zero();   // m, world: the joint point (Distance: the anchor on A)
  Vec3 anchorB = Vec3::Zero();  // m, world: Distance only, the anchor on B
  Vec3 axis = Vec3::UnitX();    // world, not zero: hinge and prismatic axis, spherical twist axis
  double restLength = -1.0;     // m, Distance: < 0 means the current distance of the anchors
  ConstraintParameters params;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  double swingLimit = std::numeric_limits<double>::infinity();
  JointDrive drive = JointDrive::None;
  double driveTarget = 0.0;
  ConstraintParameters driveParams;
};

// The joint's multipliers of the last substep in State::jointLambda, kJointMultipliers per joint:
// positional part, angular alignment (Spherical: swing limit), limit (Spherical: twist limit),
// drive.
inline constexpr int kJointMultipliers = 4;

// Coupling of particles and bodies [M20, sec. 3.2]: a particle held at a material point of a body,
// C = |x_p - (x_b + R_b localPoint)| - restDistance, solved in the Gauss-Seidel pass after the joints
// and body contacts with the generalised inverse mass w = w_p + 1/m + (r x n)^T I^-1 (r x n) ([M20]
// eq. 2). The body receives the opposite correction; a static or kinematic body (w_b = 0) is a
// (moving) target. Compliance unit: m/N; damping as ConstraintParameters.
struct BodyAttachment {
  ParticleIndex particle = 0;
  BodyIndex body = 0;
  Vec3 localPoint = Vec3::Zero();  // m, the material point in the body frame
  double restDistance = 0.0;       // m
  ConstraintParameters params;
};

struct Model;
// The body frame's pose (centre of mass, body frame -> world) of body `body` at `time` (s): from
// its paths for a kinematic body, its initial pose otherwise.
ColliderPose bodyPose(const Model& model, std::size_t body, double time);

}  // namespace pliant
