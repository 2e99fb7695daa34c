// Stretch constraint C = |x_a - x_b| - L. The gradient is the unit vector n = (x_a - x_b)/|x_a - x_b|
// for a and -n for b, so sum w|gradC|^2 = w_a + w_b exactly. A zero-length edge has no direction
// and is skipped rather than producing NaN.
//
// Two kernels compute the same numbers:
// - projectDistance, one constraint after another (any range; Gauss-Seidel in index order);
// - projectDistanceIndependent, for a range of constraints that share no movable particle (a colour,
//   see Model::solveBatches): two constraints per SSE2 instruction. Every lane performs exactly the
//   scalar kernel's IEEE operations in the same order (sqrt and division are correctly rounded in
//   both, and ISO C++ mode keeps FMA contraction off), so the two kernels give the same bits and the
//   pairing of constraints into lanes (which depends on how a batch is split among threads) does not
//   change the result. SSE2 is the x86-64 baseline; other targets use the scalar kernel.
#include "constraints/projection.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
// - positions are read and written as plain doubles in a written-out order (the SIMD kernel repeats
//   it lane by lane), and corrections are formed as dlambda (w n), one multiply after dlambda.
template <bool kXpbd>
inline void projectOne(const DistanceConstraint& con, std::uint32_t c, const SolveContext& ctx, Vec3* x,
                       const double* w, double* lambda) {
  const ParticleIndex a = con.particles[0];
  const ParticleIndex b = con.particles[1];
  double* xa = x[a].data();
  double* xb = x[b].data();
  const double dx = xa[0] - xb[0];
  const double dy = xa[1] - xb[1];
  const double dz = xa[2] - xb[2];
  const double length = std::sqrt((dx * dx + dy * dy) + dz * dz);
  if (length < kMinLength) return;
  const double inverseLength = 1.0 / length;
  const double n[3] = {dx * inverseLength, dy * inverseLength, dz * inverseLength};
  const double C = length - con.restLength;
  const double wA = w[a];
  const double wB = w[b];
  double dLambda = 0.0;
  if (kXpbd && con.params.compliance * con.params.damping * ctx.invH == 0.0) {
    const double alphaTilde = con.params.compliance * ctx.invH2;
    const double denominator = (wA + wB) + alphaTilde;
    if (denominator > 0.0) {
      dLambda = (-C - alphaTilde * lambda[c]) / denominator;
      lambda[c] += dLambda;
    }
  } else {
    // gradient = {n, -n}; solveMultiplier reads it only for damping.
    const Vec3 gradient[2] = {Vec3(n[0], n[1], n[2]), Vec3(-n[0], -n[1], -n[2])};
    dLambda = solveMultiplier(C, wA + wB, 2, gradient, con.particles, con.params, lambda[c], false, ctx);
  }
  if (wA != 0.0)
    for (int k = 0; k < 3; ++k) xa[k] += dLambda * (wA * n[k]);
  if (wB != 0.0)
    for (int k = 0; k < 3; ++k) xb[k] -= dLambda * (wB * n[k]);
}

template <bool kXpbd>
void projectDistanceRange(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                          std::uint32_t end) {
  // Locals, not ctx fields: stores through x may alias ctx and would force reloads.
  const DistanceConstraint* constraints = model.distances.data();
  Vec3* const x = ctx.x;
  const double* const w = ctx.w;
  double* const lambda = ctx.lambda;
  for (std::uint32_t c = begin; c < end; ++c) projectOne<kXpbd>(constraints[c], c, ctx, x, w, lambda);
}

