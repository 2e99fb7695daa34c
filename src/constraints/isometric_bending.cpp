// Isometric bending (Bergou et al. 2006). For a flat rest state the discrete mean-curvature vector
// of an edge stencil, k = sum_i K_i x_i, is linear in the positions with constant weights, so the
// bending energy E = 1/2 |k|^2 is quadratic. Pliant's constraint is C = |k|, with gradient
// dC/dx_i = K_i k/|k|, so sum w|gradC|^2 = sum w_i K_i^2 and U = C^2/(2 alpha) = E/alpha.
// At exactly zero curvature the direction is undefined and there is nothing to correct.
#include "constraints/projection.h"

namespace pliant::detail {

namespace {
constexpr double kMinCurvature = 1e-14;  // dimensionless
}

void projectIsometricBending(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                             std::uint32_t end) {
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  for (std::uint32_t c = begin; c < end; ++c) {
    const IsometricBendingConstraint& con = model.isometricBendings[c];
    const ParticleIndex* p = con.particles;
    const double* K = con.weights;
    const Vec3 curvature = K[0] * x[p[0]] + K[1] * x[p[1]] + K[2] * x[p[2]] + K[3] * x[p[3]];
    const double C = curvature.norm();
    if (C < kMinCurvature) continue;
    const Vec3 u = curvature / C;
    const double wSum = w[p[0]] * K[0] * K[0] + w[p[1]] * K[1] * K[1] + w[p[2]] * K[2] * K[2] +
                        w[p[3]] * K[3] * K[3];
    // The gradient is only read when damping is on; the compiler drops it otherwise.
    const Vec3 gradient[4] = {K[0] * u, K[1] * u, K[2] * u, K[3] * u};
    const double dLambda =
        solveMultiplier(C, wSum, 4, gradient, p, con.params, ctx.lambda[c], false, ctx);
    for (int i = 0; i < 4; ++i) x[p[i]] += (w[p[i]] * K[i] * dLambda) * u;
  }
}

double evaluateIsometricBending(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                                std::vector<ParticleIndex>& particles,
                                std::vector<Vec3>& gradient) {
  const IsometricBendingConstraint& con = model.isometricBendings[i];
  const ParticleIndex* p = con.particles;
  particles.assign(p, p + 4);
  Vec3 curvature = Vec3::Zero();
  for (int k = 0; k < 4; ++k) curvature += con.weights[k] * x[p[k]];
  const double C = curvature.norm();
  const Vec3 u = C >= kMinCurvature ? Vec3(curvature / C) : Vec3::Zero();
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
