#include "particle_pass.h"

#include "constraints/avx2_lanes.h"

namespace pliant::detail {

namespace {

// gravity + 0 is what gravity + w f gives for f = 0 (w is finite), -0 components included, so a
// pass that skips the force array keeps the bits.
inline Vec3 gravityPlusZero(const PredictionPass& pass) { return pass.gravity + Vec3::Zero(); }

// Inlined into the AVX2 loop as well, for its leftover particles, so that loop never calls
// non-VEX code with the upper register halves dirty (which slowed the contact stages after it
// markedly; docs/performance.md).
__attribute__((always_inline)) inline void predictOne(const PredictionPass& pass, const Vec3& gravityOnly,
                                                      std::int64_t i) {
  Vec3 velocity = pass.updateVelocities
                      ? velocityFromMotion(pass.x[i], pass.xPrev[i], pass.invH, pass.dampingFactor, pass.w[i])
                      : pass.v[i];
  pass.xPrev[i] = pass.x[i];
  if (pass.w[i] != 0.0) {
    velocity += pass.h * (pass.forces ? Vec3(pass.gravity + pass.w[i] * pass.force[i]) : gravityOnly);
    pass.x[i] += pass.h * velocity;
  }
  if (pass.storeVelocities) pass.v[i] = velocity;
}

void predictScalar(const PredictionPass& pass, std::int64_t begin, std::int64_t end) {
  const Vec3 gravityOnly = gravityPlusZero(pass);
  for (std::int64_t i = begin; i < end; ++i) predictOne(pass, gravityOnly, i);
}

#if defined(PLIANT_HAVE_AVX2_KERNELS)
static_assert(sizeof(Vec3) == 3 * sizeof(double), "four particles are twelve consecutive doubles");

// Four particles are twelve consecutive doubles, three registers: (x0 y0 z0 x1) (y1 z1 x2 y2)
// (z2 x3 y3 z3). A per-particle value (w0 w1 w2 w3) is spread to that pattern by three permutes.
__attribute__((target("avx2"))) inline void spreadToComponents(__m256d perParticle, __m256d spread[3]) {
  spread[0] = _mm256_permute4x64_pd(perParticle, 0x40);  // 0 0 0 1
  spread[1] = _mm256_permute4x64_pd(perParticle, 0xA5);  // 1 1 2 2
  spread[2] = _mm256_permute4x64_pd(perParticle, 0xFE);  // 2 3 3 3
}

// The same vector (a, b, c) in every particle's place of that pattern.
__attribute__((target("avx2"))) inline void repeatForFourParticles(const Vec3& a, __m256d pattern[3]) {
  pattern[0] = _mm256_setr_pd(a[0], a[1], a[2], a[0]);
  pattern[1] = _mm256_setr_pd(a[1], a[2], a[0], a[1]);
  pattern[2] = _mm256_setr_pd(a[2], a[0], a[1], a[2]);
}

__attribute__((target("avx2"))) void predictAvx2(const PredictionPass& pass, std::int64_t begin, std::int64_t end) {
  const Vec3 g = gravityPlusZero(pass);
  __m256d gravityOnly[3], gravity[3];
  repeatForFourParticles(g, gravityOnly);
  repeatForFourParticles(pass.gravity, gravity);
  const __m256d h = _mm256_set1_pd(pass.h);
  const __m256d invH = _mm256_set1_pd(pass.invH);
  const __m256d damping = _mm256_set1_pd(pass.dampingFactor);
  const bool damped = pass.dampingFactor != 1.0;
  std::int64_t i = begin;
  for (; i + 3 < end; i += 4) {
    const __m256d w = _mm256_loadu_pd(pass.w + i);
    // A group with an immovable particle (pins, kinematic particles) is rare: the scalar loop.
    if (nonzeroLanes(w) != 0xf) {
      for (std::int64_t j = i; j < i + 4; ++j) predictOne(pass, g, j);
      continue;
    }
    double* x = pass.x[i].data();
    double* xPrev = pass.xPrev[i].data();
    double* v = pass.v[i].data();
    // The inverse masses are needed only with external forces.
    __m256d wSpread[3] = {w, w, w};
    if (pass.forces) spreadToComponents(w, wSpread);
    for (int k = 0; k < 3; ++k) {
      const __m256d position = _mm256_loadu_pd(x + 4 * k);
      __m256d velocity;
      if (pass.updateVelocities) {
        velocity = _mm256_mul_pd(_mm256_sub_pd(position, _mm256_loadu_pd(xPrev + 4 * k)), invH);
        if (damped) velocity = _mm256_mul_pd(velocity, damping);
      } else {
        velocity = _mm256_loadu_pd(v + 4 * k);
      }
      _mm256_storeu_pd(xPrev + 4 * k, position);
      const __m256d acceleration =
          pass.forces
              ? _mm256_add_pd(gravity[k], _mm256_mul_pd(wSpread[k], _mm256_loadu_pd(pass.force[i].data() + 4 * k)))
              : gravityOnly[k];
      velocity = _mm256_add_pd(velocity, _mm256_mul_pd(h, acceleration));
      _mm256_storeu_pd(x + 4 * k, _mm256_add_pd(position, _mm256_mul_pd(h, velocity)));
      if (pass.storeVelocities) _mm256_storeu_pd(v + 4 * k, velocity);
    }
  }
  for (; i < end; ++i) predictOne(pass, g, i);
}
#endif

}  // namespace

void predictParticles(const PredictionPass& pass, std::int64_t begin, std::int64_t end, int lanes) {
#if defined(PLIANT_HAVE_AVX2_KERNELS)
  if (lanes >= 4 && cpuHasAvx2()) {
    predictAvx2(pass, begin, end);
    return;
  }
#endif
  predictScalar(pass, begin, end);
}

}  // namespace pliant::detail
