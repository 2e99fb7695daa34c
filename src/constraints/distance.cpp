// Stretch constraint C = |x_a - x_b| - L. The gradient is the unit vector n = (x_a - x_b)/|x_a - x_b|
// for a and -n for b, so sum w|gradC|^2 = w_a + w_b exactly. A zero-length edge has no direction
// and is skipped rather than producing NaN.
#include "constraints/projection.h"

namespace pliant::detail {

namespace {
// Below this separation (m) the direction is undefined; the projection is skipped.
constexpr double kMinLength = 1e-12;

// The hottest loop of a cloth step. Choices that keep it fast without changing the method:
// - the unit vector takes one division (1/length) instead of three;
// - XPBD without damping (gamma = 0), the common case, is written out inline with exactly the
//   operations solveMultiplier performs when gamma == 0 ((1 + 0) wSum == wSum and x - 0 == x in
//   IEEE arithmetic), so its dlambda is bit-identical; damped XPBD and PBD call solveMultiplier;
// - the mode is a template parameter, so each mode gets its own tight loop;
// - where consecutive edges share a particle (models built in index order) the loop waits on the
//   chain x -> C -> dlambda -> x, so corrections are formed as dlambda (w n), one multiply after
//   dlambda. The builders emit edges in colour order, so neighbours are independent and the cost
//   is then set by the sqrt and the two divisions each projection needs.
template <bool kXpbd>
void projectDistanceRange(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                          std::uint32_t end) {
  // Locals, not ctx fields: stores through x may alias ctx and would force reloads.
  const DistanceConstraint* constraints = model.distances.data();
  Vec3* const x = ctx.x;
  const double* const w = ctx.w;
  double* const lambda = ctx.lambda;
  const double invH = ctx.invH;
  const double invH2 = ctx.invH2;
  for (std::uint32_t c = begin; c < end; ++c) {
    const DistanceConstraint& con = constraints[c];
    const ParticleIndex a = con.particles[0];
    const ParticleIndex b = con.particles[1];
    const Vec3 delta = x[a] - x[b];
    const double length = delta.norm();
    if (length < kMinLength) continue;
    // gradient = {n, -n}; solveMultiplier reads it only for damping.
    Vec3 gradient[2];
    gradient[0] = delta * (1.0 / length);
    gradient[1] = -gradient[0];
    const Vec3& n = gradient[0];
    const double C = length - con.restLength;
    const double wA = w[a];
    const double wB = w[b];
    double dLambda = 0.0;
    if (kXpbd && con.params.compliance * con.params.damping * invH == 0.0) {
      const double alphaTilde = con.params.compliance * invH2;
      const double denominator = (wA + wB) + alphaTilde;
      if (denominator > 0.0) {
        dLambda = (-C - alphaTilde * lambda[c]) / denominator;
        lambda[c] += dLambda;
      }
    } else {
      dLambda = solveMultiplier(C, wA + wB, 2, gradient, con.particles, con.params, lambda[c],
                                false, ctx);
    }
    x[a] += dLambda * (wA * n);
    x[b] -= dLambda * (wB * n);
  }
}

}  // namespace

void projectDistance(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                     std::uint32_t end) {
  if (ctx.mode == SolverMode::Xpbd)
    projectDistanceRange<true>(model, ctx, begin, end);
  else
    projectDistanceRange<false>(model, ctx, begin, end);
}

double evaluateDistance(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                        std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const DistanceConstraint& con = model.distances[i];
  particles.assign(con.particles, con.particles + 2);
  const Vec3 delta = x[con.particles[0]] - x[con.particles[1]];
  const double length = delta.norm();
  const Vec3 n = length >= kMinLength ? Vec3(delta * (1.0 / length)) : Vec3::Zero();
  gradient.assign({n, -n});
  return length - con.restLength;
}

}  // namespace pliant::detail
