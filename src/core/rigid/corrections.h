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
#include "inline_hints.h"
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
    return worldInverseInertia(q, inverseInertia);
  }
  // R diag(principal) R^T for the rotation q; exactly s times the identity when the three principal
  // values are one s (a sphere, a cube), which the product would only give to rounding.
  static Mat3 worldInverseInertia(const Quat& q, const Vec3& principal) {
    if (isotropic(principal)) return principal.x() * Mat3::Identity();
    const Mat3 r = q.toRotationMatrix();
    return r * principal.asDiagonal() * r.transpose();
  }
  static bool isotropic(const Vec3& principal) {
    return principal.x() == principal.y() && principal.y() == principal.z();
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

// Solves m x = rhs for a small symmetric positive definite m (its lower triangle given) of fixed
// size by an LDL^T factorisation without pivoting, loops the compiler unrolls (a joint block:
// J M^-1 J^T of a full-rank J, plus the compliance on the diagonal). Returns false, x unset, when a
// pivot is not clearly positive (a block that is singular, or nearly so, or not finite): the
// caller then falls back on Eigen's pivoted LDLT, which treats zero pivots as it always did.
template <int N>
PLIANT_ALWAYS_INLINE inline bool solveSymmetricPositive(const double (&m)[N][N], const double (&rhs)[N],
                                                        double (&x)[N]) {
  double lower[N][N];  // unit lower factor L (below the diagonal)
  double pivots[N];
  double inversePivot[N];
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) {
    double pivot = m[j][j];
    double scaled[N];  // L(j, k) d_k
#pragma GCC unroll 8
    for (int k = 0; k < j; ++k) {
      scaled[k] = lower[j][k] * pivots[k];
      pivot -= lower[j][k] * scaled[k];
    }
    if (!(pivot > 1e-12 * m[j][j])) return false;
    pivots[j] = pivot;
    inversePivot[j] = 1.0 / pivot;
#pragma GCC unroll 8
    for (int i = j + 1; i < N; ++i) {
      double v = m[i][j];
#pragma GCC unroll 8
      for (int k = 0; k < j; ++k) v -= lower[i][k] * scaled[k];
      lower[i][j] = v * inversePivot[j];
    }
  }
  double y[N];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    double v = rhs[i];
#pragma GCC unroll 8
    for (int k = 0; k < i; ++k) v -= lower[i][k] * y[k];
    y[i] = v;
  }
#pragma GCC unroll 8
  for (int i = N - 1; i >= 0; --i) {
    double v = y[i] * inversePivot[i];
#pragma GCC unroll 8
    for (int k = i + 1; k < N; ++k) v -= lower[k][i] * x[k];
    x[i] = v;
  }
  return true;
}

