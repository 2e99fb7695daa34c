// Reference implicit solver: full Newton on Macklin et al. 2016, eqs. (8)-(9); see
// pliant/reference/reference_solver.h for what it models.
//
// Layout of the unknowns: z = [x of each dynamic particle (3 per particle); multiplier rows]. Each
// constraint owns one row (three in the vector form). A row whose multiplier is not an unknown (an
// inactive unilateral constraint, a constraint on no dynamic particle) keeps an identity row with
// zero residual, so the layout never changes while iterating.
//
// The Newton system is eq. (12) with the exact K. The signs of the off-diagonal blocks follow from
// g = M (x - x~) - gradC^T lambda, so dg/dlambda = -gradC^T:
//
//   [ M - sum_j lambda_j Hess C_j   -gradC^T ] [dx     ]     [g]
//   [ gradC                          alpha~  ] [dlambda] = - [h]
//
// Constraint Hessians come from central differences of each family's analytic gradient (the same
// evaluator diagnostics use), so every family, user constraints included, is covered. Their
// truncation error only slows Newton down; it cannot move the solution, because the residual
// (g, h) is always evaluated exactly.
#include "pliant/reference/reference_solver.h"

#include <Eigen/SparseCore>
#include <Eigen/SparseLU>
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "constraints/families.h"
#include "pliant/error.h"

namespace pliant {

ReferenceSettings ReferenceSettings::fromSolver(const SolverSettings& settings) {
  ReferenceSettings r;
  r.timeStep = settings.timeStep / settings.substeps;
  r.gravity = settings.gravity;
  return r;
}

void ReferenceSettings::validate() const {
  if (!std::isfinite(timeStep) || !(timeStep > 0.0))
    throw Error("reference settings: timeStep must be a finite number > 0 s, got " + formatNumber(timeStep));
  if (!gravity.allFinite()) throw Error("reference settings: gravity must be finite");
  if (!std::isfinite(tolerance) || !(tolerance > 0.0))
    throw Error("reference settings: tolerance must be a finite number > 0 m, got " + std::to_string(tolerance));
  if (maxIterations < 1)
    throw Error("reference settings: maxIterations must be >= 1, got " + std::to_string(maxIterations));
  if (maxActiveSetRounds < 1)
    throw Error("reference settings: maxActiveSetRounds must be >= 1, got " + std::to_string(maxActiveSetRounds));
}

namespace {

using Index = Eigen::Index;

// Central-difference step for the Hessians, relative to the stencil's size (m). The truncation
// error is O(step^2) and the round-off O(eps/step); 1e-6 keeps both near 1e-10 relative.
constexpr double kHessianStep = 1e-6;
// Armijo constant and the number of step halvings the line search tries.
constexpr double kArmijo = 1e-4;
constexpr int kMaxHalvings = 30;
// Shifts of the multiplier block, relative to sum_i w_i |gradC_i|^2, tried in turn when the plain
// Newton step cannot be computed or does not reduce the residual (singular matrix: redundant hard
// constraints, a constraint with zero gradient).
constexpr std::array<double, 3> kShifts = {0.0, 1e-10, 1e-6};

struct Slot {
  ConstraintRef ref;
  Index row = 0;  // first multiplier row in z
  int rows = 1;   // 3 in the vector form
  double alphaTilde = 0.0;
  bool unilateral = false;
  bool vectorForm = false;
  bool frozen = false;                   // touches no dynamic particle
  bool active = true;                    // unilateral: in the active set
  std::vector<ParticleIndex> particles;  // as the family lists them
  std::vector<Index> dof;                // per listed particle: first unknown, or -1 if not dynamic
  std::vector<double> sign;              // vector form: +1 for x_a, -1 for x_b
  // At the current iterate.
  double value = 0.0;
  Vec3 vectorValue = Vec3::Zero();
  std::vector<Vec3> gradient;
  double gradientNorm = 0.0;    // |gradC| over dynamic particles ([C]/m), scalar form only
  double inverseMassSum = 0.0;  // sum_i w_i |gradC_i|^2, the natural scale of alpha~ (same units)
  bool solved() const { return !frozen && (!unilateral || active); }
};

class ImplicitStep {
 public:
  ImplicitStep(const Model& model, const State& state, const ReferenceSettings& settings)
      : model_(model), state_(state), settings_(settings) {}

