// One-sided distance C = L_max - |x_a - x_b| >= 0: maximum-distance limits and tethers (long-range
// attachments, Kim et al. 2012). Projected when stretched beyond L_max, and, as projected
// Gauss-Seidel asks (projection.h), when it holds a multiplier (lambda > 0) from an earlier pass of
// the substep: then it gives back what others have made unnecessary, so a tether that other
// constraints pulled slack ends at its limit or with lambda = 0 (no force reported), never
// over-pulled.
//
// Most tethers are slack and hold nothing at any instant, so the cost of a tether batch is the cost
// of finding the others. projectMaxDistanceIndependent tests four constraints per AVX2 instruction
// for that and projects the rest in the lanes; in an independent batch the lanes share no movable
// particle, so this gives the bits of the plain loop.
#include <cstddef>

#include "constraints/avx2_lanes.h"
#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {
constexpr double kMinLength = 1e-12;  // m

// Squared lengths below this are certainly slack. The margin (far above rounding, in either the
// squared length or this product) leaves every case near the limit to the exact test of
// projectOne, so skipping by this bound never changes a result.
inline double slackBound(double maxLength) { return (maxLength * maxLength) * (1.0 - 1e-9); }

// Undamped XPBD, the common case, and PBD are written out with one division serving both 1/|d| and
// 1/denominator (as in distance.cpp); damped XPBD takes solveMultiplier.
// kMayHold false: the pass started from lambda = 0 (SolveContext::multipliersFresh), so lambda is
// not looked at before the slackness test.
// Forced inline: with two instantiations GCC otherwise calls it out of line in the scalar loop, which
// costs about a tenth of that loop.
template <bool kMayHold>
[[gnu::always_inline]] inline void projectOne(const MaxDistanceConstraint& con, std::uint32_t c,
                                              const SolveContext& ctx, Vec3* x, const double* w) {
  const ParticleIndex a = con.particles[0];
  const ParticleIndex b = con.particles[1];
  double* xa = x[a].data();
  double* xb = x[b].data();
  const double d[3] = {xa[0] - xb[0], xa[1] - xb[1], xa[2] - xb[2]};
  const double squaredLength = (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];
  double& lambda = ctx.lambda[c];
  const bool holding = kMayHold && lambda > 0.0;  // pushed earlier in this substep: may give some back
  if (!holding && squaredLength < slackBound(con.maxLength)) return;
  const double length = std::sqrt(squaredLength);
  const double C = con.maxLength - length;
  if ((C >= 0.0 && !holding) || length < kMinLength) return;
  const double wA = w[a];
  const double wB = w[b];
  const bool xpbd = ctx.mode == SolverMode::Xpbd;
  if (!xpbd || undamped(con.params, ctx)) {
    // PBD as XPBD with alpha = 0 and the numerator scaled by k, so that XPBD with alpha = 0 is PBD
    // with k = 1 bit for bit (V2).
    double numerator, denominator;
    if (xpbd) {
      const double alphaTilde = con.params.compliance * ctx.invH2;
      denominator = (wA + wB) + alphaTilde;
      numerator = -C - alphaTilde * lambda;
    } else {
      denominator = wA + wB;
      numerator = pbdStiffness(con.params, ctx) * -C;
    }
    if (!(denominator > 0.0)) return;
    const double r = 1.0 / (length * denominator);
    const double dLambda = std::max(numerator * (length * r), -lambda);
    lambda += dLambda;
    const double scale = dLambda * (denominator * r);  // dLambda / |d|: dx_b = w_b scale d
    if (wA != 0.0) {
      const double sA = scale * wA;
      for (int k = 0; k < 3; ++k) xa[k] -= sA * d[k];
    }
    if (wB != 0.0) {
      const double sB = scale * wB;
      for (int k = 0; k < 3; ++k) xb[k] += sB * d[k];
    }
    return;
  }
  const Vec3 n = Vec3(d[0], d[1], d[2]) / length;
  const Vec3 gradient[2] = {-n, n};
  const double dLambda = solveMultiplier(C, wA + wB, 2, gradient, con.particles, con.params, lambda, true, ctx);
  moveParticle(x, a, wA, -((wA * dLambda) * n));
  moveParticle(x, b, wB, (wB * dLambda) * n);
}

