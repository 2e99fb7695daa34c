// The step pipeline. The order written in solver.h is implemented once, in Solver::advance.
#include "pliant/solver.h"

#include <omp.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "batch_split.h"
#include "collision/self_collision.h"
#include "constraints/families.h"
#include "particle_pass.h"
#include "spin_barrier.h"
#include "pliant/error.h"
#include "solve_plan.h"
#include "step_check.h"
#include "validation.h"
#include "pliant/parallel.h"

namespace pliant {

SolverSettings SolverSettings::smallSteps(int substeps, double timeStep) {
  SolverSettings s;
  s.mode = SolverMode::Xpbd;
  s.timeStep = timeStep;
  s.substeps = substeps;
  s.iterations = 1;
  return s;
}

void SolverSettings::validate() const {
  if (!std::isfinite(timeStep) || !(timeStep > 0.0))
    throw Error("solver settings: timeStep must be a finite number > 0 s, got " + std::to_string(timeStep));
  if (substeps < 1) throw Error("solver settings: substeps must be >= 1, got " + std::to_string(substeps));
  if (iterations < 1) throw Error("solver settings: iterations must be >= 1, got " + std::to_string(iterations));
  if (!gravity.allFinite()) throw Error("solver settings: gravity must be finite");
  if (!std::isfinite(velocityDamping) || velocityDamping < 0.0)
    throw Error("solver settings: velocityDamping must be a finite number >= 0 1/s");
  if (!(maxDisplacementPerStep > 0.0))
    throw Error("solver settings: maxDisplacementPerStep must be > 0 m");
  if (!std::isfinite(contactMargin) || contactMargin < 0.0)
    throw Error("solver settings: contactMargin must be a finite number >= 0 m, got " + std::to_string(contactMargin));
  if (!(maxDepenetrationVelocity > 0.0))
    throw Error("solver settings: maxDepenetrationVelocity must be > 0 m/s (infinity: no cap), got " +
                std::to_string(maxDepenetrationVelocity));
}

Solver::Solver(ModelPtr model, const SolverSettings& settings) : model_(std::move(model)) {
  if (!model_) throw Error("solver: no model given");
  model_->validate();
  settings.validate();
  settings_ = settings;
  std::size_t scratch = 0;
  for (const GenericConstraint& c : model_->generics) scratch = std::max<std::size_t>(scratch, 2 * c.particleCount);
  for (const GlobalVolumeConstraint& c : model_->globalVolumes) scratch = std::max<std::size_t>(scratch, c.vertexCount);
  scratch_.resize(scratch);
  replan();
  buildContactTopology();
  buildSurfaceTopology();
}

void Solver::setSettings(const SolverSettings& settings) {
  settings.validate();
  const bool replanNeeded = settings.parallelBlockSize != settings_.parallelBlockSize;
  settings_ = settings;
  if (replanNeeded) replan();
  // Surface candidates were found for the old contact margin; find them again.
  if (surface_) surface_->built = false;
}

void Solver::replan() {
  plan_ = std::make_unique<detail::SolvePlan>(detail::planSolve(*model_, settings_.parallelBlockSize));
  parallelPlan_ = plan_->hasParallelBatch();
  splitThreads_ = 0;  // the cuts were made for the old plan
  if (parallelPlan_ && threadCount() > 1) prepareBatchSplits(threadCount());
  planStale_ = false;
}

Model& Solver::ownModel() {
  if (!ownsModel_) {
    model_ = std::make_shared<Model>(*model_);
    ownsModel_ = true;
  }
  // Only this solver holds its own copy, and only through a pointer to const that it made from a
  // non-const Model: casting the constness away is defined.
  return const_cast<Model&>(*model_);
}

namespace {

void checkEditedParticle(const Model& model, ParticleIndex particle, const char* what) {
  if (particle >= model.particleCount())
    throw Error(std::string("solver: ") + what + ": particle " + std::to_string(particle) + " out of range (model has " +
                std::to_string(model.particleCount()) + " particles)");
  for (const KinematicParticle& k : model.kinematicParticles)
    if (k.particle == particle)
      throw Error(std::string("solver: ") + what + ": particle " + std::to_string(particle) +
                  " is kinematic (its path sets its position)");
}

}  // namespace

void Solver::setParticleMass(ParticleIndex particle, double mass) {
  checkEditedParticle(*model_, particle, "setParticleMass");
  if (std::isnan(mass) || mass < 0.0)
    throw Error("solver: setParticleMass: mass of particle " + std::to_string(particle) +
                " must be >= 0 kg (0 or infinity fixes it), got " + std::to_string(mass));
  const double inverse = (mass == 0.0 || std::isinf(mass)) ? 0.0 : 1.0 / mass;
  Model& model = ownModel();
  if ((model.inverseMass[particle] == 0.0) != (inverse == 0.0)) planStale_ = true;
  model.mass[particle] = mass;
  model.inverseMass[particle] = inverse;
}

void Solver::fixParticle(ParticleIndex particle) {
  checkEditedParticle(*model_, particle, "fixParticle");
  if (model_->inverseMass[particle] == 0.0) return;
  ownModel().inverseMass[particle] = 0.0;
  planStale_ = true;
}

void Solver::releaseParticle(ParticleIndex particle) {
  checkEditedParticle(*model_, particle, "releaseParticle");
  const double mass = model_->mass[particle];
  if (!(mass > 0.0) || !std::isfinite(mass))
    throw Error("solver: releaseParticle: particle " + std::to_string(particle) + " has mass " + std::to_string(mass) +
                " kg; give it a finite mass > 0 with setParticleMass");
  if (model_->inverseMass[particle] != 0.0) return;
  ownModel().inverseMass[particle] = 1.0 / mass;
  planStale_ = true;
}

void Solver::setConstraintParameters(ConstraintRef constraint, const ConstraintParameters& params) {
  if (static_cast<int>(constraint.family) >= kConstraintFamilyCount ||
      constraint.index >= model_->constraintCount(constraint.family))
    throw Error("solver: setConstraintParameters: no " +
                std::string(static_cast<int>(constraint.family) < kConstraintFamilyCount ? familyName(constraint.family)
                                                                                          : "such") +
                " constraint " + std::to_string(constraint.index));
  detail::checkParameters(params, std::string("solver: setConstraintParameters: ") + familyName(constraint.family) +
                                      " constraint " + std::to_string(constraint.index));
  detail::constraintParameters(ownModel(), constraint) = params;
}

namespace {

// Momentum-conserving damping of one object (seed 000): remove a fraction k of each particle's
// deviation from the object's rigid motion. Fixed and kinematic particles are not part of the
// rigid fit (their velocity is prescribed). A singular inertia tensor (collinear particles) is
// inverted on its range, which keeps L = I omega exact there.
void dampObject(const Model& model, const SimObject& object, State& state) {
  if (object.dampingFactor == 0.0) return;
  double totalMass = 0.0;
  Vec3 centre = Vec3::Zero();
  Vec3 momentum = Vec3::Zero();
  for (ParticleIndex p : object.particles) {
    if (model.inverseMass[p] == 0.0) continue;
    const double m = model.mass[p];
    totalMass += m;
    centre += m * state.position[p];
    momentum += m * state.velocity[p];
  }
  if (!(totalMass > 0.0)) return;
  centre /= totalMass;
  const Vec3 centreVelocity = momentum / totalMass;
  Vec3 angularMomentum = Vec3::Zero();
  Mat3 inertia = Mat3::Zero();
  for (ParticleIndex p : object.particles) {
    if (model.inverseMass[p] == 0.0) continue;
    const double m = model.mass[p];
    const Vec3 r = state.position[p] - centre;
    angularMomentum += r.cross(m * state.velocity[p]);
    inertia += m * (r.squaredNorm() * Mat3::Identity() - r * r.transpose());
  }
  Eigen::SelfAdjointEigenSolver<Mat3> eigen(inertia);
  const Vec3 values = eigen.eigenvalues();
  const double cutoff = 1e-12 * std::max(values.cwiseAbs().maxCoeff(), 1e-300);
  Vec3 inverted;
  for (int k = 0; k < 3; ++k) inverted[k] = values[k] > cutoff ? 1.0 / values[k] : 0.0;
  const Mat3& basis = eigen.eigenvectors();
  const Vec3 omega = basis * inverted.asDiagonal() * (basis.transpose() * angularMomentum);
  for (ParticleIndex p : object.particles) {
    if (model.inverseMass[p] == 0.0) continue;
    const Vec3 r = state.position[p] - centre;
    const Vec3 deviation = centreVelocity + omega.cross(r) - state.velocity[p];
    state.velocity[p] += object.dampingFactor * deviation;
  }
}

// Below this many particles a parallel loop costs more than it saves (a fork and join costs about
// as much as predicting 1-2k particles).
constexpr std::int64_t kParallelParticles = 4096;

// Stage 5, one Gauss-Seidel pass over every constraint family, as thread `thread` of a team of
// `team` that splits each parallel batch into `threads` parts (1: the plain serial pass, outside
// any parallel region). Each family's batches (SolvePlan::batches) run in order. A parallel batch
// is split at the cuts in `split`, kept by the Solver and moved toward equal time after each pass
// (batch_split.h); the batches between two parallel ones are projected by thread 0 while the others
// wait at the next barrier. A barrier follows every parallel batch and precedes one when thread 0
// has just done serial work, so no thread reads a position another is still writing. Any split of
// an independent batch gives the same bits (its constraints share no movable particle), so the
// result depends neither on the thread count nor on the cuts. With resetLambda (the first pass of
// a substep) each range's multipliers are zeroed just before it is projected.
struct BatchSplits {
  std::uint32_t* cuts = nullptr;   // threads + 1 per parallel batch, in plan order
  std::uint64_t* ticks = nullptr;  // threads per parallel batch
  double* scratch = nullptr;       // threads + 1
  detail::SpinBarrier* barrier = nullptr;
};

// The threads that share a parallel batch of `length` constraints: at most one per block.
std::uint64_t batchParts(std::uint64_t length, std::uint64_t block, int threads) {
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), length / block));
}