  ReferenceStep run();

 private:
  void setUp();
  void evaluateConstraints(const std::vector<Vec3>& x);
  // Residual F(z) (unscaled) at positions x and multipliers lambda; constraints must be evaluated at x.
  void residual(const std::vector<Vec3>& x, const Eigen::VectorXd& lambda, Eigen::VectorXd& F) const;
  // Scaling that turns F into position units (see ReferenceStep::residualNorm).
  void scaling(Eigen::VectorXd& D) const;
  void assemble(const Eigen::VectorXd& lambda, double shift);
  void addHessian(const Slot& slot, double lambda);
  // One active-set round of Newton iterations; false if it stopped without converging.
  bool newton(ReferenceStep& out);

  const Model& model_;
  const State& state_;
  const ReferenceSettings& settings_;
  double h_ = 0.0;
  std::vector<Vec3> predicted_;  // x~ for dynamic particles, x^{n+1} for the others (m)
  std::vector<Vec3> targets_;    // attachment targets at t + h (m)
  std::vector<Index> dof_;       // per particle: first unknown, or -1
  std::vector<double> mass_;     // per particle, 1/w for dynamic ones (kg)
  double maxInverseMass_ = 0.0;
  Index positionUnknowns_ = 0;
  Index unknowns_ = 0;
  std::vector<Slot> slots_;

  std::vector<Vec3> x_;     // current iterate (m)
  Eigen::VectorXd lambda_;  // current multipliers, one per row
  Eigen::VectorXd F_, D_;
  std::vector<Vec3> trialX_;
  Eigen::VectorXd trialLambda_, trialF_;
  std::vector<Eigen::Triplet<double>> triplets_;
  Eigen::SparseMatrix<double> matrix_;
  // Scratch for the finite differences.
  std::vector<Vec3> work_;
  std::vector<ParticleIndex> scratchParticles_;
  std::vector<Vec3> plus_, minus_;
};

void ImplicitStep::setUp() {
  const std::size_t n = model_.particleCount();
  h_ = settings_.timeStep;
  const double t = state_.time + h_;

  // Prediction, written exactly as Solver::advance writes it so both start from the same x~.
  predicted_ = state_.position;
  dof_.assign(n, -1);
  mass_.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double w = model_.inverseMass[i];
    if (w == 0.0) continue;
    const Vec3 v = state_.velocity[i] + h_ * (settings_.gravity + w * state_.externalForce[i]);
    predicted_[i] = state_.position[i] + h_ * v;
    dof_[i] = positionUnknowns_;
    positionUnknowns_ += 3;
    mass_[i] = 1.0 / w;
    maxInverseMass_ = std::max(maxInverseMass_, w);
  }
  for (const KinematicParticle& k : model_.kinematicParticles) predicted_[k.particle] = k.path(t);
  targets_ = state_.attachmentTarget;
  for (std::size_t c = 0; c < model_.attachments.size(); ++c) {
    const AttachmentConstraint& a = model_.attachments[c];
    if (a.targetPath >= 0) targets_[c] = model_.attachmentPaths[a.targetPath](t);
  }

  Index row = positionUnknowns_;
  const double invH2 = 1.0 / (h_ * h_);
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const auto family = static_cast<ConstraintFamily>(f);
    const std::size_t count = model_.constraintCount(family);
    for (std::size_t c = 0; c < count; ++c) {
      Slot slot;
      slot.ref = {family, static_cast<std::uint32_t>(c)};
      slot.alphaTilde = detail::constraintParameters(model_, slot.ref).compliance * invH2;
      slot.unilateral = detail::isUnilateral(model_, slot.ref);
      if (family == ConstraintFamily::Attachment && model_.attachments[c].restDistance == 0.0) {
        slot.vectorForm = true;
        slot.particles = {model_.attachments[c].particle};
        slot.sign = {1.0};
      } else if (family == ConstraintFamily::Distance && model_.distances[c].restLength == 0.0) {
        slot.vectorForm = true;
        slot.particles = {model_.distances[c].particles[0], model_.distances[c].particles[1]};
        slot.sign = {1.0, -1.0};
      } else {
        detail::familyKernels(family).evaluate(model_, predicted_.data(), targets_.data(), slot.ref.index,
                                               slot.particles, slot.gradient);
      }
      slot.rows = slot.vectorForm ? 3 : 1;
      slot.row = row;
      row += slot.rows;
      slot.frozen = true;
      for (ParticleIndex p : slot.particles) {
        slot.dof.push_back(dof_[p]);
        if (dof_[p] >= 0) slot.frozen = false;
      }
      slots_.push_back(std::move(slot));
    }
  }
  unknowns_ = row;
  work_ = predicted_;
}

