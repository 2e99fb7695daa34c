// Joints ([M20] sec. 3.3). Each joint is projected as a short sequence of generalised corrections
// (rigid/corrections.h): its scalar angular parts first (drive, limits), then its anchors and its
// orientation constraint (hinge: the axes aligned; fixed and prismatic: the frames equal) as one
// block (solveJointBlock: scalar rows one after the other, as [M20] does, let a hinge chain flutter
// out of its plane), then a prismatic joint's limits. Each part keeps a multiplier (a block: the
// norms of its positional and angular parts) in State::jointLambda; the corrections' sums give the
// joint force and couple.
#include "rigid/joints.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "rigid/corrections.h"

namespace pliant::detail {

namespace {

enum Part : int { kPosition = 0, kAngular = 1, kLimit = 2, kDrive = 3 };

// An angle wrapped into (-pi, pi].
double wrapAngle(double angle) {
  angle = std::remainder(angle, 2.0 * std::numbers::pi);
  return angle <= -std::numbers::pi ? angle + 2.0 * std::numbers::pi : angle;
}

// Signed angle (rad) from u to v about the unit axis n (u, v perpendicular to n).
double signedAngle(const Vec3& u, const Vec3& v, const Vec3& n) { return std::atan2(n.dot(u.cross(v)), u.dot(v)); }

bool damped(const ConstraintParameters& params, const SolveContext& ctx) {
  return ctx.mode == SolverMode::Xpbd && params.compliance * params.damping != 0.0;
}

struct JointSolve {
  const Joint& joint;
  const SolveContext& ctx;
  BodySide& a;
  BodySide& b;
  double* lambda;
  Vec3 linear = Vec3::Zero();   // sum of the positional corrections on A
  Vec3 angular = Vec3::Zero();  // sum of the angular corrections on A
  // The corrections on A summed over this substep's earlier passes: the block's multipliers.
  Vec3 linearBefore = Vec3::Zero();
  Vec3 angularBefore = Vec3::Zero();

  Quat frameA() const { return a.q * joint.localFrame[0]; }
  Quat frameB() const { return b.q * joint.localFrame[1]; }
  Vec3 offsetA() const { return a.q * joint.localAnchor[0]; }
  Vec3 offsetB() const { return b.q * joint.localAnchor[1]; }

  // The change since the substep's start of C along n: for damping only.
  double angularRate(const Vec3& n, const ConstraintParameters& params) const {
    if (!damped(params, ctx)) return 0.0;
    return n.dot(rotationVector(a.q * a.qPrev.conjugate()) - rotationVector(b.q * b.qPrev.conjugate()));
  }
  double positionalRate(const Vec3& n, const ConstraintParameters& params) const {
    if (!damped(params, ctx)) return 0.0;
    const Vec3 moveA = a.x + offsetA() - (a.xPrev + a.qPrev * joint.localAnchor[0]);
    const Vec3 moveB = b.x + offsetB() - (b.xPrev + b.qPrev * joint.localAnchor[1]);
    return n.dot(moveA - moveB);
  }

  void angularPart(const Vec3& n, double C, const ConstraintParameters& params, int part, bool unilateral) {
    angular += solveAngular(a, b, n, C, angularRate(n, params), params, lambda[part], unilateral, ctx);
  }
  void positionalPart(const Vec3& n, double C, const ConstraintParameters& params, int part, bool unilateral) {
    linear += solvePositional(a, b, offsetA(), offsetB(), n, C, positionalRate(n, params), params, lambda[part],
                              unilateral, ctx);
  }

  // A's point at offset rA (world) and B's anchor held together along the P columns of D, and K
  // angular rows along the columns of U (`angle` rad, growing when A turns along them), as one
  // block (corrections.h, solveJointBlock).
  template <int P, int K>
  void block(const Eigen::Matrix<double, 3, P>& D, const Vec3& rA, const Eigen::Matrix<double, 3, K>& U,
             const Eigen::Matrix<double, K, 1>& angle) {
    using Vector = Eigen::Matrix<double, P + K, 1>;
    Vector multiplier;
    // P = 3 comes with D = 1 (solveJointBlock): no products with it.
    const auto along = [&](const Vec3& v) -> Eigen::Matrix<double, P, 1> {
      if constexpr (P == 3) return v;
      else return D.transpose() * v;
    };
    multiplier.template head<P>() = along(linearBefore + linear);
    if constexpr (K > 0) multiplier.template tail<K>() = U.transpose() * (angularBefore + angular);
    const Vec3 rB = offsetB();
    Vector rate = Vector::Zero();
    if (damped(joint.params, ctx)) {
      const Vec3 moveA = a.x + rA - (a.xPrev + a.qPrev * (a.q.conjugate() * rA));
      const Vec3 moveB = b.x + rB - (b.xPrev + b.qPrev * joint.localAnchor[1]);
      rate.template head<P>() = along(moveA - moveB);
      if constexpr (K > 0)
        rate.template tail<K>() =
            U.transpose() * (rotationVector(a.q * a.qPrev.conjugate()) - rotationVector(b.q * b.qPrev.conjugate()));
    }
    const Eigen::Matrix<double, P, 1> gap = along(a.x + rA - b.x - rB);
    const Vector delta = solveJointBlock<P, K>(a, b, rA, rB, D, gap, U, angle, rate, joint.params, multiplier, ctx);
    if constexpr (P == 3) linear += delta.template head<3>();
    else linear += D * delta.template head<P>();
    lambda[kPosition] = multiplier.template head<P>().norm();
    if constexpr (K > 0) {
      angular += U * delta.template tail<K>();
      lambda[kAngular] = multiplier.template tail<K>().norm();
    }
  }