void projectPass(const Model& model, const detail::SolvePlan& plan, std::uint32_t blockSize,
                 const detail::SolveContext& shared, double* lambda, int thread, int team, int threads,
                 bool resetLambda, const BatchSplits& split) {
  detail::SolveContext ctx = shared;
  const std::uint64_t block = std::max<std::uint32_t>(blockSize, 1);
  const auto stride = static_cast<std::size_t>(threads);
  std::size_t parallelBatch = 0;
  bool serialWorkPending = false;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const std::vector<detail::SolveBatch>& batches = plan.batches[f];
    if (batches.empty()) continue;
    const detail::FamilyKernels& kernels = detail::familyKernels(static_cast<ConstraintFamily>(f));
    ctx.lambda = lambda + model.lambdaOffset[f];
    for (const detail::SolveBatch& batch : batches) {
      if (threads > 1 && batch.parallel) {
        if (serialWorkPending) {
          split.barrier->wait(team);
          serialWorkPending = false;
        }
        std::uint32_t* cuts = split.cuts + parallelBatch * (stride + 1);
        std::uint64_t* ticks = split.ticks + parallelBatch * stride;
        ++parallelBatch;
        // Part t is thread t's; a team smaller than asked for (OpenMP may give one) takes the
        // parts round robin.
        for (std::size_t t = static_cast<std::size_t>(thread); t < stride; t += static_cast<std::size_t>(team)) {
          const std::uint32_t begin = cuts[t];
          const std::uint32_t end = cuts[t + 1];
          const std::uint64_t start = detail::ticks();
          if (resetLambda) std::fill(ctx.lambda + begin, ctx.lambda + end, 0.0);
          if (begin < end) kernels.projectIndependent(model, ctx, begin, end);
          ticks[t] = detail::ticks() - start;
        }
        split.barrier->wait(team);
        // The cuts are read again only in the next pass, which a join or barrier separates from here.
        if (thread == 0) {
          const std::size_t parts = batchParts(batch.end - batch.begin, block, threads);
          detail::rebalanceCuts({cuts, parts + 1}, {ticks, parts}, {split.scratch, parts + 1});
        }
        continue;
      }
      serialWorkPending = true;
      if (thread != 0) continue;
      if (resetLambda) std::fill(ctx.lambda + batch.begin, ctx.lambda + batch.end, 0.0);
      if (batch.independent) kernels.projectIndependent(model, ctx, batch.begin, batch.end);
      else kernels.project(model, ctx, batch.begin, batch.end);
    }
  }
}

}  // namespace

