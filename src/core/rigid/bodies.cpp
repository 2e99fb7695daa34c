// Bodies and joints in the model: ModelBuilder::addBody / addJoint, their validation, and the poses
// of kinematic bodies.
#include "pliant/bodies.h"

#include <cmath>
#include <numbers>
#include <string>

#include "pliant/error.h"
#include "pliant/model.h"
#include "rigid/bodies_validation.h"
#include "validation.h"

namespace pliant {

using detail::checkFinite;
using detail::checkMaterial;
using detail::checkParameters;

const char* bodyMotionName(BodyMotion motion) {
  switch (motion) {
    case BodyMotion::Dynamic:
      return "dynamic";
    case BodyMotion::Static:
      return "static";
    case BodyMotion::Kinematic:
      return "kinematic";
  }
  return "?";
}

const char* jointKindName(JointKind kind) {
  switch (kind) {
    case JointKind::Fixed:
      return "fixed";
    case JointKind::Spherical:
      return "spherical";
    case JointKind::Hinge:
      return "hinge";
    case JointKind::Prismatic:
      return "prismatic";
    case JointKind::Distance:
      return "distance";
  }
  return "?";
}

ColliderPose bodyPose(const Model& model, std::size_t body, double time) {
  const RigidBody& b = model.bodies[body];
  if (b.path < 0 && b.rotationPath < 0) return {b.initialPosition, b.initialRotation};
  // The paths give the shape frame; the body frame follows from the fixed placement.
  const ColliderPose initial = b.shapePose(b.initialPosition, b.initialRotation);
  const Vec3 shapePosition = b.path >= 0 ? model.bodyPaths[b.path](time) : initial.position;
  const Quat shapeRotation =
      b.rotationPath >= 0 ? model.bodyRotationPaths[b.rotationPath](time).normalized() : initial.rotation;
  const Quat rotation = shapeRotation * b.shapeRotation.conjugate();
  return {shapePosition - rotation * b.shapeOffset, rotation};
}

namespace {

std::string bodyWhere(std::size_t index, const std::string& name) {
  return "body " + std::to_string(index) + (name.empty() ? std::string() : " '" + name + "'");
}

void checkUnit(const Quat& q, const std::string& where) {
  if (!q.coeffs().allFinite() || std::abs(q.norm() - 1.0) > 1e-6)
    throw Error(where + ": expected a unit quaternion, got one of norm " + formatNumber(q.norm()));
}

}  // namespace

BodyIndex ModelBuilder::addBody(const BodyDefinition& def) {
  const std::size_t index = model_.bodies.size();
  const std::string where = bodyWhere(index, def.name);
  checkFinite(def.pose.position, where + " position");
  checkUnit(def.pose.rotation, where + " rotation");
  checkFinite(def.velocity, where + " velocity");
  checkFinite(def.angularVelocity, where + " angular velocity");
  checkMaterial(def.material, where + " material");
  if (!std::isfinite(def.mass) || def.mass < 0.0)
    throw Error(where + ": mass must be a finite number >= 0 kg (0: from the density), got " + formatNumber(def.mass));
  if (def.mass == 0.0 && (!std::isfinite(def.density) || !(def.density > 0.0)))
    throw Error(where + ": density must be a finite number > 0 kg/m^3, got " + formatNumber(def.density));
  if (def.motion != BodyMotion::Kinematic && (def.path || def.rotationPath))
    throw Error(where + ": only a kinematic body follows paths");
  if (def.shape.kind == BodyShapeKind::Plane && def.motion == BodyMotion::Dynamic)
    throw Error(where + ": a plane has no finite mass; it can only be static or kinematic");
  RigidBody body;
  body.name = def.name;
  body.shape = def.shape;
  body.material = def.material;
  body.motion = def.motion;
  if (def.shape.kind != BodyShapeKind::Plane) {
    MassProperties mass;
    try {
      mass = massProperties(def.shape, def.mass > 0.0 ? 1.0 : def.density);
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
    if (def.mass > 0.0) {
      const double scale = def.mass / mass.mass;
      mass.mass = def.mass;
      mass.inertia *= scale;
    }
    const PrincipalInertia principal = principalInertia(mass.inertia);
    if (!(mass.mass > 0.0) || !std::isfinite(mass.mass) || !(principal.moments.minCoeff() > 0.0))
      throw Error(where + ": its shape has no volume (mass " + formatNumber(mass.mass) + " kg)");
    // x_shape = c + R x_body, R principal -> shape: x_body = R^-1 x_shape - R^-1 c.
    body.shapeRotation = principal.rotation.conjugate().normalized();
    body.shapeOffset = -(body.shapeRotation * mass.centreOfMass);
    body.mass = mass.mass;
    body.inertia = principal.moments;
    if (def.motion == BodyMotion::Dynamic) {
      body.inverseMass = 1.0 / mass.mass;
      body.inverseInertia = principal.moments.cwiseInverse();
    }
  }
  // The body frame's pose from the shape frame's: rotation q = Q_shape shapeRotation^-1, and the
  // centre of mass where the shape frame puts it.
  body.initialRotation = (def.pose.rotation * body.shapeRotation.conjugate()).normalized();
  body.initialPosition = def.pose.position - body.initialRotation * body.shapeOffset;
  if (def.motion == BodyMotion::Dynamic) {
    body.initialVelocity = def.velocity;
    body.initialAngularVelocity = def.angularVelocity;
  }
  if (def.path) {
    body.path = static_cast<std::int32_t>(model_.bodyPaths.size());
    model_.bodyPaths.push_back(def.path);
  }
  if (def.rotationPath) {
    body.rotationPath = static_cast<std::int32_t>(model_.bodyRotationPaths.size());
    model_.bodyRotationPaths.push_back(def.rotationPath);
  }
  model_.bodies.push_back(std::move(body));
  if (def.motion == BodyMotion::Kinematic) {
    // Start where the paths say, so that joints are made at the pose the body has at time 0.
    const ColliderPose pose = bodyPose(model_, index, 0.0);
    model_.bodies.back().initialPosition = pose.position;
    model_.bodies.back().initialRotation = pose.rotation;
  }
  return static_cast<BodyIndex>(index);
}

std::uint32_t ModelBuilder::addJoint(const JointDefinition& def) {
  const std::size_t index = model_.joints.size();
  const std::string where = std::string(jointKindName(def.kind)) + " joint " + std::to_string(index);
  const BodyIndex sides[2] = {def.bodyA, def.bodyB};
  for (BodyIndex body : sides)
    if (body != kWorldBody && body >= model_.bodies.size())
      throw Error(where + ": body index " + std::to_string(body) + " out of range (model has " +
                  std::to_string(model_.bodies.size()) + " bodies)");
  checkFinite(def.anchor, where + " anchor");
  checkFinite(def.anchorB, where + " anchorB");
  checkFinite(def.axis, where + " axis");
  if (!(def.axis.norm() > 0.0)) throw Error(where + ": axis must not be zero");
  Joint joint;
  joint.kind = def.kind;
  joint.bodies[0] = def.bodyA;
  joint.bodies[1] = def.bodyB;
  joint.params = def.params;
  joint.lower = def.lower;
  joint.upper = def.upper;
  joint.swingLimit = def.swingLimit;
  joint.drive = def.drive;
  joint.driveTarget = def.driveTarget;
  joint.driveParams = def.driveParams;
  const Quat frame = Quat::FromTwoVectors(Vec3::UnitX(), def.axis.normalized()).normalized();
  for (int k = 0; k < 2; ++k) {
    const Vec3 anchor = (k == 1 && def.kind == JointKind::Distance) ? def.anchorB : def.anchor;
    if (sides[k] == kWorldBody) {
      joint.localAnchor[k] = anchor;
      joint.localFrame[k] = frame;
    } else {
      const RigidBody& body = model_.bodies[sides[k]];
      const Quat inverse = body.initialRotation.conjugate();
      joint.localAnchor[k] = inverse * (anchor - body.initialPosition);
      joint.localFrame[k] = (inverse * frame).normalized();
    }
  }
  joint.restLength = def.restLength >= 0.0 ? def.restLength : (def.anchor - def.anchorB).norm();
  detail::checkJoint(model_, joint, where);
  model_.joints.push_back(joint);
  return static_cast<std::uint32_t>(index);
}

std::uint32_t ModelBuilder::addBodyAttachment(ParticleIndex particle, BodyIndex body, const Vec3& point,
                                              const ConstraintParameters& params, double restDistance) {
  const std::size_t index = model_.bodyAttachments.size();
  const std::string where = "body attachment " + std::to_string(index);
  detail::checkIndex(particle, model_.particleCount(), where);
  if (body >= model_.bodies.size())
    throw Error(where + ": body index " + std::to_string(body) + " out of range (model has " +
                std::to_string(model_.bodies.size()) + " bodies)");
  checkFinite(point, where + " point");
  checkParameters(params, where);
  // The body frame at time 0 (a kinematic body's from its paths, as State::fromModel places it).
  const RigidBody& b = model_.bodies[body];
  const ColliderPose pose = b.motion == BodyMotion::Kinematic ? bodyPose(model_, body, 0.0)
                                                              : ColliderPose{b.initialPosition, b.initialRotation};
  if (restDistance < 0.0) restDistance = (model_.initialPosition[particle] - point).norm();
  detail::checkLength(restDistance, where, "rest distance");
  BodyAttachment a;
  a.particle = particle;
  a.body = body;
  a.localPoint = pose.rotation.conjugate() * (point - pose.position);
  a.restDistance = restDistance;
  a.params = params;
  model_.bodyAttachments.push_back(a);
  return static_cast<std::uint32_t>(index);
}

namespace detail {

void checkJoint(const Model& model, const Joint& joint, const std::string& where) {
  for (BodyIndex body : joint.bodies)
    if (body != kWorldBody && body >= model.bodies.size())
      throw Error(where + ": body index " + std::to_string(body) + " out of range (model has " +
                  std::to_string(model.bodies.size()) + " bodies)");
  if (joint.bodies[0] == joint.bodies[1])
    throw Error(where + ": its two bodies must differ (got " +
                (joint.bodies[0] == kWorldBody ? std::string("the world") : "body " + std::to_string(joint.bodies[0])) +
                " twice)");
  for (int k = 0; k < 2; ++k) {
    checkFinite(joint.localAnchor[k], where + " anchor");
    checkUnit(joint.localFrame[k], where + " frame");
  }
  checkParameters(joint.params, where);
  checkParameters(joint.driveParams, where + " drive");
  if (!std::isfinite(joint.restLength) || joint.restLength < 0.0)
    throw Error(where + ": restLength must be a finite number >= 0 m, got " + formatNumber(joint.restLength));
  if (std::isnan(joint.lower) || std::isnan(joint.upper) || joint.lower > joint.upper ||
      joint.lower == std::numeric_limits<double>::infinity() || joint.upper == -std::numeric_limits<double>::infinity())
    throw Error(where + ": limits must satisfy lower <= upper, got [" + formatNumber(joint.lower) + ", " +
                formatNumber(joint.upper) + "]");
  const bool angular = joint.kind == JointKind::Hinge || joint.kind == JointKind::Spherical;
  if (angular && ((!std::isinf(joint.lower) && joint.lower < -std::numbers::pi) ||
                  (!std::isinf(joint.upper) && joint.upper > std::numbers::pi)))
    throw Error(where + ": angle limits must lie in [-pi, pi] rad, got [" + formatNumber(joint.lower) + ", " +
                formatNumber(joint.upper) + "]");
  const bool limited = !std::isinf(joint.lower) || !std::isinf(joint.upper);
  if (limited && joint.kind != JointKind::Hinge && joint.kind != JointKind::Spherical &&
      joint.kind != JointKind::Prismatic)
    throw Error(where + ": only hinge, spherical (twist) and prismatic joints have limits");
  if (!(joint.swingLimit > 0.0))
    throw Error(where + ": swingLimit must be > 0 rad (infinity: none), got " + formatNumber(joint.swingLimit));
  if (joint.kind != JointKind::Spherical && joint.swingLimit < std::numbers::pi)
    throw Error(where + ": only spherical joints have a swing limit");
  if (joint.drive != JointDrive::None) {
    if (joint.kind != JointKind::Hinge) throw Error(where + ": only hinge joints have a drive");
    if (!std::isfinite(joint.driveTarget))
      throw Error(where + ": drive target must be finite, got " + formatNumber(joint.driveTarget));
  }
}

void validateBodies(const Model& model) {
  for (std::size_t i = 0; i < model.bodies.size(); ++i) {
    const RigidBody& b = model.bodies[i];
    const std::string where = bodyWhere(i, b.name);
    checkFinite(b.initialPosition, where + " position");
    checkUnit(b.initialRotation, where + " rotation");
    checkUnit(b.shapeRotation, where + " shape rotation");
    checkFinite(b.shapeOffset, where + " shape offset");
    checkFinite(b.initialVelocity, where + " velocity");
    checkFinite(b.initialAngularVelocity, where + " angular velocity");
    checkMaterial(b.material, where + " material");
    if (!std::isfinite(b.mass) || b.mass < 0.0) throw Error(where + ": mass must be a finite number >= 0 kg");
    if (b.dynamic()) {
      if (!(b.inverseMass > 0.0) || !std::isfinite(b.inverseMass))
        throw Error(where + ": a dynamic body needs a finite inverse mass > 0");
      if (!b.inverseInertia.allFinite() || !(b.inverseInertia.minCoeff() > 0.0))
        throw Error(where + ": a dynamic body needs finite principal moments of inertia > 0");
    } else if (b.inverseMass != 0.0 || b.inverseInertia != Vec3::Zero()) {
      throw Error(where + ": a " + bodyMotionName(b.motion) + " body must have inverse mass and inertia 0");
    }
    if (b.path >= static_cast<std::int64_t>(model.bodyPaths.size()) || (b.path >= 0 && !model.bodyPaths[b.path]))
      throw Error(where + ": path " + std::to_string(b.path) + " does not exist");
    if (b.rotationPath >= static_cast<std::int64_t>(model.bodyRotationPaths.size()) ||
        (b.rotationPath >= 0 && !model.bodyRotationPaths[b.rotationPath]))
      throw Error(where + ": rotation path " + std::to_string(b.rotationPath) + " does not exist");
    if ((b.path >= 0 || b.rotationPath >= 0) && b.motion != BodyMotion::Kinematic)
      throw Error(where + ": only a kinematic body follows paths");
  }
  for (std::size_t j = 0; j < model.joints.size(); ++j)
    checkJoint(model, model.joints[j],
               std::string(jointKindName(model.joints[j].kind)) + " joint " + std::to_string(j));
  for (std::size_t i = 0; i < model.bodyAttachments.size(); ++i) {
    const BodyAttachment& a = model.bodyAttachments[i];
    const std::string where = "body attachment " + std::to_string(i);
    checkIndex(a.particle, model.particleCount(), where);
    if (a.body >= model.bodies.size())
      throw Error(where + ": body index " + std::to_string(a.body) + " out of range (model has " +
                  std::to_string(model.bodies.size()) + " bodies)");
    checkFinite(a.localPoint, where + " point");
    checkParameters(a.params, where);
    checkLength(a.restDistance, where, "rest distance");
  }
}

}  // namespace detail

}  // namespace pliant
