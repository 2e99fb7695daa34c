// Stage 1 of a substep (and stage 6 of the one before, when fused): the per-particle prediction
// pass of Solver::advance, over a range of particles.
#pragma once

#include <cstdint>

#include "pliant/math.h"

namespace pliant::detail {

struct PredictionPass {
  Vec3* x = nullptr;            // m, positions, predicted in place
  Vec3* xPrev = nullptr;        // m, set to the positions before the prediction
  Vec3* v = nullptr;            // m/s
  const double* w = nullptr;    // 1/kg
  const Vec3* force = nullptr;  // N, read only when `forces`
  double h = 0.0;               // s, the substep
  double invH = 0.0;            // 1/s
  double dampingFactor = 1.0;   // velocity factor per substep (1: none)
  Vec3 gravity = Vec3::Zero();  // m/s^2
  bool forces = false;          // some external force is not zero
  // Form the velocities from the last substep's motion first (the fused velocity pass); else
  // read them from v.
  bool updateVelocities = false;
  bool storeVelocities = true;  // write the velocities back to v
};

// Stage 6 for one particle: v = (x - xPrev) / h, times dampingFactor for a movable particle. The
// separate velocity pass and the one fused into the prediction both use it, so they agree bit for bit.
inline Vec3 velocityFromMotion(const Vec3& x, const Vec3& xPrev, double invH, double dampingFactor, double w) {
  Vec3 velocity = (x - xPrev) * invH;
  if (dampingFactor != 1.0 && w != 0.0) velocity *= dampingFactor;
  return velocity;
}

// For particles [begin, end): with updateVelocities, v = (x - xPrev) / h, times dampingFactor for
// movable particles; then xPrev = x, and for movable particles (w != 0) v += h (g + w f) and
// x += h v. Four particles at a time in AVX2 registers where the CPU has it (checked at run time),
// with the same IEEE operations per component as the scalar loop, so the same bits; `lanes` 1
// forces the scalar loop (tests).
void predictParticles(const PredictionPass& pass, std::int64_t begin, std::int64_t end, int lanes = 4);

}  // namespace pliant::detail