void ImplicitStep::evaluateConstraints(const std::vector<Vec3>& x) {
  for (Slot& slot : slots_) {
    if (slot.vectorForm) {
      const ParticleIndex a = slot.particles[0];
      slot.vectorValue = slot.ref.family == ConstraintFamily::Attachment ? Vec3(x[a] - targets_[slot.ref.index])
                                                                         : Vec3(x[a] - x[slot.particles[1]]);
      double wSum = 0.0;  // the gradient blocks are +-I
      for (std::size_t i = 0; i < slot.particles.size(); ++i)
        if (slot.dof[i] >= 0) wSum += model_.inverseMass[slot.particles[i]];
      slot.inverseMassSum = wSum;
      continue;
    }
    slot.value = detail::familyKernels(slot.ref.family)
                     .evaluate(model_, x.data(), targets_.data(), slot.ref.index, scratchParticles_, slot.gradient);
    double norm2 = 0.0;
    double wSum = 0.0;
    for (std::size_t i = 0; i < slot.particles.size(); ++i) {
      if (slot.dof[i] < 0) continue;
      norm2 += slot.gradient[i].squaredNorm();
      wSum += model_.inverseMass[slot.particles[i]] * slot.gradient[i].squaredNorm();
    }
    slot.gradientNorm = std::sqrt(norm2);
    slot.inverseMassSum = wSum;
  }
}

void ImplicitStep::residual(const std::vector<Vec3>& x, const Eigen::VectorXd& lambda, Eigen::VectorXd& F) const {
  F.setZero(unknowns_);
  // g = M (x - x~) - gradC^T lambda   (kg m)
  for (std::size_t p = 0; p < dof_.size(); ++p)
    if (dof_[p] >= 0) F.segment<3>(dof_[p]) = mass_[p] * (x[p] - predicted_[p]);
  for (const Slot& slot : slots_) {
    if (!slot.solved()) continue;  // its multiplier is held fixed: residual row 0
    if (slot.vectorForm) {
      const Vec3 mu = lambda.segment<3>(slot.row);
      for (std::size_t i = 0; i < slot.particles.size(); ++i)
        if (slot.dof[i] >= 0) F.segment<3>(slot.dof[i]) -= slot.sign[i] * mu;
      F.segment<3>(slot.row) = slot.vectorValue + slot.alphaTilde * mu;  // h, vector form
      continue;
    }
    const double l = lambda[slot.row];
    for (std::size_t i = 0; i < slot.particles.size(); ++i)
      if (slot.dof[i] >= 0) F.segment<3>(slot.dof[i]) -= l * slot.gradient[i];
    F[slot.row] = slot.value + slot.alphaTilde * l;  // h = C + alpha~ lambda
  }
}

void ImplicitStep::scaling(Eigen::VectorXd& D) const {
  D.setZero(unknowns_);
  for (std::size_t p = 0; p < dof_.size(); ++p)
    if (dof_[p] >= 0) D.segment<3>(dof_[p]).setConstant(model_.inverseMass[p]);
  for (const Slot& slot : slots_) {
    if (!slot.solved()) continue;
    if (slot.vectorForm) {
      D.segment<3>(slot.row).setOnes();
    } else {
      D[slot.row] = slot.gradientNorm > 0.0 ? 1.0 / slot.gradientNorm : 1.0;
    }
  }
}

