// The Solver advances a State by one time step. The step pipeline, in order (solver.cpp holds the
// one implementation):
//
//   for each of `substeps` substeps of h = timeStep / substeps:
//     1. predict     x^n = x; v += h (g + w f_ext); x = x + h v   (kinematic particles follow paths)
//     2. targets     moving attachment targets are evaluated at t + h
//     3. reset       lambda = 0 (XPBD: multipliers are accumulated only within one substep)
//     4. project     `iterations` Gauss-Seidel passes over the families in ConstraintFamily order
//     5. velocities  v = (x - x^n) / h; then global velocity damping v *= exp(-c h)
//   6. damping      momentum-conserving damping per object (seed 000), once per step
//   7. check        NaN/Inf or a displacement above the bound refuses the step and restores the state
//
// Modes: PBD scales each correction by the stiffness k (or by k' = 1 - (1-k)^(1/n) when
// iteration-independent stiffness is on); XPBD uses compliance and damping (Macklin et al. 2016).
// Small steps (Macklin et al. 2019) are XPBD with n substeps and one iteration each.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "pliant/constraints.h"
#include "pliant/math.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant {

enum class SolverMode : std::uint8_t { Pbd, Xpbd };

struct SolverSettings {
  SolverMode mode = SolverMode::Xpbd;
  double timeStep = 1.0 / 60.0;                // s, one call to Solver::step
  int substeps = 1;                            // >= 1
  int iterations = 1;                          // Gauss-Seidel passes per substep, >= 1
  Vec3 gravity = Vec3(0.0, -9.81, 0.0);        // m/s^2
  bool iterationIndependentStiffness = false;  // PBD only: use k' = 1 - (1-k)^(1/iterations)
  double velocityDamping = 0.0;                // 1/s, global: v *= exp(-velocityDamping h)
  // A particle that moves further than this in one step (m) refuses the step. Infinity disables.
  double maxDisplacementPerStep = 1.0e3;
  bool checkSteps = true;  // detect NaN/Inf and over-bound moves (costs one state copy per step)

  // XPBD with small steps: n substeps of one iteration each (Macklin et al. 2019).
  static SolverSettings smallSteps(int substeps, double timeStep = 1.0 / 60.0);
  // Throws pliant::Error naming the first invalid field.
  void validate() const;
};

enum class StepStatus : std::uint8_t { Ok, NonFinite, ExcessiveDisplacement };

struct StepResult {
  StepStatus status = StepStatus::Ok;
  // When the step was refused: the first particle found bad, and the constraint whose projection
  // made it so (hasConstraint false when the prediction itself was bad, e.g. a NaN force).
  std::int64_t particle = -1;
  bool hasConstraint = false;
  ConstraintRef constraint;
  std::string message;
  bool ok() const { return status == StepStatus::Ok; }
};

class Solver {
 public:
  // The model must outlive the solver. Throws pliant::Error for invalid settings or model.
  Solver(const Model& model, const SolverSettings& settings);

  // Advances `state` by settings().timeStep. A refused step leaves `state` exactly as it was.
  [[nodiscard]] StepResult step(State& state);
  // Advances by `steps` steps, stopping at the first refused one.
  [[nodiscard]] StepResult run(State& state, int steps);

  const SolverSettings& settings() const { return settings_; }
  void setSettings(const SolverSettings& settings);
  const Model& model() const { return *model_; }

  // Called after every substep's velocity update with the state at that instant (e.g. for probes
  // recorded per substep). Empty by default; costs nothing when unset.
  void setSubstepObserver(std::function<void(const State&)> observer) { substepObserver_ = std::move(observer); }

  // Number of constraint projections made by the last step (all families, all passes).
  std::uint64_t lastProjectionCount() const { return lastProjectionCount_; }

 private:
  void advance(State& state, bool trace);
  StepResult diagnose(State& state);
  const Model* model_;
  SolverSettings settings_;
  State backup_;
  std::vector<Vec3> scratch_;
  std::function<void(const State&)> substepObserver_;  // gradients of variable-size families, sized at construction
  std::uint64_t lastProjectionCount_ = 0;
  // Set while tracing a refused step: the first constraint that produced a bad value.
  struct Trace {
    bool active = false;
    bool found = false;
    bool constraintSet = false;
    ConstraintRef constraint;
    std::int64_t particle = -1;
    double bound = 0.0;
    const std::vector<Vec3>* stepStart = nullptr;
  } trace_;
  friend struct SolverAccess;
};

}  // namespace pliant
