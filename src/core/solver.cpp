// The step pipeline. The order written in solver.h is implemented once: Solver::advance runs the
// stages, one function each, and the fused or skipped variants of a stage are chosen once per step
// in beginStep (Box2D v3 names its stages the same way). The constraint projection and the three
// kinds of contact are parts that own their scratch (constraint_projection.h, collision/).
#include "pliant/solver.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "collision/collider_contacts.h"
#include "collision/particle_contacts.h"
#include "collision/surface_contacts.h"
#include "constraint_projection.h"
#include "constraints/families.h"
#include "object_damping.h"
#include "particle_pass.h"
#include "pliant/error.h"
#include "pliant/parallel.h"
#include "pliant/rigid_shapes.h"
#include "rigid/body_contacts.h"
#include "rigid/body_integration.h"
#include "rigid/joints.h"
#include "rigid/particle_coupling.h"
#include "rigid/sleeping.h"
#include "step_check.h"
#include "thread_drop.h"
#include "thread_tuner.h"
#include "validation.h"

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
    throw Error("solver settings: timeStep must be a finite number > 0 s, got " + formatNumber(timeStep));
  if (substeps < 1) throw Error("solver settings: substeps must be >= 1, got " + std::to_string(substeps));
  if (iterations < 1) throw Error("solver settings: iterations must be >= 1, got " + std::to_string(iterations));
  if (!gravity.allFinite()) throw Error("solver settings: gravity must be finite");
  if (!std::isfinite(velocityDamping) || velocityDamping < 0.0)
    throw Error("solver settings: velocityDamping must be a finite number >= 0 1/s");
  if (!(maxDisplacementPerStep > 0.0)) throw Error("solver settings: maxDisplacementPerStep must be > 0 m");
  if (!(divergenceFactor >= 1.0))
    throw Error("solver settings: divergenceFactor must be >= 1 (infinity: no relative bound), got " +
                formatNumber(divergenceFactor));
  if (!(maxStrain > 0.0))
    throw Error("solver settings: maxStrain must be > 0 (infinity: no strain bound), got " + formatNumber(maxStrain));
  if (!(gravity.stableNorm() <= kMaxGravity))
    throw Error("solver settings: gravity of " + formatNumber(gravity.stableNorm()) + " m/s^2 is above " +
                formatNumber(kMaxGravity) +
                " m/s^2 (10^5 g): not a physical value for the bodies simulated here, and one that overflows "
                "positions within a few steps");
  if (!std::isfinite(contactMargin) || contactMargin < 0.0)
    throw Error("solver settings: contactMargin must be a finite number >= 0 m, got " + formatNumber(contactMargin));
  if (!(maxDepenetrationVelocity > 0.0))
    throw Error("solver settings: maxDepenetrationVelocity must be > 0 m/s (infinity: no cap), got " +
                formatNumber(maxDepenetrationVelocity));
  if (bodyContactPasses < 1)
    throw Error("solver settings: bodyContactPasses must be >= 1, got " + std::to_string(bodyContactPasses));
  if (bodyVelocityPasses < 1)
    throw Error("solver settings: bodyVelocityPasses must be >= 1, got " + std::to_string(bodyVelocityPasses));
  if (!std::isfinite(bodyStackMassScaling) || bodyStackMassScaling < 0.0)
    throw Error("solver settings: bodyStackMassScaling must be a finite number >= 0 1/m, got " +
                formatNumber(bodyStackMassScaling));
  if (!std::isfinite(sleepLinearSpeed) || sleepLinearSpeed < 0.0)
    throw Error("solver settings: sleepLinearSpeed must be a finite number >= 0 m/s, got " +
                formatNumber(sleepLinearSpeed));
  if (!std::isfinite(sleepAngularSpeed) || sleepAngularSpeed < 0.0)
    throw Error("solver settings: sleepAngularSpeed must be a finite number >= 0 rad/s, got " +
                formatNumber(sleepAngularSpeed));
  if (!std::isfinite(sleepTime) || !(sleepTime > 0.0))
    throw Error("solver settings: sleepTime must be a finite number > 0 s, got " + formatNumber(sleepTime));
}

Solver::Solver(ModelPtr model, const SolverSettings& settings)
    : model_(std::move(model)),
      tuner_(std::make_unique<detail::ThreadTuner>()),
      constraints_(std::make_unique<detail::ConstraintProjection>()),
      particleContacts_(std::make_unique<detail::ParticleContacts>()),
      surfaceContacts_(std::make_unique<detail::SurfaceContacts>()),
      colliderContacts_(std::make_unique<detail::ColliderContacts>()),
      bodyContacts_(std::make_unique<detail::BodyContacts>()),
      coupling_(std::make_unique<detail::ParticleCoupling>()),
      sleep_(std::make_unique<detail::BodySleep>()) {
  if (!model_) throw Error("solver: no model given");
  model_->validate();
  settings.validate();
  settings_ = settings;
  std::size_t scratch = 0, values = 0;
  for (std::size_t i = 0; i < model_->generics.size(); ++i) {
    // A batch group is evaluated at once from its first constraint: positions and gradients of all.
    const GenericConstraint& c = model_->generics[i];
    const std::size_t group = c.batchEnd > i ? c.batchEnd - i : 1;
    scratch = std::max<std::size_t>(scratch, 2 * group * c.particleCount);
    values = std::max(values, group);
  }
  for (const GlobalVolumeConstraint& c : model_->globalVolumes) scratch = std::max<std::size_t>(scratch, c.vertexCount);
  for (const ShapeMatchingConstraint& c : model_->shapeMatchings)
    scratch = std::max<std::size_t>(scratch, c.memberCount);
  scratch_.resize(scratch);
  valueScratch_.resize(values);
  replan();
  measureModel();
  particleContacts_->prepare(*model_);
  surfaceContacts_->prepare(*model_);
  colliderContacts_->prepare(*model_);
  bodyContacts_->prepare(*model_);
  coupling_->prepare(*model_);
  sleep_->prepare(*model_);
  // The step's backup copies the held friction anchors: room for as many as there can be contacts,
  // so that copy never allocates when more contacts hold later in a run.
  backup_.bodyContactAnchors.reserve(bodyContacts_->contacts().capacity());
}