// Adds -lambda Hess C of one scalar constraint by central differences of its gradient.
void ImplicitStep::addHessian(const Slot& slot, double lambda) {
  const detail::EvaluateFn evaluate = detail::familyKernels(slot.ref.family).evaluate;
  const std::size_t k = slot.particles.size();
  // Step from the stencil's size (m), so that it is small relative to every length involved.
  Eigen::AlignedBox3d box;
  for (ParticleIndex p : slot.particles) box.extend(x_[p]);
  if (slot.ref.family == ConstraintFamily::Attachment) box.extend(targets_[slot.ref.index]);
  const double size = box.diagonal().norm();
  const double step = kHessianStep * (size > 0.0 && std::isfinite(size) ? size : 1.0);

  // Each dynamic particle is perturbed once even if the stencil lists it twice.
  std::vector<std::size_t> columns;
  for (std::size_t i = 0; i < k; ++i) {
    if (slot.dof[i] < 0) continue;
    bool seen = false;
    for (std::size_t j : columns) seen = seen || slot.particles[j] == slot.particles[i];
    if (!seen) columns.push_back(i);
  }
  const auto m = static_cast<Index>(columns.size());
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(3 * m, 3 * m);
  // Row block of each listed particle in H (its first occurrence among the columns).
  std::vector<Index> block(k, -1);
  for (std::size_t i = 0; i < k; ++i)
    for (Index c = 0; c < m; ++c)
      if (slot.dof[i] >= 0 && slot.particles[columns[c]] == slot.particles[i]) block[i] = 3 * c;

  for (Index c = 0; c < m; ++c) {
    const ParticleIndex p = slot.particles[columns[c]];
    for (int d = 0; d < 3; ++d) {
      const double original = work_[p][d];
      work_[p][d] = original + step;
      const double up = work_[p][d];
      evaluate(model_, work_.data(), targets_.data(), slot.ref.index, scratchParticles_, plus_);
      work_[p][d] = original - step;
      const double down = work_[p][d];
      evaluate(model_, work_.data(), targets_.data(), slot.ref.index, scratchParticles_, minus_);
      work_[p][d] = original;
      const double span = up - down;  // the step actually taken, after rounding
      for (std::size_t i = 0; i < k; ++i)
        if (block[i] >= 0) H.block<3, 1>(block[i], 3 * c + d) += (plus_[i] - minus_[i]) / span;
    }
  }
  // The exact Hessian is symmetric; averaging halves the difference error.
  const Eigen::MatrixXd symmetric = 0.5 * (H + H.transpose());
  for (Index a = 0; a < m; ++a)
    for (Index b = 0; b < m; ++b) {
      const Index rowDof = slot.dof[columns[a]];
      const Index colDof = slot.dof[columns[b]];
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) {
          const double v = -lambda * symmetric(3 * a + r, 3 * b + s);
          if (v != 0.0) triplets_.emplace_back(rowDof + r, colDof + s, v);
        }
    }
}

void ImplicitStep::assemble(const Eigen::VectorXd& lambda, double shift) {
  triplets_.clear();
  for (std::size_t p = 0; p < dof_.size(); ++p)
    if (dof_[p] >= 0)
      for (int d = 0; d < 3; ++d) triplets_.emplace_back(dof_[p] + d, dof_[p] + d, mass_[p]);
  work_ = x_;
  for (const Slot& slot : slots_) {
    if (!slot.solved()) {
      for (int r = 0; r < slot.rows; ++r) triplets_.emplace_back(slot.row + r, slot.row + r, 1.0);
      continue;
    }
    const double scale = slot.inverseMassSum > 0.0 ? slot.inverseMassSum : maxInverseMass_;
    const double diagonal = slot.alphaTilde + shift * scale;
    if (slot.vectorForm) {
      for (std::size_t i = 0; i < slot.particles.size(); ++i) {
        if (slot.dof[i] < 0) continue;
        for (int d = 0; d < 3; ++d) {
          triplets_.emplace_back(slot.row + d, slot.dof[i] + d, slot.sign[i]);
          triplets_.emplace_back(slot.dof[i] + d, slot.row + d, -slot.sign[i]);
        }
      }
      for (int d = 0; d < 3; ++d) triplets_.emplace_back(slot.row + d, slot.row + d, diagonal);
      continue;  // C is linear in the vector form: no Hessian
    }
    for (std::size_t i = 0; i < slot.particles.size(); ++i) {
      if (slot.dof[i] < 0) continue;
      for (int d = 0; d < 3; ++d) {
        triplets_.emplace_back(slot.row, slot.dof[i] + d, slot.gradient[i][d]);
        triplets_.emplace_back(slot.dof[i] + d, slot.row, -slot.gradient[i][d]);
      }
    }
    triplets_.emplace_back(slot.row, slot.row, diagonal);
    if (lambda[slot.row] != 0.0) addHessian(slot, lambda[slot.row]);
  }
  matrix_.resize(unknowns_, unknowns_);
  matrix_.setFromTriplets(triplets_.begin(), triplets_.end());
  matrix_.makeCompressed();
}

