// The joint block solve (src/core/rigid/corrections.h, [M20] sec. 3.3, eqs. 2-13) against its
// textbook form: the effective mass J M^-1 J^T built from the full 5 x 12 Jacobian of a hinge with
// world-frame inertias and solved by Eigen's pivoted LDLT. solveJointBlock forms the same matrix
// from each side's rows in its body frame and factors it without pivoting (docs/performance.md,
// issue 17); the two must agree to rounding. V16 (docs/validation.md) tests the joints' physics.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "rigid/corrections.h"

namespace pliant::detail {
namespace {

// A link-like body: 1 kg, a 0.5 x 0.1 x 0.1 m box's principal inverse inertias, turned.
BodySide link(const Vec3& x, const Quat& q) {
  BodySide s;
  s.x = x;
  s.q = q.normalized();
  s.xPrev = s.x;
  s.qPrev = s.q;
  s.inverseMass = 1.0;
  s.inverseInertia = Vec3(1.0 / 0.001667, 1.0 / 0.02167, 1.0 / 0.02167);
  s.movable = true;
  return s;
}

Mat3 skew(const Vec3& v) {
  Mat3 s;
  s << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
  return s;
}

// The 5 x 6 Jacobian of one side of a hinge block (rows: the gap along x, y, z, then the angle
// along the columns of U) and that side's 6 x 6 inverse mass in world axes.
Eigen::Matrix<double, 5, 6> jacobian(const Vec3& r, const Eigen::Matrix<double, 3, 2>& U) {
  Eigen::Matrix<double, 5, 6> J = Eigen::Matrix<double, 5, 6>::Zero();
  J.topLeftCorner<3, 3>() = Mat3::Identity();
  J.topRightCorner<3, 3>() = -skew(r);  // row i: (r x e_i)^T = -e_i^T [r]x
  J.bottomRightCorner<2, 3>() = U.transpose();
  return J;
}
Eigen::Matrix<double, 6, 6> inverseMass(const BodySide& s) {
  Eigen::Matrix<double, 6, 6> M = Eigen::Matrix<double, 6, 6>::Zero();
  M.topLeftCorner<3, 3>() = s.inverseMass * Mat3::Identity();
  const Mat3 R = s.q.toRotationMatrix();
  M.bottomRightCorner<3, 3>() = R * s.inverseInertia.asDiagonal() * R.transpose();
  return M;
}

TEST(JointBlock, HingeBlockMatchesTheDenseEffectiveMassSolve) {
  const Vec3 rA(0.24, 0.03, -0.02), rB(-0.25, 0.01, 0.04);
  const Vec3 gap(0.001, -0.0005, 0.0008);  // m: the anchors a little apart
  BodySide a = link(Vec3(0.1, -0.2, 0.05), Quat(0.9, 0.1, -0.3, 0.2));
  BodySide b = link(a.x + rA - rB - gap, Quat(0.7, -0.2, 0.1, 0.4));
  Eigen::Matrix<double, 3, 2> U;
  U.col(0) = Vec3(0.0, 1.0, 0.2).normalized();
  U.col(1) = Vec3(0.0, -0.2, 1.0).normalized();
  const Vec3 d = a.x + rA - b.x - rB;  // = gap
  const Eigen::Matrix<double, 2, 1> angle(0.003, -0.002);
  ConstraintParameters params;
  params.compliance = 1e-6;  // alpha~ = 1e-6 / h^2 on the diagonal
  SolveContext ctx;
  ctx.h = 1.0 / 1200.0;
  ctx.invH = 1.0 / ctx.h;
  ctx.invH2 = ctx.invH * ctx.invH;
  Eigen::Matrix<double, 5, 1> lambda = Eigen::Matrix<double, 5, 1>::Zero();
  const Eigen::Matrix<double, 5, 1> rate = Eigen::Matrix<double, 5, 1>::Zero();

  // Textbook: A = J_A M_A^-1 J_A^T + J_B M_B^-1 J_B^T (J_B = -J_A's form at r_B).
  const Eigen::Matrix<double, 5, 6> JA = jacobian(rA, U), JB = -jacobian(rB, U);
  const Eigen::Matrix<double, 5, 5> A = JA * inverseMass(a) * JA.transpose() + JB * inverseMass(b) * JB.transpose();
  Eigen::Matrix<double, 5, 1> C;
  C << d, angle;
  const double alphaTilde = params.compliance * ctx.invH2;
  const Eigen::Matrix<double, 5, 5> system = A + alphaTilde * Eigen::Matrix<double, 5, 5>::Identity();
  const Eigen::Matrix<double, 5, 1> expected = system.ldlt().solve(-C);
  const Eigen::Matrix<double, 6, 1> moveA = inverseMass(a) * JA.transpose() * expected;
  const Eigen::Matrix<double, 6, 1> moveB = inverseMass(b) * JB.transpose() * expected;

  const Vec3 xA = a.x, xB = b.x;
  const Eigen::Matrix<double, 5, 1> got =
      solveJointBlock<3, 2>(a, b, rA, rB, Mat3::Identity(), d, U, angle, rate, params, lambda, ctx);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(got[i], expected[i], 1e-12 * expected.norm()) << "row " << i;
  EXPECT_LT((lambda - expected).norm(), 1e-12 * expected.norm());
  // The bodies moved by M^-1 J^T dlambda ([M20] eqs. 6-9, 12-13): positions exactly so, the
  // rotations to first order in the (small) turn.
  EXPECT_LT((a.x - xA - moveA.head<3>()).norm(), 1e-15);
  EXPECT_LT((b.x - xB - moveB.head<3>()).norm(), 1e-15);
  EXPECT_GT(moveA.tail<3>().norm(), 1e-4);  // the check below has something to compare
  const Quat turnA = a.q * a.qPrev.conjugate();
  EXPECT_LT((2.0 * turnA.vec() - moveA.tail<3>()).norm(), 1e-3 * moveA.tail<3>().norm());
}

TEST(JointBlock, UnpivotedSolveMatchesPivotedAndRefusesSingularBlocks) {
  // An SPD 5 x 5 matrix M = B B^T + 0.1 1 with B fixed.
  Eigen::Matrix<double, 5, 5> B;
  B << 1, 2, 0, -1, 3, 0, 1, 4, 2, -2, 3, -1, 1, 0, 1, 2, 2, -3, 1, 0, -1, 0, 2, 5, 1;
  const Eigen::Matrix<double, 5, 5> M = B * B.transpose() + 0.1 * Eigen::Matrix<double, 5, 5>::Identity();
  double m[5][5], rhs[5] = {1.0, -2.0, 0.5, 3.0, -1.5}, x[5];
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) m[i][j] = M(i, j);
  ASSERT_TRUE(solveSymmetricPositive<5>(m, rhs, x));
  const Eigen::Matrix<double, 5, 1> expected = M.ldlt().solve(Eigen::Map<const Eigen::Matrix<double, 5, 1>>(rhs));
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(x[i], expected[i], 1e-10 * expected.norm()) << "row " << i;

