// Stretch constraint C = |x_a - x_b| - L. The gradient is the unit vector n = (x_a - x_b)/|x_a - x_b|
// for a and -n for b, so sum w|gradC|^2 = w_a + w_b exactly. A zero-length edge has no direction
// and is skipped rather than producing NaN.
#include "constraints/projection.h"

namespace pliant::detail {

namespace {
// Below this separation (m) the direction is undefined; the projection is skipped.
constexpr double kMinLength = 1e-12;
}  // namespace

void projectDistance(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                     std::uint32_t end) {
  const DistanceConstraint* constraints = model.distances.data();
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  for (std::uint32_t c = begin; c < end; ++c) {
    const DistanceConstraint& con = constraints[c];
    const ParticleIndex a = con.particles[0];
    const ParticleIndex b = con.particles[1];
    const Vec3 delta = x[a] - x[b];
    const double length = delta.norm();
    if (length < kMinLength) continue;
    const Vec3 n = delta / length;
    const Vec3 gradient[2] = {n, -n};
    const double dLambda = solveMultiplier(length - con.restLength, w[a] + w[b], 2, gradient,
                                           con.particles, con.params, ctx.lambda[c], false, ctx);
    x[a] += (w[a] * dLambda) * n;
    x[b] -= (w[b] * dLambda) * n;
  }
}

double evaluateDistance(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                        std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const DistanceConstraint& con = model.distances[i];
  particles.assign(con.particles, con.particles + 2);
  const Vec3 delta = x[con.particles[0]] - x[con.particles[1]];
  const double length = delta.norm();
  const Vec3 n = length >= kMinLength ? Vec3(delta / length) : Vec3::Zero();
  gradient.assign({n, -n});
  return length - con.restLength;
}

}  // namespace pliant::detail
