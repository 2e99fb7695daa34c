// Diagnostics computed on request from a Model and a State; stepping never pays for them.
#pragma once

#include <string>
#include <vector>

#include "pliant/constraints.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {

struct EnergyReport {
  double kinetic = 0.0;        // J, sum 1/2 m |v|^2 over particles with mass
  double gravitational = 0.0;  // J, -sum m g.x (zero at the origin)
  // J, the energy of the forces the solver applied: sum 1/2 alpha f^2 over compliant constraints,
  // with f = lambda / h^2 the force of the last substep's solve (h = State::lastSubstep; XPBD,
  // Macklin et al. 2016, sec. 5). A converged solve has C = -alpha f, where this equals
  // elasticFromPositions; an unconverged one applied less force than its C asks, and this stays
  // bounded by the forces actually applied. 0 before the first step (no force yet). In PBD mode,
  // which has no compliance, it is elasticFromPositions.
  double elastic = 0.0;
  // J, sum C^2 / (2 alpha) of the positions alone (violated unilateral constraints only): the
  // energy the constraint violation would store if it were a converged compliant solve. Far above
  // `elastic` when the solve is far from converged (stiff compliance, few substeps): then it is a
  // measure of the solver's error, not of stored energy.
  double elasticFromPositions = 0.0;
  double total() const { return kinetic + gravitational + elastic; }
};
// Hard constraints (alpha = 0) store no energy.
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
  // Dimensionless: sqrt(sum (r^2 / alpha) / sum (C^2 / alpha)) over the compliant constraints
  // (alpha > 0) that act (bilateral, or unilateral and violated or pushing), r = C + alpha~ lambda;
  // each term is an energy (J), so families of different units mix. 0 when the solve
  // converged (the applied force explains the whole violation, C = -alpha~ lambda); near 1 when
  // the applied force explains almost none of it (the shape is set by the iteration count, not by
  // the compliance). 0 when no compliant constraint acts or in PBD mode.
  double relative = 0.0;
  // Dimensionless, like a strain: the RMS over the acting constraints with two or more particles
  // (hard ones too; XPBD and small steps only) of the largest particle move that would remove the
  // residual (the minimum-norm correction grad C r / |grad C|^2, equal masses) over half the
  // constraint's extent (the diagonal of the box around its particles). For a distance constraint
  // it is exactly the stretch its compliance does not explain, over the length. A stiff constraint
  // (tiny alpha) always has `relative` near 1, since its force is not resolved in a few
  // iterations; that matters only when it shows, which this measures. 0 in PBD mode.
  double strain = 0.0;
};
// Residual of the implicit constraint equation C + alpha~ lambda = 0 (XPBD eq. 9) at the state's
// positions and multipliers, with alpha~ = alpha / h^2 for the last substep h. Satisfied
// unilateral constraints count as zero. In PBD mode alpha~ is 0 (the residual is |C|).
ResidualReport computeResidual(const Model& model, const State& state, const SolverSettings& settings);

// A run is reported as far from converged when the strain residual exceeds kFarFromConvergedStrain:
// the shapes are off by more than 5 % of their size from what the constraints ask, which shows in
// any material. The relative residual is reported beside it but does not decide: it is near 1 for
// every stiff constraint (a stiff cloth that stretches 1 % instead of its compliance's 0.001 % has
// relative residual 1 and strain residual 0.01).
inline constexpr double kFarFromConvergedStrain = 0.05;
bool farFromConverged(const ResidualReport& residual);
// Empty unless farFromConverged(residual); otherwise one sentence for a user: how far from
// converged the solve is and what to change (substeps, iterations).
std::string convergenceWarning(const ResidualReport& residual, const SolverSettings& settings);

// Value of one constraint's C at the state's positions.
double constraintValue(const Model& model, const State& state, ConstraintRef ref);

// Force estimate of one constraint (XPBD paper, sec. 5): the multiplier over h^2, lambda/h^2, in
// units of J/[C] (N for distance and attachment, N m for bending angles, Pa for volumes).
double constraintForce(const Model& model, const State& state, ConstraintRef ref);
// The force vectors f_i = gradC_i lambda / h^2 (N) on each particle of the constraint.
void constraintForceVectors(const Model& model, const State& state, ConstraintRef ref,
                            std::vector<ParticleIndex>& particles, std::vector<Vec3>& forces);

}  // namespace pliant
