// Stretch constraint C = |x_a - x_b| - L. The gradient is the unit vector n = (x_a - x_b)/|x_a - x_b|
// for a and -n for b, so sum w|gradC|^2 = w_a + w_b exactly. A zero-length edge has no direction
// and is skipped rather than producing NaN.
//
// Two kernels compute the same numbers:
// - projectDistance, one constraint after another (any range; Gauss-Seidel in index order);
// - projectDistanceIndependent, for a range of constraints that share no movable particle (a colour,
//   see src/core/solve_plan.h): four constraints per AVX2 instruction where the CPU has AVX2 (checked
//   at run time), else the scalar kernel. Every lane performs exactly the scalar kernel's IEEE operations in the same
//   order (sqrt and division are correctly rounded everywhere, no FMA is used, and ISO C++ mode keeps the compiler from
//   contracting), so all kernels give the same bits, and neither the CPU nor the grouping of constraints into lanes
//   (which depends on how a batch is split among threads) changes the result.
#include <algorithm>
#include <cstddef>

#include "constraints/avx2_lanes.h"
#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {
// Below this separation (m) the direction is undefined; the projection is skipped.
constexpr double kMinLength = 1e-12;

// The hottest loop of a cloth step. Choices that keep it fast without changing the method:
// - XPBD without damping (gamma = 0), the common case, and PBD are written out inline with one
//   division serving both 1/|d| and 1/denominator, damped XPBD likewise;
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
  const double d[3] = {xa[0] - xb[0], xa[1] - xb[1], xa[2] - xb[2]};
  const double length = std::sqrt((d[0] * d[0] + d[1] * d[1]) + d[2] * d[2]);
  if (length < kMinLength) return;
  const double C = length - con.restLength;
  const double wA = w[a];
  const double wB = w[b];
  if (!kXpbd || undamped(con.params, ctx)) {
    // Undamped XPBD, and PBD as XPBD with alpha = 0 and the numerator scaled by k: with k = 1 the
    // two perform the same operations, so XPBD with alpha = 0 is PBD with k = 1 bit for bit (V2).
    double numerator, denominator;
    if constexpr (kXpbd) {
      const double alphaTilde = con.params.compliance * ctx.invH2;
      denominator = (wA + wB) + alphaTilde;
      numerator = -C - alphaTilde * lambda[c];
    } else {
      denominator = wA + wB;
      numerator = pbdStiffness(con.params, ctx) * -C;
    }
    if (!(denominator > 0.0)) return;  // both ends immovable and the constraint hard: nothing to do
    // One division serves both 1/|d| = denominator r and 1/denominator = |d| r.
    const double r = 1.0 / (length * denominator);
    const double dLambda = numerator * (length * r);
    lambda[c] += dLambda;
    const double scale = dLambda * (denominator * r);  // dLambda / |d|: dx_a = w_a scale d
    if (wA != 0.0) {
      const double sA = scale * wA;
      for (int k = 0; k < 3; ++k) xa[k] += sA * d[k];
    }
    if (wB != 0.0) {
      const double sB = scale * wB;
      for (int k = 0; k < 3; ++k) xb[k] -= sB * d[k];
    }
    return;
  }
  // Damped XPBD (Macklin et al. 2016, eq. 26) with the gradient {n, -n}: the damping term is
  // gamma n . ((x_a - x_a^n) - (x_b - x_b^n)); again one division for 1/|d| and 1/denominator.
  const double alphaTilde = con.params.compliance * ctx.invH2;
  const double gamma = con.params.compliance * con.params.damping * ctx.invH;
  const double denominator = (1.0 + gamma) * (wA + wB) + alphaTilde;
  if (!(denominator > 0.0)) return;
  const double r = 1.0 / (length * denominator);
  const double inverseLength = denominator * r;
  const double n[3] = {d[0] * inverseLength, d[1] * inverseLength, d[2] * inverseLength};
  const double* pa = ctx.xPrev[a].data();
  const double* pb = ctx.xPrev[b].data();
  double relativeMotion = 0.0;
  for (int k = 0; k < 3; ++k) relativeMotion += n[k] * ((xa[k] - pa[k]) - (xb[k] - pb[k]));
  const double dLambda = (-C - alphaTilde * lambda[c] - gamma * relativeMotion) * (length * r);
  lambda[c] += dLambda;
  if (wA != 0.0) {
    const double sA = dLambda * wA;
    for (int k = 0; k < 3; ++k) xa[k] += sA * n[k];
  }
  if (wB != 0.0) {
    const double sB = dLambda * wB;
    for (int k = 0; k < 3; ++k) xb[k] -= sB * n[k];
  }
}

