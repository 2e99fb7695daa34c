// Helpers of the AVX2 constraint kernels (distance.cpp, isometric_bending.cpp, neo_hookean.cpp): moving the
// (x, y, z) of four scattered particles into and out of three four-lane vectors. The kernels are
// compiled for AVX2 with a function attribute and chosen at run time (cpuHasAvx2), so the library
// itself still targets the x86-64 baseline.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define PLIANT_HAVE_AVX2_KERNELS 1
#include <immintrin.h>

#include "constraints/projection.h"

namespace pliant::detail {

inline bool cpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

// Lane i of (first, second) = p[i][0..1], two adjacent doubles.
__attribute__((target("avx2"))) inline void gatherPairs4(const double* const p[4], __m256d& first, __m256d& second) {
  const __m256d ab02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p[0])), _mm_loadu_pd(p[2]), 1);
  const __m256d ab13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p[1])), _mm_loadu_pd(p[3]), 1);
  first = _mm256_unpacklo_pd(ab02, ab13);
  second = _mm256_unpackhi_pd(ab02, ab13);
}

// Lane i of (gx, gy, gz) = p[i][0..2]. x and y of a particle come in one 16-byte load and are
// transposed; z comes in 8-byte loads.
__attribute__((target("avx2"))) inline void gather4(const double* const p[4], __m256d& gx, __m256d& gy, __m256d& gz) {
  gatherPairs4(p, gx, gy);
  const __m128d z01 = _mm_loadh_pd(_mm_load_sd(p[0] + 2), p[1] + 2);
  const __m128d z23 = _mm_loadh_pd(_mm_load_sd(p[2] + 2), p[3] + 2);
  gz = _mm256_insertf128_pd(_mm256_castpd128_pd256(z01), z23, 1);
}

// The inverse of gatherPairs4: p[i][0..1] = lane i of (first, second).
__attribute__((target("avx2"))) inline void scatterPairs4(double* const p[4], __m256d first, __m256d second) {
  const __m256d ab02 = _mm256_unpacklo_pd(first, second);  // a0 b0 a2 b2
  const __m256d ab13 = _mm256_unpackhi_pd(first, second);  // a1 b1 a3 b3
  _mm_storeu_pd(p[0], _mm256_castpd256_pd128(ab02));
  _mm_storeu_pd(p[1], _mm256_castpd256_pd128(ab13));
  _mm_storeu_pd(p[2], _mm256_extractf128_pd(ab02, 1));
  _mm_storeu_pd(p[3], _mm256_extractf128_pd(ab13, 1));
}

// The inverse of gather4: p[i][0..2] = lane i of (gx, gy, gz).
__attribute__((target("avx2"))) inline void scatter4(double* const p[4], __m256d gx, __m256d gy, __m256d gz) {
  scatterPairs4(p, gx, gy);
  const __m128d z01 = _mm256_castpd256_pd128(gz);
  const __m128d z23 = _mm256_extractf128_pd(gz, 1);
  _mm_storel_pd(p[0] + 2, z01);
  _mm_storeh_pd(p[1] + 2, z01);
  _mm_storel_pd(p[2] + 2, z23);
  _mm_storeh_pd(p[3] + 2, z23);
}

// Transposes four rows of four doubles: column[j] lane i = row i element j.
__attribute__((target("avx2"))) inline void transpose4(__m256d row0, __m256d row1, __m256d row2, __m256d row3,
                                                       __m256d column[4]) {
  const __m256d lo01 = _mm256_unpacklo_pd(row0, row1);  // r0[0] r1[0] r0[2] r1[2]
  const __m256d hi01 = _mm256_unpackhi_pd(row0, row1);  // r0[1] r1[1] r0[3] r1[3]
  const __m256d lo23 = _mm256_unpacklo_pd(row2, row3);
  const __m256d hi23 = _mm256_unpackhi_pd(row2, row3);
  column[0] = _mm256_permute2f128_pd(lo01, lo23, 0x20);
  column[1] = _mm256_permute2f128_pd(hi01, hi23, 0x20);
  column[2] = _mm256_permute2f128_pd(lo01, lo23, 0x31);
  column[3] = _mm256_permute2f128_pd(hi01, hi23, 0x31);
}

// The numerator of dlambda for constraints con[0..3]: XPBD's -C - alpha~ lambda, or PBD's k (-C)
// with each lane's stiffness (k or k', as pbdStiffness gives it), as the scalar kernels form them.
template <class Constraint>
__attribute__((target("avx2"))) inline __m256d laneNumerator(bool xpbd, __m256d minusC, __m256d alphaTilde,
                                                             __m256d lambda, const Constraint* con,
                                                             const SolveContext& ctx) {
  if (xpbd) return _mm256_sub_pd(minusC, _mm256_mul_pd(alphaTilde, lambda));
  return _mm256_mul_pd(_mm256_setr_pd(pbdStiffness(con[0].params, ctx), pbdStiffness(con[1].params, ctx),
                                      pbdStiffness(con[2].params, ctx), pbdStiffness(con[3].params, ctx)),
                       minusC);
}

// XPBD damping gamma = compliance damping / h in the lanes, formed as undamped() forms it.
__attribute__((target("avx2"))) inline __m256d laneGamma(__m256d compliance, __m256d damping, __m256d invH) {
  return _mm256_mul_pd(_mm256_mul_pd(compliance, damping), invH);
}

// Whether no lane has XPBD damping (the written-out kernels' fast path): undamped() in the lanes
// (gamma == 0 from the same product, so it answers as undamped() does).
__attribute__((target("avx2"))) inline bool allUndamped(__m256d gamma) {
  return _mm256_movemask_pd(_mm256_cmp_pd(gamma, _mm256_setzero_pd(), _CMP_EQ_OQ)) == 0xf;
}
__attribute__((target("avx2"))) inline bool allUndamped(__m256d compliance, __m256d damping, __m256d invH) {
  return allUndamped(laneGamma(compliance, damping, invH));
}

// Bit i set where lane i of v is not 0 (immovable particles have inverse mass exactly 0).
__attribute__((target("avx2"))) inline int nonzeroLanes(__m256d v) {
  return _mm256_movemask_pd(_mm256_cmp_pd(v, _mm256_setzero_pd(), _CMP_NEQ_UQ));
}

}  // namespace pliant::detail
#endif
