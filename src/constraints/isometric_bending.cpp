// Isometric bending (Bergou et al. 2006). For a flat rest state the discrete mean-curvature vector
// of an edge stencil, k = sum_i K_i x_i, is linear in the positions with constant weights, so the
// bending energy E = 1/2 |k|^2 is quadratic. Pliant's constraint is C = |k|, with gradient
// dC/dx_i = K_i k/|k|, so sum w|gradC|^2 = sum w_i K_i^2 and U = C^2/(2 alpha) = E/alpha.
// At exactly zero curvature the direction is undefined and there is nothing to correct.
#include "constraints/projection.h"

namespace pliant::detail {

namespace {
constexpr double kMinCurvature = 1e-14;  // dimensionless

// k = sum_i K_i x_i, summed as a tree (two dependent adds, not three) to shorten the chain
// through positions that consecutive stencils may share.
inline Vec3 curvatureVector(const double K[4], const ParticleIndex p[4], const Vec3* x) {
  return (K[0] * x[p[0]] + K[1] * x[p[1]]) + (K[2] * x[p[2]] + K[3] * x[p[3]]);
}

// A hot loop of a cloth step, written like projectDistance: the unit vector u takes one division
// (1/C) instead of three, and XPBD without damping (gamma = 0) is done inline with exactly the
// operations solveMultiplier performs when gamma == 0 ((1 + 0) wSum == wSum and x - 0 == x), so
// its dlambda is bit-identical. Damped XPBD and PBD call solveMultiplier with the gradient.
// Where consecutive stencils share particles (models built in index order) the loop waits on the
// chain x -> C -> dlambda -> x, so the corrections are formed as dlambda (w_i K_i u) to keep it
// short; the builders emit stencils in colour order, which lets the CPU overlap neighbours.
template <bool kXpbd>
void projectIsometricBendingRange(const Model& model, const SolveContext& ctx,
                                  std::uint32_t begin, std::uint32_t end) {
  // Locals, not ctx fields: stores through x may alias ctx and would force reloads.
  const IsometricBendingConstraint* constraints = model.isometricBendings.data();
  Vec3* const x = ctx.x;
  const double* const w = ctx.w;
  double* const lambda = ctx.lambda;
  const double invH = ctx.invH;
  const double invH2 = ctx.invH2;
  for (std::uint32_t c = begin; c < end; ++c) {
    const IsometricBendingConstraint& con = constraints[c];
    const ParticleIndex* p = con.particles;
    const double* K = con.weights;
    const Vec3 curvature = curvatureVector(K, p, x);
    const double C = curvature.norm();
    if (C < kMinCurvature) continue;
    const Vec3 u = curvature * (1.0 / C);
    // w_i K_i, the factor of u in each particle's correction per unit dlambda.
    const double wK[4] = {w[p[0]] * K[0], w[p[1]] * K[1], w[p[2]] * K[2], w[p[3]] * K[3]};
    const double wSum = wK[0] * K[0] + wK[1] * K[1] + wK[2] * K[2] + wK[3] * K[3];
    double dLambda = 0.0;
    if (kXpbd && con.params.compliance * con.params.damping * invH == 0.0) {
      const double alphaTilde = con.params.compliance * invH2;
      const double denominator = wSum + alphaTilde;
      if (denominator > 0.0) {
        dLambda = (-C - alphaTilde * lambda[c]) / denominator;
        lambda[c] += dLambda;
      }
    } else {
      const Vec3 gradient[4] = {K[0] * u, K[1] * u, K[2] * u, K[3] * u};
      dLambda = solveMultiplier(C, wSum, 4, gradient, p, con.params, lambda[c], false, ctx);
    }
    for (int i = 0; i < 4; ++i) moveParticle(x, p[i], w[p[i]], dLambda * (wK[i] * u));
  }
}

}  // namespace

void projectIsometricBending(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                             std::uint32_t end) {
  if (ctx.mode == SolverMode::Xpbd)
    projectIsometricBendingRange<true>(model, ctx, begin, end);
  else
    projectIsometricBendingRange<false>(model, ctx, begin, end);
}

double evaluateIsometricBending(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                                std::vector<ParticleIndex>& particles,
                                std::vector<Vec3>& gradient) {
  const IsometricBendingConstraint& con = model.isometricBendings[i];
  const ParticleIndex* p = con.particles;
  particles.assign(p, p + 4);
  const Vec3 curvature = curvatureVector(con.weights, p, x);
  const double C = curvature.norm();
  const Vec3 u = C >= kMinCurvature ? Vec3(curvature * (1.0 / C)) : Vec3::Zero();
  gradient.resize(4);
  for (int k = 0; k < 4; ++k) gradient[k] = con.weights[k] * u;
  return C;
}

}  // namespace pliant::detail

namespace pliant::detail {

namespace {
// cot of the angle between a and b.
inline double cotangent(const Vec3& a, const Vec3& b) {
  const double sine = a.cross(b).norm();
  return a.dot(b) / sine;
}
}  // namespace

bool isometricBendingWeights(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3,
                             double weights[4]) {
  const Vec3 e0 = x1 - x0;
  const Vec3 e1 = x2 - x0;
  const Vec3 e2 = x3 - x0;
  const Vec3 e3 = x2 - x1;
  const Vec3 e4 = x3 - x1;
  const double areaA = 0.5 * e0.cross(e1).norm();
  const double areaB = 0.5 * e0.cross(e2).norm();
  const double scale = e0.squaredNorm();
  // Sliver triangles have unbounded cotangents; refuse them rather than store huge weights.
  if (!(areaA > 1e-10 * scale) || !(areaB > 1e-10 * scale)) return false;
  const double c01 = cotangent(e0, e1);
  const double c02 = cotangent(e0, e2);
  const double c03 = cotangent(-e0, e3);
  const double c04 = cotangent(-e0, e4);
  const double s = std::sqrt(3.0 / (areaA + areaB));
  weights[0] = s * (c03 + c04);
  weights[1] = s * (c01 + c02);
  weights[2] = -s * (c01 + c03);
  weights[3] = -s * (c02 + c04);
  return true;
}

}  // namespace pliant::detail