bool ImplicitStep::newton(ReferenceStep& out) {
  evaluateConstraints(x_);
  residual(x_, lambda_, F_);
  scaling(D_);
  double norm = D_.cwiseProduct(F_).norm();
  Eigen::SparseLU<Eigen::SparseMatrix<double>, Eigen::COLAMDOrdering<int>> lu;
  for (int it = 0;; ++it) {
    out.residualHistory.push_back(norm);
    out.residualNorm = norm;
    if (!std::isfinite(norm)) {
      out.message = "non-finite residual (check the state's positions, velocities and forces)";
      return false;
    }
    if (norm <= settings_.tolerance) return true;
    if (it == settings_.maxIterations) {
      out.message = "no convergence in " + std::to_string(settings_.maxIterations) + " Newton iterations (residual " +
                    formatNumber(norm) + " m)";
      return false;
    }
    bool accepted = false;
    for (double shift : kShifts) {
      assemble(lambda_, shift);
      lu.compute(matrix_);
      if (lu.info() != Eigen::Success) continue;
      const Eigen::VectorXd dz = lu.solve(-F_);
      if (lu.info() != Eigen::Success || !dz.allFinite()) continue;
      // Backtracking on the scaled residual norm; D stays fixed within the search, so the Newton
      // step is a descent direction for |D F|^2.
      double t = 1.0;
      for (int k = 0; k <= kMaxHalvings && !accepted; ++k, t *= 0.5) {
        trialX_ = x_;
        for (std::size_t p = 0; p < dof_.size(); ++p)
          if (dof_[p] >= 0) trialX_[p] += t * dz.segment<3>(dof_[p]);
        trialLambda_ = lambda_ + t * dz;
        trialLambda_.head(positionUnknowns_).setZero();
        evaluateConstraints(trialX_);
        residual(trialX_, trialLambda_, trialF_);
        const double trial = D_.cwiseProduct(trialF_).norm();
        if (std::isfinite(trial) && trial <= (1.0 - kArmijo * t) * norm) accepted = true;
      }
      if (accepted) break;
    }
    if (!accepted) {
      evaluateConstraints(x_);
      out.message = "line search found no decrease at residual " + formatNumber(norm) + " m";
      return false;
    }
    x_.swap(trialX_);
    lambda_.swap(trialLambda_);
    F_.swap(trialF_);
    ++out.iterations;
    scaling(D_);
    norm = D_.cwiseProduct(F_).norm();
  }
}