  // Fixed: equal orientations of the two frames (the rotation vector of QA QB^-1 grows when A
  // turns) and the anchors together.
  void fixed() {
    const Vec3 theta = rotationVector(frameA() * frameB().conjugate());
    block<3, 3>(Mat3::Identity(), offsetA(), Mat3::Identity(), theta);
  }

  // Keeps phi, the angle of B about the unit axis n relative to A (turning A about n lowers it),
  // within [lower, upper] ([M20] Alg. 3, limitAngle): the nearer limit is the active one.
  void limitAngle(const Vec3& n, double phi, double lower, double upper, int part) {
    if (!(lower > -std::numeric_limits<double>::infinity()) && !(upper < std::numeric_limits<double>::infinity()))
      return;
    const bool lowerSide = std::isinf(upper) || (!std::isinf(lower) && phi < 0.5 * (lower + upper));
    if (lowerSide) angularPart(-n, phi - lower, joint.params, part, true);
    else angularPart(n, upper - phi, joint.params, part, true);
  }

  // Flattened (every call inlined, the same operations): the quaternion rotations and turns were
  // out-of-line calls per joint and pass (docs/performance.md, issue 17, session 29).
  PLIANT_FLATTEN void hinge() {
    const auto angleNow = [&] {
      return signedAngle(frameA() * Vec3::UnitY(), frameB() * Vec3::UnitY(), frameA() * Vec3::UnitX());
    };
    if (joint.drive == JointDrive::Angle) {
      angularPart(-(frameA() * Vec3::UnitX()), wrapAngle(angleNow() - joint.driveTarget), joint.driveParams, kDrive,
                  false);
    } else if (joint.drive == JointDrive::Speed) {
      // The angle should advance by driveTarget h over the substep.
      const Vec3 axis = frameA() * Vec3::UnitX();
      const Quat prevA = a.qPrev * joint.localFrame[0];
      const Quat prevB = b.qPrev * joint.localFrame[1];
      const double before = signedAngle(prevA * Vec3::UnitY(), prevB * Vec3::UnitY(), prevA * Vec3::UnitX());
      angularPart(-axis, wrapAngle(angleNow() - before) - joint.driveTarget * ctx.h, joint.driveParams, kDrive, false);
    }
    // limitAngle does nothing without a finite limit: the angle is not worth measuring then.
    if (joint.lower > -std::numeric_limits<double>::infinity() || joint.upper < std::numeric_limits<double>::infinity())
      limitAngle(frameA() * Vec3::UnitX(), angleNow(), joint.lower, joint.upper, kLimit);
    // The axes aligned ([M20] sec. 3.3.1: the rotation taking B's axis to A's, c = axisB x axisA,
    // perpendicular to A's axis): its two components across A's axis, with the anchors. A's frame
    // as a matrix gives all three of its axes for the price of about one rotated vector.
    const Mat3 frame = frameA().toRotationMatrix();
    const Vec3 axisA = frame.col(0);
    const Vec3 axisB = frameB() * Vec3::UnitX();
    const Vec3 c = axisB.cross(axisA);
    const double s = c.norm();
    const Vec3 theta = s > 0.0 ? Vec3(c * angleOverSine(s, axisA.dot(axisB))) : Vec3::Zero();
    const Eigen::Matrix<double, 3, 2> across = frame.rightCols<2>();
    block<3, 2>(Mat3::Identity(), offsetA(), across, across.transpose() * theta);
  }

