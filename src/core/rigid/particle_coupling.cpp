// Particles coupled with rigid bodies ([M20] = Mueller, Macklin, Chentanez, Jeschke, Kim 2020,
// "Detailed Rigid Body Simulation with Extended Position Based Dynamics").
//
// The idea: a particle is a body with inverse mass w_p and no rotation, so a constraint between a
// particle and a material point of a body is a positional constraint of [M20] sec. 3.2 whose
// generalised inverse mass is w = w_p + 1/m + (r x n)^T I^-1 (r x n) (eq. 2); the particle moves by
// w_p n dlambda and the body takes -n dlambda at r (eqs. 6-9, BodySide::applyPositional). Linear
// momentum is conserved by every correction. Static and kinematic bodies have w_b = 0: they are
// (moving) targets and obstacles, as colliders are.
// - Attachments: C = |x_p - p_b| - d with p_b = x_b + R_b localPoint, XPBD with compliance and
//   damping (bodyMultiplier), after the joints and body contacts in each Gauss-Seidel pass.
// - Contacts: found per substep at the predicted positions and poses, like collider contacts
//   (collider_contacts.cpp): every movable particle within its radius plus contactMargin of a body's
//   shape (shapeDistance, the narrow phase's signed distance) gets one, in (particle, body) order,
//   skipping the body a particle is attached to. Projected after the attachments with
//   C = phi(x_p) - r + allowance >= 0 evaluated at the body's current pose (hard, unilateral,
//   projected Gauss-Seidel on the accumulated lambda), then static friction on the tangential motion
//   of the particle relative to the body's material point during the substep, undone while its
//   multiplier stays within mu_s lambda ([M20] sec. 3.5). The body's material sets friction and
//   restitution, as a collider's does for collider contacts.
// - Velocity pass ([M20] eqs. 29-34): restitution (e = 0 below 2|g|h) and dynamic friction (at most
//   mu_d lambda / h of tangential impulse) as equal and opposite impulses on particle and body.
// Everything runs on one thread in a fixed order: bit-identical for any thread count. Nothing is
// allocated in a step unless more contacts touch than prepare() made room for.
#include "rigid/particle_coupling.h"

#include <algorithm>
#include <cmath>

#include "pliant/rigid_shapes.h"
#include "rigid/corrections.h"