void Solver::prepareBatchSplits(int threads) {
  const std::uint64_t block = std::max<std::uint32_t>(settings_.parallelBlockSize, 1);
  const auto stride = static_cast<std::size_t>(threads);
  batchCuts_.clear();
  for (const std::vector<detail::SolveBatch>& batches : plan_->batches)
    for (const detail::SolveBatch& batch : batches) {
      if (!batch.parallel) continue;
      // Even cuts to start with; a thread beyond the batch's parts gets an empty range at its end.
      const std::uint64_t length = batch.end - batch.begin;
      const std::uint64_t parts = batchParts(length, block, threads);
      for (std::uint64_t t = 0; t <= stride; ++t)
        batchCuts_.push_back(static_cast<std::uint32_t>(batch.begin + length * std::min(t, parts) / parts));
    }
  batchTicks_.assign(batchCuts_.size() / (stride + 1) * stride, 0);
  if (!batchBarrier_) batchBarrier_ = std::make_unique<detail::SpinBarrier>();
  cutScratch_.assign(stride + 1, 0.0);
  splitThreads_ = threads;
}

void Solver::advance(State& state, bool trace) {
  const Model& model = *model_;
  const std::size_t n = model.particleCount();
  const double h = settings_.timeStep / settings_.substeps;
  const double startTime = state.time;
  const double* w = model.inverseMass.data();
  const Vec3 gravity = settings_.gravity;

  detail::SolveContext ctx;
  ctx.mode = settings_.mode;
  ctx.h = h;
  ctx.invH = 1.0 / h;
  ctx.invH2 = 1.0 / (h * h);
  ctx.stiffnessExponent = settings_.iterationIndependentStiffness ? 1.0 / settings_.iterations : 1.0;
  ctx.x = state.position.data();
  ctx.xPrev = state.previousPosition.data();
  ctx.w = w;
  ctx.attachmentTarget = state.attachmentTarget.data();
  ctx.scratch = &scratch_;

  // Threads of the constraint pass: 1 when nothing in the model is worth splitting (or tracing).
  const int threads = !trace && parallelPlan_ ? threadCount() : 1;
  std::vector<ParticleIndex> traceParticles;
  std::vector<Vec3> traceGradient;
  std::uint64_t projections = 0;

  const double invH = ctx.invH;
  const double dampingFactor = settings_.velocityDamping > 0.0 ? std::exp(-settings_.velocityDamping * h) : 1.0;
  const auto particleTotal = static_cast<std::int64_t>(n);
  Vec3* const x = state.position.data();
  Vec3* const xPrev = state.previousPosition.data();
  Vec3* const v = state.velocity.data();
  // Without external forces the prediction reads no force array (particle_pass.cpp).
  detail::PredictionPass prediction;
  prediction.x = x;
  prediction.xPrev = xPrev;
  prediction.v = v;
  prediction.w = w;
  prediction.force = state.externalForce.data();
  prediction.h = h;
  prediction.invH = invH;
  prediction.dampingFactor = dampingFactor;
  prediction.gravity = gravity;
  prediction.forces = std::any_of(state.externalForce.begin(), state.externalForce.end(),
                                  [](const Vec3& f) { return f != Vec3::Zero(); });
  // Step 6 of one substep and step 1 of the next run as one pass over the particles when nothing
  // needs the velocities in between (no contact to correct, no observer): the same operations per
  // particle in the same order, so the same bits, with half the memory traffic.
  bool velocitiesPending = false;
  // Contacts take their approach velocities from state.velocity after the prediction (stage 3),
  // and tracing checks them; otherwise only the last substep's velocity pass leaves velocities.
  const bool velocitiesReadInSubstep =
      trace || !model.colliders.empty() || collidingParticles_.size() >= 2 || model.selfCollision;
  // With nothing to do between the prediction and the projection (stages 2 - 4 have no work: no
  // kinematic particles, moving attachments, colliders or contacts) and a parallel projection, the
  // prediction runs in the projection's parallel region, saving a fork and join per substep.
  const bool predictInProjection =
      threads > 1 && !trace && !velocitiesReadInSubstep && model.kinematicParticles.empty() &&
      std::none_of(model.attachments.begin(), model.attachments.end(),
                   [](const AttachmentConstraint& a) { return a.targetPath >= 0; });
  for (int sub = 0; sub < settings_.substeps; ++sub) {
    const double t = startTime + (sub + 1) * h;
    // 1. predict (after the previous substep's velocity update, when it was left pending)
    // Per-particle loops are split across threads only when large enough to pay; each particle
    // is computed by the same operations whatever the split, so any thread count is bit-identical.
    // A velocity formed here for the prediction alone is not stored when nothing reads it before
    // the next velocity update overwrites it (saving a third of the pass's memory traffic).
    prediction.updateVelocities = velocitiesPending;
    prediction.storeVelocities = !velocitiesPending || velocitiesReadInSubstep;
    // Whole groups of four particles per thread (the SIMD width of predictParticles).
    auto predictShare = [&](std::int64_t thread, std::int64_t team) {
      const std::int64_t groups = (particleTotal + 3) / 4;
      detail::predictParticles(prediction, std::min(particleTotal, 4 * (groups * thread / team)),
                               std::min(particleTotal, 4 * (groups * (thread + 1) / team)));
    };
    if (!predictInProjection) {
#pragma omp parallel if (particleTotal > kParallelParticles)
      predictShare(omp_get_thread_num(), omp_get_num_threads());
    }
    velocitiesPending = false;
    for (const KinematicParticle& k : model.kinematicParticles) state.position[k.particle] = k.path(t);
    if (trace && !trace_.found) {
      for (std::size_t i = 0; i < n; ++i)
        if (detail::particleBad(state, *trace_.stepStart, i, trace_.bound)) {
          trace_.found = true;
          trace_.particle = static_cast<std::int64_t>(i);
          return;
        }
    }
    // 2. moving attachment targets and collider poses
    for (std::size_t c = 0; c < model.attachments.size(); ++c) {
      const AttachmentConstraint& a = model.attachments[c];
      if (a.targetPath >= 0) state.attachmentTarget[c] = model.attachmentPaths[a.targetPath](t);
    }
    updateColliderPoses(startTime + sub * h, t);
    // 3. collide (contact multipliers start at 0 here)
    collide(state, h);
    collideSurfaces(state, h, sub, startTime + sub * h);
    // 4. reset multipliers. The first projection pass does it range by range, on the thread that
    // projects each range (the batches cover every constraint), so no serial pass over all of them
    // runs first and each thread's multipliers stay in its own cache; tracing resets them here.
    if (trace) std::fill(state.lambda.begin(), state.lambda.end(), 0.0);
    // 5. project
    for (int it = 0; it < settings_.iterations; ++it) {
      projections += model.totalConstraintCount();
      if (!trace) {
        // One parallel region per pass; the threads meet only at the barriers of projectPass.
        if (threads > 1) {
          if (threads != splitThreads_) prepareBatchSplits(threads);
          const BatchSplits split{batchCuts_.data(), batchTicks_.data(), cutScratch_.data(), batchBarrier_.get()};
#pragma omp parallel num_threads(threads)
          {
            const int thread = omp_get_thread_num();
            const int team = omp_get_num_threads();
            if (predictInProjection && it == 0) {
              if (particleTotal > kParallelParticles) predictShare(thread, team);
              else if (thread == 0) predictShare(0, 1);
              split.barrier->wait(team);
            }
            projectPass(model, *plan_, settings_.parallelBlockSize, ctx, state.lambda.data(), thread, team, threads,
                        it == 0, split);
          }
        } else {
          projectPass(model, *plan_, settings_.parallelBlockSize, ctx, state.lambda.data(), 0, 1, 1, it == 0, {});
        }
      } else {
        // Tracing a refused step: one constraint at a time, stopping at the first that moves a
        // particle out of bounds.
        for (int f = 0; f < kConstraintFamilyCount; ++f) {
          const auto family = static_cast<ConstraintFamily>(f);
          const auto count = static_cast<std::uint32_t>(model.constraintCount(family));
          const detail::FamilyKernels& kernels = detail::familyKernels(family);
          ctx.lambda = state.lambda.data() + model.lambdaOffset[f];
          for (std::uint32_t c = 0; c < count; ++c) {
            kernels.project(model, ctx, c, c + 1);
            kernels.evaluate(model, ctx.x, ctx.attachmentTarget, c, traceParticles, traceGradient);
            for (ParticleIndex p : traceParticles) {
              if (!trace_.found && detail::particleBad(state, *trace_.stepStart, p, trace_.bound)) {
                trace_.found = true;
                trace_.particle = p;
                trace_.constraint = {family, c};
                trace_.constraintSet = true;
                return;
              }
            }
          }
        }
      }
      projections += lastContactCount();
      if (!projectContacts(state, trace)) return;
    }
    // 6. velocities (left to the next substep's prediction pass when nothing reads them before it)
    if (sub + 1 < settings_.substeps && lastContactCount() == 0 && !(substepObserver_ && !trace)) {
      velocitiesPending = true;
      state.time = t;
      continue;
    }
#pragma omp parallel for schedule(static) if (particleTotal > kParallelParticles)
    for (std::int64_t i = 0; i < particleTotal; ++i)
      v[i] = detail::velocityFromMotion(x[i], xPrev[i], invH, dampingFactor, w[i]);
    // 7. velocity pass: restitution (and dynamic friction when asked) of the contacts that pushed
    contactVelocityPass(state, h);
    state.time = t;
    if (substepObserver_ && !trace) {
      state.lastSubstep = h;
      substepObserver_(state);
    }
  }
  // 8. momentum-conserving damping per object
  for (const SimObject& object : model.objects) dampObject(model, object, state);
  state.time = startTime + settings_.timeStep;
  state.lastSubstep = h;
  ++state.stepCount;
  lastProjectionCount_ = projections;
}

