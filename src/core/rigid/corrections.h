// Generalised position and angle corrections between two rigid bodies ([M20] sec. 3.2-3.3, eqs.
// 2-9 and 11-13), shared by joints and contacts. A side of a correction is a body (or the world, or
// a static or kinematic body: inverse mass and inertia 0) loaded into a BodySide, corrected, and
// written back.
//
// Sign convention: a constraint is given by a scalar value C along a unit world direction n,
// growing when side A moves along n (positional: A's point moves along n; angular: A turns about
// n) and shrinking when B does. Equality constraints drive C to 0, unilateral ones keep C >= 0
// (projected Gauss-Seidel on the accumulated multiplier, as projection.h for particles). The
// correction p = dlambda n is applied to A and -p to B.
#pragma once

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>

#include "constraints/families.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant::detail {

struct BodySide {
  Vec3 x = Vec3::Zero();      // m, centre of mass
  Quat q = Quat::Identity();  // body frame -> world
  Vec3 xPrev = Vec3::Zero();  // m, at the start of the substep
  Quat qPrev = Quat::Identity();
  double inverseMass = 0.0;            // 1/kg
  Vec3 inverseInertia = Vec3::Zero();  // 1/(kg m^2), principal (body frame)
  bool movable = false;

  static BodySide load(const Model& model, const State& state, BodyIndex body) {
    BodySide s;
    if (body == kWorldBody) return s;
    const RigidBody& b = model.bodies[body];
    s.x = state.bodyPosition[body];
    s.q = state.bodyRotation[body];
    s.xPrev = state.bodyPreviousPosition[body];
    s.qPrev = state.bodyPreviousRotation[body];
    s.inverseMass = b.inverseMass;
    s.inverseInertia = b.inverseInertia;
    s.movable = b.dynamic() && !state.bodyAsleep(body);  // a sleeping body is immovable (sleeping.cpp)
    return s;
  }
  void store(State& state, BodyIndex body) const {
    if (!movable) return;
    state.bodyPosition[body] = x;
    state.bodyRotation[body] = q;
  }

  // I^-1 v in world axes: I^-1 = R diag(inverseInertia) R^T.
  Vec3 inverseInertiaTimes(const Vec3& v) const { return q * inverseInertia.cwiseProduct(q.conjugate() * v); }
  // I^-1 in world axes as a matrix (0 for a side that does not move).
  Mat3 inverseInertiaWorld() const {
    if (!movable) return Mat3::Zero();
    const Mat3 r = q.toRotationMatrix();
    return r * inverseInertia.asDiagonal() * r.transpose();
  }
  // [M20] eq. 2: w = 1/m + (r x n)^T I^-1 (r x n), r the point's offset from the centre of mass.
  double positionalWeight(const Vec3& r, const Vec3& n) const {
    if (!movable) return 0.0;
    const Vec3 rn = q.conjugate() * r.cross(n);
    return inverseMass + rn.dot(inverseInertia.cwiseProduct(rn));
  }
  // [M20] eq. 11: w = n^T I^-1 n.
  double angularWeight(const Vec3& n) const {
    if (!movable) return 0.0;
    const Vec3 nb = q.conjugate() * n;
    return nb.dot(inverseInertia.cwiseProduct(nb));
  }
  // Turns the body by the small rotation vector `theta` (rad): q <- q + 1/2 [theta, 0] q,
  // normalised ([M20] eqs. 8-9 and 13).
  void turn(const Vec3& theta) {
    q.coeffs() += 0.5 * (Quat(0.0, theta.x(), theta.y(), theta.z()) * q).coeffs();
    q.normalize();
  }
  // [M20] eqs. 6-9: the positional correction p applied at offset r.
  void applyPositional(const Vec3& r, const Vec3& p) {
    if (!movable) return;
    x += inverseMass * p;
    turn(inverseInertiaTimes(r.cross(p)));
  }
  // [M20] eqs. 12-13: the angular correction p (kg m^2 rad).
  void applyAngular(const Vec3& p) {
    if (!movable) return;
    turn(inverseInertiaTimes(p));
  }
};