template <bool kXpbd>
void projectDistanceRange(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  // Locals, not ctx fields: stores through x may alias ctx and would force reloads.
  const DistanceConstraint* constraints = model.distances.data();
  Vec3* const x = ctx.x;
  const double* const w = ctx.w;
  double* const lambda = ctx.lambda;
  for (std::uint32_t c = begin; c < end; ++c) projectOne<kXpbd>(constraints[c], c, ctx, x, w, lambda);
}

#if defined(PLIANT_HAVE_AVX2_KERNELS)
// Four independent constraints c .. c + 3 (undamped XPBD, or PBD) in the lanes of AVX registers,
// compiled for AVX2 and chosen at run time where the CPU has it. The same operations as projectOne,
// lane by lane.
static_assert(offsetof(DistanceConstraint, params) == offsetof(DistanceConstraint, restLength) + sizeof(double) &&
                  offsetof(ConstraintParameters, compliance) == 0 &&
                  offsetof(ConstraintParameters, damping) == sizeof(double),
              "projectQuads loads restLength, params.compliance and params.damping as one triple");
// The ends of constraints con[0..3] in the lanes, as projectOne reads them: the particles'
// addresses, inverse masses and positions, d = x_a - x_b and |d|.
struct QuadEnds {
  double* xa[4];
  double* xb[4];
  __m256d wA, wB, pa[3], pb[3], d[3], length;
};
__attribute__((target("avx2"))) inline void loadEnds(const DistanceConstraint* con, Vec3* x, const double* w,
                                                     QuadEnds& e) {
  for (int lane = 0; lane < 4; ++lane) {
    e.xa[lane] = x[con[lane].particles[0]].data();
    e.xb[lane] = x[con[lane].particles[1]].data();
  }
  e.wA = _mm256_setr_pd(w[con[0].particles[0]], w[con[1].particles[0]], w[con[2].particles[0]], w[con[3].particles[0]]);
  e.wB = _mm256_setr_pd(w[con[0].particles[1]], w[con[1].particles[1]], w[con[2].particles[1]], w[con[3].particles[1]]);
  gather4(e.xa, e.pa[0], e.pa[1], e.pa[2]);
  gather4(e.xb, e.pb[0], e.pb[1], e.pb[2]);
  for (int k = 0; k < 3; ++k) e.d[k] = _mm256_sub_pd(e.pa[k], e.pb[k]);
  e.length = _mm256_sqrt_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(e.d[0], e.d[0]), _mm256_mul_pd(e.d[1], e.d[1])),
                                          _mm256_mul_pd(e.d[2], e.d[2])));
}