StepResult Solver::step(State& state) {
  const Model& model = *model_;
  if (state.position.size() != model.particleCount() || state.velocity.size() != model.particleCount() ||
      state.previousPosition.size() != model.particleCount() ||
      state.externalForce.size() != model.particleCount() ||
      state.lambda.size() != model.totalConstraintCount() ||
      state.attachmentTarget.size() != model.attachments.size())
    throw Error("state does not match the model (create it with State::fromModel)");
  if (planStale_) replan();
  if (!settings_.checkSteps) {
    advance(state, false);
    return {};
  }
  // Back up what a step changes (not the external forces, which only the caller sets), in a
  // parallel loop for large models; the vectors keep their capacity, so nothing is allocated after
  // the first step.
  const auto particleTotal = static_cast<std::int64_t>(model.particleCount());
  backup_.position.resize(state.position.size());
  backup_.velocity.resize(state.velocity.size());
  backup_.previousPosition.resize(state.previousPosition.size());
#pragma omp parallel for schedule(static) if (particleTotal > kParallelParticles)
  for (std::int64_t i = 0; i < particleTotal; ++i) {
    backup_.position[i] = state.position[i];
    backup_.velocity[i] = state.velocity[i];
    backup_.previousPosition[i] = state.previousPosition[i];
  }
  backup_.lambda = state.lambda;
  backup_.attachmentTarget = state.attachmentTarget;
  backup_.time = state.time;
  backup_.lastSubstep = state.lastSubstep;
  backup_.stepCount = state.stepCount;
  advance(state, false);
  bool bad = false;
  const double bound = settings_.maxDisplacementPerStep;
#pragma omp parallel for schedule(static) reduction(|| : bad) if (particleTotal > kParallelParticles)
  for (std::int64_t i = 0; i < particleTotal; ++i)
    bad = bad || detail::particleBad(state, backup_.position, static_cast<std::size_t>(i), bound);
  if (bad) {
    backup_.externalForce = state.externalForce;
    state = backup_;
    return diagnose(state);
  }
  return {};
}

