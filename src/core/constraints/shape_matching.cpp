// Shape matching (Mueller, Heidelberger, Teschner & Gross 2005, "Meshless deformations based on
// shape matching", SIGGRAPH 2005) as one XPBD constraint per cluster.
//
// The paper, per cluster of particles with weights m_i, rest offsets q_i = x0_i - c0 and current
// offsets p_i = x_i - c (c, c0 the centres of mass): A_pq = sum m_i p_i q_i^T (eq. 7), R its
// rotation from the polar decomposition A_pq = R S (sec. 3.3), goals g_i = R q_i + c (eq. 8), and
// the update x_i += alpha (g_i - x_i) (eq. 3). The linear mode (sec. 4.1) uses
// A = A_pq A_qq^-1 with A_qq = sum m_i q_i q_i^T, divided by cbrt(det A) to keep the volume,
// blended as beta A + (1 - beta) R.
//
// What Pliant does with it (the choice, and why): the cluster is one scalar constraint
//   C = sqrt(sum_i m_i |x_i - g_i|^2 / M),   M = sum_i m_i,
// the mass-weighted RMS distance to the goals (m). In rigid mode (R, c) minimise
// sum m_i |x_i - R q_i - c|^2 over rotations and translations (that is what the polar
// decomposition finds), so by the envelope theorem the gradient ignores how R and c move with x:
//   dC/dx_i = (m_i / M) (x_i - g_i) / C          (exact, not an approximation)
// and sum_i w_i |dC/dx_i|^2 = 1/M when w_i = 1/m_i. XPBD's update (docs/validation.md, "The
// method") then moves every particle along (g_i - x_i) by the same fraction
//   M (C + alpha~ lambda) / (C (1 + alpha~ M)),
// which is exactly Mueller's step with alpha = 1 for compliance 0, and PBD's stiffness k is
// Mueller's alpha (k' makes it iteration-independent, as for every family). Because every
// correction is m_i^-1 times a gradient that sums to zero (sum m_i g_i = M c) and whose moment
// sum m_i p_i x (R q_i) is the axial vector of the skew part of R S R^T = 0, a projection conserves
// linear and angular momentum exactly (V8). One multiplier per cluster fits the solver's tables
// (constraintsPerEntry 1) and gives a force estimate and an energy C^2 / (2 alpha), the
// mass-weighted squared distance to the best rigid copy times 1/(2 alpha M).
// The alternative, one zero-length constraint |x_i - g_i| per member with its own multiplier,
// would need a variable number of multipliers per entry and would compute the same goals once per
// member (or freeze them per cluster, which is this constraint's linearisation anyway).
//
// In linear mode the goals are not the minimiser of C's sum (the blend and the volume scaling move
// them away), so the same gradient is the one of C with the goals held fixed (exact again for
// beta = 1 without volume scaling, the least-squares fit). Momentum is still conserved exactly:
// sum m_i q_i = 0 keeps the centre, and the moment is the skew part of T A_pq^T, symmetric for
// T = R (R S R^T), for T = A_pq A_qq^+ (A_pq A_qq^+ A_pq^T, scaled or not; A_pq P_null = 0 since the
// q_i lie in A_qq's range) and for any blend of the two.
//
// Degenerate clusters: the rotation comes from the SVD A_pq = U Sigma V^T as R = U D V^T,
// D = diag(1, 1, det(U V^T)) (a proper rotation, never a reflection; the smallest singular direction
// is the one flipped). For a flat or collinear cluster (A_pq of rank 2 or 1) the SVD's free
// directions are still orthonormal, so R stays a rotation and the goals in the cluster's plane or
// line are exact. In linear mode A_qq is singular there: A uses its pseudo-inverse and acts as R on
// its null space (A = A_pq A_qq^+ + R P_null), and volume preservation scales by |det A|^(-1/rank),
// which keeps the area of a flat cluster and the length of a collinear one. When det A <= 0 (an
// inverted cluster) the volume cannot be kept without a reflection: the linear part falls back to R.
//
// Clusters share particles and have any size, so the family is projected serially, cluster after
// cluster in index order (no `particles` entry for the parallel plan): the result is the same bits
// for any thread count. No allocation: gradients go to the solver's scratch, sized for the largest
// cluster.
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <cmath>

#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {

// Eigenvalues of A_qq below this fraction of the largest count as zero (a flat or collinear cluster).
constexpr double kRankTolerance = 1e-10;

// The rotation of the polar decomposition of `a` (see the top of this file).
Mat3 polarRotation(const Mat3& a) {
  const Eigen::JacobiSVD<Mat3> svd(a, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Mat3 u = svd.matrixU();
  const Mat3& v = svd.matrixV();
  if ((u * v.transpose()).determinant() < 0.0) u.col(2) = -u.col(2);
  return u * v.transpose();
}

// Goal transform T (goals g_i = T q_i + c) of cluster `con` at positions x, and its centre c.
Mat3 goalTransform(const Model& model, const ShapeMatchingConstraint& con, const Vec3* x, Vec3& centre) {
  const ParticleIndex* particles = model.shapeMatchingParticles.data() + con.firstMember;
  const Vec3* q = model.shapeMatchingRestOffsets.data() + con.firstMember;
  const double* m = model.shapeMatchingWeights.data() + con.firstMember;
  Vec3 sum = Vec3::Zero();
  for (std::uint32_t i = 0; i < con.memberCount; ++i) sum += m[i] * x[particles[i]];
  centre = sum / con.totalWeight;
  Mat3 apq = Mat3::Zero();
  for (std::uint32_t i = 0; i < con.memberCount; ++i) apq += (m[i] * (x[particles[i]] - centre)) * q[i].transpose();
  const Mat3 rotation = polarRotation(apq);
  if (con.mode == ShapeMatchingMode::Rigid || con.beta == 0.0) return rotation;
  Mat3 linear = apq * con.restInverse + rotation * con.restNullProjector;
  if (con.preserveVolume && con.restRank > 0) {
    const double det = linear.determinant();
    if (!(det > 0.0) || !std::isfinite(det)) linear = rotation;
    else linear /= std::pow(det, 1.0 / con.restRank);
  }
  return con.beta * linear + (1.0 - con.beta) * rotation;
}

// Writes dC/dx_i of every member into gradient[0 .. memberCount) and returns C (0 and zero
// gradients when every particle is on its goal).
double valueAndGradient(const Model& model, const ShapeMatchingConstraint& con, const Vec3* x, Vec3* gradient) {
  const ParticleIndex* particles = model.shapeMatchingParticles.data() + con.firstMember;
  const Vec3* q = model.shapeMatchingRestOffsets.data() + con.firstMember;
  const double* m = model.shapeMatchingWeights.data() + con.firstMember;
  Vec3 centre;
  const Mat3 transform = goalTransform(model, con, x, centre);
  double sum = 0.0;
  for (std::uint32_t i = 0; i < con.memberCount; ++i) {
    gradient[i] = x[particles[i]] - (transform * q[i] + centre);
    sum += m[i] * gradient[i].squaredNorm();
  }
  const double C = std::sqrt(sum / con.totalWeight);
  const double scale = C > 0.0 ? 1.0 / (con.totalWeight * C) : 0.0;
  for (std::uint32_t i = 0; i < con.memberCount; ++i) gradient[i] *= m[i] * scale;
  return C;
}

}  // namespace

void projectShapeMatching(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  Vec3* gradient = ctx.scratch->data();
  for (std::uint32_t c = begin; c < end; ++c) {
    const ShapeMatchingConstraint& con = model.shapeMatchings[c];
    const ParticleIndex* particles = model.shapeMatchingParticles.data() + con.firstMember;
    const double C = valueAndGradient(model, con, x, gradient);
    if (!(C > 0.0)) continue;
    double wSum = 0.0;
    for (std::uint32_t i = 0; i < con.memberCount; ++i) wSum += w[particles[i]] * gradient[i].squaredNorm();
    if (!(wSum > 1e-300)) continue;
    const double dLambda = solveMultiplier(C, wSum, static_cast<int>(con.memberCount), gradient, particles, con.params,
                                           ctx.lambda[c], false, ctx);
    for (std::uint32_t i = 0; i < con.memberCount; ++i) {
      const ParticleIndex p = particles[i];
      moveParticle(x, p, w[p], (w[p] * dLambda) * gradient[i]);
    }
  }
}

