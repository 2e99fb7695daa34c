// Stable neo-Hookean tets (Macklin & Mueller 2021, "A Constraint-based Formulation of Stable
// Neo-Hookean Materials"): per tet, with F = Ds restInverse and Ds = [x1-x0, x2-x0, x3-x0],
//   C_D = |F|_F,         dC_D/dF = F / |F|_F
//   C_H = det F - gamma, dC_H/dF = cof F = [f1 x f2, f2 x f0, f0 x f1] (f_j the columns of F)
// and the gradient of a vertex k = 1..3 is column k-1 of (dC/dF) restInverse^T, vertex 0's minus
// their sum. Both gradients stay finite for flat (det F = 0) and inverted (det F < 0) tets: C_H's
// gradient pushes an inverted tet back through zero volume, which is what makes the model stable.
//
// The two constraints of a tet are solved together by default: one Newton step of XPBD's
// multiplier equations for both (a 2x2 system per tet, Macklin et al. 2016, eq. 26 with a block
// of two rows). At the rest shape the two gradients are parallel and the constraints' values are
// not zero (C_D = sqrt 3, C_H = 1 - gamma); the coupled step finds the multipliers that balance
// exactly and leaves the rest shape unmoved, where solving them in sequence moves each vertex
// back and forth by a little every substep (tests/unit/neo_hookean_test.cpp measures both).
// The sequential form (deviatoric, then hydrostatic with the updated F) is kept for comparison.
// PBD mode solves these tets as XPBD too: the material is its compliance, and a PBD stiffness of
// 1 on C_D = |F| would collapse every tet.
//
// One pass per substep (the first; later Gauss-Seidel passes skip these tets): the model is meant
// for small steps (Macklin et al. 2019), as the paper uses it. Its multipliers do not vanish at
// rest (they hold a prestress of order mu V h^2 on each constraint that cancels between the two),
// and XPBD applies a later pass's dlambda along the new gradients while the force already applied
// keeps its old direction; with a prestress as large as the material's stiffness that neglected
// term is not small: with 20 passes per substep an undeformed cube left its rest shape by
// centimetres within a second (tests/unit/neo_hookean_test.cpp keeps it at rest with 20 passes).
// Accuracy comes from substeps.
//
// Two kernels compute the same numbers: projectNeoHookean, tet after tet (any range), and
// projectNeoHookeanIndependent for a range of tets that share no movable particle (a colour, see
// src/core/solve_plan.h), which solves four coupled tets per AVX2 instruction where the
// CPU has it (checked at run time) and every other tet with the scalar kernel. Every lane performs
// exactly the scalar kernel's IEEE operations in the same order (sqrt and division are correctly
// rounded everywhere, no FMA is used and contraction is off), so the CPU and the grouping of tets
// into lanes do not change the result.
#include <cmath>
#include <cstddef>

#include "constraints/avx2_lanes.h"
#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {

// Below this |F|_F the deviatoric direction is undefined (the tet collapsed to a point).
constexpr double kMinNorm = 1e-12;

// The geometry is written out in plain doubles, in one fixed order that the AVX2 kernel below
// repeats lane by lane (so both give the same bits). The order is the one Eigen 3.4 used for the
// matrix expressions this file had before (SSE2, x86-64 baseline), so writing it out moved no
// result: a 3x3 product's coefficient (i, j) is (a_i0 b_0j + a_i1 b_1j) + a_i2 b_2j in rows 0 and 1
// (one SSE2 packet) but a_20 b_0j + (a_21 b_1j + a_22 b_2j) in row 2 (Eigen's scalar reduction),
// |F|_F^2 sums the squares s_k in column-major order as ((s0 + s2) + (s4 + s6)) + ((s1 + s3) +
// (s5 + s7)) + s8, and a dot product is (a0 b0 + a1 b1) + a2 b2.
using Mat = double[3][3];  // [row][column]

inline double rowTimesColumn(int row, double a0, double a1, double a2, double b0, double b1, double b2) {
  return row < 2 ? (a0 * b0 + a1 * b1) + a2 * b2 : a0 * b0 + (a1 * b1 + a2 * b2);
}