// Four damped XPBD constraints con[0..3] (Macklin et al. 2016, eq. 26) in the lanes: the operations
// of projectOne's damped branch, lane by lane, so the same bits. Groups that projectOne would treat
// differently in some lane (an undamped lane, a zero length, nothing movable, an immovable end) are
// projected lane by lane by projectOne itself (nothing is written before that choice, and the lanes
// share no movable particle). Damped stretch is common: every built-in cloth scene but scene A damps it.
__attribute__((target("avx2"))) void projectDampedQuad(const DistanceConstraint* con, std::uint32_t c,
                                                       const SolveContext& ctx, Vec3* x, const double* w,
                                                       double* lambda, __m256d rest, __m256d compliance, __m256d gamma,
                                                       __m256d invH2) {
  const __m256d zero = _mm256_setzero_pd();
  QuadEnds e;
  loadEnds(con, x, w, e);
  const __m256d alphaTilde = _mm256_mul_pd(compliance, invH2);
  const __m256d denominator =
      _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_set1_pd(1.0), gamma), _mm256_add_pd(e.wA, e.wB)), alphaTilde);
  const int solved = _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(e.length, _mm256_set1_pd(kMinLength), _CMP_NLT_UQ),
                                                      _mm256_cmp_pd(denominator, zero, _CMP_GT_OQ)));
  if ((solved & nonzeroLanes(gamma) & nonzeroLanes(e.wA) & nonzeroLanes(e.wB)) != 0xf) {
    if (ctx.multipliersFresh) _mm256_storeu_pd(lambda + c, zero);
    for (int lane = 0; lane < 4; ++lane)
      projectOne<true>(con[lane], c + static_cast<std::uint32_t>(lane), ctx, x, w, lambda);
    return;
  }
  const __m256d C = _mm256_sub_pd(e.length, rest);
  const __m256d r = _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_mul_pd(e.length, denominator));
  const __m256d inverseLength = _mm256_mul_pd(denominator, r);
  __m256d n[3], startA[3], startB[3];
  for (int k = 0; k < 3; ++k) n[k] = _mm256_mul_pd(e.d[k], inverseLength);
  const double* previousA[4];
  const double* previousB[4];
  for (int lane = 0; lane < 4; ++lane) {
    previousA[lane] = ctx.xPrev[con[lane].particles[0]].data();
    previousB[lane] = ctx.xPrev[con[lane].particles[1]].data();
  }
  gather4(previousA, startA[0], startA[1], startA[2]);
  gather4(previousB, startB[0], startB[1], startB[2]);
  // relativeMotion = sum_k n_k ((x_a - x_a^n) - (x_b - x_b^n)), from 0.0 as the scalar loop sums.
  __m256d relativeMotion = zero;
  for (int k = 0; k < 3; ++k)
    relativeMotion = _mm256_add_pd(
        relativeMotion,
        _mm256_mul_pd(n[k], _mm256_sub_pd(_mm256_sub_pd(e.pa[k], startA[k]), _mm256_sub_pd(e.pb[k], startB[k]))));
  const __m256d oldLambda = ctx.multipliersFresh ? zero : _mm256_loadu_pd(lambda + c);
  const __m256d minusC = _mm256_xor_pd(C, _mm256_set1_pd(-0.0));
  const __m256d numerator =
      _mm256_sub_pd(_mm256_sub_pd(minusC, _mm256_mul_pd(alphaTilde, oldLambda)), _mm256_mul_pd(gamma, relativeMotion));
  const __m256d dLambda = _mm256_mul_pd(numerator, _mm256_mul_pd(e.length, r));
  _mm256_storeu_pd(lambda + c, _mm256_add_pd(oldLambda, dLambda));
  const __m256d sA = _mm256_mul_pd(dLambda, e.wA);
  const __m256d sB = _mm256_mul_pd(dLambda, e.wB);
  __m256d movedA[3], movedB[3];
  for (int k = 0; k < 3; ++k) {
    movedA[k] = _mm256_add_pd(e.pa[k], _mm256_mul_pd(sA, n[k]));
    movedB[k] = _mm256_sub_pd(e.pb[k], _mm256_mul_pd(sB, n[k]));
  }
  scatter4(e.xa, movedA[0], movedA[1], movedA[2]);
  scatter4(e.xb, movedB[0], movedB[1], movedB[2]);
}