// The multiplier update of [M20] eqs. 4-5 (XPBD: dlambda = (-C - alpha~ lambda) / (w + alpha~)),
// with XPBD damping as for particles (projection.h, Macklin et al. 2016 eq. 26; `rate` is the change
// of C since the start of the substep) and PBD's stiffness in PBD mode. Unilateral: projected on
// the accumulated lambda >= 0. Returns dlambda (0 when skipped) and accumulates it into `lambda`.
inline double bodyMultiplier(double C, double wSum, double rate, const ConstraintParameters& params, double& lambda,
                             bool unilateral, const SolveContext& ctx) {
  if (unilateral && C >= 0.0 && !(lambda > 0.0)) return 0.0;
  double deltaLambda;
  if (ctx.mode == SolverMode::Xpbd) {
    const double alphaTilde = params.compliance * ctx.invH2;
    const double gamma = params.compliance * params.damping * ctx.invH;
    const double denominator = (1.0 + gamma) * wSum + alphaTilde;
    if (!(denominator > 0.0)) return 0.0;
    deltaLambda = (-C - alphaTilde * lambda - gamma * rate) / denominator;
  } else {
    if (!(wSum > 0.0)) return 0.0;
    const double k =
        ctx.stiffnessExponent != 1.0 ? 1.0 - std::pow(1.0 - params.stiffness, ctx.stiffnessExponent) : params.stiffness;
    deltaLambda = -k * C / wSum;
  }
  if (unilateral) deltaLambda = std::max(deltaLambda, -lambda);
  lambda += deltaLambda;
  return deltaLambda;
}

// A positional constraint between the point at offset rA of A and rB of B (world offsets from the
// centres of mass). Returns the correction p applied to A (-p to B).
inline Vec3 solvePositional(BodySide& a, BodySide& b, const Vec3& rA, const Vec3& rB, const Vec3& n, double C,
                            double rate, const ConstraintParameters& params, double& lambda, bool unilateral,
                            const SolveContext& ctx) {
  const double wSum = a.positionalWeight(rA, n) + b.positionalWeight(rB, n);
  const double deltaLambda = bodyMultiplier(C, wSum, rate, params, lambda, unilateral, ctx);
  if (deltaLambda == 0.0) return Vec3::Zero();
  const Vec3 p = deltaLambda * n;
  a.applyPositional(rA, p);
  b.applyPositional(rB, -p);
  return p;
}

// An angular constraint. Returns the angular correction applied to A (its opposite to B).
inline Vec3 solveAngular(BodySide& a, BodySide& b, const Vec3& n, double C, double rate,
                         const ConstraintParameters& params, double& lambda, bool unilateral, const SolveContext& ctx) {
  const double wSum = a.angularWeight(n) + b.angularWeight(n);
  const double deltaLambda = bodyMultiplier(C, wSum, rate, params, lambda, unilateral, ctx);
  if (deltaLambda == 0.0) return Vec3::Zero();
  const Vec3 p = deltaLambda * n;
  a.applyAngular(p);
  b.applyAngular(-p);
  return p;
}