// out = a restInverse, or a restInverse^T.
inline void timesRestInverse(const Mat& a, const Mat3& restInverse, bool transposed, Mat& out) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double b0 = transposed ? restInverse(j, 0) : restInverse(0, j);
      const double b1 = transposed ? restInverse(j, 1) : restInverse(1, j);
      const double b2 = transposed ? restInverse(j, 2) : restInverse(2, j);
      out[i][j] = rowTimesColumn(i, a[i][0], a[i][1], a[i][2], b0, b1, b2);
    }
}

struct TetGradients {
  Vec3 deviatoric[4];
  Vec3 hydrostatic[4];
  double cD = 0.0;  // |F|_F
  double detF = 0.0;
};

// Deformation gradient F = Ds restInverse of the tet at positions x.
inline void deformationGradient(const NeoHookeanConstraint& con, const Vec3* x, Mat& F) {
  const ParticleIndex* p = con.particles;
  Mat ds;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) ds[i][j] = x[p[j + 1]][i] - x[p[0]][i];
  timesRestInverse(ds, con.restInverse, false, F);
}

// Vertex gradients of a constraint whose derivative with respect to F is `dF`: column k - 1 of
// dF restInverse^T for vertex k = 1..3, minus their sum for vertex 0.
inline void vertexGradients(const Mat& dF, const Mat3& restInverse, Vec3 out[4]) {
  Mat g;
  timesRestInverse(dF, restInverse, true, g);
  for (int i = 0; i < 3; ++i) {
    for (int k = 1; k < 4; ++k) out[k][i] = g[i][k - 1];
    out[0][i] = -((out[1][i] + out[2][i]) + out[3][i]);
  }
}

inline double frobeniusNorm(const Mat& F) {
  double s[9];
  for (int k = 0; k < 9; ++k) s[k] = F[k % 3][k / 3] * F[k % 3][k / 3];
  return std::sqrt((((s[0] + s[2]) + (s[4] + s[6])) + ((s[1] + s[3]) + (s[5] + s[7]))) + s[8]);
}

inline void deviatoricGradient(const NeoHookeanConstraint& con, const Mat& F, TetGradients& t) {
  t.cD = frobeniusNorm(F);
  if (t.cD < kMinNorm) {
    for (Vec3& g : t.deviatoric) g.setZero();
    return;
  }
  Mat direction;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) direction[i][j] = F[i][j] / t.cD;
  vertexGradients(direction, con.restInverse, t.deviatoric);
}

// Column j of cof F is f_(j+1) x f_(j+2) (f the columns of F, indices mod 3).
inline void hydrostaticGradient(const NeoHookeanConstraint& con, const Mat& F, TetGradients& t) {
  Mat cofactor;
  for (int j = 0; j < 3; ++j) {
    const int a = (j + 1) % 3, b = (j + 2) % 3;
    cofactor[0][j] = F[1][a] * F[2][b] - F[2][a] * F[1][b];
    cofactor[1][j] = F[2][a] * F[0][b] - F[0][a] * F[2][b];
    cofactor[2][j] = F[0][a] * F[1][b] - F[1][a] * F[0][b];
  }
  t.detF = (F[0][0] * cofactor[0][0] + F[1][0] * cofactor[1][0]) + F[2][0] * cofactor[2][0];
  vertexGradients(cofactor, con.restInverse, t.hydrostatic);
}

inline double squaredNorm(const Vec3& a) { return (a[0] * a[0] + a[1] * a[1]) + a[2] * a[2]; }
inline double dot(const Vec3& a, const Vec3& b) { return (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2]; }

inline double weightedNorm2(const Vec3 g[4], const ParticleIndex* p, const double* w) {
  double sum = 0.0;
  for (int i = 0; i < 4; ++i) sum += w[p[i]] * squaredNorm(g[i]);
  return sum;
}

inline void applyCorrection(Vec3* x, const ParticleIndex* p, const double* w, const Vec3 g[4], double dLambda) {
  for (int i = 0; i < 4; ++i) moveParticle(x, p[i], w[p[i]], (w[p[i]] * dLambda) * g[i]);
}

// XPBD's right-hand side -C - alpha~ lambda - gamma gradC.(x - x^n) and the factor (1 + gamma).
inline double xpbdRhs(double C, const Vec3 g[4], const ParticleIndex* p, const ConstraintParameters& params,
                      double lambda, const SolveContext& ctx, double& onePlusGamma) {
  const double alphaTilde = params.compliance * ctx.invH2;
  const double gamma = params.compliance * params.damping * ctx.invH;
  double dampingTerm = 0.0;
  if (gamma != 0.0) {
    for (int i = 0; i < 4; ++i) dampingTerm += dot(g[i], ctx.x[p[i]] - ctx.xPrev[p[i]]);
    dampingTerm *= gamma;
  }
  onePlusGamma = 1.0 + gamma;
  return -C - alphaTilde * lambda - dampingTerm;
}