Solver::~Solver() = default;
Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;

void Solver::setSettings(const SolverSettings& settings) {
  settings.validate();
  const bool replanNeeded = settings.parallelBlockSize != settings_.parallelBlockSize;
  settings_ = settings;
  if (replanNeeded) replan();
  // Surface candidates were found for the old contact margin; find them again.
  surfaceContacts_->invalidateCandidates();
}

void Solver::measureModel() {
  const Model& model = *model_;
  Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity());
  Vec3 hi = -lo;
  const auto add = [&](const Vec3& x) {
    lo = lo.cwiseMin(x);
    hi = hi.cwiseMax(x);
  };
  for (const Vec3& x : model.initialPosition) add(x);
  for (const AttachmentConstraint& a : model.attachments)
    if (a.targetPath < 0) add(a.target);
  for (const Collider& c : model.colliders) add(c.pose.position);
  for (const RigidBody& body : model.bodies) {
    add(body.initialPosition);
    if (body.shape.kind == BodyShapeKind::Plane) continue;  // unbounded: only its position counts
    Vec3 lower, upper;
    shapeBounds(body.shape, body.shapePose(body.initialPosition, body.initialRotation), 0.0, lower, upper);
    add(lower);
    add(upper);
  }
  double extent = (hi.array() >= lo.array()).all() ? (hi - lo).norm() : 0.0;
  double radius = 0.0;
  for (double r : model.particleRadius) radius = std::max(radius, r);
  extent += 2.0 * radius + (model.selfCollision ? model.surfaceThickness : 0.0);
  modelExtent_ = std::isfinite(extent) ? extent : std::numeric_limits<double>::max();
  prescribed_.assign(model.particleCount(), 0);
  for (const KinematicParticle& k : model.kinematicParticles) prescribed_[k.particle] = 1;
}

void Solver::replan() {
  constraints_->plan(*model_, settings_.parallelBlockSize);
  planStale_ = false;
}