StepResult Solver::run(State& state, int steps) {
  for (int i = 0; i < steps; ++i) {
    StepResult r = step(state);
    if (!r.ok()) return r;
  }
  return {};
}

// Replays the refused step one constraint at a time to name the constraint whose projection first
// produced a non-finite or over-bound position. Runs only after a failure, so costs nothing otherwise.
StepResult Solver::diagnose(State& state) {
  State replay = state;
  trace_ = Trace{};
  trace_.active = true;
  trace_.bound = settings_.maxDisplacementPerStep;
  trace_.stepStart = &state.position;
  advance(replay, true);
  StepResult result;
  result.particle = trace_.found ? trace_.particle : -1;
  bool nonFinite = true;
  if (trace_.found && trace_.particle >= 0) {
    const auto p = static_cast<std::size_t>(trace_.particle);
    nonFinite = !replay.position[p].allFinite() || !replay.velocity[p].allFinite();
  }
  result.status = nonFinite ? StepStatus::NonFinite : StepStatus::ExcessiveDisplacement;
  std::ostringstream message;
  message << "step " << state.stepCount + 1 << " at t = " << state.time << " s refused: ";
  message << (nonFinite ? "non-finite position or velocity" : "displacement above the bound of ")
          << (nonFinite ? "" : std::to_string(settings_.maxDisplacementPerStep) + " m");
  if (trace_.found) {
    message << " at particle " << trace_.particle;
    if (trace_.constraintSet) {
      message << " after projecting " << familyName(trace_.constraint.family) << " constraint "
              << trace_.constraint.index;
    } else if (trace_.surfaceContactSet) {
      const SurfaceContact& c = trace_.surfaceContact;
      if (c.kind == SurfaceContact::Kind::VertexTriangle)
        message << " after projecting the vertex-triangle surface contact of particle " << c.particles[0]
                << " with triangle " << c.particles[1] << "-" << c.particles[2] << "-" << c.particles[3];
      else
        message << " after projecting the edge-edge surface contact of edge " << c.particles[0] << "-"
                << c.particles[1] << " with edge " << c.particles[2] << "-" << c.particles[3];
    } else if (trace_.contactSet) {
      message << " after projecting the contact of particle " << trace_.contact.particle;
      if (trace_.contact.collider >= 0) message << " with collider " << trace_.contact.collider;
      else message << " with particle " << trace_.contact.other;
    } else {
      message << " in the prediction (check external forces, gravity and initial velocities)";
    }
  }
  result.hasConstraint = trace_.found && trace_.constraintSet;
  result.constraint = trace_.constraint;
  result.hasContact = trace_.found && trace_.contactSet;
  if (result.hasContact) {
    result.contactCollider = trace_.contact.collider;
    if (trace_.contact.collider < 0) result.contactParticle = trace_.contact.other;
  }
  result.hasSurfaceContact = trace_.found && trace_.surfaceContactSet;
  if (result.hasSurfaceContact) {
    result.surfaceContactKind = trace_.surfaceContact.kind;
    for (int k = 0; k < 4; ++k) result.surfaceContactParticles[k] = trace_.surfaceContact.particles[k];
  }
  result.message = message.str();
  trace_ = Trace{};
  return result;
}

}  // namespace pliant
