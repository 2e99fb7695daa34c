// Isometric bending (Bergou et al. 2006). For a flat rest state the discrete mean-curvature vector
// of an edge stencil, k = sum_i K_i x_i, is linear in the positions with constant weights, so the
// bending energy E = 1/2 |k|^2 is quadratic. Pliant's constraint is C = |k|, with gradient
// dC/dx_i = K_i k/|k|, so sum w|gradC|^2 = sum w_i K_i^2 and U = C^2/(2 alpha) = E/alpha.
// At exactly zero curvature the direction is undefined and there is nothing to correct.
//
// Two kernels compute the same numbers: projectIsometricBending, stencil after stencil, and, for a
// range of stencils that share no movable particle (the solve plan, src/core/solve_plan.h), an AVX2 kernel with four
// stencils per instruction where the CPU has AVX2 (checked at run time; elsewhere the scalar one).
// Each lane performs the scalar kernel's IEEE operations in the same order, so the bits agree.
#include <algorithm>
#include <cstddef>

#include "constraints/avx2_lanes.h"
#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {
constexpr double kMinCurvature = 1e-14;  // dimensionless

// k = sum_i K_i x_i, summed as a tree (two dependent adds, not three) to shorten the chain
// through positions that consecutive stencils may share.
inline Vec3 curvatureVector(const double K[4], const ParticleIndex p[4], const Vec3* x) {
  return (K[0] * x[p[0]] + K[1] * x[p[1]]) + (K[2] * x[p[2]] + K[3] * x[p[3]]);
}

// A hot loop of a cloth step, written like projectDistance. XPBD without damping (gamma = 0), the
// common case, is done inline with one division for both 1/C and 1/denominator, and the corrections
// are formed as (dlambda/C) (w_i K_i) k, which is dlambda w_i K_i u; PBD takes the same path with
// alpha = 0 and the numerator scaled by k, and damped XPBD is written out the same way. Positions
// are read and written as plain doubles in a written-out order, which the AVX2 kernel below
// repeats lane by lane.
template <bool kXpbd>
inline void projectOne(const IsometricBendingConstraint& con, std::uint32_t c, const SolveContext& ctx, Vec3* x,
                       const double* w, double* lambda) {
  const ParticleIndex* p = con.particles;
  const double* K = con.weights;
  const double* x0 = x[p[0]].data();
  const double* x1 = x[p[1]].data();
  const double* x2 = x[p[2]].data();
  const double* x3 = x[p[3]].data();
  double k[3];
  for (int j = 0; j < 3; ++j) k[j] = (K[0] * x0[j] + K[1] * x1[j]) + (K[2] * x2[j] + K[3] * x3[j]);
  const double C = std::sqrt((k[0] * k[0] + k[1] * k[1]) + k[2] * k[2]);
  if (C < kMinCurvature) return;
  // w_i K_i, the factor of k/C in each particle's correction per unit dlambda.
  const double wK[4] = {w[p[0]] * K[0], w[p[1]] * K[1], w[p[2]] * K[2], w[p[3]] * K[3]};
  const double wSum = ((wK[0] * K[0] + wK[1] * K[1]) + wK[2] * K[2]) + wK[3] * K[3];
  if (!kXpbd || undamped(con.params, ctx)) {
    // PBD as XPBD with alpha = 0 and the numerator scaled by k (as in distance.cpp; keeps V2 exact).
    double numerator, denominator;
    if constexpr (kXpbd) {
      const double alphaTilde = con.params.compliance * ctx.invH2;
      denominator = wSum + alphaTilde;
      numerator = -C - alphaTilde * lambda[c];
    } else {
      denominator = wSum;
      numerator = pbdStiffness(con.params, ctx) * -C;
    }
    if (!(denominator > 0.0)) return;
    const double r = 1.0 / (C * denominator);
    const double dLambda = numerator * (C * r);
    lambda[c] += dLambda;
    const double scale = dLambda * (denominator * r);  // dLambda / C
    for (int i = 0; i < 4; ++i) {
      if (w[p[i]] == 0.0) continue;  // immovable: never written (see moveParticle)
      const double s = scale * wK[i];
      double* xi = x[p[i]].data();
      for (int j = 0; j < 3; ++j) xi[j] += s * k[j];
    }
    return;
  }
  // Damped XPBD (Macklin et al. 2016, eq. 26): the damping term is gamma sum_i (K_i u).(x_i - x_i^n)
  // = gamma u.(k - k^n), with k^n the curvature vector of the positions at the substep's start.
  const double alphaTilde = con.params.compliance * ctx.invH2;
  const double gamma = con.params.compliance * con.params.damping * ctx.invH;
  const double denominator = (1.0 + gamma) * wSum + alphaTilde;
  if (!(denominator > 0.0)) return;
  const double r = 1.0 / (C * denominator);
  const double inverseC = denominator * r;
  const Vec3 previous = curvatureVector(K, p, ctx.xPrev);
  double motion = 0.0;  // k . (k - k^n)
  for (int j = 0; j < 3; ++j) motion += k[j] * (k[j] - previous[j]);
  const double dLambda = (-C - alphaTilde * lambda[c] - gamma * (motion * inverseC)) * (C * r);
  lambda[c] += dLambda;
  const double scale = dLambda * inverseC;
  for (int i = 0; i < 4; ++i) {
    if (w[p[i]] == 0.0) continue;
    const double s = scale * wK[i];
    double* xi = x[p[i]].data();
    for (int j = 0; j < 3; ++j) xi[j] += s * k[j];
  }
}