void projectSequential(const NeoHookeanConstraint& con, const SolveContext& ctx, double* lambda) {
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  const ParticleIndex* p = con.particles;
  TetGradients t;
  Mat F;
  deformationGradient(con, x, F);
  deviatoricGradient(con, F, t);
  const double wD = weightedNorm2(t.deviatoric, p, w);
  if (t.cD >= kMinNorm && wD > 1e-300) {
    const double d = solveMultiplier(t.cD, wD, 4, t.deviatoric, p, con.deviatoric, lambda[0], false, ctx);
    applyCorrection(x, p, w, t.deviatoric, d);
  }
  deformationGradient(con, x, F);
  hydrostaticGradient(con, F, t);
  const double wH = weightedNorm2(t.hydrostatic, p, w);
  if (wH > 1e-300) {
    const double d =
        solveMultiplier(t.detF - con.gamma, wH, 4, t.hydrostatic, p, con.hydrostatic, lambda[1], false, ctx);
    applyCorrection(x, p, w, t.hydrostatic, d);
  }
}

void projectCoupled(const NeoHookeanConstraint& con, const SolveContext& ctx, double* lambda) {
  const double* w = ctx.w;
  const ParticleIndex* p = con.particles;
  TetGradients t;
  Mat F;
  deformationGradient(con, ctx.x, F);
  deviatoricGradient(con, F, t);
  hydrostaticGradient(con, F, t);
  double gDD = 0.0, gHH = 0.0, gDH = 0.0;
  for (int i = 0; i < 4; ++i) {
    const double wi = w[p[i]];
    gDD += wi * squaredNorm(t.deviatoric[i]);
    gHH += wi * squaredNorm(t.hydrostatic[i]);
    gDH += wi * dot(t.deviatoric[i], t.hydrostatic[i]);
  }
  // A collapsed tet (no deviatoric direction) or one whose vertices cannot move: the sequential
  // kernel handles what is left of it one constraint at a time.
  if (t.cD < kMinNorm || !(gDD > 1e-300) || !(gHH > 1e-300)) {
    projectSequential(con, ctx, lambda);
    return;
  }
  double onePlusGammaD = 1.0, onePlusGammaH = 1.0;
  const double rD = xpbdRhs(t.cD, t.deviatoric, p, con.deviatoric, lambda[0], ctx, onePlusGammaD);
  const double rH = xpbdRhs(t.detF - con.gamma, t.hydrostatic, p, con.hydrostatic, lambda[1], ctx, onePlusGammaH);
  // Row j: (1 + gamma_j) sum_k G_jk dlambda_k + alpha~_j dlambda_j = r_j.
  const double a00 = onePlusGammaD * gDD + con.deviatoric.compliance * ctx.invH2;
  const double a01 = onePlusGammaD * gDH;
  const double a10 = onePlusGammaH * gDH;
  const double a11 = onePlusGammaH * gHH + con.hydrostatic.compliance * ctx.invH2;
  const double det = a00 * a11 - a01 * a10;
  // Singular only for hard constraints (compliance 0) with parallel gradients, as at rest.
  if (!(det > 1e-300 * (a00 * a11))) {
    projectSequential(con, ctx, lambda);
    return;
  }
  const double dD = (a11 * rD - a01 * rH) / det;
  const double dH = (a00 * rH - a10 * rD) / det;
  lambda[0] += dD;
  lambda[1] += dH;
  for (int i = 0; i < 4; ++i)
    moveParticle(ctx.x, p[i], w[p[i]], w[p[i]] * (dD * t.deviatoric[i] + dH * t.hydrostatic[i]));
}

void projectOne(const NeoHookeanConstraint& con, const SolveContext& ctx, double* lambda) {
  if (con.coupled) projectCoupled(con, ctx, lambda);
  else projectSequential(con, ctx, lambda);
}

