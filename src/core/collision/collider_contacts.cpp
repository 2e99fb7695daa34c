// Contacts with colliders and between particles: stages 2-3 (poses, collide), 5 (project, after the
// families) and 7 (velocity pass) of the step pipeline written in solver.h. This file holds the
// collider contacts; particle_contacts.cpp the pairs, by the same rules.
//
// The idea (seed 004; Macklin et al. 2019, "Small steps"; Mueller et al. 2020, "Detailed rigid body
// simulation with XPBD", sec. 3.5-3.6; Macklin et al. 2014, "Unified particle physics", sec. 6.1):
// - Every substep, contacts are found where the particles are predicted to be, so a contact is
//   never older than one substep and needs no persistent state. A particle-collider contact is
//   C = phi(x) - r >= 0 (phi the collider's signed distance, r the particle radius); a pair is
//   C = |x_a - x_b| - r_a - r_b >= 0. Both are hard (alpha = 0) and solved by projected
//   Gauss-Seidel: projected while violated or while they hold a multiplier from an earlier pass of
//   the substep (which they give back when others have separated the pair), with the accumulated
//   multiplier clamped at 0 (a contact never pulls).
// - Overlap that already existed at the start of the substep (x^n against the collider where it
//   was then) is not removed at once: up to maxDepenetrationVelocity * h of it per substep, the
//   rest is tolerated as an `allowance` added to C. New penetration is always removed completely.
// - Friction at position level, after the normal correction, on the tangential motion of the
//   particle relative to the surface during this substep: while the total tangential correction
//   stays within mu_s times the normal one (w lambda) it is all undone (static friction: the
//   particle sticks); beyond, the contact slides and mu_d w lambda of it is undone (dynamic
//   friction, i.e. the impulse mu_d |f_n| h with f_n = lambda / h^2). Dynamic friction belongs in
//   the position solve for particles: there the friction of one slipping contact reaches the rest
//   of its body through the other constraints. Done as a velocity change of the one particle
//   (Mueller et al. 2020 eq. 30, dv = -min(mu_d |f_n| h / m, |v_t|)), it is capped at that
//   particle's own speed, and a stiff body creeps down a slope with mu_s well above tan(theta)
//   (tests/scenario/contact_v13_v14_test.cpp measures both). SolverSettings::
//   dynamicFrictionInVelocityPass selects the velocity-pass form.
// - Velocity pass after v = (x - x^n)/h, on contacts that pushed (lambda > 0): restitution sets the
//   normal velocity to -e times the one before the solve, with e = 0 when that was at most
//   2 |g| h (resting contacts stay at rest), as Mueller et al. 2020 eq. 34.
// For particle pairs the same rules act on the relative motion, shared by inverse mass.
#include "collision/collider_contacts.h"

#include <algorithm>
#include <cmath>

#include "collision/friction.h"

namespace pliant::detail {

namespace {

// The world position at the start of the substep of the collider's material point now at x.
Vec3 pointBefore(const Collider& c, const ColliderPose& now, const ColliderPose& before, const Vec3& x) {
  if (!c.kinematic()) return x;
  return before.position + before.rotation * (now.rotation.conjugate() * (x - now.position));
}

}  // namespace

void ColliderContacts::prepare(const Model& model) {
  pose_.resize(model.colliders.size());
  previousPose_.resize(model.colliders.size());
  contacts_.clear();
  contacts_.reserve(model.colliders.empty() ? 0 : model.particleCount());
}

void ColliderContacts::updatePoses(const Model& model, double previousTime, double time) {
  for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
    pose_[c] = colliderPose(model, c, time);
    previousPose_[c] = model.colliders[c].kinematic() ? colliderPose(model, c, previousTime) : pose_[c];
  }
}

void ColliderContacts::collide(const Model& model, const SolverSettings& settings, const State& state, double h) {
  const double margin = settings.contactMargin;
  const double cap = settings.maxDepenetrationVelocity * h;  // m per substep; infinity: no cap
  contacts_.clear();
  if (!model.colliders.empty()) {
    const std::size_t n = model.particleCount();
    for (std::size_t i = 0; i < n; ++i) {
      if (model.inverseMass[i] == 0.0) continue;
      const Vec3& x = state.position[i];
      if (!x.allFinite()) continue;
      const auto p = static_cast<ParticleIndex>(i);
      const double r = model.radius(p);
      for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
        const Collider& collider = model.colliders[c];
        Vec3 normal;
        const double d = colliderDistance(collider, pose_[c], x, normal) - r;
        if (!(d < margin)) continue;
        Contact k;
        k.particle = p;
        k.collider = static_cast<std::int32_t>(c);
        Vec3 normalBefore;
        const double d0 = colliderDistance(collider, previousPose_[c], state.previousPosition[i], normalBefore) - r;
        if (d0 < 0.0) k.allowance = std::max(0.0, -d0 - cap);
        const Vec3 surfaceVelocity = (x - pointBefore(collider, pose_[c], previousPose_[c], x)) / h;
        k.normalVelocity = normal.dot(state.velocity[i] - surfaceVelocity);
        contacts_.push_back(k);
      }
    }
  }
}

bool ColliderContacts::project(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace) {
  const double* w = model.inverseMass.data();
  Vec3* x = state.position.data();
  const Vec3* xPrev = state.previousPosition.data();
  const bool kineticHere = !settings.dynamicFrictionInVelocityPass;
  for (Contact& c : contacts_) {
    const ParticleIndex p = c.particle;
    const Collider& collider = model.colliders[c.collider];
    const ColliderPose& pose = pose_[c.collider];
    Vec3 n;
    const double C = colliderDistance(collider, pose, x[p], n) - model.radius(p) + c.allowance;
    if (!(C < 0.0) && !(c.lambda > 0.0)) continue;  // projected Gauss-Seidel, as the families
    const double deltaLambda = std::max(-C / w[p], -c.lambda);
    c.lambda += deltaLambda;
    x[p] += (w[p] * deltaLambda) * n;
    const Vec3 relative = pointBefore(collider, pose, previousPose_[c.collider], x[p]) - xPrev[p];
    const double kinetic = kineticHere ? collider.material.dynamicFriction : 0.0;
    x[p] -= frictionShift(relative - n.dot(relative) * n, collider.material.staticFriction * w[p] * c.lambda,
                          kinetic * w[p] * c.lambda, c.friction);
    if (trace && trace->check(state, p, StepTrace::Culprit::Contact)) {
      trace->contact = c;
      return false;
    }
  }
  return true;
}

void ColliderContacts::velocityPass(const Model& model, const SolverSettings& settings, State& state, double h) const {
  const double* w = model.inverseMass.data();
  const Vec3* x = state.position.data();
  Vec3* v = state.velocity.data();
  const double restingSpeed = 2.0 * settings.gravity.norm() * h;  // m/s, below it e = 0
  const bool friction = settings.dynamicFrictionInVelocityPass;
  for (const Contact& c : contacts_) {
    if (!(c.lambda > 0.0)) continue;
    const ParticleIndex p = c.particle;
    const Collider& collider = model.colliders[c.collider];
    const ColliderPose& pose = pose_[c.collider];
    Vec3 n;
    colliderDistance(collider, pose, x[p], n);
    const Vec3 surfaceVelocity = (x[p] - pointBefore(collider, pose, previousPose_[c.collider], x[p])) / h;
    v[p] += velocityPassChange(v[p] - surfaceVelocity, n, w[p] * c.lambda, c.normalVelocity, collider.material,
                               friction, h, restingSpeed);
  }
}

}  // namespace pliant::detail