#if defined(PLIANT_HAVE_AVX2_KERNELS)
// Four constraints c .. c + 3 of an independent range per AVX2 instruction. A group with no taut
// lane costs only the test; taut lanes of undamped XPBD and of PBD are projected in the lanes with
// exactly projectOne's operations (the clamp max(dlambda, -lambda) as std::max evaluates it) and
// written back lane by lane; groups with a damped XPBD constraint go to projectOne.
static_assert(offsetof(MaxDistanceConstraint, params) == offsetof(MaxDistanceConstraint, maxLength) + sizeof(double) &&
                  offsetof(ConstraintParameters, compliance) == 0,
              "projectQuads loads maxLength and params.compliance as one pair");
template <bool kMayHold>
__attribute__((target("avx2"))) void projectQuads(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                                                  std::uint32_t end) {
  const MaxDistanceConstraint* constraints = model.maxDistances.data();
  Vec3* const x = ctx.x;
  const double* const w = ctx.w;
  double* const lambda = ctx.lambda;
  const bool xpbd = ctx.mode == SolverMode::Xpbd;
  const __m256d invH2 = _mm256_set1_pd(ctx.invH2);
  const __m256d invH = _mm256_set1_pd(ctx.invH);
  std::uint32_t c = begin;
  for (; c + 3 < end; c += 4) {
    const MaxDistanceConstraint* con = constraints + c;
    double* xa[4];
    double* xb[4];
    const double* lengthAndCompliance[4];  // adjacent fields: maxLength, params.compliance
    for (int lane = 0; lane < 4; ++lane) {
      xa[lane] = x[con[lane].particles[0]].data();
      xb[lane] = x[con[lane].particles[1]].data();
      lengthAndCompliance[lane] = &con[lane].maxLength;
    }
    __m256d pa[3], pb[3], d[3];
    gather4(xa, pa[0], pa[1], pa[2]);
    gather4(xb, pb[0], pb[1], pb[2]);
    for (int k = 0; k < 3; ++k) d[k] = _mm256_sub_pd(pa[k], pb[k]);
    const __m256d squaredLength =
        _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(d[0], d[0]), _mm256_mul_pd(d[1], d[1])), _mm256_mul_pd(d[2], d[2]));
    __m256d maxLength, compliance;
    gatherPairs4(lengthAndCompliance, maxLength, compliance);
    const __m256d bound = _mm256_mul_pd(_mm256_mul_pd(maxLength, maxLength), _mm256_set1_pd(1.0 - 1e-9));
    // Lanes that hold a multiplier from an earlier pass (projected even when slack, see the top);
    // none in a pass that started from lambda = 0.
    __m256d holding = _mm256_setzero_pd();
    if constexpr (kMayHold) holding = _mm256_cmp_pd(_mm256_loadu_pd(lambda + c), _mm256_setzero_pd(), _CMP_GT_OQ);
    // Not certainly slack (NaN included), or holding.
    int taut = _mm256_movemask_pd(_mm256_cmp_pd(squaredLength, bound, _CMP_NLT_UQ));
    if constexpr (kMayHold) taut |= _mm256_movemask_pd(holding);
    if (taut == 0) continue;
    // Damping matters only to taut groups, so only they load it (most groups are slack).
    const __m256d damping =
        _mm256_setr_pd(con[0].params.damping, con[1].params.damping, con[2].params.damping, con[3].params.damping);
    if (xpbd && !allUndamped(compliance, damping, invH)) {
      for (int lane = 0; lane < 4; ++lane)
        if (taut & (1 << lane)) projectOne<kMayHold>(con[lane], c + static_cast<std::uint32_t>(lane), ctx, x, w);
      continue;
    }
    const __m256d length = _mm256_sqrt_pd(squaredLength);
    const __m256d C = _mm256_sub_pd(maxLength, length);
    const __m256d wA =
        _mm256_setr_pd(w[con[0].particles[0]], w[con[1].particles[0]], w[con[2].particles[0]], w[con[3].particles[0]]);
    const __m256d wB =
        _mm256_setr_pd(w[con[0].particles[1]], w[con[1].particles[1]], w[con[2].particles[1]], w[con[3].particles[1]]);
    const __m256d alphaTilde = _mm256_mul_pd(compliance, invH2);
    const __m256d denominator = xpbd ? _mm256_add_pd(_mm256_add_pd(wA, wB), alphaTilde) : _mm256_add_pd(wA, wB);
    const __m256d projected =
        _mm256_and_pd(_mm256_and_pd(_mm256_or_pd(_mm256_cmp_pd(C, _mm256_setzero_pd(), _CMP_LT_OQ), holding),
                                    _mm256_cmp_pd(length, _mm256_set1_pd(kMinLength), _CMP_NLT_UQ)),
                      _mm256_cmp_pd(denominator, _mm256_setzero_pd(), _CMP_GT_OQ));
    const int moved = taut & _mm256_movemask_pd(projected);
    if (moved == 0) continue;
    const __m256d r = _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_mul_pd(length, denominator));
    const __m256d oldLambda = _mm256_loadu_pd(lambda + c);
    const __m256d minusC = _mm256_xor_pd(C, _mm256_set1_pd(-0.0));
    const __m256d numerator = laneNumerator(xpbd, minusC, alphaTilde, oldLambda, con, ctx);
    __m256d dLambda = _mm256_mul_pd(numerator, _mm256_mul_pd(length, r));
    const __m256d floor = _mm256_xor_pd(oldLambda, _mm256_set1_pd(-0.0));
    dLambda = _mm256_blendv_pd(dLambda, floor, _mm256_cmp_pd(dLambda, floor, _CMP_LT_OQ));  // std::max(dLambda, floor)
    const __m256d scale = _mm256_mul_pd(dLambda, _mm256_mul_pd(denominator, r));
    const __m256d sA = _mm256_mul_pd(scale, wA);
    const __m256d sB = _mm256_mul_pd(scale, wB);
    alignas(32) double newLambda[4], movedA[3][4], movedB[3][4];
    _mm256_store_pd(newLambda, _mm256_add_pd(oldLambda, dLambda));
    const int movableA = nonzeroLanes(wA);
    const int movableB = nonzeroLanes(wB);
    for (int k = 0; k < 3; ++k) {
      _mm256_store_pd(movedA[k], _mm256_sub_pd(pa[k], _mm256_mul_pd(sA, d[k])));
      _mm256_store_pd(movedB[k], _mm256_add_pd(pb[k], _mm256_mul_pd(sB, d[k])));
    }
    for (int lane = 0; lane < 4; ++lane) {
      if (!(moved & (1 << lane))) continue;
      lambda[c + static_cast<std::uint32_t>(lane)] = newLambda[lane];
      if (movableA & (1 << lane))
        for (int k = 0; k < 3; ++k) xa[lane][k] = movedA[k][lane];
      if (movableB & (1 << lane))
        for (int k = 0; k < 3; ++k) xb[lane][k] = movedB[k][lane];
    }
  }
  for (; c < end; ++c) projectOne<kMayHold>(constraints[c], c, ctx, x, w);
}
#endif
}  // namespace