#if defined(PLIANT_HAVE_AVX2_KERNELS)
// Four tets in the lanes of AVX registers: the written-out geometry above, one operation per
// instruction for four lanes at once.
__attribute__((target("avx2"))) inline __m256d add(__m256d a, __m256d b) { return _mm256_add_pd(a, b); }
__attribute__((target("avx2"))) inline __m256d sub(__m256d a, __m256d b) { return _mm256_sub_pd(a, b); }
__attribute__((target("avx2"))) inline __m256d mul(__m256d a, __m256d b) { return _mm256_mul_pd(a, b); }
__attribute__((target("avx2"))) inline __m256d negate(__m256d a) { return _mm256_xor_pd(a, _mm256_set1_pd(-0.0)); }

using LaneMat = __m256d[3][3];  // [row][column], four tets

__attribute__((target("avx2"))) inline __m256d rowTimesColumn(int row, __m256d a0, __m256d a1, __m256d a2, __m256d b0,
                                                              __m256d b1, __m256d b2) {
  return row < 2 ? add(add(mul(a0, b0), mul(a1, b1)), mul(a2, b2)) : add(mul(a0, b0), add(mul(a1, b1), mul(a2, b2)));
}

__attribute__((target("avx2"))) inline void timesRestInverse(const LaneMat& a, const LaneMat& restInverse,
                                                             bool transposed, LaneMat& out) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const __m256d b0 = transposed ? restInverse[j][0] : restInverse[0][j];
      const __m256d b1 = transposed ? restInverse[j][1] : restInverse[1][j];
      const __m256d b2 = transposed ? restInverse[j][2] : restInverse[2][j];
      out[i][j] = rowTimesColumn(i, a[i][0], a[i][1], a[i][2], b0, b1, b2);
    }
}

__attribute__((target("avx2"))) inline void vertexGradients(const LaneMat& dF, const LaneMat& restInverse,
                                                            __m256d out[4][3]) {
  LaneMat g;
  timesRestInverse(dF, restInverse, true, g);
  for (int i = 0; i < 3; ++i) {
    for (int k = 1; k < 4; ++k) out[k][i] = g[i][k - 1];
    out[0][i] = negate(add(add(out[1][i], out[2][i]), out[3][i]));
  }
}

__attribute__((target("avx2"))) inline __m256d dot(const __m256d a[3], const __m256d b[3]) {
  return add(add(mul(a[0], b[0]), mul(a[1], b[1])), mul(a[2], b[2]));
}

static_assert(sizeof(Mat3) == 9 * sizeof(double) && sizeof(ConstraintParameters) == 3 * sizeof(double) &&
                  offsetof(ConstraintParameters, compliance) == 0 &&
                  offsetof(ConstraintParameters, damping) == sizeof(double) &&
                  offsetof(NeoHookeanConstraint, restVolume) ==
                      offsetof(NeoHookeanConstraint, restInverse) + 9 * sizeof(double) &&
                  offsetof(NeoHookeanConstraint, gamma) ==
                      offsetof(NeoHookeanConstraint, restInverse) + 10 * sizeof(double) &&
                  offsetof(NeoHookeanConstraint, deviatoric) ==
                      offsetof(NeoHookeanConstraint, restInverse) + 11 * sizeof(double) &&
                  offsetof(NeoHookeanConstraint, hydrostatic) ==
                      offsetof(NeoHookeanConstraint, restInverse) + 14 * sizeof(double),
              "projectQuads loads restInverse .. hydrostatic.damping as 16 adjacent doubles");

