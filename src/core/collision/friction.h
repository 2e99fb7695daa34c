// Coulomb friction and restitution shared by every contact kind (particle-collider, particle pair,
// surface contacts): the position-level friction of the projection and the velocity-pass change.
// The idea is written at the top of collider_contacts.cpp.
#pragma once

#include <algorithm>
#include <cmath>

#include "pliant/colliders.h"
#include "pliant/math.h"

namespace pliant::detail {

// Friction at position level: the relative tangential displacement to undo now. `undone` is the
// total undone in this substep (a tangential impulse times w). Within the static cone,
// |undone| <= mu_s w lambda = `staticLimit`, the contact sticks. Outside it the contact slides and
// keeps `kineticLimit` = mu_d w lambda of friction along the motion (Macklin et al. 2014, "Unified
// particle physics", eqs. 24-25), or none when dynamic friction is left to the velocity pass
// (kineticLimit 0): what earlier passes undid is then given back (a negative shift).
inline Vec3 frictionShift(const Vec3& tangential, double staticLimit, double kineticLimit, Vec3& undone) {
  const Vec3 total = undone + tangential;
  const double length = total.norm();
  if (length <= staticLimit) {
    undone = total;
    return tangential;
  }
  const Vec3 target = total * (std::min(kineticLimit, length) / length);
  const Vec3 shift = target - undone;
  undone = target;
  return shift;
}

// Velocity change dv of the relative velocity `relative` along unit normal n: dynamic friction and
// restitution (see the top of collider_contacts.cpp). `normalCorrection` = sum of w times lambda (m).
inline Vec3 velocityPassChange(const Vec3& relative, const Vec3& n, double normalCorrection,
                               double normalVelocityBefore, const ContactMaterial& material, bool friction, double h,
                               double restingSpeed) {
  const double vn = n.dot(relative);
  const Vec3 vt = relative - vn * n;
  Vec3 dv = Vec3::Zero();
  const double speed = vt.norm();
  if (friction && speed > 0.0 && material.dynamicFriction > 0.0)
    dv -= vt * (std::min(material.dynamicFriction * normalCorrection / h, speed) / speed);
  const double e = std::abs(normalVelocityBefore) <= restingSpeed ? 0.0 : material.restitution;
  dv += n * (-vn + std::max(-e * normalVelocityBefore, 0.0));
  return dv;
}

}  // namespace pliant::detail
