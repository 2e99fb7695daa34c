// Diagnostics computed on request from a Model and a State; stepping never pays for them.
#pragma once

#include <vector>

#include "pliant/constraints.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {

struct EnergyReport {
  double kinetic = 0.0;        // J, sum 1/2 m |v|^2 over particles with mass
  double gravitational = 0.0;  // J, -sum m g.x (zero at the origin)
  double elastic = 0.0;        // J, sum C^2 / (2 alpha) over compliant constraints (violated ones if unilateral)
  double total() const { return kinetic + gravitational + elastic; }
};
// Compliances are read as in XPBD mode; hard constraints (alpha = 0) store no energy.
EnergyReport computeEnergy(const Model& model, const State& state, const SolverSettings& settings);

struct MomentumReport {
  double mass = 0.0;                 // kg, of the dynamic particles (inverse mass > 0)
  Vec3 centreOfMass = Vec3::Zero();  // m
  Vec3 linear = Vec3::Zero();        // kg m/s, sum m v
  Vec3 angular = Vec3::Zero();       // kg m^2/s, sum x x (m v) about the origin
};
// Over all dynamic particles, or over `particles` when given.
MomentumReport computeMomentum(const Model& model, const State& state,
                               const std::vector<ParticleIndex>* particles = nullptr);

struct ResidualReport {
  double max = 0.0;  // max |C + alpha~ lambda| ([C] units, mixed across families)
  double rms = 0.0;
  std::size_t count = 0;
  ConstraintRef worst;
};
// Residual of the implicit constraint equation C + alpha~ lambda = 0 (XPBD eq. 9) at the state's
// positions and multipliers, with alpha~ = alpha / h^2 for the last substep h. Satisfied
// unilateral constraints count as zero. In PBD mode alpha~ is 0 (the residual is |C|).
ResidualReport computeResidual(const Model& model, const State& state, const SolverSettings& settings);

// Value of one constraint's C at the state's positions.
double constraintValue(const Model& model, const State& state, ConstraintRef ref);

// Force estimate of one constraint (XPBD paper, sec. 5): the multiplier over h^2, lambda/h^2, in
// units of J/[C] (N for distance and attachment, N m for bending angles, Pa for volumes).
double constraintForce(const Model& model, const State& state, ConstraintRef ref);
// The force vectors f_i = gradC_i lambda / h^2 (N) on each particle of the constraint.
void constraintForceVectors(const Model& model, const State& state, ConstraintRef ref,
                            std::vector<ParticleIndex>& particles, std::vector<Vec3>& forces);

}  // namespace pliant