// Four independent tets con[0..3] by the coupled step in the lanes of AVX registers:
// projectCoupled's operations lane by lane, so the same bits. kDamped: some tet of the group has
// XPBD damping (gamma = alpha beta / h), and the lanes form xpbdRhs's damping term and the factors
// 1 + gamma; in an undamped lane of such a group 1 + gamma = 1 and the damping term is exactly 0,
// so multiplying by the one and subtracting the other changes no bit. An immovable vertex (inverse
// mass 0) is not written, as moveParticle does not write it. A group in which the scalar kernel
// would take another path for some tet (collapsed, singular) is projected by the scalar kernel, tet
// by tet: nothing has been written yet and the tets share no movable particle, so that too gives
// the same bits. `material` holds each lane's 16 doubles from restInverse on (see projectQuads).
template <bool kDamped>
__attribute__((target("avx2"))) inline void projectGroup(const NeoHookeanConstraint* con, const SolveContext& ctx,
                                                         double* const tetLambda[4], const __m256d material[16]) {
  const __m256d invH2 = _mm256_set1_pd(ctx.invH2);
  const __m256d gamma = material[10];
  const __m256d complianceD = material[11];
  const __m256d complianceH = material[14];
  LaneMat restInverse;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) restInverse[i][j] = material[i + 3 * j];
  double* xs[4][4];
  __m256d pos[4][3], inverseMass[4];
  for (int v = 0; v < 4; ++v) {
    for (int lane = 0; lane < 4; ++lane) xs[v][lane] = ctx.x[con[lane].particles[v]].data();
    gather4(xs[v], pos[v][0], pos[v][1], pos[v][2]);
    inverseMass[v] = _mm256_setr_pd(ctx.w[con[0].particles[v]], ctx.w[con[1].particles[v]], ctx.w[con[2].particles[v]],
                                    ctx.w[con[3].particles[v]]);
  }
  // deformationGradient
  LaneMat ds, F;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) ds[i][j] = sub(pos[j + 1][i], pos[0][i]);
  timesRestInverse(ds, restInverse, false, F);
  // deviatoricGradient (a collapsed lane divides by ~0 here and is not solved in the lanes)
  __m256d s[9];
  for (int k = 0; k < 9; ++k) s[k] = mul(F[k % 3][k / 3], F[k % 3][k / 3]);
  const __m256d cD =
      _mm256_sqrt_pd(add(add(add(add(s[0], s[2]), add(s[4], s[6])), add(add(s[1], s[3]), add(s[5], s[7]))), s[8]));
  LaneMat direction;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) direction[i][j] = _mm256_div_pd(F[i][j], cD);
  __m256d deviatoric[4][3];
  vertexGradients(direction, restInverse, deviatoric);
  // hydrostaticGradient
  LaneMat cofactor;
  for (int j = 0; j < 3; ++j) {
    const int a = (j + 1) % 3, b = (j + 2) % 3;
    cofactor[0][j] = sub(mul(F[1][a], F[2][b]), mul(F[2][a], F[1][b]));
    cofactor[1][j] = sub(mul(F[2][a], F[0][b]), mul(F[0][a], F[2][b]));
    cofactor[2][j] = sub(mul(F[0][a], F[1][b]), mul(F[1][a], F[0][b]));
  }
  const __m256d detF =
      add(add(mul(F[0][0], cofactor[0][0]), mul(F[1][0], cofactor[1][0])), mul(F[2][0], cofactor[2][0]));
  __m256d hydrostatic[4][3];
  vertexGradients(cofactor, restInverse, hydrostatic);
  // projectCoupled
  __m256d gDD = _mm256_setzero_pd(), gHH = _mm256_setzero_pd(), gDH = _mm256_setzero_pd();
  for (int v = 0; v < 4; ++v) {
    gDD = add(gDD, mul(inverseMass[v], dot(deviatoric[v], deviatoric[v])));
    gHH = add(gHH, mul(inverseMass[v], dot(hydrostatic[v], hydrostatic[v])));
    gDH = add(gDH, mul(inverseMass[v], dot(deviatoric[v], hydrostatic[v])));
  }
  const __m256d alphaTildeD = mul(complianceD, invH2);
  const __m256d alphaTildeH = mul(complianceH, invH2);
  // Row j of the 2x2 system: (1 + gamma_j) sum_k G_jk dlambda_k + alpha~_j dlambda_j = r_j.
  __m256d a00, a01, a10, a11, dampingGammaD, dampingGammaH;
  if constexpr (kDamped) {
    const __m256d invH = _mm256_set1_pd(ctx.invH);
    dampingGammaD = mul(mul(complianceD, material[12]), invH);  // as xpbdRhs forms gamma
    dampingGammaH = mul(mul(complianceH, material[15]), invH);
    const __m256d onePlusGammaD = add(_mm256_set1_pd(1.0), dampingGammaD);
    const __m256d onePlusGammaH = add(_mm256_set1_pd(1.0), dampingGammaH);
    a00 = add(mul(onePlusGammaD, gDD), alphaTildeD);
    a01 = mul(onePlusGammaD, gDH);
    a10 = mul(onePlusGammaH, gDH);
    a11 = add(mul(onePlusGammaH, gHH), alphaTildeH);
  } else {
    a00 = add(gDD, alphaTildeD);
    a01 = a10 = gDH;
    a11 = add(gHH, alphaTildeH);
  }
  const __m256d det = sub(mul(a00, a11), mul(a01, a10));
  const __m256d tiny = _mm256_set1_pd(1e-300);
  const __m256d solved = _mm256_and_pd(
      _mm256_and_pd(_mm256_cmp_pd(cD, _mm256_set1_pd(kMinNorm), _CMP_NLT_UQ), _mm256_cmp_pd(gDD, tiny, _CMP_GT_OQ)),
      _mm256_and_pd(_mm256_cmp_pd(gHH, tiny, _CMP_GT_OQ), _mm256_cmp_pd(det, mul(tiny, mul(a00, a11)), _CMP_GT_OQ)));
  if (_mm256_movemask_pd(solved) != 0xf) {
    for (int lane = 0; lane < 4; ++lane) projectOne(con[lane], ctx, tetLambda[lane]);
    return;
  }
  __m256d lambdaD, lambdaH;
  gatherPairs4(tetLambda, lambdaD, lambdaH);
  __m256d rD = sub(negate(cD), mul(alphaTildeD, lambdaD));
  __m256d rH = sub(negate(sub(detF, gamma)), mul(alphaTildeH, lambdaH));
  if constexpr (kDamped) {
    // xpbdRhs's damping term gamma sum_i gradC_i . (x_i - x_i^n), +0 where gamma == 0.
    __m256d termD = _mm256_setzero_pd(), termH = _mm256_setzero_pd();
    for (int v = 0; v < 4; ++v) {
      const double* previous[4];
      for (int lane = 0; lane < 4; ++lane) previous[lane] = ctx.xPrev[con[lane].particles[v]].data();
      __m256d motion[3];
      gather4(previous, motion[0], motion[1], motion[2]);
      for (int k = 0; k < 3; ++k) motion[k] = sub(pos[v][k], motion[k]);
      termD = add(termD, dot(deviatoric[v], motion));
      termH = add(termH, dot(hydrostatic[v], motion));
    }
    const __m256d zero = _mm256_setzero_pd();
    termD = _mm256_blendv_pd(mul(termD, dampingGammaD), zero, _mm256_cmp_pd(dampingGammaD, zero, _CMP_EQ_OQ));
    termH = _mm256_blendv_pd(mul(termH, dampingGammaH), zero, _mm256_cmp_pd(dampingGammaH, zero, _CMP_EQ_OQ));
    rD = sub(rD, termD);
    rH = sub(rH, termH);
  }
  const __m256d dD = _mm256_div_pd(sub(mul(a11, rD), mul(a01, rH)), det);
  const __m256d dH = _mm256_div_pd(sub(mul(a00, rH), mul(a10, rD)), det);
  scatterPairs4(tetLambda, add(lambdaD, dD), add(lambdaH, dH));
  for (int v = 0; v < 4; ++v) {
    __m256d moved[3];
    for (int k = 0; k < 3; ++k)
      moved[k] = add(pos[v][k], mul(inverseMass[v], add(mul(dD, deviatoric[v][k]), mul(dH, hydrostatic[v][k]))));
    const int movable = nonzeroLanes(inverseMass[v]);
    if (movable == 0xf) {
      scatter4(xs[v], moved[0], moved[1], moved[2]);
      continue;
    }
    double lanes[3][4];
    for (int k = 0; k < 3; ++k) _mm256_storeu_pd(lanes[k], moved[k]);
    for (int lane = 0; lane < 4; ++lane)
      if (movable & (1 << lane))
        for (int k = 0; k < 3; ++k) xs[v][lane][k] = lanes[k][lane];
  }
}

