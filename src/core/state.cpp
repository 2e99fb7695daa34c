#include "pliant/state.h"

#include <algorithm>
#include <cstring>

namespace pliant {

State State::fromModel(const Model& model) {
  State s;
  s.position = model.initialPosition;
  s.velocity = model.initialVelocity;
  for (std::size_t i = 0; i < model.particleCount(); ++i)
    if (model.inverseMass[i] == 0.0) s.velocity[i].setZero();
  s.previousPosition = s.position;
  s.externalForce.assign(model.particleCount(), Vec3::Zero());
  s.lambda.assign(model.totalConstraintCount(), 0.0);
  s.attachmentTarget.resize(model.attachments.size());
  for (std::size_t i = 0; i < model.attachments.size(); ++i) {
    const AttachmentConstraint& a = model.attachments[i];
    s.attachmentTarget[i] = a.targetPath >= 0 ? model.attachmentPaths[a.targetPath](0.0) : a.target;
  }
  const std::size_t bodies = model.bodyCount();
  s.bodyPosition.resize(bodies);
  s.bodyRotation.resize(bodies);
  s.bodyVelocity.resize(bodies);
  s.bodyAngularVelocity.resize(bodies);
  for (std::size_t b = 0; b < bodies; ++b) {
    const RigidBody& body = model.bodies[b];
    s.bodyPosition[b] = body.initialPosition;
    s.bodyRotation[b] = body.initialRotation;
    s.bodyVelocity[b] = body.dynamic() ? body.initialVelocity : Vec3::Zero();
    s.bodyAngularVelocity[b] = body.dynamic() ? body.initialAngularVelocity : Vec3::Zero();
    if (body.motion == BodyMotion::Kinematic) {
      const ColliderPose pose = bodyPose(model, b, 0.0);
      s.bodyPosition[b] = pose.position;
      s.bodyRotation[b] = pose.rotation;
    }
  }
  s.bodyPreviousPosition = s.bodyPosition;
  s.bodyPreviousRotation = s.bodyRotation;
  s.bodySleepTime.assign(bodies, 0.0);
  s.bodySleepIsland.assign(bodies, -1);
  s.jointLambda.assign(kJointMultipliers * model.joints.size(), 0.0);
  s.jointLinearImpulse.assign(model.joints.size(), Vec3::Zero());
  s.jointAngularImpulse.assign(model.joints.size(), Vec3::Zero());
  for (const KinematicParticle& k : model.kinematicParticles) {
    s.position[k.particle] = k.path(0.0);
    s.previousPosition[k.particle] = s.position[k.particle];
  }
  return s;
}

namespace {

// FNV-1a, 64 bit: simple, well specified, and sensitive to every bit.
struct Fnv1a {
  std::uint64_t value = 14695981039346656037ull;
  void bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      value ^= p[i];
      value *= 1099511628211ull;
    }
  }
};

}  // namespace

std::uint64_t State::hash() const {
  Fnv1a h;
  for (const Vec3& p : position) h.bytes(p.data(), 3 * sizeof(double));
  for (const Vec3& v : velocity) h.bytes(v.data(), 3 * sizeof(double));
  for (const Vec3& f : externalForce) h.bytes(f.data(), 3 * sizeof(double));
  for (const Vec3& t : attachmentTarget) h.bytes(t.data(), 3 * sizeof(double));
  h.bytes(lambda.data(), lambda.size() * sizeof(double));
  // Bodies and joints (nothing for a model without them: the hash of particle-only states is
  // unchanged).
  for (const Vec3& x : bodyPosition) h.bytes(x.data(), 3 * sizeof(double));
  for (const Quat& q : bodyRotation) h.bytes(q.coeffs().data(), 4 * sizeof(double));
  for (const Vec3& v : bodyVelocity) h.bytes(v.data(), 3 * sizeof(double));
  for (const Vec3& w : bodyAngularVelocity) h.bytes(w.data(), 3 * sizeof(double));
  h.bytes(jointLambda.data(), jointLambda.size() * sizeof(double));
  for (const BodyContactAnchor& k : bodyContactAnchors) {
    h.bytes(&k.bodyA, sizeof k.bodyA);
    h.bytes(&k.bodyB, sizeof k.bodyB);
    h.bytes(&k.collider, sizeof k.collider);
    h.bytes(k.a.data(), 3 * sizeof(double));
    h.bytes(k.b.data(), 3 * sizeof(double));
    if (k.lambda != 0.0) h.bytes(&k.lambda, sizeof k.lambda);  // states saved before warm starts keep their hash
  }
  // Sleep data only when set, so that states saved before sleeping existed keep their hash.
  const bool sleepData =
      std::any_of(bodySleepTime.begin(), bodySleepTime.end(), [](double t) { return t != 0.0; }) ||
      std::any_of(bodySleepIsland.begin(), bodySleepIsland.end(), [](std::int32_t i) { return i != -1; });
  if (sleepData) {
    h.bytes(bodySleepTime.data(), bodySleepTime.size() * sizeof(double));
    h.bytes(bodySleepIsland.data(), bodySleepIsland.size() * sizeof(std::int32_t));
  }
  h.bytes(&time, sizeof time);
  h.bytes(&stepCount, sizeof stepCount);
  return h.value;
}

void State::wakeBody(std::size_t body) {
  if (!bodyAsleep(body)) return;
  const std::int32_t island = bodySleepIsland[body];
  for (std::size_t b = 0; b < bodySleepIsland.size(); ++b)
    if (bodySleepIsland[b] == island) {
      bodySleepIsland[b] = -1;
      bodySleepTime[b] = 0.0;
    }
}

Vec3 State::jointForce(std::size_t joint) const {
  return lastSubstep > 0.0 ? Vec3(jointLinearImpulse[joint] / (lastSubstep * lastSubstep)) : Vec3::Zero();
}

Vec3 State::jointTorque(std::size_t joint) const {
  return lastSubstep > 0.0 ? Vec3(jointAngularImpulse[joint] / (lastSubstep * lastSubstep)) : Vec3::Zero();
}

}  // namespace pliant