double evaluateShapeMatching(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                             std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const ShapeMatchingConstraint& con = model.shapeMatchings[i];
  const ParticleIndex* members = model.shapeMatchingParticles.data() + con.firstMember;
  particles.assign(members, members + con.memberCount);
  gradient.resize(con.memberCount);
  return valueAndGradient(model, con, x, gradient.data());
}

void shapeMatchingRestShape(const Vec3* restPositions, const ParticleIndex* particles, const double* weights,
                            ShapeMatchingConstraint& con, Vec3* restOffsets) {
  double total = 0.0;
  Vec3 sum = Vec3::Zero();
  for (std::uint32_t i = 0; i < con.memberCount; ++i) {
    total += weights[i];
    sum += weights[i] * restPositions[particles[i]];
  }
  con.totalWeight = total;
  const Vec3 centre = sum / total;
  Mat3 aqq = Mat3::Zero();
  for (std::uint32_t i = 0; i < con.memberCount; ++i) {
    restOffsets[i] = restPositions[particles[i]] - centre;
    aqq += weights[i] * restOffsets[i] * restOffsets[i].transpose();
  }
  // Pseudo-inverse and null space of the symmetric A_qq from its eigenvectors.
  const Eigen::SelfAdjointEigenSolver<Mat3> eigen(aqq);
  const Vec3 values = eigen.eigenvalues();  // ascending
  const Mat3& vectors = eigen.eigenvectors();
  con.restInverse.setZero();
  con.restNullProjector.setZero();
  con.restRank = 0;
  for (int k = 0; k < 3; ++k) {
    const Vec3 v = vectors.col(k);
    if (values[k] > kRankTolerance * values[2]) {
      con.restInverse += v * v.transpose() / values[k];
      ++con.restRank;
    } else {
      con.restNullProjector += v * v.transpose();
    }
  }
}

namespace {

void validateShapeMatchings(const Model& model) {
  const std::size_t members = model.shapeMatchingParticles.size();
  if (model.shapeMatchingRestOffsets.size() != members || model.shapeMatchingWeights.size() != members)
    throw Error("shape matching members: particles, rest offsets and weights differ in length (" +
                std::to_string(members) + ", " + std::to_string(model.shapeMatchingRestOffsets.size()) + ", " +
                std::to_string(model.shapeMatchingWeights.size()) + ")");
  for (std::size_t i = 0; i < model.shapeMatchings.size(); ++i) {
    const ShapeMatchingConstraint& c = model.shapeMatchings[i];
    const std::string where = describe("shape matching cluster", i);
    checkParameters(c.params, where);
    if (c.memberCount < 2 || std::uint64_t{c.firstMember} + c.memberCount > members)
      throw Error(where + ": member range out of bounds or fewer than 2 members");
    if (c.mode != ShapeMatchingMode::Rigid && c.mode != ShapeMatchingMode::Linear)
      throw Error(where + ": mode must be rigid or linear");
    if (!(c.beta >= 0.0 && c.beta <= 1.0)) throw Error(where + ": beta must be in [0, 1], got " + formatNumber(c.beta));
    if (c.restRank > 3) throw Error(where + ": rest rank must be at most 3");
    if (!c.restInverse.allFinite() || !c.restNullProjector.allFinite())
      throw Error(where + ": rest shape matrices must be finite");
    double total = 0.0;
    for (std::uint32_t k = c.firstMember; k < c.firstMember + c.memberCount; ++k) {
      checkIndex(model.shapeMatchingParticles[k], model.particleCount(), where);
      checkFinite(model.shapeMatchingRestOffsets[k], where + " rest offset");
      const double m = model.shapeMatchingWeights[k];
      if (!(m > 0.0) || !std::isfinite(m))
        throw Error(where + ": member weight must be a finite mass > 0 kg, got " + formatNumber(m));
      total += m;
    }
    if (!(c.totalWeight > 0.0) || std::abs(c.totalWeight - total) > 1e-9 * total)
      throw Error(where + ": total weight " + formatNumber(c.totalWeight) + " kg is not the sum of the weights (" +
                  formatNumber(total) + " kg)");
  }
}

}  // namespace

const FamilyKernels kShapeMatchingKernels = {projectShapeMatching,  projectShapeMatching,
                                             evaluateShapeMatching, nullptr,
                                             neverUnilateral,       validateShapeMatchings};

}  // namespace pliant::detail