// A joint's anchors held together along P directions (P = 3: together, D = 1; 2: on a line) and K
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
// `angle` (rad) along the unit columns of U, growing when A turns along them. Each side's rows
// turn it about the columns of G_s = [r_s x D, U] ([M20] eqs. 2 and 11 per row), so with the
// inverse masses and the principal inverse inertias in the body frame (G_s^b = R_s^T G_s)
//   A = sum_s J_s M_s^-1 J_s^T = (1/m_A + 1/m_B) [D^T D 0; 0 0] + sum_s G_s^b^T diag(I_s^-1) G_s^b,
// the same matrix as [D^T S D, -D^T sum [r]x I^-1 U; (.)^T, U^T (I_A^-1 + I_B^-1) U] with the
// point's inverse mass S = sum 1/m - [r]x I^-1 [r]x, without forming a world inertia. The XPBD
// update ([M20] eqs. 4-5 with isotropic compliance, damping as bodyMultiplier) is
//   dlambda = -((1 + gamma) A + alpha~ 1)^-1 (C + alpha~ lambda + gamma rate),
// applied as the impulse p = D dlambda_D at the anchors and the couple U dlambda_U ([M20] eqs.
// 6-9, 12-13): side s turns by +-R_s diag(I_s^-1) G_s^b dlambda. `lambda` accumulates over the
// substep; returns dlambda. Written on plain fixed-size arrays (lower triangle only): this runs
// once per joint per pass and Eigen's general small products and pivoted LDLT cost about three
// times as much here (bench/rigid, hinge-chain-100; docs/performance.md, issue 17).
template <int P, int K>
Eigen::Matrix<double, P + K, 1> solveJointBlock(
    BodySide& a, BodySide& b, const Vec3& rA, const Vec3& rB, const Eigen::Matrix<double, 3, P>& D,
    const Eigen::Matrix<double, P, 1>& gap, const Eigen::Matrix<double, 3, K>& U,
    const Eigen::Matrix<double, K, 1>& angle, const Eigen::Matrix<double, P + K, 1>& rate,
    const ConstraintParameters& params, Eigen::Matrix<double, P + K, 1>& lambda, const SolveContext& ctx) {
  constexpr int N = P + K;
  using Vector = Eigen::Matrix<double, N, 1>;
  // One side's rotation R_s and the columns diag(I_s^-1) G_s^b, by component (weighted[c][i]: component c
  // of column i), so that the loops over the columns run on packed pairs.
  struct Side {
    Mat3 rotation;  // set, with `weighted`, by load() for a side that moves (read only then)
    double weighted[3][N];
  };
  double effective[N][N];  // lower triangle
  const double inverseMass = (a.movable ? a.inverseMass : 0.0) + (b.movable ? b.inverseMass : 0.0);
  // P = 3 (anchors together) always comes with D = 1: D^T D = 1, and r x e_i needs no product.
  for (int i = 0; i < P; ++i)
    for (int j = 0; j <= i; ++j)
      effective[i][j] = P == 3 ? (i == j ? inverseMass : 0.0) : inverseMass * D.col(i).dot(D.col(j));
  for (int i = P; i < N; ++i)
    for (int j = 0; j <= i; ++j) effective[i][j] = 0.0;
  // Inlined: called out of line (twice), every entry of `effective` went through memory.
  const auto load = [&](const BodySide& s, const Vec3& r, Side& side) PLIANT_ALWAYS_INLINE {
    side.rotation = s.q.toRotationMatrix();
    const Mat3& R = side.rotation;
    double g[3][N];  // the world columns r x D_i, then U_k, by component
    const auto put = [&](int i, const Vec3& v) {
      g[0][i] = v.x();
      g[1][i] = v.y();
      g[2][i] = v.z();
    };
    if constexpr (P == 3) {
      put(0, Vec3(0.0, r.z(), -r.y()));  // r x e_x
      put(1, Vec3(-r.z(), 0.0, r.x()));  // r x e_y
      put(2, Vec3(r.y(), -r.x(), 0.0));  // r x e_z
    } else {
      for (int i = 0; i < P; ++i) put(i, r.cross(D.col(i)));
    }
    if constexpr (K > 0)
      for (int k = 0; k < K; ++k) put(P + k, U.col(k));
    double body[3][N];  // G^b = R^T G
    for (int c = 0; c < 3; ++c) {
      const double r0 = R(0, c), r1 = R(1, c), r2 = R(2, c), inverseInertia = s.inverseInertia[c];
      for (int i = 0; i < N; ++i) {
        body[c][i] = r0 * g[0][i] + r1 * g[1][i] + r2 * g[2][i];
        side.weighted[c][i] = inverseInertia * body[c][i];
      }
    }
    for (int i = 0; i < N; ++i)
      for (int j = 0; j <= i; ++j)
        effective[i][j] +=
            body[0][i] * side.weighted[0][j] + body[1][i] * side.weighted[1][j] + body[2][i] * side.weighted[2][j];
  };
  Side sideA, sideB;
  if (a.movable) load(a, rA, sideA);
  if (b.movable) load(b, rB, sideB);
  double C[N];
  for (int i = 0; i < P; ++i) C[i] = gap[i];
  for (int k = 0; k < K; ++k) C[P + k] = angle[k];
  double system[N][N];
  double rhs[N];
  double trace = 0.0;
  if (ctx.mode == SolverMode::Xpbd) {
    const double alphaTilde = params.compliance * ctx.invH2;
    const double gamma = params.compliance * params.damping * ctx.invH;
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < i; ++j) system[i][j] = (1.0 + gamma) * effective[i][j];
      system[i][i] = (1.0 + gamma) * effective[i][i] + alphaTilde;
      trace += system[i][i];
      rhs[i] = -C[i] - alphaTilde * lambda[i] - gamma * rate[i];
    }
  } else {
    const double k =
        ctx.stiffnessExponent != 1.0 ? 1.0 - std::pow(1.0 - params.stiffness, ctx.stiffnessExponent) : params.stiffness;
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j <= i; ++j) system[i][j] = effective[i][j];
      trace += system[i][i];
      rhs[i] = -k * C[i];
    }
  }
  if (!(trace > 0.0)) return Vector::Zero();
  double solution[N];
  Vector deltaLambda;
  if (solveSymmetricPositive<N>(system, rhs, solution)) {
    for (int i = 0; i < N; ++i) deltaLambda[i] = solution[i];
  } else {
    Eigen::Matrix<double, N, N> full;
    Vector right;
    for (int i = 0; i < N; ++i) {
      right[i] = rhs[i];
      for (int j = 0; j <= i; ++j) full(i, j) = full(j, i) = system[i][j];
    }
    deltaLambda = full.ldlt().solve(right);
  }
  if (!deltaLambda.allFinite()) return Vector::Zero();
  lambda += deltaLambda;
  Vec3 p;
  if constexpr (P == 3) p = deltaLambda.template head<3>();
  else p = D * deltaLambda.template head<P>();
  // The body-frame turn diag(I^-1) G^b dlambda, then into world axes.
  const auto turnOf = [&](const Side& side) PLIANT_ALWAYS_INLINE {
    Vec3 t = Vec3::Zero();
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < N; ++i) t[c] += side.weighted[c][i] * deltaLambda[i];
    return Vec3(side.rotation * t);
  };
  if (a.movable) {
    a.x += a.inverseMass * p;
    a.turn(turnOf(sideA));
  }
  if (b.movable) {
    b.x -= b.inverseMass * p;
    b.turn(-turnOf(sideB));
  }
  return deltaLambda;
}

// atan2(s, c) / s for s > 0: the angle per unit sine of an angle given by its sine and cosine
// (up to a common positive factor). A joint's error angle is small: there, with t = s / c,
// atan(t) / s = (1 - t^2/3 + t^4/5 - t^6/7 + t^8/9) / c, whose next term (t^10/11 < 1e-20 for
// t < 0.01) is below double rounding, in a few multiplications instead of a libm atan2 call.
inline double angleOverSine(double s, double c) {
  if (c > 0.0 && s < 0.01 * c) {
    const double t2 = (s / c) * (s / c);
    return (1.0 - t2 * (1.0 / 3.0 - t2 * (1.0 / 5.0 - t2 * (1.0 / 7.0 - t2 * (1.0 / 9.0))))) / c;
  }
  return std::atan2(s, c) / s;
}

// The rotation vector (rad, world) of the unit quaternion q, the shorter way round.
inline Vec3 rotationVector(Quat q) {
  if (q.w() < 0.0) q.coeffs() = -q.coeffs();
  const double s = q.vec().norm();
  if (s < 1e-12) return 2.0 * q.vec();
  return q.vec() * (2.0 * angleOverSine(s, q.w()));
}

}  // namespace pliant::detail