template <bool kXpbd>
void projectIsometricBendingRange(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  // Locals, not ctx fields: stores through x may alias ctx and would force reloads.
  const IsometricBendingConstraint* constraints = model.isometricBendings.data();
  Vec3* const x = ctx.x;
  const double* const w = ctx.w;
  double* const lambda = ctx.lambda;
  for (std::uint32_t c = begin; c < end; ++c) projectOne<kXpbd>(constraints[c], c, ctx, x, w, lambda);
}

#if defined(PLIANT_HAVE_AVX2_KERNELS)
static_assert(offsetof(ConstraintParameters, damping) == offsetof(ConstraintParameters, compliance) + sizeof(double),
              "projectQuads loads params.compliance and params.damping as one pair");
// Four independent XPBD stencils c .. c + 3 in the lanes of AVX registers, undamped or (all four)
// damped: the scalar kernel's operations lane by lane (so the same bits), for ranges that share no
// movable particle.
__attribute__((target("avx2"))) void projectQuads(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                                                  std::uint32_t end) {
  const IsometricBendingConstraint* constraints = model.isometricBendings.data();
  Vec3* const x = ctx.x;
  const double* const w = ctx.w;
  double* const lambda = ctx.lambda;
  const __m256d invH2 = _mm256_set1_pd(ctx.invH2);
  const __m256d invH = _mm256_set1_pd(ctx.invH);
  // A substep's first pass: multipliers start from 0, written, not read (independentStartsFresh).
  const bool fresh = ctx.multipliersFresh;
  std::uint32_t c = begin;
  for (; c + 3 < end; c += 4) {
    const IsometricBendingConstraint* con = constraints + c;
    const double* complianceAndDamping[4] = {&con[0].params.compliance, &con[1].params.compliance,
                                             &con[2].params.compliance, &con[3].params.compliance};
    __m256d compliance, damping;
    gatherPairs4(complianceAndDamping, compliance, damping);
    const __m256d gamma = laneGamma(compliance, damping, invH);
    const bool damped = !allUndamped(gamma);
    // A damped group is solved in the lanes only when every lane is damped (each lane must take
    // the scalar kernel's branch); a mixed group goes lane by lane.
    if (damped && nonzeroLanes(gamma) != 0xf) {
      if (fresh) _mm256_storeu_pd(lambda + c, _mm256_setzero_pd());
      for (std::uint32_t lane = 0; lane < 4; ++lane) projectOne<true>(con[lane], c + lane, ctx, x, w, lambda);
      continue;
    }
    // Per stencil vertex i: its four lanes' positions, weights K_i (the four lanes' weight rows,
    // transposed in registers) and inverse masses w_i.
    double* xs[4][4];
    __m256d pos[4][3], K[4], inverseMass[4], wK[4];
    for (int i = 0; i < 4; ++i) {
      for (int lane = 0; lane < 4; ++lane) xs[i][lane] = x[con[lane].particles[i]].data();
      gather4(xs[i], pos[i][0], pos[i][1], pos[i][2]);
      inverseMass[i] = _mm256_setr_pd(w[con[0].particles[i]], w[con[1].particles[i]], w[con[2].particles[i]],
                                      w[con[3].particles[i]]);
    }
    transpose4(_mm256_loadu_pd(con[0].weights), _mm256_loadu_pd(con[1].weights), _mm256_loadu_pd(con[2].weights),
               _mm256_loadu_pd(con[3].weights), K);
    for (int i = 0; i < 4; ++i) wK[i] = _mm256_mul_pd(inverseMass[i], K[i]);
    __m256d k[3];
    for (int j = 0; j < 3; ++j)
      k[j] = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(K[0], pos[0][j]), _mm256_mul_pd(K[1], pos[1][j])),
                           _mm256_add_pd(_mm256_mul_pd(K[2], pos[2][j]), _mm256_mul_pd(K[3], pos[3][j])));
    const __m256d C = _mm256_sqrt_pd(
        _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(k[0], k[0]), _mm256_mul_pd(k[1], k[1])), _mm256_mul_pd(k[2], k[2])));
    const __m256d wSum =
        _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(wK[0], K[0]), _mm256_mul_pd(wK[1], K[1])),
                                    _mm256_mul_pd(wK[2], K[2])),
                      _mm256_mul_pd(wK[3], K[3]));
    const __m256d alphaTilde = _mm256_mul_pd(compliance, invH2);
    const __m256d denominator =
        damped ? _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_set1_pd(1.0), gamma), wSum), alphaTilde)
               : _mm256_add_pd(wSum, alphaTilde);
    const int solved = _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(C, _mm256_set1_pd(kMinCurvature), _CMP_NLT_UQ),
                                                        _mm256_cmp_pd(denominator, _mm256_setzero_pd(), _CMP_GT_OQ)));
    // A lane that is skipped (flat, nothing movable) or has an immovable vertex is rare: such a group
    // is projected lane by lane by the scalar kernel, which gives the same bits (nothing has been
    // written yet and the lanes share no movable particle).
    int movable = 0xf;
    for (int i = 0; i < 4; ++i) movable &= nonzeroLanes(inverseMass[i]);
    if ((solved & movable) != 0xf) {
      if (fresh) _mm256_storeu_pd(lambda + c, _mm256_setzero_pd());
      for (std::uint32_t lane = 0; lane < 4; ++lane) projectOne<true>(con[lane], c + lane, ctx, x, w, lambda);
      continue;
    }
    const __m256d r = _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_mul_pd(C, denominator));
    const __m256d oldLambda = fresh ? _mm256_setzero_pd() : _mm256_loadu_pd(lambda + c);
    const __m256d minusC = _mm256_xor_pd(C, _mm256_set1_pd(-0.0));
    __m256d numerator = _mm256_sub_pd(minusC, _mm256_mul_pd(alphaTilde, oldLambda));
    const __m256d inverseC = _mm256_mul_pd(denominator, r);
    if (damped) {
      // The damping term gamma (k . (k - k^n)) / C with k^n from the positions at the substep's
      // start, summed from 0.0 as the scalar kernel sums it.
      __m256d previous[4][3];
      for (int i = 0; i < 4; ++i) {
        const double* starts[4];
        for (int lane = 0; lane < 4; ++lane) starts[lane] = ctx.xPrev[con[lane].particles[i]].data();
        gather4(starts, previous[i][0], previous[i][1], previous[i][2]);
      }
      __m256d motion = _mm256_setzero_pd();
      for (int j = 0; j < 3; ++j) {
        const __m256d kPrevious =
            _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(K[0], previous[0][j]), _mm256_mul_pd(K[1], previous[1][j])),
                          _mm256_add_pd(_mm256_mul_pd(K[2], previous[2][j]), _mm256_mul_pd(K[3], previous[3][j])));
        motion = _mm256_add_pd(motion, _mm256_mul_pd(k[j], _mm256_sub_pd(k[j], kPrevious)));
      }
      numerator = _mm256_sub_pd(numerator, _mm256_mul_pd(gamma, _mm256_mul_pd(motion, inverseC)));
    }
    const __m256d dLambda = _mm256_mul_pd(numerator, _mm256_mul_pd(C, r));
    // dLambda / C: the undamped kernel forms it as dLambda (denominator r), the damped one as
    // dLambda inverseC, the same product.
    const __m256d scale = _mm256_mul_pd(dLambda, inverseC);
    for (int i = 0; i < 4; ++i) {
      const __m256d s = _mm256_mul_pd(scale, wK[i]);
      __m256d moved[3];
      for (int j = 0; j < 3; ++j) moved[j] = _mm256_add_pd(pos[i][j], _mm256_mul_pd(s, k[j]));
      scatter4(xs[i], moved[0], moved[1], moved[2]);
    }
    _mm256_storeu_pd(lambda + c, _mm256_add_pd(oldLambda, dLambda));
  }
  for (; c < end; ++c) {
    if (fresh) lambda[c] = 0.0;
    projectOne<true>(constraints[c], c, ctx, x, w, lambda);
  }
}