void projectMaxDistance(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  Vec3* const x = ctx.x;
  if (ctx.multipliersFresh)
    for (std::uint32_t c = begin; c < end; ++c) projectOne<false>(model.maxDistances[c], c, ctx, x, ctx.w);
  else
    for (std::uint32_t c = begin; c < end; ++c) projectOne<true>(model.maxDistances[c], c, ctx, x, ctx.w);
}

void projectMaxDistanceIndependent(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                                   std::uint32_t end) {
#if defined(PLIANT_HAVE_AVX2_KERNELS)
  if (cpuHasAvx2()) {
    if (ctx.multipliersFresh) projectQuads<false>(model, ctx, begin, end);
    else projectQuads<true>(model, ctx, begin, end);
    return;
  }
#endif
  projectMaxDistance(model, ctx, begin, end);
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

namespace {
void validateMaxDistances(const Model& model) {
  for (std::size_t i = 0; i < model.maxDistances.size(); ++i) {
    const std::string where = describe("max-distance constraint", i);
    for (ParticleIndex p : model.maxDistances[i].particles) checkIndex(p, model.particleCount(), where);
    checkParameters(model.maxDistances[i].params, where);
    checkLength(model.maxDistances[i].maxLength, where, "maximum length");
  }
}
}  // namespace

const FamilyKernels kMaxDistanceKernels = {projectMaxDistance,  projectMaxDistanceIndependent,
                                           evaluateMaxDistance, stencilParticles<&Model::maxDistances>,
                                           alwaysUnilateral,    validateMaxDistances};

}  // namespace pliant::detail
