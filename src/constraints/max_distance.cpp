// One-sided distance C = L_max - |x_a - x_b| >= 0: maximum-distance limits and tethers (long-range
// attachments, Kim et al. 2012). Projected only when stretched beyond L_max.
#include "constraints/projection.h"

namespace pliant::detail {

namespace {
constexpr double kMinLength = 1e-12;  // m
}

void projectMaxDistance(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                        std::uint32_t end) {
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  for (std::uint32_t c = begin; c < end; ++c) {
    const MaxDistanceConstraint& con = model.maxDistances[c];
    const ParticleIndex a = con.particles[0];
    const ParticleIndex b = con.particles[1];
    const Vec3 delta = x[a] - x[b];
    const double squaredLength = delta.squaredNorm();
    // Most tethers are slack; skip them without the square root. The margin (far above rounding)
    // leaves every case near the limit to the exact test below, so results do not change.
    if (squaredLength < (con.maxLength * con.maxLength) * (1.0 - 1e-9)) continue;
    const double length = std::sqrt(squaredLength);
    const double C = con.maxLength - length;
    if (C >= 0.0 || length < kMinLength) continue;
    const Vec3 n = delta / length;
    const Vec3 gradient[2] = {-n, n};
    const double dLambda = solveMultiplier(C, w[a] + w[b], 2, gradient, con.particles, con.params,
                                           ctx.lambda[c], true, ctx);
    moveParticle(x, a, w[a], -((w[a] * dLambda) * n));
    moveParticle(x, b, w[b], (w[b] * dLambda) * n);
  }
}

double evaluateMaxDistance(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                           std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const MaxDistanceConstraint& con = model.maxDistances[i];
  particles.assign(con.particles, con.particles + 2);
  const Vec3 delta = x[con.particles[0]] - x[con.particles[1]];
  const double length = delta.norm();
  const Vec3 n = length >= kMinLength ? Vec3(delta / length) : Vec3::Zero();
  gradient.assign({-n, n});
  return con.maxLength - length;
}

}  // namespace pliant::detail