  // Rank 4 (two equal rows of B, no regularisation): the solve refuses, and solveJointBlock
  // falls back on the pivoted LDLT.
  Eigen::Matrix<double, 5, 5> singularB = B;
  singularB.row(4) = singularB.row(3);
  const Eigen::Matrix<double, 5, 5> S = singularB * singularB.transpose();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) m[i][j] = S(i, j);
  EXPECT_FALSE(solveSymmetricPositive<5>(m, rhs, x));
  m[2][2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(solveSymmetricPositive<5>(m, rhs, x));
}

TEST(JointBlock, AngleOverSineMatchesAtan2OnBothBranches) {
  // The series below t = s/c = 0.01 and atan2 above it; both are atan2(s, c)/s to rounding.
  for (const double angle : {1e-9, 1e-6, 1e-4, 3e-3, 9.9e-3, 1.01e-2, 0.1, 1.0, 2.5}) {
    for (const double scale : {1.0, 0.37}) {  // sine and cosine share a positive factor
      const double s = scale * std::sin(angle), c = scale * std::cos(angle);
      const double expected = std::atan2(s, c) / s;
      EXPECT_NEAR(angleOverSine(s, c), expected, 4e-16 * std::abs(expected)) << "angle " << angle;
    }
  }
}

}  // namespace
}  // namespace pliant::detail
