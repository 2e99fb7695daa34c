// Small helpers shared by the scenario tests (docs/validation.md cases). Header-only; every function is
// inline so each test file can include it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "pliant/pliant.h"

namespace pliant::scenario {

inline constexpr double kG = 9.81;  // m/s^2, magnitude of the default gravity

// |a - b| / |b|, or |a - b| when b is 0.
inline double relativeError(double a, double b) {
  const double d = std::abs(a - b);
  return b == 0.0 ? d : d / std::abs(b);
}

// Largest particle speed (m/s).
inline double maxSpeed(const State& state) {
  double v = 0.0;
  for (const Vec3& u : state.velocity) v = std::max(v, u.norm());
  return v;
}

// Solver settings with the common fields in one call.
inline SolverSettings makeSettings(SolverMode mode, double timeStep, int substeps, int iterations,
                                   const Vec3& gravity = Vec3(0.0, -kG, 0.0)) {
  SolverSettings s;
  s.mode = mode;
  s.timeStep = timeStep;
  s.substeps = substeps;
  s.iterations = iterations;
  s.gravity = gravity;
  return s;
}

// A vertical chain hanging straight down from a fixed particle at the origin: particle 0 is fixed,
// particles 1..n sit at y = -k * spacing with mass `mass` (the last one `endMass`), and distance
// constraint k-1 joins particles k-1 and k with rest length `spacing`. Constraints are stored top
// first, so Gauss-Seidel sweeps from the anchor down.
struct HangingChain {
  ModelPtr model;
  int links = 0;
  double spacing = 0.0;
};
inline HangingChain makeHangingChain(int links, double mass, double spacing, const ConstraintParameters& params,
                                     double endMass = -1.0) {
  ModelBuilder b;
  ParticleIndex previous = b.addParticle(Vec3::Zero(), 0.0);
  for (int k = 1; k <= links; ++k) {
    const double m = (k == links && endMass > 0.0) ? endMass : mass;
    const ParticleIndex p = b.addParticle(Vec3(0.0, -spacing * k, 0.0), m);
    b.addDistance(previous, p, params, spacing);
    previous = p;
  }
  return {b.build(), links, spacing};
}

// Sum of the distance constraints' C over the model: the total elongation (m) of a chain.
inline double totalElongation(const Model& model, const State& state) {
  double sum = 0.0;
  for (std::uint32_t k = 0; k < model.distances.size(); ++k)
    sum += constraintValue(model, state, {ConstraintFamily::Distance, k});
  return sum;
}

// Sets every dynamic particle's velocity to a uniform random vector in [-scale, scale]^3.
inline void randomVelocities(const Model& model, State& state, double scale, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  for (std::size_t i = 0; i < model.particleCount(); ++i) {
    if (model.inverseMass[i] == 0.0) continue;
    state.velocity[i] = Vec3(u(rng), u(rng), u(rng));
  }
}

// Scale of a state's momentum for round-off tolerances: sum_i m_i |v_i| (kg m/s) and
// sum_i m_i |x_i| |v_i| (kg m^2/s) over dynamic particles.
struct MomentumScale {
  double linear = 0.0;
  double angular = 0.0;
};
inline MomentumScale momentumScale(const Model& model, const State& state) {
  MomentumScale s;
  for (std::size_t i = 0; i < model.particleCount(); ++i) {
    if (model.inverseMass[i] == 0.0) continue;
    s.linear += model.mass[i] * state.velocity[i].norm();
    s.angular += model.mass[i] * state.position[i].norm() * state.velocity[i].norm();
  }
  return s;
}

struct SpringStep {
  double u = 0.0;        // m, C = |x| - L after the step
  double v = 0.0;        // m/s, velocity along the line
  double offLine = 0.0;  // m/s, velocity component off the line
};

inline const Vec3 kLine = Vec3(2.0, -1.0, 2.0) / 3.0;  // unit direction of the line
inline constexpr double kRestLength = 0.7;             // m

// Runs `steps` steps of `substeps` substeps each from (u, v) along kLine.
inline SpringStep springSteps(bool anchorAsParticle, double mass, double alpha, double beta, double timeStep,
                              int substeps, int iterations, double u, double v, int steps) {
  ModelBuilder b;
  ConstraintRef ref;
  const ConstraintParameters params{alpha, beta, 1.0};
  if (anchorAsParticle) {
    const ParticleIndex anchor = b.addParticle(Vec3::Zero(), 0.0);
    const ParticleIndex p = b.addParticle((kRestLength + u) * kLine, mass, v * kLine);
    ref = {ConstraintFamily::Distance, b.addDistance(anchor, p, params, kRestLength)};
  } else {
    const ParticleIndex p = b.addParticle((kRestLength + u) * kLine, mass, v * kLine);
    ref = {ConstraintFamily::Attachment, b.addAttachment(p, Vec3::Zero(), params, kRestLength)};
  }
  const ModelPtr model = b.build();
  Solver solver(model, makeSettings(SolverMode::Xpbd, timeStep, substeps, iterations, Vec3::Zero()));
  State state = State::fromModel(*model);
  EXPECT_TRUE(solver.run(state, steps).ok());
  const Vec3 velocity = state.velocity.back();
  return {constraintValue(*model, state, ref), velocity.dot(kLine), (velocity - velocity.dot(kLine) * kLine).norm()};
}

// The backward Euler update of m u'' = -K u - beta u' with step h.
inline void backwardEulerSpring(double mass, double alpha, double beta, double h, double& u, double& v) {
  const double K = 1.0 / alpha;
  v = (mass * v - h * K * u) / (mass + h * h * K + h * beta);
  u = u + h * v;
}

// V6/V7: one step (and several substepped steps) against backward Euler, for the anchor as a fixed
// particle or an attachment, two masses, two compliances, two steps, three starts and n in {1,2,5,20}.
inline void checkSpringAgainstBackwardEuler(double beta) {
  struct Start {
    double u, v;
  };
  int checked = 0;
  for (bool anchorAsParticle : {true, false})
    for (double mass : {0.3, 2.0})
      for (double alpha : {1e-4, 1e-2})
        for (double h : {1.0 / 30.0, 1.0 / 120.0})
          for (const Start& s0 : {Start{0.1, 0.0}, Start{-0.05, 0.7}, Start{0.02, -1.5}})
            for (int n : {1, 2, 5, 20}) {
              const SpringStep got = springSteps(anchorAsParticle, mass, alpha, beta, h, 1, n, s0.u, s0.v, 1);
              double u = s0.u, v = s0.v;
              backwardEulerSpring(mass, alpha, beta, h, u, v);
              // Neither u' nor v' is near zero for these starts, so plain relative errors are meaningful.
              EXPECT_LE(relativeError(got.u, u), 1e-10)
                  << "m=" << mass << " alpha=" << alpha << " beta=" << beta << " h=" << h << " n=" << n
                  << " u'=" << got.u << " expected " << u;
              EXPECT_LE(relativeError(got.v, v), 1e-10)
                  << "m=" << mass << " alpha=" << alpha << " beta=" << beta << " h=" << h << " n=" << n
                  << " v'=" << got.v << " expected " << v;
              EXPECT_LE(got.offLine / std::abs(v), 1e-10);
              ++checked;
            }
  EXPECT_EQ(checked, 2 * 2 * 2 * 2 * 3 * 4);
  // Several steps with substeps: each substep is one backward Euler step of h = dt / substeps.
  for (int substeps : {1, 3, 8})
    for (int n : {1, 4}) {
      const double dt = 1.0 / 60.0, mass = 0.5, alpha = 1e-3;
      const SpringStep got = springSteps(true, mass, alpha, beta, dt, substeps, n, 0.08, -0.4, 12);
      double u = 0.08, v = -0.4;
      for (int k = 0; k < 12 * substeps; ++k) backwardEulerSpring(mass, alpha, beta, dt / substeps, u, v);
      // Measured against the oscillation's amplitude, since u and v pass through zero.
      const double amplitude = std::sqrt(0.08 * 0.08 + mass * alpha * 0.4 * 0.4);  // m
      const double omega = 1.0 / std::sqrt(mass * alpha);                          // rad/s
      EXPECT_LE(std::abs(got.u - u) / amplitude, 1e-10) << "substeps=" << substeps << " n=" << n;
      EXPECT_LE(std::abs(got.v - v) / (amplitude * omega), 1e-10) << "substeps=" << substeps << " n=" << n;
    }
}

// A number in short scientific notation, for test properties (--gtest_output=xml) and messages.
inline std::string sci(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4e", value);
  return buffer;
}

inline std::string describe(SolverMode mode) { return mode == SolverMode::Pbd ? "PBD" : "XPBD"; }

}  // namespace pliant::scenario