  void spherical() {
    if (joint.swingLimit < std::numbers::pi) {
      const Vec3 axisA = frameA() * Vec3::UnitX();
      const Vec3 axisB = frameB() * Vec3::UnitX();
      const Vec3 c = axisA.cross(axisB);
      const double s = c.norm();
      // Turning A about axisA x axisB brings its axis towards B's: the swing shrinks.
      if (s > 0.0) angularPart(c / s, joint.swingLimit - std::atan2(s, axisA.dot(axisB)), joint.params, kAngular, true);
    }
    if (!std::isinf(joint.lower) || !std::isinf(joint.upper)) {
      // Twist about the mean axis, from the frames' y axes projected on its normal plane.
      Vec3 n = frameA() * Vec3::UnitX() + frameB() * Vec3::UnitX();
      const double length = n.norm();
      if (length > 1e-9) {
        n /= length;
        Vec3 yA = frameA() * Vec3::UnitY();
        Vec3 yB = frameB() * Vec3::UnitY();
        yA -= n.dot(yA) * n;
        yB -= n.dot(yB) * n;
        limitAngle(n, signedAngle(yA, yB, n), joint.lower, joint.upper, kLimit);
      }
    }
    block<3, 0>(Mat3::Identity(), offsetA(), Eigen::Matrix<double, 3, 0>(), Eigen::Matrix<double, 0, 1>());
  }

  // Prismatic: equal orientations and B's anchor on A's axis line (held to the point of that line
  // nearest to it, along the two directions across the axis) as one block, then the limits.
  void prismatic() {
    const Quat frame = frameA();
    const Vec3 axis = frame * Vec3::UnitX();
    const auto offset = [&] { return Vec3(b.x + offsetB() - a.x - offsetA()); };
    Eigen::Matrix<double, 3, 2> across;
    across.col(0) = frame * Vec3::UnitY();
    across.col(1) = frame * Vec3::UnitZ();
    const Vec3 theta = rotationVector(frame * frameB().conjugate());
    block<2, 3>(across, offsetA() + offset().dot(axis) * axis, Mat3::Identity(), theta);
    if (!std::isinf(joint.lower) || !std::isinf(joint.upper)) {
      const Vec3 along = frameA() * Vec3::UnitX();
      const double s = offset().dot(along);
      const bool lowerSide =
          std::isinf(joint.upper) || (!std::isinf(joint.lower) && s < 0.5 * (joint.lower + joint.upper));
      if (lowerSide) positionalPart(-along, s - joint.lower, joint.params, kLimit, true);
      else positionalPart(along, joint.upper - s, joint.params, kLimit, true);
    }
  }

  void distance() {
    const Vec3 d = a.x + offsetA() - b.x - offsetB();
    const double length = d.norm();
    if (length > 1e-12) positionalPart(d / length, length - joint.restLength, joint.params, kPosition, false);
  }
};

}  // namespace

void resetJoints(const Model& model, State& state) {
  const auto movable = [&](BodyIndex body) {
    return body != kWorldBody && model.bodies[body].dynamic() && !state.bodyAsleep(body);
  };
  for (std::size_t j = 0; j < model.joints.size(); ++j) {
    // A joint of a sleeping island (rigid/sleeping.cpp) is not projected: it keeps the multipliers
    // and the force of its last substep awake.
    if (!movable(model.joints[j].bodies[0]) && !movable(model.joints[j].bodies[1])) continue;
    std::fill_n(state.jointLambda.begin() + static_cast<std::ptrdiff_t>(kJointMultipliers * j), kJointMultipliers, 0.0);
    state.jointLinearImpulse[j].setZero();
    state.jointAngularImpulse[j].setZero();
  }
}

std::int64_t projectJoints(const Model& model, const SolveContext& ctx, State& state, bool check) {
  for (std::size_t j = 0; j < model.joints.size(); ++j) {
    const Joint& joint = model.joints[j];
    BodySide a = BodySide::load(model, state, joint.bodies[0]);
    BodySide b = BodySide::load(model, state, joint.bodies[1]);
    if (!a.movable && !b.movable) continue;
    JointSolve solve{joint, ctx, a, b, state.jointLambda.data() + kJointMultipliers * j};
    // What A received over this substep's earlier passes (State keeps what B received).
    solve.linearBefore = -state.jointLinearImpulse[j];
    solve.angularBefore = -state.jointAngularImpulse[j];
    switch (joint.kind) {
      case JointKind::Fixed:
        solve.fixed();
        break;
      case JointKind::Spherical:
        solve.spherical();
        break;
      case JointKind::Hinge:
        solve.hinge();
        break;
      case JointKind::Prismatic:
        solve.prismatic();
        break;
      case JointKind::Distance:
        solve.distance();
        break;
    }
    a.store(state, joint.bodies[0]);
    b.store(state, joint.bodies[1]);
    // What B received is the opposite of what A did.
    state.jointLinearImpulse[j] -= solve.linear;
    state.jointAngularImpulse[j] -= solve.angular;
    if (check && (!a.x.allFinite() || !a.q.coeffs().allFinite() || !b.x.allFinite() || !b.q.coeffs().allFinite()))
      return static_cast<std::int64_t>(j);
  }
  return -1;
}

}  // namespace pliant::detail
