// Reference implicit solver, for validation only: solves one (sub)step of XPBD's implicit equations
// of motion to Newton precision, so a test or a user can measure how far the XPBD iterate is from
// the exact implicit step (as the XPBD paper, Macklin et al. 2016, does for its convergence results).
//
// The equations (Macklin et al. 2016, eqs. 8 and 9), unknowns x (dynamic particles) and lambda:
//
//   g(x, lambda) = M (x - x~) - gradC(x)^T lambda = 0          (kg m)
//   h(x, lambda) = C(x) + alpha~ lambda = 0,  alpha~ = alpha / h^2
//
// with the predicted position x~ = x^n + h (v^n + h (g + w f_ext)) for dynamic particles (the
// solver's own prediction), fixed particles where they are, kinematic particles on their path at
// t + h, and moving attachment targets evaluated at t + h. It is solved by full Newton on eq. (12)
// with the exact Jacobian K = dg/dx = M - sum_j lambda_j Hess C_j (XPBD drops the Hessian term;
// here it is kept, from central differences of each family's analytic gradient), plus a
// backtracking line search. The result is the backward-Euler step XPBD approximates.
//
// What is and is not modelled:
// - XPBD damping (eq. 26) is not part of eqs. (8)-(9): damping coefficients are ignored. So are
//   the global velocity damping and per-object damping of SolverSettings/SimObject.
// - Unilateral constraints (max-distance, generic inequalities, C >= 0) use an active set: one is
//   active while it is violated (C < 0) or holds a pushing multiplier (lambda >= 0, as the XPBD
//   projection clamps it); Newton is re-run until the set no longer changes.
// - Attachments with rest distance 0 and distance constraints with rest length 0 have
//   C = |x_a - x_b|, which has no gradient at its solution; they are solved in the smooth vector
//   form x_a - x_b + alpha~ mu = 0 (three multipliers) and reported as lambda = -|mu|, which is
//   what XPBD's scalar multiplier converges to.
// - A constraint that touches no dynamic particle cannot move anything: its multiplier is
//   -C/alpha~ (0 when hard), as XPBD's update gives it.
// - Redundant hard constraints (alpha = 0) leave lambda non-unique; then the Newton matrix is
//   singular and a small shift is added to its multiplier block. The residual is always exact, so
//   the solution it converges to is unchanged, but lambda is only one of many valid ones.
// - Only compliance is read: PBD stiffness has no implicit counterpart.
//
// Cost: meant for validation-sized models. Each Newton iteration factors the whole KKT matrix with
// Eigen::SparseLU (a 20 x 20 cloth with bending: about 0.2 s per iteration); a step far from its
// solution (e.g. a balloon inflated by half in one step against stiff edges) can need tens of
// damped iterations, so raise maxIterations there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pliant/math.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {

struct ReferenceSettings {
  double timeStep = 1.0 / 60.0;          // s, h of the one step solved (an XPBD substep)
  Vec3 gravity = Vec3(0.0, -9.81, 0.0);  // m/s^2
  // Stop when the scaled residual norm (see ReferenceStep::residualNorm) is below this (m).
  double tolerance = 1e-10;
  int maxIterations = 50;       // Newton iterations per active-set round, >= 1
  int maxActiveSetRounds = 20;  // >= 1; only unilateral constraints need more than one

  // h = timeStep / substeps and the gravity of an XPBD solver's settings: the reference for one
  // substep of that solver.
  static ReferenceSettings fromSolver(const SolverSettings& settings);
  // Throws pliant::Error naming the first invalid field.
  void validate() const;
};

// The exact implicit step and how it was found.
struct ReferenceStep {
  std::vector<Vec3> position;          // m, x^{n+1} of every particle
  std::vector<Vec3> velocity;          // m/s, (x^{n+1} - x^n) / h
  std::vector<double> lambda;          // multipliers in State::lambda's layout (J s^2/[C]; kg m for distance)
  std::vector<Vec3> attachmentTarget;  // m, attachment targets at t + h
  double timeStep = 0.0;               // s, h
  double time = 0.0;                   // s, t + h
  // Newton iterations made (all active-set rounds together) and active-set rounds run.
  int iterations = 0;
  int activeSetRounds = 0;
  // Euclidean norm of the residual in position units (m): each particle's g scaled by its inverse
  // mass, w g = (x - x~) - w gradC^T lambda, and each constraint's h divided by |gradC| (its
  // linearised distance to C + alpha~ lambda = 0). Evaluated at the returned solution.
  double residualNorm = 0.0;
  // residualNorm before each Newton iteration and after the last one (m), to show convergence;
  // active-set rounds follow one another (iterations + activeSetRounds entries).
  std::vector<double> residualHistory;
  bool converged = false;  // residualNorm <= tolerance and the active set is consistent
  std::string message;     // why it did not converge (empty when it did)
};

// Solves one implicit step from `state` (positions, velocities, external forces, time, attachment
// targets are read; lambda is not). Throws pliant::Error when the state does not match the model or
// the settings are invalid; a failed solve is reported through `converged`, never by throwing.
ReferenceStep solveReferenceStep(const Model& model, const State& state, const ReferenceSettings& settings);

// Distance between a state (e.g. after one XPBD step from the same start) and a reference step.
struct ReferenceDistance {
  double maxPosition = 0.0;  // m, max over particles of |x - x_ref|
  double rmsPosition = 0.0;  // m, sqrt(mean over particles of |x - x_ref|^2)
  double maxVelocity = 0.0;  // m/s, max over particles of |v - v_ref|
  double maxLambda = 0.0;    // max over constraints of |lambda - lambda_ref| (kg m for distance)
};
// Throws pliant::Error when the sizes differ.
ReferenceDistance distanceToReference(const State& state, const ReferenceStep& reference);

// Advances `state` to the reference step (positions, velocities, multipliers, targets, time,
// previousPosition, lastSubstep, stepCount), so a whole run can be integrated with the implicit
// reference. Throws pliant::Error when the sizes differ.
void applyReferenceStep(const ReferenceStep& reference, State& state);

}  // namespace pliant