#if defined(__SSE2__)
// Two independent undamped XPBD constraints c and c + 1 in the lanes of SSE2 registers (low lane c).
// Loads and stores are per lane (the particles are scattered); the arithmetic is shared. A lane that
// the scalar kernel would skip (zero length, denominator <= 0) writes nothing, as there.
inline void projectPair(const DistanceConstraint& c0, const DistanceConstraint& c1, std::uint32_t c,
                        const SolveContext& ctx, Vec3* x, const double* w, double* lambda) {
  double* xa0 = x[c0.particles[0]].data();
  double* xb0 = x[c0.particles[1]].data();
  double* xa1 = x[c1.particles[0]].data();
  double* xb1 = x[c1.particles[1]].data();
  auto pair = [](const double* low, const double* high) { return _mm_loadh_pd(_mm_load_sd(low), high); };
  __m128d xa[3], xb[3], d[3];
  for (int k = 0; k < 3; ++k) {
    xa[k] = pair(xa0 + k, xa1 + k);
    xb[k] = pair(xb0 + k, xb1 + k);
    d[k] = _mm_sub_pd(xa[k], xb[k]);
  }
  const __m128d length =
      _mm_sqrt_pd(_mm_add_pd(_mm_add_pd(_mm_mul_pd(d[0], d[0]), _mm_mul_pd(d[1], d[1])), _mm_mul_pd(d[2], d[2])));
  // !(length < kMinLength), as the scalar test (NaN proceeds there too).
  const __m128d lengthOk = _mm_cmpnlt_pd(length, _mm_set1_pd(kMinLength));
  const __m128d inverseLength = _mm_div_pd(_mm_set1_pd(1.0), length);
  const __m128d C = _mm_sub_pd(length, _mm_set_pd(c1.restLength, c0.restLength));
  const __m128d wA = _mm_set_pd(w[c1.particles[0]], w[c0.particles[0]]);
  const __m128d wB = _mm_set_pd(w[c1.particles[1]], w[c0.particles[1]]);
  const __m128d alphaTilde =
      _mm_mul_pd(_mm_set_pd(c1.params.compliance, c0.params.compliance), _mm_set1_pd(ctx.invH2));
  const __m128d denominator = _mm_add_pd(_mm_add_pd(wA, wB), alphaTilde);
  const __m128d denominatorOk = _mm_cmpgt_pd(denominator, _mm_setzero_pd());
  const __m128d oldLambda = _mm_loadu_pd(lambda + c);
  const __m128d minusC = _mm_xor_pd(C, _mm_set1_pd(-0.0));  // exact negation, as -C
  const __m128d dLambda = _mm_div_pd(_mm_sub_pd(minusC, _mm_mul_pd(alphaTilde, oldLambda)), denominator);
  const __m128d newLambda = _mm_add_pd(oldLambda, dLambda);
  // Corrections dLambda (w n) and the moved positions, as the scalar kernel forms them.
  __m128d movedA[3], movedB[3];
  for (int k = 0; k < 3; ++k) {
    const __m128d n = _mm_mul_pd(d[k], inverseLength);
    movedA[k] = _mm_add_pd(xa[k], _mm_mul_pd(dLambda, _mm_mul_pd(wA, n)));
    movedB[k] = _mm_sub_pd(xb[k], _mm_mul_pd(dLambda, _mm_mul_pd(wB, n)));
  }
  const int lengthMask = _mm_movemask_pd(lengthOk);
  const int solvedMask = lengthMask & _mm_movemask_pd(denominatorOk);
  alignas(16) double lanes[2];
  _mm_store_pd(lanes, newLambda);
  if (solvedMask & 1) lambda[c] = lanes[0];
  if (solvedMask & 2) lambda[c + 1] = lanes[1];
  // A skipped lane (denominator <= 0: both particles immovable) moves nothing; a zero-length one
  // neither. Immovable particles are never written.
  const double wLanes[2][2] = {{w[c0.particles[0]], w[c0.particles[1]]}, {w[c1.particles[0]], w[c1.particles[1]]}};
  double* targets[2][2] = {{xa0, xb0}, {xa1, xb1}};
  for (int lane = 0; lane < 2; ++lane) {
    if (!(solvedMask & (1 << lane))) continue;
    for (int side = 0; side < 2; ++side) {
      if (wLanes[lane][side] == 0.0) continue;
      const __m128d* moved = side == 0 ? movedA : movedB;
      double* target = targets[lane][side];
      for (int k = 0; k < 3; ++k) {
        if (lane == 0) _mm_storel_pd(target + k, moved[k]);
        else _mm_storeh_pd(target + k, moved[k]);
      }
    }
  }
}
#endif

}  // namespace

void projectDistance(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                     std::uint32_t end) {
  if (ctx.mode == SolverMode::Xpbd)
    projectDistanceRange<true>(model, ctx, begin, end);
  else
    projectDistanceRange<false>(model, ctx, begin, end);
}

void projectDistanceIndependent(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                                std::uint32_t end) {
#if defined(__SSE2__)
  if (ctx.mode != SolverMode::Xpbd) {
    projectDistanceRange<false>(model, ctx, begin, end);
    return;
  }
  const DistanceConstraint* constraints = model.distances.data();
  Vec3* const x = ctx.x;
  const double* const w = ctx.w;
  double* const lambda = ctx.lambda;
  auto undamped = [&](const DistanceConstraint& con) {
    return con.params.compliance * con.params.damping * ctx.invH == 0.0;
  };
  std::uint32_t c = begin;
  for (; c + 1 < end; c += 2) {
    const DistanceConstraint& c0 = constraints[c];
    const DistanceConstraint& c1 = constraints[c + 1];
    if (undamped(c0) && undamped(c1)) {
      projectPair(c0, c1, c, ctx, x, w, lambda);
    } else {
      // Damped XPBD needs the velocity term; the scalar kernel does it (same bits, any order).
      projectOne<true>(c0, c, ctx, x, w, lambda);
      projectOne<true>(c1, c + 1, ctx, x, w, lambda);
    }
  }
  if (c < end) projectOne<true>(constraints[c], c, ctx, x, w, lambda);
#else
  projectDistance(model, ctx, begin, end);
#endif
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