// A joint's anchors held together along P directions (P = 3: together; 2: on a line) and K
// angular rows (K = 0, 2 or 3) solved as one block: the linearised constraint set of the joint
// projected exactly, instead of one scalar row after the other. Scalar rows along the error's own
// direction (solvePositional with n = gap/|gap|, [M20] sec. 3.3) move a body's anchor by K_p n,
// K_p = 1/m - [r]x I^-1 [r]x, which is not parallel to n when r is not: one pass leaves a gap
// across n, the next removes it along its new direction, and with one pass per substep the joint
// force and the angular velocity alternate from substep to substep (a 0.2 m link released at 37
// degrees: -6.8 N instead of -1.75 N across the link); out of the swing plane the same oblique
// projections amplified round-off in a 10-link hinge chain (about x1.8 per substep at 20
// substeps) until the chain fluttered. Angular rows likewise: a scalar turn along theta/|theta|
// turns a thin bar by I^-1 n, overshooting its twist by the inertia ratio (~300 for a 1 m bar).
// Rows: the gap d = (x_A + r_A) - (x_B + r_B) along the unit columns of D (`gap` = D^T d), then
// `angle` (rad) along the unit columns of U, growing when A turns along them. With the effective
// inverse mass, S = sum over the sides of 1/m - [r]x I^-1 [r]x,
//   A = sum_s J_s M_s^-1 J_s^T = [ D^T S D                           -D^T sum [r]x I^-1 U ]
//                                [ (.)^T                              U^T (I_A^-1 + I_B^-1) U ]
// the XPBD update ([M20] eqs. 4-5 with isotropic compliance, damping as bodyMultiplier) is
//   dlambda = -((1 + gamma) A + alpha~ 1)^-1 (C + alpha~ lambda + gamma rate),
// applied as the impulse p = D dlambda_D at the anchors and the couple U dlambda_U ([M20] eqs.
// 6-9, 12-13). `lambda` accumulates over the substep; returns dlambda.
template <int P, int K>
Eigen::Matrix<double, P + K, 1> solveJointBlock(
    BodySide& a, BodySide& b, const Vec3& rA, const Vec3& rB, const Eigen::Matrix<double, 3, P>& D,
    const Eigen::Matrix<double, P, 1>& gap, const Eigen::Matrix<double, 3, K>& U,
    const Eigen::Matrix<double, K, 1>& angle, const Eigen::Matrix<double, P + K, 1>& rate,
    const ConstraintParameters& params, Eigen::Matrix<double, P + K, 1>& lambda, const SolveContext& ctx) {
  using Vector = Eigen::Matrix<double, P + K, 1>;
  using Matrix = Eigen::Matrix<double, P + K, P + K>;
  const auto skew = [](const Vec3& v) {
    Mat3 s;
    s << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
    return s;
  };
  const Mat3 inverseInertiaA = a.inverseInertiaWorld();
  const Mat3 inverseInertiaB = b.inverseInertiaWorld();
  const Mat3 skewA = skew(rA);
  const Mat3 skewB = skew(rB);
  const double inverseMass = (a.movable ? a.inverseMass : 0.0) + (b.movable ? b.inverseMass : 0.0);
  const Mat3 pointInverseMass =
      inverseMass * Mat3::Identity() - skewA * inverseInertiaA * skewA - skewB * inverseInertiaB * skewB;
  Matrix effective;
  effective.template topLeftCorner<P, P>() = D.transpose() * pointInverseMass * D;
  if constexpr (K > 0) {
    const Eigen::Matrix<double, P, K> cross =
        -(D.transpose() * (skewA * inverseInertiaA * U + skewB * inverseInertiaB * U));
    effective.template topRightCorner<P, K>() = cross;
    effective.template bottomLeftCorner<K, P>() = cross.transpose();
    effective.template bottomRightCorner<K, K>() = U.transpose() * (inverseInertiaA + inverseInertiaB) * U;
  }
  Vector C;
  C.template head<P>() = gap;
  if constexpr (K > 0) C.template tail<K>() = angle;
  Vector deltaLambda;
  if (ctx.mode == SolverMode::Xpbd) {
    const double alphaTilde = params.compliance * ctx.invH2;
    const double gamma = params.compliance * params.damping * ctx.invH;
    const Matrix system = (1.0 + gamma) * effective + alphaTilde * Matrix::Identity();
    if (!(system.trace() > 0.0)) return Vector::Zero();
    deltaLambda = system.ldlt().solve(-C - alphaTilde * lambda - gamma * rate);
  } else {
    if (!(effective.trace() > 0.0)) return Vector::Zero();
    const double k =
        ctx.stiffnessExponent != 1.0 ? 1.0 - std::pow(1.0 - params.stiffness, ctx.stiffnessExponent) : params.stiffness;
    deltaLambda = effective.ldlt().solve(-k * C);
  }
  if (!deltaLambda.allFinite()) return Vector::Zero();
  lambda += deltaLambda;
  const Vec3 p = D * deltaLambda.template head<P>();
  Vec3 couple = Vec3::Zero();
  if constexpr (K > 0) couple = U * deltaLambda.template tail<K>();
  if (a.movable) {
    a.x += a.inverseMass * p;
    a.turn(inverseInertiaA * (rA.cross(p) + couple));
  }
  if (b.movable) {
    b.x -= b.inverseMass * p;
    b.turn(-(inverseInertiaB * (rB.cross(p) + couple)));
  }
  return deltaLambda;
}

// The rotation vector (rad, world) of the unit quaternion q, the shorter way round.
inline Vec3 rotationVector(Quat q) {
  if (q.w() < 0.0) q.coeffs() = -q.coeffs();
  const double s = q.vec().norm();
  if (s < 1e-12) return 2.0 * q.vec();
  return q.vec() * (2.0 * std::atan2(s, q.w()) / s);
}

}  // namespace pliant::detail
