// Stages 1 and 6 of the step for rigid bodies ([M20] Algorithm 2): the prediction of each body's
// pose from its velocities (with the gyroscopic term) and the velocities from the pose change.
//
// Rotational update. The prediction advances the angular velocity by the gyroscopic term
// -I^-1 (omega x I omega) (torque-free bodies have no other), then the orientation by omega over
// h; stage 6 recovers omega from q q^n^-1. Two choices each (SolverSettings::gyroscopic and
// ::quaternionUpdate):
//   gyroscopic  Explicit  omega += h I^-1 (-omega x I omega)                           [M20] Alg. 2
//               Implicit  one Newton step on I (omega' - omega) + h omega' x I omega' = 0, in the
//                         body frame (Catto 2015, "Numerical methods", GDC): stable for the
//                         intermediate axis, where the explicit step gains energy
//               Midpoint  I (omega' - omega) + h m x I m = 0, m = (omega + omega') / 2, by Newton's
//                         method (a few 3x3 solves): the implicit midpoint rule keeps the quadratic
//                         invariants of Euler's equations, energy and |L|, to the solve's tolerance
//   quaternion  Linear    q += h/2 [omega, 0] q, normalised; omega = 2 vec(dq) / h       [M20] Alg. 2
//                         (turns by 2 atan(h|omega|/2) per substep and reads back omega scaled
//                         by 1/sqrt(1 + (h|omega|/2)^2): a decay of h^2 |omega|^2 / 8 per substep)
//               Exponential q = exp(h omega / 2) q; omega = 2 log(dq) / h (exact for a constant
//                         omega: no decay)
// tests/scenario/rigid_rotation_test.cpp measures the four on free bodies (docs/validation.md V16).
#pragma once

#include <cstdint>

#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant::detail {

// Stage 1 for bodies: dynamic bodies x^n = x, v += h g, x += h v, and the rotational update
// above; kinematic bodies take their paths' pose at `substepEnd` (s); static and sleeping ones stay.
// Bodies are independent: from kParallelBodyCount awake bodies on, up to `threads` threads share them.
void predictBodies(const Model& model, const SolverSettings& settings, State& state, double h, double substepEnd,
                   int threads);
// Stage 6 for bodies: v = (x - x^n) / h and omega from q (q^n)^-1, times `dampingFactor` for
// dynamic bodies (global velocity damping); static bodies get 0, sleeping ones keep theirs (0).
void updateBodyVelocities(const Model& model, const SolverSettings& settings, State& state, double h,
                          double dampingFactor, int threads);

// Below this many awake bodies the two stages above stay on one thread (a fork would cost more).
constexpr std::int64_t kParallelBodyCount = 128;

// The angular velocity (rad/s) that turns `from` into `to` in `h` seconds under `update`.
Vec3 angularVelocityFromRotation(const Quat& to, const Quat& from, double h, QuaternionUpdate update);

}  // namespace pliant::detail