// Groups of four independent tets from begin on (projectGroup); tets solved in sequence by choice
// and the last (end - begin) % 4 by the scalar kernel.
__attribute__((target("avx2"))) void projectQuads(const Model& model, const SolveContext& ctx, std::uint32_t begin,
                                                  std::uint32_t end) {
  const NeoHookeanConstraint* constraints = model.neoHookeans.data();
  double* const lambda = ctx.lambda;
  const __m256d invH = _mm256_set1_pd(ctx.invH);
  std::uint32_t c = begin;
  for (; c + 3 < end; c += 4) {
    const NeoHookeanConstraint* con = constraints + c;
    double* tetLambda[4];
    for (std::uint32_t lane = 0; lane < 4; ++lane) tetLambda[lane] = lambda + 2 * std::size_t{c + lane};
    if (!(con[0].coupled && con[1].coupled && con[2].coupled && con[3].coupled)) {
      for (int lane = 0; lane < 4; ++lane) projectOne(con[lane], ctx, tetLambda[lane]);
      continue;
    }
    // Per lane, 16 adjacent doubles: restInverse (column-major), restVolume, gamma, deviatoric
    // (compliance, damping, stiffness), hydrostatic (compliance, damping).
    __m256d material[16];
    for (int q = 0; q < 4; ++q)
      transpose4(_mm256_loadu_pd(con[0].restInverse.data() + 4 * q), _mm256_loadu_pd(con[1].restInverse.data() + 4 * q),
                 _mm256_loadu_pd(con[2].restInverse.data() + 4 * q), _mm256_loadu_pd(con[3].restInverse.data() + 4 * q),
                 material + 4 * q);
    if (allUndamped(material[11], material[12], invH) && allUndamped(material[14], material[15], invH))
      projectGroup<false>(con, ctx, tetLambda, material);
    else projectGroup<true>(con, ctx, tetLambda, material);
  }
  for (; c < end; ++c) projectOne(constraints[c], ctx, lambda + 2 * std::size_t{c});
}
#endif

}  // namespace