template <bool kXpbd>
__attribute__((target("avx2"))) void projectQuads(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                                                  std::uint32_t end) {
  const DistanceConstraint* constraints = model.distances.data();
  Vec3* const x = ctx.x;
  const double* const w = ctx.w;
  double* const lambda = ctx.lambda;
  const __m256d invH2 = _mm256_set1_pd(ctx.invH2);
  const __m256d invH = _mm256_set1_pd(ctx.invH);
  // A substep's first pass: multipliers start from 0, written, not read (independentStartsFresh).
  const bool fresh = ctx.multipliersFresh;
  std::uint32_t c = begin;
  for (; c + 3 < end; c += 4) {
    const DistanceConstraint* con = constraints + c;
    const double* restComplianceDamping[4];  // adjacent fields: restLength, params.compliance, params.damping
    for (int lane = 0; lane < 4; ++lane) restComplianceDamping[lane] = &con[lane].restLength;
    __m256d rest, compliance, damping;
    gather4(restComplianceDamping, rest, compliance, damping);
    if constexpr (kXpbd) {
      const __m256d gamma = laneGamma(compliance, damping, invH);
      if (!allUndamped(gamma)) {
        projectDampedQuad(con, c, ctx, x, w, lambda, rest, compliance, gamma, invH2);
        continue;
      }
    }
    QuadEnds e;
    loadEnds(con, x, w, e);
    const __m256d &wA = e.wA, &wB = e.wB, &length = e.length;
    const __m256d* pa = e.pa;
    const __m256d* pb = e.pb;
    const __m256d* d = e.d;
    const __m256d C = _mm256_sub_pd(length, rest);
    // PBD: alpha~ = 0 and the numerator scaled by k, as in projectOne.
    const __m256d alphaTilde = _mm256_mul_pd(compliance, invH2);
    const __m256d denominator = kXpbd ? _mm256_add_pd(_mm256_add_pd(wA, wB), alphaTilde) : _mm256_add_pd(wA, wB);
    const int solved = _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(length, _mm256_set1_pd(kMinLength), _CMP_NLT_UQ),
                                                        _mm256_cmp_pd(denominator, _mm256_setzero_pd(), _CMP_GT_OQ)));
    // A lane that is skipped (zero length, nothing movable) or has an immovable end is rare: such a
    // group is projected lane by lane by the scalar kernel, which gives the same bits (nothing has
    // been written yet and the lanes share no movable particle).
    if ((solved & nonzeroLanes(wA) & nonzeroLanes(wB)) != 0xf) {
      if (fresh) _mm256_storeu_pd(lambda + c, _mm256_setzero_pd());
      for (int lane = 0; lane < 4; ++lane)
        projectOne<kXpbd>(con[lane], c + static_cast<std::uint32_t>(lane), ctx, x, w, lambda);
      continue;
    }
    const __m256d r = _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_mul_pd(length, denominator));
    const __m256d oldLambda = fresh ? _mm256_setzero_pd() : _mm256_loadu_pd(lambda + c);
    const __m256d minusC = _mm256_xor_pd(C, _mm256_set1_pd(-0.0));
    const __m256d numerator = laneNumerator(kXpbd, minusC, alphaTilde, oldLambda, con, ctx);
    const __m256d dLambda = _mm256_mul_pd(numerator, _mm256_mul_pd(length, r));
    const __m256d newLambda = _mm256_add_pd(oldLambda, dLambda);
    const __m256d scale = _mm256_mul_pd(dLambda, _mm256_mul_pd(denominator, r));
    const __m256d sA = _mm256_mul_pd(scale, wA);
    const __m256d sB = _mm256_mul_pd(scale, wB);
    __m256d movedA[3], movedB[3];
    for (int k = 0; k < 3; ++k) {
      movedA[k] = _mm256_add_pd(pa[k], _mm256_mul_pd(sA, d[k]));
      movedB[k] = _mm256_sub_pd(pb[k], _mm256_mul_pd(sB, d[k]));
    }
    _mm256_storeu_pd(lambda + c, newLambda);
    scatter4(e.xa, movedA[0], movedA[1], movedA[2]);
    scatter4(e.xb, movedB[0], movedB[1], movedB[2]);
  }
  for (; c < end; ++c) {
    if (fresh) lambda[c] = 0.0;
    projectOne<kXpbd>(constraints[c], c, ctx, x, w, lambda);
  }
}

#endif

}  // namespace

void projectDistance(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  if (ctx.mode == SolverMode::Xpbd) projectDistanceRange<true>(model, ctx, begin, end);
  else projectDistanceRange<false>(model, ctx, begin, end);
}

void projectDistanceLanes(int lanes, const Model& model, const SolveContext& ctx, std::uint32_t begin,
                          std::uint32_t end) {
#if defined(PLIANT_HAVE_AVX2_KERNELS)
  if (lanes >= 4 && cpuHasAvx2()) {
    if (ctx.mode == SolverMode::Xpbd) projectQuads<true>(model, ctx, begin, end);
    else projectQuads<false>(model, ctx, begin, end);
    return;
  }
#endif
  if (ctx.multipliersFresh) std::fill(ctx.lambda + begin, ctx.lambda + end, 0.0);
  projectDistance(model, ctx, begin, end);
}

void projectDistanceIndependent(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  projectDistanceLanes(4, model, ctx, begin, end);
}

int distanceKernelLanes() {
#if defined(PLIANT_HAVE_AVX2_KERNELS)
  if (cpuHasAvx2()) return 4;
#endif
  return 1;
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

namespace {
void validateDistances(const Model& model) {
  for (std::size_t i = 0; i < model.distances.size(); ++i) {
    const std::string where = describe("distance constraint", i);
    for (ParticleIndex p : model.distances[i].particles) checkIndex(p, model.particleCount(), where);
    checkParameters(model.distances[i].params, where);
    checkLength(model.distances[i].restLength, where, "rest length");
  }
}
}  // namespace

const FamilyKernels kDistanceKernels = {projectDistance,
                                        projectDistanceIndependent,
                                        evaluateDistance,
                                        stencilParticles<&Model::distances>,
                                        neverUnilateral,
                                        validateDistances,
                                        true};

}  // namespace pliant::detail