Model& Solver::ownModel() {
  // A copy this solver made is edited in place only while nothing else shares it: once handed out
  // (modelPtr() kept by a caller, another Solver, a Python Model), it is as immutable as any other.
  if (!ownsModel_ || model_.use_count() > 1) {
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
    throw Error(std::string("solver: ") + what + ": particle " + std::to_string(particle) +
                " out of range (model has " + std::to_string(model.particleCount()) + " particles)");
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
                " must be >= 0 kg (0 or infinity fixes it), got " + formatNumber(mass));
  const double inverse = (mass == 0.0 || std::isinf(mass)) ? 0.0 : 1.0 / mass;
  Model& model = ownModel();
  if ((model.inverseMass[particle] == 0.0) != (inverse == 0.0)) planStale_ = true;
  model.mass[particle] = std::isinf(mass) ? 0.0 : mass;  // as ModelBuilder::addParticle stores it
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
    throw Error("solver: releaseParticle: particle " + std::to_string(particle) + " has mass " + formatNumber(mass) +
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

const std::vector<Contact>& Solver::lastColliderContacts() const { return colliderContacts_->contacts(); }
const std::vector<Contact>& Solver::lastParticleContacts() const { return particleContacts_->contacts(); }
const std::vector<SurfaceContact>& Solver::lastSurfaceContacts() const { return surfaceContacts_->contacts(); }
const std::vector<BodyContact>& Solver::lastBodyContacts() const { return bodyContacts_->contacts(); }
const std::vector<ParticleBodyContact>& Solver::lastParticleBodyContacts() const { return coupling_->contacts(); }
Vec3 Solver::bodyAttachmentForce(std::size_t attachment) const {
  if (attachment >= model_->bodyAttachments.size())
    throw Error("solver: bodyAttachmentForce: no body attachment " + std::to_string(attachment) + " (model has " +
                std::to_string(model_->bodyAttachments.size()) + ")");
  const double h = settings_.timeStep / settings_.substeps;
  return coupling_->attachmentImpulse(attachment) / (h * h);
}
std::size_t Solver::lastContactCount() const {
  return colliderContacts_->count() + particleContacts_->contacts().size() + surfaceContacts_->contactCount();
}
int Solver::lastSurfaceBroadPhaseRuns() const { return surfaceContacts_->broadPhaseRuns(); }
int Solver::lastSurfaceBroadPhaseUpdates() const { return surfaceContacts_->broadPhaseUpdates(); }
std::size_t Solver::lastSurfaceCandidateCount() const { return surfaceContacts_->candidateCount(); }
std::size_t Solver::lastSurfaceSkippedTriangles() const { return surfaceContacts_->skippedTriangles(); }

std::span<const StageTimeField> stageTimeFields() {
  static constexpr StageTimeField kFields[] = {{"predict", &StageTimes::predict},
                                               {"collider_contacts", &StageTimes::colliderContacts},
                                               {"particle_contacts", &StageTimes::particleContacts},
                                               {"surface_contacts", &StageTimes::surfaceContacts},
                                               {"body_contacts", &StageTimes::bodyContacts},
                                               {"constraints", &StageTimes::constraints},
                                               {"contact_projection", &StageTimes::contactProjection},
                                               {"velocities", &StageTimes::velocities},
                                               {"step_end", &StageTimes::stepEnd}};
  return kFields;
}

double StageTimes::total() const {
  double sum = 0.0;
  for (const StageTimeField& field : stageTimeFields()) sum += this->*field.seconds;
  return sum;
}

void Solver::setStageTiming(bool on) {
  stageTiming_ = on;
  if (on) stageTimes_ = StageTimes{};
}

namespace {

// A per-particle stage is split over the team from the size where its one-thread time is about six
// forks and joins of the team. Measured on the 2-core machine (session 29, lower quartiles): a
// fork and join of two threads 0.84 - 0.95 us; the prediction 3.0 - 3.4 ns per particle and the
// velocity update 1.7 - 1.9 (split with it: the fused variant forms the velocities in the
// prediction), so from 2,048 particles (6 us); the collider contacts' collide stage 14 - 18 ns per
// particle (7 - 9 per collider, the screen), so the contact stages from 1,024 (8 us or more).
constexpr std::int64_t kParallelParticles = 2048;
constexpr std::int64_t kParallelContactParticles = 1024;

// Adds the wall-clock time since its last lap to one stage's total (StageTimes); reads no clock
// when stage timing is off.
class StageClock {
 public:
  void start(bool on) {
    on_ = on;
    if (on_) last_ = std::chrono::steady_clock::now();
  }
  void lap(double& stage) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    stage += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  bool on_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace

// What the stages of one step share. The variants are chosen once per step by beginStep.
struct Solver::StepFrame {
  // Stage 1: a pass of its own, or inside the projection's parallel region (saving a fork and join
  // per substep) when nothing runs between them (stages 2-4 have no work) and the projection is
  // parallel.
  enum class Prediction : std::uint8_t { OwnPass, InProjectionRegion } prediction = Prediction::OwnPass;
  // Stage 5: on one thread, split over `threads` threads, or traced (one constraint at a time,
  // checking every particle moved, to name the culprit of a refused step).
  enum class Projection : std::uint8_t { Serial, Parallel, Traced } projection = Projection::Serial;
  // Stage 6: velocities formed at the end of each substep, or (when nothing reads them before the
  // next prediction: no contact this substep, no observer) left to the next substep's prediction
  // pass, which forms them with the same operations per particle (same bits, half the memory
  // traffic).
  enum class Velocities : std::uint8_t { EverySubstep, DeferredWhenNoContact } velocities = Velocities::EverySubstep;

  detail::StepTrace* trace = nullptr;
  detail::SolveContext ctx;
  detail::PredictionPass pass;
  int team = 1;          // threads of the per-particle loops and the surface broad phase
  int threads = 1;       // threads of the constraint projection (1 unless it has a parallel batch)
  bool mayDrop = false;  // automatic thread count: the step may go on with one thread (advance)
  std::int64_t particles = 0;
  double h = 0.0;          // s, the substep
  double stepStart = 0.0;  // s
  int substep = 0;
  double substepStart = 0.0;  // s
  double substepEnd = 0.0;    // s
  // Contacts take their approach velocities from the state after the prediction (stage 3), and
  // tracing checks them: the prediction must store its velocities then.
  bool velocitiesReadInSubstep = false;
  bool velocitiesPending = false;  // the last substep's stage 6 was deferred to this prediction
  std::uint64_t projections = 0;
  StageClock clock;  // Solver::stageTimes_, when timed

  // Stage 1 for this thread's share of the particles: whole groups of four per thread (the SIMD
  // width of predictParticles); each particle gets the same operations whatever the split.
  void predictShare(std::int64_t part, std::int64_t parts) const {
    const std::int64_t groups = (particles + 3) / 4;
    detail::predictParticles(pass, std::min(particles, 4 * (groups * part / parts)),
                             std::min(particles, 4 * (groups * (part + 1) / parts)));
  }
};

Solver::StepFrame Solver::beginStep(State& state, detail::StepTrace* trace) {
  const Model& model = *model_;
  StepFrame f;
  f.trace = trace;
  f.h = settings_.timeStep / settings_.substeps;
  f.stepStart = state.time;
  f.particles = static_cast<std::int64_t>(model.particleCount());
  f.team = stepThreads_;
  f.threads = !trace && constraints_->parallel() ? stepThreads_ : 1;
  f.mayDrop = automaticThreadCount() && stepThreads_ > 1;
  constraints_->barrier().resetSlept();
  detail::SolveContext& ctx = f.ctx;
  ctx.mode = settings_.mode;
  ctx.h = f.h;
  ctx.invH = 1.0 / f.h;
  ctx.invH2 = 1.0 / (f.h * f.h);
  ctx.stiffnessExponent = settings_.iterationIndependentStiffness ? 1.0 / settings_.iterations : 1.0;
  ctx.x = state.position.data();
  ctx.xPrev = state.previousPosition.data();
  ctx.w = model.inverseMass.data();
  ctx.attachmentTarget = state.attachmentTarget.data();
  ctx.scratch = &scratch_;
  ctx.values = &valueScratch_;
  ctx.userFunctionError = &userFunctionError_;
  detail::PredictionPass& pass = f.pass;
  pass.x = state.position.data();
  pass.xPrev = state.previousPosition.data();
  pass.v = state.velocity.data();
  pass.w = model.inverseMass.data();
  pass.force = state.externalForce.data();
  pass.h = f.h;
  pass.invH = ctx.invH;
  pass.dampingFactor = settings_.velocityDamping > 0.0 ? std::exp(-settings_.velocityDamping * f.h) : 1.0;
  pass.gravity = settings_.gravity;
  // Without external forces the prediction reads no force array (particle_pass.cpp).
  pass.forces = std::any_of(state.externalForce.begin(), state.externalForce.end(),
                            [](const Vec3& force) { return force != Vec3::Zero(); });
  f.velocitiesReadInSubstep =
      trace || !model.colliders.empty() || particleContacts_->active() || model.selfCollision || coupling_->collides();
  f.projection = trace ? StepFrame::Projection::Traced
                       : (f.threads > 1 ? StepFrame::Projection::Parallel : StepFrame::Projection::Serial);
  const bool movingTargets = std::any_of(model.attachments.begin(), model.attachments.end(),
                                         [](const AttachmentConstraint& a) { return a.targetPath >= 0; });
  if (f.projection == StepFrame::Projection::Parallel && !f.velocitiesReadInSubstep &&
      model.kinematicParticles.empty() && !movingTargets)
    f.prediction = StepFrame::Prediction::InProjectionRegion;
  if (!(substepObserver_ && !trace)) f.velocities = StepFrame::Velocities::DeferredWhenNoContact;
  return f;
}

void Solver::advance(State& state, detail::StepTrace* trace) {
  StepFrame frame = beginStep(state, trace);
  frame.clock.start(stageTiming_);
  contactOverflow_.clear();
  sleep_->wakeChanged(*model_, settings_, state);
  for (frame.substep = 0; frame.substep < settings_.substeps; ++frame.substep) {
    // The rest of the step on one thread once the barrier's waiters have slept (partners arriving a
    // time slice late: another process has taken a core, and every barrier left would cost a time
    // slice). Every thread count gives the same bits; the step's time still goes to the tuner under
    // the count it chose, and a slow step makes it probe fewer threads at once (thread_tuner.h).
    if (frame.mayDrop && frame.substep > 0 &&
        constraints_->barrier().slept() >= detail::threadDropSleeps().load(std::memory_order_relaxed)) {
      frame.mayDrop = false;
      frame.team = 1;
      frame.threads = 1;
      if (frame.projection == StepFrame::Projection::Parallel) frame.projection = StepFrame::Projection::Serial;
      frame.prediction = StepFrame::Prediction::OwnPass;  // the serial projection has no region for it
      stepThreads_ = 1;
    }
    frame.substepStart = frame.stepStart + frame.substep * frame.h;
    frame.substepEnd = frame.stepStart + (frame.substep + 1) * frame.h;
    if (!predict(frame, state)) return;  // 1
    updateTargets(frame, state);         // 2
    frame.clock.lap(stageTimes_.predict);
    if (!collide(frame, state)) return;  // 3
    if (!project(frame, state)) return;  // 4, 5
    updateVelocities(frame, state);      // 6, 7
    frame.clock.lap(stageTimes_.velocities);
  }
  // Islands whose bodies stayed slow fall asleep (rigid/sleeping.cpp), from the last substep's contacts.
  sleep_->update(*model_, settings_, state, bodyContacts_->contacts(), coupling_->contacts());
  dampObjects(state);  // 8
  frame.clock.lap(stageTimes_.stepEnd);
  if (stageTiming_) ++stageTimes_.steps;
  if (trace && !trace->found)  // damping that made a particle bad: name it and its object
    for (std::size_t o = 0; o < model_->objects.size() && !trace->found; ++o)
      for (ParticleIndex p : model_->objects[o].particles)
        if (trace->check(state, p, detail::StepTrace::Culprit::ObjectDamping)) {
          trace->object = static_cast<std::int64_t>(o);
          break;
        }
  state.time = frame.stepStart + settings_.timeStep;
  state.lastSubstep = frame.h;
  ++state.stepCount;
  lastProjectionCount_ = frame.projections;
}

// 1. predict: x^n = x; v += h (g + w f_ext) (after the previous substep's deferred velocity
// update); x += h v; kinematic particles follow their paths. Per-particle loops are split across
// threads only when large enough to pay. A velocity formed only to predict is not stored when
// nothing reads it before the next velocity update overwrites it.
bool Solver::predict(StepFrame& f, State& state) {
  const Model& model = *model_;
  f.pass.updateVelocities = f.velocitiesPending;
  f.pass.storeVelocities = !f.velocitiesPending || f.velocitiesReadInSubstep;
  f.velocitiesPending = false;
  if (f.prediction == StepFrame::Prediction::OwnPass) {
#pragma omp parallel num_threads(f.team) if (f.particles >= kParallelParticles)
    f.predictShare(omp_get_thread_num(), omp_get_num_threads());
  }
  for (const KinematicParticle& k : model.kinematicParticles) state.position[k.particle] = k.path(f.substepEnd);
  detail::predictBodies(model, settings_, state, f.h, f.substepEnd, f.team);
  if (f.trace)
    for (std::int64_t i = 0; i < f.particles; ++i)
      if (f.trace->check(state, static_cast<std::size_t>(i), detail::StepTrace::Culprit::Prediction)) return false;
  return true;
}

// 2. moving attachment targets and collider poses, at the end of the substep.
void Solver::updateTargets(StepFrame& f, State& state) {
  const Model& model = *model_;
  for (std::size_t c = 0; c < model.attachments.size(); ++c) {
    const AttachmentConstraint& a = model.attachments[c];
    if (a.targetPath >= 0) state.attachmentTarget[c] = model.attachmentPaths[a.targetPath](f.substepEnd);
  }
  colliderContacts_->updatePoses(model, f.substepStart, f.substepEnd);
}

// 3. collide: contacts at the predicted positions (their multipliers start at 0).
bool Solver::collide(StepFrame& f, State& state) {
  const Model& model = *model_;
  colliderContacts_->collide(model, settings_, state, f.h, f.particles >= kParallelContactParticles ? f.team : 1);
  f.clock.lap(stageTimes_.colliderContacts);
  particleContacts_->collide(model, settings_, state, f.h, f.particles >= kParallelContactParticles ? f.team : 1);
  f.clock.lap(stageTimes_.particleContacts);
  surfaceContacts_->collide(model, settings_, state, f.h, f.substep, f.substepStart, f.team);
  f.clock.lap(stageTimes_.surfaceContacts);
  // Particles on bodies first: a sleeping body a particle touches wakes (rigid/sleeping.cpp), and
  // then has its own contacts found.
  coupling_->collide(model, settings_, state, f.h);
  for (const ParticleBodyContact& k : coupling_->contacts()) state.wakeBody(k.body);
  bodyContacts_->collide(model, settings_, state, f.h, f.substep, f.substepStart, f.substepEnd, f.team);
  f.clock.lap(stageTimes_.bodyContacts);
  // More contacts than their bound: the step stops here and is refused (Solver::step).
  if (contactOverflow_.empty()) contactOverflow_ = particleContacts_->overflow();
  if (contactOverflow_.empty()) contactOverflow_ = surfaceContacts_->overflow();
  return contactOverflow_.empty();
}

// 4. reset the multipliers and 5. project: `iterations` Gauss-Seidel passes over the families,
// then the contacts (particle pairs, surfaces, colliders: obstacles last, so they win). The first
// pass of the Serial and Parallel variants resets each range's multipliers just before projecting
// it, on the thread that projects it (no serial pass over all of them first, and each thread's
// multipliers stay in its cache); the traced variant resets them all here.
bool Solver::project(StepFrame& f, State& state) {
  const Model& model = *model_;
  detail::ConstraintProjection& constraints = *constraints_;
  if (f.projection == StepFrame::Projection::Traced) std::fill(state.lambda.begin(), state.lambda.end(), 0.0);
  detail::resetJoints(model, state);
  coupling_->reset();
  for (int it = 0; it < settings_.iterations; ++it) {
    f.projections += model.totalConstraintCount();
    const bool reset = it == 0;
    switch (f.projection) {
      case StepFrame::Projection::Serial:
        constraints.passSerial(model, f.ctx, state.lambda.data(), reset);
        break;
      case StepFrame::Projection::Parallel: {
        // One parallel region per pass; the threads meet only at the barriers between batches.
        const int threads = f.threads;
        constraints.prepare(threads);
        const bool predictHere = f.prediction == StepFrame::Prediction::InProjectionRegion && reset;
#pragma omp parallel num_threads(threads)
        {
          const int thread = omp_get_thread_num();
          const int team = omp_get_num_threads();
          if (predictHere) {
            if (f.particles >= kParallelParticles) f.predictShare(thread, team);
            else if (thread == 0) f.predictShare(0, 1);
            constraints.barrier().wait(team);
          }
          constraints.passParallel(model, f.ctx, state.lambda.data(), thread, team, threads, reset);
        }
        constraints.finishPass();
        break;
      }
      case StepFrame::Projection::Traced:
        f.ctx.multipliersFresh = reset;  // neo-Hookean tets are projected in the first pass only
        if (!constraints.passTraced(model, f.ctx, state, *f.trace)) return false;
        break;
    }
    // The joints, after the particle families in the same pass; the coupling of particles and
    // bodies comes after both, so that it sees their corrections of this pass.
    f.projections += model.joints.size();
    const std::int64_t badJoint = detail::projectJoints(model, f.ctx, state, f.trace != nullptr);
    if (badJoint >= 0 && f.trace->joint < 0) f.trace->joint = badJoint;
    f.clock.lap(stageTimes_.constraints);
    // The bodies' contacts after their joints (a large set over regions of space on the team).
    f.projections += bodyContacts_->contacts().size();
    bodyContacts_->project(model, state, it == 0, f.team);
    // Particles coupled with bodies (attachments, then contacts), after the bodies' own constraints.
    f.projections += model.bodyAttachments.size() + coupling_->contacts().size();
    if (!coupling_->project(model, f.ctx, state, f.trace)) return false;
    f.projections += lastContactCount();
    if (!particleContacts_->project(model, settings_, state, f.trace)) return false;
    if (!surfaceContacts_->project(model, settings_, state, f.trace)) return false;
    if (!colliderContacts_->project(model, settings_, state, f.trace,
                                    f.particles >= kParallelContactParticles ? f.team : 1))
      return false;
    f.clock.lap(stageTimes_.contactProjection);
  }
  return true;
}

// 6. velocities v = (x - x^n) / h, with global velocity damping, and 7. the velocity pass on the
// contacts that pushed; then the substep observer. Deferred to the next prediction when that
// variant was chosen and no contact needs the velocities now.
void Solver::updateVelocities(StepFrame& f, State& state) {
  const Model& model = *model_;
  // Bodies every substep: their prediction reads these velocities.
  detail::updateBodyVelocities(model, settings_, state, f.h, f.pass.dampingFactor, f.team);
  bodyContacts_->velocityPass(model, settings_, state, f.h, f.team);
  if (f.velocities == StepFrame::Velocities::DeferredWhenNoContact && f.substep + 1 < settings_.substeps &&
      lastContactCount() == 0 && coupling_->contacts().empty()) {
    f.velocitiesPending = true;
    state.time = f.substepEnd;
    return;
  }
  Vec3* const v = state.velocity.data();
  const Vec3* const x = state.position.data();
  const Vec3* const xPrev = state.previousPosition.data();
  const double* const w = model.inverseMass.data();
  const double invH = f.pass.invH;
  const double dampingFactor = f.pass.dampingFactor;
#pragma omp parallel for schedule(static) num_threads(f.team) if (f.particles >= kParallelParticles)
  for (std::int64_t i = 0; i < f.particles; ++i)
    v[i] = detail::velocityFromMotion(x[i], xPrev[i], invH, dampingFactor, w[i]);
  particleContacts_->velocityPass(model, settings_, state, f.h);
  surfaceContacts_->velocityPass(model, settings_, state, f.h);
  colliderContacts_->velocityPass(model, settings_, state, f.h, f.particles >= kParallelContactParticles ? f.team : 1);
  coupling_->velocityPass(model, settings_, state, f.h);
  state.time = f.substepEnd;
  if (substepObserver_ && !f.trace) {
    state.lastSubstep = f.h;
    substepObserver_(state);
  }
}

// 8. momentum-conserving damping per object, once per step.
void Solver::dampObjects(State& state) {
  const Model& model = *model_;
  for (const SimObject& object : model.objects) detail::dampObject(model, object, state);
}

StepResult Solver::step(State& state) {
  const Model& model = *model_;
  if (state.position.size() != model.particleCount() || state.velocity.size() != model.particleCount() ||
      state.previousPosition.size() != model.particleCount() || state.externalForce.size() != model.particleCount() ||
      state.lambda.size() != model.totalConstraintCount() ||
      state.attachmentTarget.size() != model.attachments.size() || state.bodyPosition.size() != model.bodyCount() ||
      state.bodyRotation.size() != model.bodyCount() || state.bodyVelocity.size() != model.bodyCount() ||
      state.bodyAngularVelocity.size() != model.bodyCount() || state.bodyPreviousPosition.size() != model.bodyCount() ||
      state.bodyPreviousRotation.size() != model.bodyCount() ||
      state.jointLambda.size() != kJointMultipliers * model.joints.size() ||
      state.jointLinearImpulse.size() != model.joints.size() ||
      state.jointAngularImpulse.size() != model.joints.size() || state.bodySleepTime.size() != model.bodyCount() ||
      state.bodySleepIsland.size() != model.bodyCount())
    throw Error("state does not match the model (create it with State::fromModel)");
  if (planStale_) replan();
  userFunctionError_.clear();
  const int maxThreads = maxStepThreads();
  const bool tuned = automaticThreadCount() && maxThreads > 1;
  stepThreads_ = tuned ? tuner_->choose(maxThreads) : maxThreads;
  const auto start = std::chrono::steady_clock::now();
  // Reports the step's time to the tuner on every way out.
  struct Timing {
    detail::ThreadTuner* tuner;
    int threads;
    std::chrono::steady_clock::time_point start;
    ~Timing() {
      if (tuner)
        tuner->record(threads, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  } timing{tuned ? tuner_.get() : nullptr, stepThreads_, start};
  if (!settings_.checkSteps) {
    advance(state, nullptr);
    if (!contactOverflow_.empty()) return overflowRefusal(state);
    return {};
  }
  const int team = stepThreads_;
  // Back up what a step changes (not the external forces, which only the caller sets), in a
  // parallel loop for large models; the vectors keep their capacity, so nothing is allocated after
  // the first step.
  const auto particleTotal = static_cast<std::int64_t>(model.particleCount());
  backup_.position.resize(state.position.size());
  backup_.velocity.resize(state.velocity.size());
  backup_.previousPosition.resize(state.previousPosition.size());
  // The fastest particle and the largest external acceleration at the start, for the divergence
  // bound (below).
  double speed2 = 0.0, acceleration = 0.0;
#pragma omp parallel for schedule(static) num_threads(team) if (particleTotal >= kParallelParticles) \
    reduction(max                                                                                    \
              : speed2, acceleration)
  for (std::int64_t i = 0; i < particleTotal; ++i) {
    backup_.position[i] = state.position[i];
    backup_.velocity[i] = state.velocity[i];
    backup_.previousPosition[i] = state.previousPosition[i];
    speed2 = std::max(speed2, state.velocity[i].squaredNorm());
    acceleration = std::max(acceleration, model.inverseMass[i] * state.externalForce[i].norm());
  }
  backup_.lambda = state.lambda;
  backup_.attachmentTarget = state.attachmentTarget;
  backup_.bodyPosition = state.bodyPosition;
  backup_.bodyRotation = state.bodyRotation;
  backup_.bodyVelocity = state.bodyVelocity;
  backup_.bodyAngularVelocity = state.bodyAngularVelocity;
  backup_.bodyPreviousPosition = state.bodyPreviousPosition;
  backup_.bodyPreviousRotation = state.bodyPreviousRotation;
  backup_.jointLambda = state.jointLambda;
  backup_.jointLinearImpulse = state.jointLinearImpulse;
  backup_.jointAngularImpulse = state.jointAngularImpulse;
  backup_.bodyContactAnchors = state.bodyContactAnchors;
  backup_.bodySleepTime = state.bodySleepTime;
  backup_.bodySleepIsland = state.bodySleepIsland;
  for (const Vec3& v : state.bodyVelocity) speed2 = std::max(speed2, v.squaredNorm());
  backup_.time = state.time;
  backup_.lastSubstep = state.lastSubstep;
  backup_.stepCount = state.stepCount;
  advance(state, nullptr);
  if (!contactOverflow_.empty()) {
    backup_.externalForce = state.externalForce;
    state = backup_;
    return overflowRefusal(state);
  }
  // Divergence bound, relative to the model (issue 12): how far a particle may move in one step.
  // A particle that is not kinematic moves by its speed and its acceleration, plus the corrections
  // the constraints and contacts make, which are of the size of the model; a solve that diverges
  // moves particles further, step after step. Reading the state only, it changes no result.
  const double dt = settings_.timeStep;
  const double reach =
      modelExtent_ +
      dt * (std::sqrt(speed2) + (settings_.gravity.norm() + acceleration) * dt +
            (std::isfinite(settings_.maxDepenetrationVelocity) ? settings_.maxDepenetrationVelocity : 0.0));
  stepBound_ = std::min(settings_.maxDisplacementPerStep, settings_.divergenceFactor * reach);
  stepBoundReach_ = reach;
  bool bad = false;
  const double bound = stepBound_;
  const double prescribedBound = settings_.maxDisplacementPerStep;
  const std::uint8_t* prescribed = prescribed_.data();
#pragma omp parallel for schedule(static) reduction(|| : bad) num_threads(team) if (particleTotal >= kParallelParticles)
  for (std::int64_t i = 0; i < particleTotal; ++i)
    bad = bad || detail::particleBad(state, backup_.position, static_cast<std::size_t>(i),
                                     prescribed[i] ? prescribedBound : bound);
  if (bad) {
    backup_.externalForce = state.externalForce;
    state = backup_;
    return diagnose(state);
  }
  // Bodies: the first (lowest index) with a non-finite pose or velocity, or whose centre of mass
  // moved past the bound (kinematic ones: the absolute bound only).
  for (std::size_t b = 0; b < model.bodyCount(); ++b) {
    const bool nonFinite = !state.bodyPosition[b].allFinite() || !state.bodyRotation[b].coeffs().allFinite() ||
                           !state.bodyVelocity[b].allFinite() || !state.bodyAngularVelocity[b].allFinite();
    const double moved = nonFinite ? 0.0 : (state.bodyPosition[b] - backup_.bodyPosition[b]).norm();
    const double limit = model.bodies[b].motion == BodyMotion::Kinematic ? prescribedBound : bound;
    if (nonFinite || moved > limit) {
      backup_.externalForce = state.externalForce;
      state = backup_;
      return bodyRefusal(state, b, nonFinite, moved);
    }
  }
  // A distance constraint stretched far past its rest length: a cloth or rope torn apart by a
  // diverging solve, whose particles may each stay under the bound above. The first one (lowest
  // index) is named, the same on any thread count.
  if (std::isfinite(settings_.maxStrain)) {
    const auto distanceCount = static_cast<std::int64_t>(model.distances.size());
    const double floor = 1e-3 * modelExtent_;
    const double factor = 1.0 + settings_.maxStrain;
    std::int64_t first = distanceCount;
#pragma omp parallel for schedule(static) reduction(min      \
                                                    : first) \
    num_threads(team) if (distanceCount >= kParallelParticles)
    for (std::int64_t c = 0; c < distanceCount; ++c) {
      // Squared lengths: no square root per constraint on this once-per-step pass.
      const DistanceConstraint& d = model.distances[c];
      const double limit = factor * std::max(d.restLength, floor);
      if ((state.position[d.particles[0]] - state.position[d.particles[1]]).squaredNorm() > limit * limit)
        first = std::min(first, c);
    }
    if (first < distanceCount) {
      const DistanceConstraint& d = model.distances[first];
      const double length = (state.position[d.particles[0]] - state.position[d.particles[1]]).norm();
      backup_.externalForce = state.externalForce;
      state = backup_;
      StepResult result;
      result.status = StepStatus::ExcessiveStrain;
      result.particle = d.particles[1];
      result.hasConstraint = true;
      result.constraint = {ConstraintFamily::Distance, static_cast<std::uint32_t>(first)};
      std::ostringstream message;
      message << "step " << state.stepCount + 1 << " at t = " << state.time << " s refused: distance constraint "
              << first << " (particles " << d.particles[0] << " and " << d.particles[1] << ") stretched to " << length
              << " m, more than " << factor << " times its rest length of " << d.restLength
              << " m (the bound is solver.max_strain = " << settings_.maxStrain
              << "): the solve diverged; use a shorter time step or more substeps";
      result.message = message.str();
      return result;
    }
  }
  return {};
}

// A refused step that a body made bad: names the body and, from a traced replay, the joint whose
// projection first made a body non-finite.
StepResult Solver::bodyRefusal(State& state, std::size_t body, bool nonFinite, double moved) {
  State replay = state;
  detail::StepTrace trace;
  trace.bound = std::numeric_limits<double>::infinity();
  trace.prescribedBound = trace.bound;
  trace.prescribed = &prescribed_;
  trace.stepStart = &state.position;
  advance(replay, &trace);
  StepResult result;
  result.status = nonFinite ? StepStatus::NonFinite : StepStatus::ExcessiveDisplacement;
  result.body = static_cast<std::int64_t>(body);
  result.joint = trace.joint;
  const std::string& name = model_->bodies[body].name;
  std::ostringstream message;
  message << "step " << state.stepCount + 1 << " at t = " << state.time << " s refused: ";
  if (nonFinite) message << "non-finite pose or velocity of body " << body;
  else message << "body " << body;
  if (!name.empty()) message << " '" << name << "'";
  if (!nonFinite)
    message << " moved " << moved << " m, above the bound of " << stepBound_
            << " m: the solve diverged; use a shorter time step or more substeps";
  if (trace.joint >= 0)
    message << " (after projecting " << jointKindName(model_->joints[trace.joint].kind) << " joint " << trace.joint
            << ")";
  else if (nonFinite) message << " (check its mass, inertia, initial velocities and gravity)";
  result.message = message.str();
  return result;
}

StepResult Solver::overflowRefusal(const State& state) const {
  StepResult result;
  result.status = StepStatus::ContactOverflow;
  std::ostringstream message;
  message << "step " << state.stepCount + 1 << " at t = " << state.time << " s refused: " << contactOverflow_;
  result.message = message.str();
  return result;
}

int Solver::maxStepThreads() const {
  const auto particles = static_cast<std::int64_t>(model_->particleCount());
  const bool contactStages = !model_->colliders.empty() || particleContacts_->active();
  const bool worthSplitting = constraints_->parallel() || particles >= kParallelParticles ||
                              (contactStages && particles >= kParallelContactParticles) ||
                              surfaceContacts_->parallel() || bodyContacts_->parallel();
  return worthSplitting ? threadCount() : 1;
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
  detail::StepTrace trace;
  trace.bound = stepBound_;
  trace.prescribedBound = settings_.maxDisplacementPerStep;
  trace.prescribed = &prescribed_;
  trace.stepStart = &state.position;
  advance(replay, &trace);
  using Culprit = detail::StepTrace::Culprit;
  StepResult result;
  result.particle = trace.found ? trace.particle : -1;
  bool nonFinite = true;
  if (trace.found && trace.particle >= 0) {
    const auto p = static_cast<std::size_t>(trace.particle);
    nonFinite = !replay.position[p].allFinite() || !replay.velocity[p].allFinite();
  }
  result.status = nonFinite ? StepStatus::NonFinite : StepStatus::ExcessiveDisplacement;
  std::ostringstream message;
  message << "step " << state.stepCount + 1 << " at t = " << state.time << " s refused: ";
  if (nonFinite) {
    message << "non-finite position or velocity";
  } else if (stepBound_ < settings_.maxDisplacementPerStep) {
    message << "displacement above the bound of " << stepBound_ << " m (solver.divergence_factor "
            << settings_.divergenceFactor << " x (model extent " << modelExtent_
            << " m + this step's reach by speed and acceleration " << stepBoundReach_ - modelExtent_
            << " m)): the solve diverged; use a shorter time step or more substeps";
  } else {
    message << "displacement above the bound of " << settings_.maxDisplacementPerStep << " m (solver.max_displacement)";
  }
  if (trace.found) {
    message << " at particle " << trace.particle;
    switch (trace.culprit) {
      case Culprit::Constraint:
        message << " after projecting " << familyName(trace.constraint.family) << " constraint "
                << trace.constraint.index;
        if (trace.constraint.family == ConstraintFamily::Generic && !userFunctionError_.empty())
          message << " (its function threw: " << userFunctionError_ << ")";
        break;
      case Culprit::SurfaceContact: {
        const SurfaceContact& c = trace.surfaceContact;
        if (c.kind == SurfaceContact::Kind::VertexTriangle)
          message << " after projecting the vertex-triangle surface contact of particle " << c.particles[0]
                  << " with triangle " << c.particles[1] << "-" << c.particles[2] << "-" << c.particles[3];
        else
          message << " after projecting the edge-edge surface contact of edge " << c.particles[0] << "-"
                  << c.particles[1] << " with edge " << c.particles[2] << "-" << c.particles[3];
        break;
      }
      case Culprit::Contact:
        message << " after projecting the contact of particle " << trace.contact.particle;
        if (trace.contact.collider >= 0) message << " with collider " << trace.contact.collider;
        else message << " with particle " << trace.contact.other;
        break;
      case Culprit::ObjectDamping: {
        const std::string& name = model_->objects[static_cast<std::size_t>(trace.object)].name;
        message << " after the per-object damping of object " << trace.object
                << (name.empty() ? std::string() : " '" + name + "'")
                << " (check its damping and its particles' motion)";
        break;
      }
      case Culprit::BodyCoupling: {
        message << " after projecting its " << (trace.bodyAttachment ? "attachment to" : "contact with") << " body "
                << trace.body;
        const std::string& name = model_->bodies[static_cast<std::size_t>(trace.body)].name;
        if (!name.empty()) message << " '" << name << "'";
        break;
      }
      case Culprit::Prediction:
      case Culprit::None:
        message << " in the prediction (check external forces, gravity and initial velocities)";
        break;
    }
  }
  result.hasConstraint = trace.found && trace.culprit == Culprit::Constraint;
  result.constraint = trace.constraint;
  result.hasContact = trace.found && trace.culprit == Culprit::Contact;
  if (result.hasContact) {
    result.contactCollider = trace.contact.collider;
    if (trace.contact.collider < 0) result.contactParticle = trace.contact.other;
  }
  result.hasSurfaceContact = trace.found && trace.culprit == Culprit::SurfaceContact;
  if (result.hasSurfaceContact) {
    result.surfaceContactKind = trace.surfaceContact.kind;
    for (int k = 0; k < 4; ++k) result.surfaceContactParticles[k] = trace.surfaceContact.particles[k];
  }
  result.message = message.str();
  return result;
}

}  // namespace pliant
