// The one multiplier update every family shares (docs/validation.md, "The method"):
//
//   XPBD (Macklin et al. 2016, eqs. 18 and 26):
//     alpha~ = alpha / h^2,  gamma = alpha~ (h^2 beta) / h = alpha beta / h
//     dlambda = (-C - alpha~ lambda - gamma gradC.(x - x^n)) / ((1 + gamma) sum w|gradC|^2 + alpha~)
//   PBD (Mueller et al. 2007): dlambda = -k C / sum w|gradC|^2, k replaced by k' when asked.
//
// Unilateral constraints (C >= 0) are solved by projected Gauss-Seidel: the update above is taken
// and the accumulated multiplier is clamped to stay >= 0 (it never pulls), so a constraint that
// pushed earlier in the substep (lambda > 0) and has since been left slack by others (C > 0) gives
// back what it no longer needs, down to lambda = 0. Only a slack constraint that holds nothing
// (C >= 0 and lambda == 0, where the clamped update is 0) is skipped. The caller then applies
// dx_i = w_i gradC_i dlambda.
#pragma once

#include <algorithm>
#include <cmath>

#include "constraints/families.h"

namespace pliant::detail {

// PBD stiffness k, or the iteration-independent k' = 1 - (1 - k)^(1/n) (seed 000, section 3.3).
inline double pbdStiffness(const ConstraintParameters& params, const SolveContext& ctx) {
  const double k = params.stiffness;
  return ctx.stiffnessExponent != 1.0 ? 1.0 - std::pow(1.0 - k, ctx.stiffnessExponent) : k;
}

// XPBD damping gamma = alpha beta / h is 0: the written-out kernels' fast path.
inline bool undamped(const ConstraintParameters& params, const SolveContext& ctx) {
  return params.compliance * params.damping * ctx.invH == 0.0;
}

// Returns dlambda (0 when the constraint is skipped) and accumulates it into `lambda`.
// `wSum` is sum_i w_i |gradC_i|^2, computed by the family in its cheapest exact form.
inline double solveMultiplier(double C, double wSum, int count, const Vec3* gradient, const ParticleIndex* particles,
                              const ConstraintParameters& params, double& lambda, bool unilateral,
                              const SolveContext& ctx) {
  if (unilateral && C >= 0.0 && !(lambda > 0.0)) return 0.0;
  double deltaLambda;
  if (ctx.mode == SolverMode::Xpbd) {
    const double alphaTilde = params.compliance * ctx.invH2;
    const double gamma = params.compliance * params.damping * ctx.invH;
    double dampingTerm = 0.0;
    if (gamma != 0.0) {
      for (int i = 0; i < count; ++i) {
        const ParticleIndex p = particles[i];
        dampingTerm += gradient[i].dot(ctx.x[p] - ctx.xPrev[p]);
      }
      dampingTerm *= gamma;
    }
    const double denominator = (1.0 + gamma) * wSum + alphaTilde;
    if (!(denominator > 0.0)) return 0.0;
    deltaLambda = (-C - alphaTilde * lambda - dampingTerm) / denominator;
  } else {
    if (!(wSum > 0.0)) return 0.0;
    deltaLambda = (pbdStiffness(params, ctx) * -C) / wSum;
  }
  if (unilateral) deltaLambda = std::max(deltaLambda, -lambda);
  lambda += deltaLambda;
  return deltaLambda;
}

// Immovable particles (inverse mass 0) are never written by a projection, not even with a zero
// correction, so constraints that share only such particles are independent (the solve plan, src/core/solve_plan.h)
// and may run on different threads without a data race. Every family's kernel moves particles
// through this.
inline void moveParticle(Vec3* x, ParticleIndex p, double inverseMass, const Vec3& correction) {
  if (inverseMass != 0.0) x[p] += correction;
}

}  // namespace pliant::detail