ReferenceStep ImplicitStep::run() {
  setUp();
  ReferenceStep out;
  out.timeStep = h_;
  out.time = state_.time + h_;
  out.attachmentTarget = targets_;
  x_ = predicted_;
  lambda_.setZero(unknowns_);  // the position part stays 0; only rows are multipliers

  // Frozen multipliers: C + alpha~ lambda = 0 alone (XPBD's update gives the same).
  evaluateConstraints(x_);
  for (Slot& slot : slots_) {
    if (slot.unilateral && !slot.frozen) slot.active = slot.value < 0.0;
    if (!slot.frozen || slot.alphaTilde == 0.0) continue;
    if (slot.vectorForm) {
      lambda_.segment<3>(slot.row) = -slot.vectorValue / slot.alphaTilde;
    } else if (!slot.unilateral || slot.value < 0.0) {
      lambda_[slot.row] = -slot.value / slot.alphaTilde;
    }
  }

  bool converged = false;
  for (int round = 0; round < settings_.maxActiveSetRounds; ++round) {
    ++out.activeSetRounds;
    if (!newton(out)) break;
    // Primal-dual active-set update: drop pulling multipliers, add violated constraints.
    bool changed = false;
    for (Slot& slot : slots_) {
      if (!slot.unilateral || slot.frozen) continue;
      if (slot.active && lambda_[slot.row] < 0.0) {
        slot.active = false;
        lambda_[slot.row] = 0.0;
        changed = true;
      } else if (!slot.active) {
        const double distance = slot.gradientNorm > 0.0 ? slot.value / slot.gradientNorm : slot.value;
        if (distance < -settings_.tolerance) {
          slot.active = true;
          changed = true;
        }
      }
    }
    if (!changed) {
      converged = true;
      break;
    }
    if (round + 1 == settings_.maxActiveSetRounds)
      out.message = "active set still changing after " + std::to_string(settings_.maxActiveSetRounds) + " rounds";
  }
  // Residual at the returned point, with the final active set.
  evaluateConstraints(x_);
  residual(x_, lambda_, F_);
  scaling(D_);
  out.residualNorm = D_.cwiseProduct(F_).norm();
  out.converged = converged && out.residualNorm <= settings_.tolerance;
  if (out.converged) out.message.clear();

  const std::size_t n = model_.particleCount();
  out.position = x_;
  out.velocity.resize(n);
  for (std::size_t i = 0; i < n; ++i) out.velocity[i] = (x_[i] - state_.position[i]) / h_;
  out.lambda.assign(model_.totalConstraintCount(), 0.0);
  for (const Slot& slot : slots_) {
    const double l = slot.vectorForm ? -lambda_.segment<3>(slot.row).norm() : lambda_[slot.row];
    out.lambda[model_.lambdaIndex(slot.ref)] = l;
  }
  return out;
}

void checkSizes(const State& state, const ReferenceStep& reference, const char* what) {
  if (state.position.size() != reference.position.size() || state.velocity.size() != reference.velocity.size() ||
      state.lambda.size() != reference.lambda.size())
    throw Error(std::string(what) + ": the state and the reference step have different particle or constraint counts");
}

}  // namespace

ReferenceStep solveReferenceStep(const Model& model, const State& state, const ReferenceSettings& settings) {
  settings.validate();
  const std::size_t n = model.particleCount();
  if (state.position.size() != n || state.velocity.size() != n || state.externalForce.size() != n ||
      state.attachmentTarget.size() != model.attachments.size())
    throw Error("reference solver: state does not match the model (create it with State::fromModel)");
  std::uint32_t offset = 0;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    if (model.lambdaOffset[f] != offset)
      throw Error("reference solver: model constraint offsets are stale; build models with ModelBuilder::build()");
    offset += static_cast<std::uint32_t>(model.constraintCount(static_cast<ConstraintFamily>(f)));
  }
  if (model.lambdaOffset[kConstraintFamilyCount] != offset)
    throw Error("reference solver: model constraint offsets are stale; build models with ModelBuilder::build()");
  ImplicitStep step(model, state, settings);
  return step.run();
}

ReferenceDistance distanceToReference(const State& state, const ReferenceStep& reference) {
  checkSizes(state, reference, "distanceToReference");
  ReferenceDistance d;
  double sum = 0.0;
  for (std::size_t i = 0; i < state.position.size(); ++i) {
    const double e = (state.position[i] - reference.position[i]).norm();
    d.maxPosition = std::max(d.maxPosition, e);
    sum += e * e;
    d.maxVelocity = std::max(d.maxVelocity, (state.velocity[i] - reference.velocity[i]).norm());
  }
  if (!state.position.empty()) d.rmsPosition = std::sqrt(sum / static_cast<double>(state.position.size()));
  for (std::size_t j = 0; j < state.lambda.size(); ++j)
    d.maxLambda = std::max(d.maxLambda, std::abs(state.lambda[j] - reference.lambda[j]));
  return d;
}

void applyReferenceStep(const ReferenceStep& reference, State& state) {
  checkSizes(state, reference, "applyReferenceStep");
  if (state.attachmentTarget.size() != reference.attachmentTarget.size())
    throw Error("applyReferenceStep: the state and the reference step have different attachment counts");
  state.previousPosition = state.position;
  state.position = reference.position;
  state.velocity = reference.velocity;
  state.lambda = reference.lambda;
  state.attachmentTarget = reference.attachmentTarget;
  state.time = reference.time;
  state.lastSubstep = reference.timeStep;
  ++state.stepCount;
}

}  // namespace pliant