#endif

}  // namespace

void projectIsometricBending(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  if (ctx.mode == SolverMode::Xpbd) projectIsometricBendingRange<true>(model, ctx, begin, end);
  else projectIsometricBendingRange<false>(model, ctx, begin, end);
}

void projectIsometricBendingLanes(int lanes, const Model& model, const SolveContext& ctx, std::uint32_t begin,
                                  std::uint32_t end) {
#if defined(PLIANT_HAVE_AVX2_KERNELS)
  if (ctx.mode == SolverMode::Xpbd && lanes >= 4 && cpuHasAvx2()) {
    projectQuads(model, ctx, begin, end);
    return;
  }
#endif
  if (ctx.multipliersFresh) std::fill(ctx.lambda + begin, ctx.lambda + end, 0.0);
  projectIsometricBending(model, ctx, begin, end);
}

void projectIsometricBendingIndependent(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                                        std::uint32_t end) {
  projectIsometricBendingLanes(4, model, ctx, begin, end);
}

int isometricBendingKernelLanes() {
#if defined(PLIANT_HAVE_AVX2_KERNELS)
  if (cpuHasAvx2()) return 4;
#endif
  return 1;
}

double evaluateIsometricBending(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                                std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
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

namespace {
void validateIsometricBendings(const Model& model) {
  for (std::size_t i = 0; i < model.isometricBendings.size(); ++i) {
    const std::string where = describe("isometric bending constraint", i);
    for (ParticleIndex p : model.isometricBendings[i].particles) checkIndex(p, model.particleCount(), where);
    checkParameters(model.isometricBendings[i].params, where);
    for (double k : model.isometricBendings[i].weights)
      if (!std::isfinite(k)) throw Error(where + ": weights must be finite");
  }
}
}  // namespace

const FamilyKernels kIsometricBendingKernels = {projectIsometricBending,
                                                projectIsometricBendingIndependent,
                                                evaluateIsometricBending,
                                                stencilParticles<&Model::isometricBendings>,
                                                neverUnilateral,
                                                validateIsometricBendings,
                                                true};

}  // namespace pliant::detail

namespace pliant::detail {

namespace {
// cot of the angle between a and b.
inline double cotangent(const Vec3& a, const Vec3& b) {
  const double sine = a.cross(b).norm();
  return a.dot(b) / sine;
}
}  // namespace

bool isometricBendingWeights(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3, double weights[4]) {
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