namespace pliant::detail {

namespace {

constexpr double kMinLength = 1e-12;  // m, below it an attachment has no direction

std::uint64_t pairKey(ParticleIndex particle, BodyIndex body) {
  return (static_cast<std::uint64_t>(particle) << 32) | static_cast<std::uint64_t>(body);
}

// The world position at the start of the substep of the body's material point now at `point`.
Vec3 pointBefore(const BodySide& s, const Vec3& point) { return s.xPrev + s.qPrev * (s.q.conjugate() * (point - s.x)); }

// The velocity (m/s) of the body's material point at world offset r from its centre of mass.
Vec3 pointVelocity(const BodySide& s, const State& state, BodyIndex body, const Vec3& r, double h) {
  if (s.movable) return state.bodyVelocity[body] + state.bodyAngularVelocity[body].cross(r);
  return (s.x + r - (s.xPrev + s.qPrev * (s.q.conjugate() * r))) / h;
}

// The body's signed distance (m) at x for its current pose in `s`, and the outward normal.
double bodyDistance(const RigidBody& body, const BodySide& s, const Vec3& x, Vec3& normal) {
  return shapeDistance(body.shape, body.shapePose(s.x, s.q), x, normal);
}

}  // namespace

void ParticleCoupling::prepare(const Model& model) {
  attachmentLambda_.assign(model.bodyAttachments.size(), 0.0);
  attachmentImpulse_.assign(model.bodyAttachments.size(), Vec3::Zero());
  attachedPairs_.clear();
  for (const BodyAttachment& a : model.bodyAttachments) attachedPairs_.push_back(pairKey(a.particle, a.body));
  std::sort(attachedPairs_.begin(), attachedPairs_.end());
  const std::size_t bodies = model.bodyCount();
  lower_.resize(bodies);
  upper_.resize(bodies);
  std::size_t movable = 0;
  for (double w : model.inverseMass) movable += w > 0.0 ? 1 : 0;
  collides_ = bodies > 0 && movable > 0;
  contacts_.clear();
  contacts_.reserve(collides_ ? movable * std::min<std::size_t>(bodies, 4) : 0);
}

void ParticleCoupling::reset() {
  std::fill(attachmentLambda_.begin(), attachmentLambda_.end(), 0.0);
  std::fill(attachmentImpulse_.begin(), attachmentImpulse_.end(), Vec3::Zero());
}

bool ParticleCoupling::attached(ParticleIndex particle, BodyIndex body) const {
  return !attachedPairs_.empty() &&
         std::binary_search(attachedPairs_.begin(), attachedPairs_.end(), pairKey(particle, body));
}

void ParticleCoupling::collide(const Model& model, const SolverSettings& settings, const State& state, double h) {
  contacts_.clear();
  if (!collides_) return;
  const double margin = settings.contactMargin;
  const double cap = settings.maxDepenetrationVelocity * h;  // m per substep; infinity: no cap
  double maxRadius = 0.0;
  for (double r : model.particleRadius) maxRadius = std::max(maxRadius, r);
  const std::size_t bodies = model.bodyCount();
  for (std::size_t b = 0; b < bodies; ++b) {
    const RigidBody& body = model.bodies[b];
    shapeBounds(body.shape, body.shapePose(state.bodyPosition[b], state.bodyRotation[b]), margin + maxRadius, lower_[b],
                upper_[b]);
  }
  for (std::size_t i = 0; i < model.particleCount(); ++i) {
    if (model.inverseMass[i] == 0.0) continue;
    const Vec3& x = state.position[i];
    if (!x.allFinite()) continue;
    const auto p = static_cast<ParticleIndex>(i);
    const double r = model.radius(p);
    for (std::size_t b = 0; b < bodies; ++b) {
      if ((x.array() < lower_[b].array()).any() || (x.array() > upper_[b].array()).any()) continue;
      const auto bi = static_cast<BodyIndex>(b);
      if (attached(p, bi)) continue;
      const RigidBody& body = model.bodies[b];
      const BodySide s = BodySide::load(model, state, bi);
      Vec3 n;
      const double d = bodyDistance(body, s, x, n) - r;
      if (!(d < margin)) continue;
      ParticleBodyContact k;
      k.particle = p;
      k.body = bi;
      // Overlap present at the start of the substep is removed at most at maxDepenetrationVelocity.
      Vec3 nBefore;
      const double d0 =
          shapeDistance(body.shape, body.shapePose(s.xPrev, s.qPrev), state.previousPosition[i], nBefore) - r;
      if (d0 < 0.0) k.allowance = std::max(0.0, -d0 - cap);
      const Vec3 surface = x - (d + r) * n;
      k.normalVelocity = n.dot(state.velocity[i] - pointVelocity(s, state, bi, surface - s.x, h));
      contacts_.push_back(k);
    }
  }
}

bool ParticleCoupling::project(const Model& model, const SolveContext& ctx, State& state, StepTrace* trace) {
  const auto culprit = [&](ParticleIndex p, BodyIndex body, bool attachment) {
    if (!trace || !trace->check(state, p, StepTrace::Culprit::BodyCoupling)) return false;
    trace->body = body;
    trace->bodyAttachment = attachment;
    return true;
  };
  Vec3* x = state.position.data();
  const Vec3* xPrev = state.previousPosition.data();
  const double* w = model.inverseMass.data();
  // Attachments, in index order.
  for (std::size_t c = 0; c < model.bodyAttachments.size(); ++c) {
    const BodyAttachment& a = model.bodyAttachments[c];
    BodySide s = BodySide::load(model, state, a.body);
    const ParticleIndex p = a.particle;
    const Vec3 r = s.q * a.localPoint;
    const Vec3 delta = x[p] - (s.x + r);
    const double length = delta.norm();
    if (length < kMinLength) continue;
    const Vec3 n = delta / length;
    // The change of C since the substep's start, for XPBD damping.
    const double before = (xPrev[p] - (s.xPrev + s.qPrev * a.localPoint)).norm() - a.restDistance;
    const double C = length - a.restDistance;
    const double wSum = w[p] + s.positionalWeight(r, n);
    const double deltaLambda = bodyMultiplier(C, wSum, C - before, a.params, attachmentLambda_[c], false, ctx);
    if (deltaLambda == 0.0) continue;
    const Vec3 impulse = deltaLambda * n;
    x[p] += w[p] * impulse;
    attachmentImpulse_[c] += impulse;
    s.applyPositional(r, -impulse);
    s.store(state, a.body);
    if (culprit(p, a.body, true)) return false;
  }
  // Contacts, in (particle, body) order.
  const ConstraintParameters hard{};  // alpha = 0, stiffness 1: contacts are hard in both modes
  for (ParticleBodyContact& k : contacts_) {
    const RigidBody& body = model.bodies[k.body];
    BodySide s = BodySide::load(model, state, k.body);
    const ParticleIndex p = k.particle;
    Vec3 n;
    const double phi = bodyDistance(body, s, x[p], n);
    const double C = phi - model.radius(p) + k.allowance;
    const Vec3 r = x[p] - phi * n - s.x;  // the body's surface point nearest the particle
    const double deltaLambda = bodyMultiplier(C, w[p] + s.positionalWeight(r, n), 0.0, hard, k.lambda, true, ctx);
    if (deltaLambda != 0.0) {
      x[p] += (w[p] * deltaLambda) * n;
      s.applyPositional(r, -deltaLambda * n);
    }
    // [M20] sec. 3.5: static friction undoes the tangential motion of the particle relative to the
    // body's material point in this substep while the friction multiplier stays within mu_s lambda.
    const double muS = body.material.staticFriction;
    if (k.lambda > 0.0 && muS > 0.0) {
      const Vec3 point = s.x + r;
      const Vec3 motion = (x[p] - xPrev[p]) - (point - pointBefore(s, point));
      const Vec3 tangential = motion - n.dot(motion) * n;
      const double length = tangential.norm();
      if (length > 0.0) {
        const Vec3 t = tangential / length;
        const double wt = w[p] + s.positionalWeight(r, t);
        const Vec3 total = k.friction - (length / wt) * t;  // wt >= w_p > 0: contacts have movable particles
        if (total.norm() <= muS * k.lambda) {
          const Vec3 impulse = total - k.friction;
          k.friction = total;
          x[p] += w[p] * impulse;
          s.applyPositional(r, -impulse);
        }
      }
    }
    s.store(state, k.body);
    if (culprit(p, k.body, false)) return false;
  }
  return true;
}

void ParticleCoupling::velocityPass(const Model& model, const SolverSettings& settings, State& state, double h) {
  const double restingSpeed = 2.0 * settings.gravity.norm() * h;  // m/s, below it e = 0 ([M20] eq. 34)
  const double* w = model.inverseMass.data();
  const Vec3* x = state.position.data();
  Vec3* v = state.velocity.data();
  for (const ParticleBodyContact& k : contacts_) {
    if (!(k.lambda > 0.0)) continue;
    const RigidBody& body = model.bodies[k.body];
    const BodySide s = BodySide::load(model, state, k.body);
    const ParticleIndex p = k.particle;
    Vec3 n;
    const double phi = bodyDistance(body, s, x[p], n);
    const Vec3 r = x[p] - phi * n - s.x;
    // An impulse P (kg m/s) on the particle and -P at r on the body.
    const auto apply = [&](const Vec3& impulse) {
      v[p] += w[p] * impulse;
      if (!s.movable) return;
      state.bodyVelocity[k.body] -= s.inverseMass * impulse;
      state.bodyAngularVelocity[k.body] -= s.inverseInertiaTimes(r.cross(impulse));
    };
    const auto relative = [&]() -> Vec3 { return v[p] - pointVelocity(s, state, k.body, r, h); };
    // Restitution ([M20] eq. 34): the normal velocity becomes -e times the one before the solve.
    const double e = std::abs(k.normalVelocity) <= restingSpeed ? 0.0 : body.material.restitution;
    const double dvn = -n.dot(relative()) + std::max(-e * k.normalVelocity, 0.0);
    const double wn = w[p] + s.positionalWeight(r, n);
    if (wn > 0.0 && dvn != 0.0) apply((dvn / wn) * n);
    // Dynamic friction ([M20] eqs. 30-31): at most mu_d lambda / h of impulse against the slip.
    const double muD = body.material.dynamicFriction;
    if (!(muD > 0.0)) continue;
    const Vec3 vr = relative();
    const Vec3 vt = vr - n.dot(vr) * n;
    const double speed = vt.norm();
    if (!(speed > 0.0)) continue;
    const Vec3 t = vt / speed;
    const double wt = w[p] + s.positionalWeight(r, t);
    if (!(wt > 0.0)) continue;
    apply(-std::min(muD * k.lambda / h, speed / wt) * t);
  }
}

}  // namespace pliant::detail