void projectNeoHookeanLanes(int lanes, const Model& model, const SolveContext& ctx, std::uint32_t begin,
                            std::uint32_t end) {
  // Once per substep: see the top of this file.
  if (!ctx.multipliersFresh) return;
  // A material is its compliance: PBD mode, which reads stiffness instead, solves these as XPBD.
  SolveContext xpbd = ctx;
  xpbd.mode = SolverMode::Xpbd;
#if defined(PLIANT_HAVE_AVX2_KERNELS)
  if (lanes >= 4 && cpuHasAvx2()) {
    projectQuads(model, xpbd, begin, end);
    return;
  }
#endif
  (void)lanes;
  for (std::uint32_t c = begin; c < end; ++c) projectOne(model.neoHookeans[c], xpbd, xpbd.lambda + 2 * std::size_t{c});
}

void projectNeoHookean(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  projectNeoHookeanLanes(1, model, ctx, begin, end);
}

void projectNeoHookeanIndependent(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  projectNeoHookeanLanes(4, model, ctx, begin, end);
}

int neoHookeanKernelLanes() {
#if defined(PLIANT_HAVE_AVX2_KERNELS)
  if (cpuHasAvx2()) return 4;
#endif
  return 1;
}

double evaluateNeoHookean(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                          std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const NeoHookeanConstraint& con = model.neoHookeans[i / 2];
  particles.assign(con.particles, con.particles + 4);
  gradient.resize(4);
  TetGradients t;
  Mat F;
  deformationGradient(con, x, F);
  if (i % 2 == 0) {
    deviatoricGradient(con, F, t);
    gradient.assign(t.deviatoric, t.deviatoric + 4);
    return t.cD;
  }
  hydrostaticGradient(con, F, t);
  gradient.assign(t.hydrostatic, t.hydrostatic + 4);
  return t.detF - con.gamma;
}

double neoHookeanRestValue(const Model& model, std::uint32_t i) {
  return i % 2 == 0 ? std::sqrt(3.0) : 1.0 - model.neoHookeans[i / 2].gamma;
}

namespace {

void validateNeoHookeans(const Model& model) {
  for (std::size_t i = 0; i < model.neoHookeans.size(); ++i) {
    const NeoHookeanConstraint& c = model.neoHookeans[i];
    const std::string where = describe("neo-Hookean tet", i);
    for (ParticleIndex p : c.particles) checkIndex(p, model.particleCount(), where);
    checkParameters(c.deviatoric, where + " (deviatoric)");
    checkParameters(c.hydrostatic, where + " (hydrostatic)");
    if (!(c.restVolume > 0.0) || !std::isfinite(c.restVolume))
      throw Error(where + ": rest volume must be finite and > 0 m^3");
    if (!c.restInverse.allFinite()) throw Error(where + ": rest shape inverse must be finite");
    if (!(c.gamma > 0.0) || !std::isfinite(c.gamma)) throw Error(where + ": gamma must be finite and > 0");
  }
}

}  // namespace

const FamilyKernels kNeoHookeanKernels = {projectNeoHookean,  projectNeoHookeanIndependent,
                                          evaluateNeoHookean, stencilParticles<&Model::neoHookeans>,
                                          neverUnilateral,    validateNeoHookeans};

}  // namespace pliant::detail
