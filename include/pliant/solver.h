// The Solver advances a State by one time step. The step pipeline, in order (solver.cpp holds the
// one implementation):
//
//   for each of `substeps` substeps of h = timeStep / substeps:
//     1. predict     x^n = x; v += h (g + w f_ext); x = x + h v   (kinematic particles follow paths)
//                    Rigid bodies (pliant/bodies.h, Mueller et al. 2020 Alg. 2): x^n = x, q^n = q;
//                    v += h g; x += h v; omega += the gyroscopic term; q turned by omega over h and
//                    normalised (SolverSettings::gyroscopic, quaternionUpdate); kinematic bodies
//                    take their paths' pose at t + h
//     2. targets     moving attachment targets and collider poses are evaluated at t + h
//     3. collide     contacts are found at the predicted positions: each particle near a collider,
//                    and pairs of particles from a spatial hash grid, within contactMargin of touching;
//                    sorted by particle (then collider / other particle); each keeps its relative
//                    normal velocity before the solve and the overlap it had at x^n (to cap the push).
//                    A particle whose straight path over the substep (in the collider's frame)
//                    enters a collider and would end beyond reach or past the surface's middle gets
//                    the tangent plane at its first touching point instead (swept, by conservative
//                    advancement: collider_contacts.cpp states the guarantee).
//                    With Model::selfCollision, surface contacts too: vertex-triangle and edge-edge
//                    pairs of collision triangles that end within surfaceThickness + contactMargin
//                    of each other, or pass through each other anywhere on the straight paths from
//                    x^n to the prediction (continuous collision: the cubic coplanarity test,
//                    collision/ccd.h), oriented by the side they came from. Their candidate pairs
//                    come from a broad phase over boxes swept to the predicted end of the step, run
//                    in the first substep and again only if a particle leaves its box (for a few
//                    such particles, a local update of their pairs only).
//                    Rigid bodies (rigid/body_contacts.cpp, Mueller et al. 2020 sec. 3.5): a sorted
//                    sweep over the bodies' bounds at their predicted poses gives the pairs with a
//                    dynamic body that no joint connects, in index order, then each dynamic body
//                    against each collider whose bounds it meets; collideShapes turns each pair into
//                    up to four contacts (BodyContact: material points fixed in each side's frame,
//                    the normal frozen for the substep), within contactMargin
//                    Particles on bodies (rigid/particle_coupling.cpp): each movable particle
//                    within its radius + contactMargin of a body's shape (shapeDistance at the
//                    predicted pose), in (particle, body) order, except the body it is attached to
//     4. reset       lambda = 0 (XPBD: multipliers are accumulated only within one substep)
//     5. project     `iterations` Gauss-Seidel passes: the families in ConstraintFamily order, then
//                    the joints between rigid bodies (in index order, on one thread: generalised
//                    position and angle corrections, Mueller et al. 2020 eqs. 2-13), then the
//                    bodies' contacts (in their order, or a large set cut into regions of space
//                    solved on the threads and then the contacts between the regions, the same for
//                    any thread count: the normal correction with the generalised inverse masses,
//                    then static friction on the material points' tangential motion while within
//                    mu_s lambda_n, sec. 3.5), then the coupling
//                    of particles and bodies (body attachments, then particle-body contacts with
//                    static friction: one correction shared by the particle and the body through
//                    w = w_p + 1/m + (r x n)^T I^-1 (r x n), eq. 2), then
//                    particle-particle contacts, then surface contacts, then collider contacts
//                    (last, so obstacles win); contacts are hard unilateral constraints with
//                    Coulomb friction at position level (static: undo the tangential motion;
//                    dynamic: undo mu_d of the normal one).
//                    Each family runs batch by batch (the solve plan): an independent batch (a
//                    colour) long enough is split across threads, in one parallel region per pass,
//                    the rest runs on one thread. Particle-pair and surface contacts are projected
//                    on one thread, collider contacts (one particle each) in shares of whole
//                    particles over the threads. Bit-identical for any thread count, and equal to
//                    projecting every family in index order.
//     6. velocities  v = (x - x^n) / h; then global velocity damping v *= exp(-c h). Bodies:
//                    v = (x - x^n) / h, omega from q (q^n)^-1, damped likewise
//     7. velocity pass  on contacts that pushed (lambda > 0): restitution with the 2|g|h threshold
//                    (Mueller et al. 2020, sec. 3.6), and dynamic friction when settings ask for it
//                    there. Bodies: after their velocities, on their contacts that pushed:
//                    restitution as for particles and dynamic friction as a tangential impulse of at
//                    most mu_d lambda_n / h (eqs. 29-34)
//                    Particle-body contacts last, likewise, as equal and opposite impulses
//   8. damping      momentum-conserving damping per object (seed 000), once per step
//   9. check        NaN/Inf (of particles and bodies), a move past the divergence bound (relative to
//                   the model's size and speeds; for bodies, of the centre of mass), a
//                   distance constraint stretched past maxStrain, or contacts past their bounds (stage 3
//                   stops there) refuse the step and restore the state
//
// Contacts are found anew in every substep from the state alone (surface candidates anew in every
// step), so they are scratch of the solver, not part of the State: a saved and restored state
// steps on bit-identically.
//
// Modes: PBD scales each correction by the stiffness k (or by k' = 1 - (1-k)^(1/n) when
// iteration-independent stiffness is on); XPBD uses compliance and damping (Macklin et al. 2016).
// Small steps (Macklin et al. 2019) are XPBD with n substeps and one iteration each. Contacts are
// hard (k = 1, alpha = 0) in both modes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pliant/colliders.h"
#include "pliant/constraints.h"
#include "pliant/math.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant {

enum class SolverMode : std::uint8_t { Pbd, Xpbd };

// How rigid bodies turn in a substep (src/core/rigid/body_integration.h has the formulas;
// tests/scenario/rigid_rotation_test.cpp measures the energy and angular momentum each keeps).
// Gyroscopic term in the prediction: the explicit step of Mueller et al. 2020 (Alg. 2), one
// implicit Newton step (Catto 2015), which does not gain energy about the intermediate axis, or the
// implicit midpoint rule solved by Newton's method, which keeps the energy and |L| of a free body.
enum class GyroscopicUpdate : std::uint8_t { Explicit, Implicit, Midpoint };
// Orientation update and the angular velocity read back from it: Mueller et al. 2020's linearised
// q += h/2 [w, 0] q with w = 2 vec(dq) / h (|w| decays by h^2 |w|^2 / 8 per substep), or the
// exponential map and its logarithm (exact for a constant w).
enum class QuaternionUpdate : std::uint8_t { Linear, Exponential };

struct SolverSettings {
  SolverMode mode = SolverMode::Xpbd;
  double timeStep = 1.0 / 60.0;                // s, one call to Solver::step
  int substeps = 1;                            // >= 1
  int iterations = 1;                          // Gauss-Seidel passes per substep, >= 1
  Vec3 gravity = Vec3(0.0, -9.81, 0.0);        // m/s^2
  bool iterationIndependentStiffness = false;  // PBD only: use k' = 1 - (1-k)^(1/iterations)
  double velocityDamping = 0.0;                // 1/s, global: v *= exp(-velocityDamping h)
  // Divergence bound, relative to the model (docs/scene-format.md, "Refused steps"): a particle
  // that is not kinematic and moves in one step further than
  //   divergenceFactor * (L + dt (v_max + (|g| + a_max) dt + maxDepenetrationVelocity))
  // refuses the step; L (m) is the model's extent (the diagonal of the box around its particles,
  // fixed attachment targets and colliders, plus the largest particle radius and the surface
  // thickness), v_max (m/s) the fastest particle and a_max (m/s^2) the largest external
  // acceleration at the step's start. Dimensionless, >= 1; infinity disables.
  double divergenceFactor = 10.0;
  // A distance constraint longer than (1 + maxStrain) times its rest length (rest lengths below
  // L / 1000 count as L / 1000) refuses the step: a cloth or rope torn apart by a diverging solve.
  // Dimensionless, > 0; infinity disables.
  double maxStrain = 100.0;
  // An absolute bound as well (m): any particle that moves further in one step refuses it.
  // Infinity (the default) leaves only the relative bound above.
  double maxDisplacementPerStep = std::numeric_limits<double>::infinity();
  bool checkSteps = true;  // detect NaN/Inf, over-bound moves and strains (costs one state copy per step)
  // Contacts are made for particles within this distance (m) of touching after the prediction, so
  // that one pushed towards an obstacle by other constraints during the projection is still held.
  // Larger costs more candidates (each skipped while not violated); results barely depend on it.
  double contactMargin = 0.005;
  // Small steps cap (Macklin et al. 2019): a particle that already overlaps a collider or another
  // particle at the start of a substep is pushed out at most this fast (m/s), so a deep initial
  // overlap resolves over several substeps instead of exploding. Infinity pushes it out at once.
  double maxDepenetrationVelocity = 3.0;
  // Decides which models project their constraints on several threads: those with an independent
  // run (a colour) of at least twice this; a split costs a barrier and moves cache lines between
  // cores. Such a model then shares every run of at least half this, a thread taking at least a
  // quarter of it (shorter runs would keep the other threads waiting while one projects them).
  // 512 splits a 100 x 100 cloth and keeps models of a few hundred particles serial (tests use small
  // values to exercise the parallel path on small models).
  std::uint32_t parallelBlockSize = 512;
  // Where dynamic friction acts. false (default): in the position solve, on contacts that leave the
  // static cone (Macklin et al. 2014), so it reaches a whole body; true: in the velocity pass as a
  // velocity change of the contact's particle (Mueller et al. 2020, eq. 30). See collider_contacts.cpp.
  bool dynamicFrictionInVelocityPass = false;
  // Rigid bodies' rotational update (see GyroscopicUpdate, QuaternionUpdate; the defaults are the
  // most accurate of the four on free bodies, docs/validation.md V16).
  GyroscopicUpdate gyroscopic = GyroscopicUpdate::Midpoint;
  QuaternionUpdate quaternionUpdate = QuaternionUpdate::Exponential;
  // Gauss-Seidel passes over all the rigid bodies' contacts per iteration in the position solve and
  // in the velocity pass (src/core/rigid/body_contacts.h: fewer are cheaper and leave more slip and
  // overlap in piles; docs/performance.md, issue 17, measures the tradeoff). >= 1.
  int bodyContactPasses = 16;
  int bodyVelocityPasses = 4;
  // Stack mass scaling of the rigid bodies' contact passes (1/m, >= 0; 0, the default: off, the exact
  // [M20] solve). A stack of n bodies needs about n Gauss-Seidel passes to carry its weight down within
  // a substep; with k > 0 the lower body of each contact pair is solved as if heavier by exp(k d), d
  // (m) the height of the upper body's centre above the lower's along -gravity (Macklin et al. 2014's
  // mass scaling for stacks, per pair), so each contact mostly moves its upper body and a tall stack
  // rests at a few passes. The lower body takes less of each push than Newton's third law gives it
  // (within the position passes; the velocity pass uses true masses): the upper body keeps its mass,
  // so a stack's top contact carries its body's weight exactly, and one lower down its upper body's
  // weight plus exp(-k d) times the load on that body, less than the weight above it (and so is the
  // friction it allows). docs/performance.md (issue 17) measures what a pile gains and loses with it.
  double bodyStackMassScaling = 0.0;
  // When the rigid bodies' contacts are found (src/core/rigid/body_contacts.cpp). true (default):
  // every substep at the predicted poses, with normals and manifolds as fresh as the substep.
  // false: once per step ([M20] sec. 3.5), within each body's reach over the step, re-evaluated per
  // substep at the same material points and normals, except for spheres, capsules and bodies that move
  // or turn more than a quarter of contactMargin over the step, whose contacts are found every substep
  // (a manifold kept a step misses a tumbling box's next corner). Saves the narrow phase of resting
  // bodies; scenes with kinematic bodies or colliders detect per substep either way.
  bool bodyCollisionPerSubstep = true;
  // Sleeping of rigid bodies (src/core/rigid/sleeping.cpp), as Box2D, Bullet and Jolt do: dynamic
  // bodies linked by contacts or joints form islands; an island all of whose bodies have stayed
  // below sleepLinearSpeed (m/s, centre of mass) and sleepAngularSpeed (rad/s) for sleepTime (s)
  // sleeps: its bodies are not predicted, integrated or solved and its contacts are not sought,
  // until an awake body touches it or its State is changed. Bodies touching particles, kinematic
  // bodies or moving colliders, or attached to particles, never sleep. false: bodies never sleep.
  bool sleeping = true;
  double sleepLinearSpeed = 0.05;   // m/s, >= 0
  double sleepAngularSpeed = 0.05;  // rad/s, >= 0
  double sleepTime = 0.5;           // s, > 0

  // XPBD with small steps: n substeps of one iteration each (Macklin et al. 2019).
  static SolverSettings smallSteps(int substeps, double timeStep = 1.0 / 60.0);
  // Throws pliant::Error naming the first invalid field.
  void validate() const;
};

// A surface contact found by the collide stage (cloth self-collision and cloth-cloth collision,
// src/core/collision/surface_contacts.cpp): a vertex against a triangle or an edge against an edge, both
// written as one linear unilateral constraint over four particles,
//   C = n . (sum_k c_k x_k) - thickness (+ allowance) >= 0,
// whose unit normal n and coefficients c_k (they sum to 0, so momentum is conserved) are frozen for
// the substep: a substep moves so little that the geometry barely turns in it.
struct SurfaceContact {
  enum class Kind : std::uint8_t { VertexTriangle, EdgeEdge };
  Kind kind = Kind::VertexTriangle;
  // VertexTriangle: the vertex, then the triangle's corners; EdgeEdge: edge a's two ends, then
  // edge b's (a is the edge of lower index in the solver's edge list).
  ParticleIndex particles[4] = {0, 0, 0, 0};
  // c_k: VertexTriangle 1, -b0, -b1, -b2 (b the barycentric coordinates of the vertex's closest
  // point on the triangle); EdgeEdge 1 - s, s, -(1 - t), -t (s, t the closest points' parameters).
  double weights[4] = {0.0, 0.0, 0.0, 0.0};
  Vec3 normal = Vec3::UnitY();  // unit; points from the triangle (edge b) to the side the vertex (edge a) was on at x^n
  double inverseMassSum = 0.0;  // 1/kg, sum_k c_k^2 w_k
  double allowance = 0.0;       // m, as Contact::allowance
  double normalVelocity = 0.0;  // m/s, n . sum_k c_k v_k before the solve (< 0: approaching)
  double lambda = 0.0;          // accumulated multiplier (kg m)
  Vec3 friction = Vec3::Zero();  // m, as Contact::friction
};

// Largest gravity magnitude SolverSettings::validate accepts (m/s^2, about 10^5 g): beyond it the
// value is no physical one for the bodies simulated here and overflows positions within few steps.
inline constexpr double kMaxGravity = 1.0e6;

// Bounds on the contacts' scratch (a step past one is refused with StepStatus::ContactOverflow):
// candidate pairs of the surface broad phase for collision triangles with `particles` particles
// and `edges` edges, surface contacts in a substep, and particle-particle contacts between
// `particles` particles of radius > 0. For memory estimates (pliant/io/scenes.h) too.
std::size_t surfaceCandidateBound(std::size_t particles, std::size_t edges);
std::size_t surfaceContactBound(std::size_t particles);
std::size_t particleContactBound(std::size_t particles);

// Why a step was refused: a non-finite position or velocity; a particle moved past the divergence
// bound (SolverSettings::divergenceFactor, maxDisplacementPerStep) or a distance constraint
// stretched past maxStrain; or more contacts than their bound (a surface thickness or particle
// radius far larger than the mesh's spacing makes every pair a contact).
enum class StepStatus : std::uint8_t { Ok, NonFinite, ExcessiveDisplacement, ExcessiveStrain, ContactOverflow };

struct StepResult {
  StepStatus status = StepStatus::Ok;
  // When the step was refused: the first particle found bad, and the constraint whose projection
  // made it so (hasConstraint false when the prediction itself was bad, e.g. a NaN force).
  std::int64_t particle = -1;
  bool hasConstraint = false;
  ConstraintRef constraint;
  // When a contact projection made it so: the collider (index in Model::colliders), or -1 with
  // `contactParticle` the other particle of a particle-particle contact.
  bool hasContact = false;
  std::int32_t contactCollider = -1;
  std::int64_t contactParticle = -1;
  // When a surface contact projection made it so (hasContact stays false): its kind and particles.
  bool hasSurfaceContact = false;
  SurfaceContact::Kind surfaceContactKind = SurfaceContact::Kind::VertexTriangle;
  std::array<std::int64_t, 4> surfaceContactParticles = {-1, -1, -1, -1};
  // When a rigid body went bad (its pose or velocity non-finite, or its centre of mass moved past
  // the bound): the body (index in Model::bodies), and the joint whose projection first made a body
  // non-finite when one did (-1 otherwise).
  std::int64_t body = -1;
  std::int64_t joint = -1;
  std::string message;
  bool ok() const { return status == StepStatus::Ok; }
};

// A contact found by the collide stage of a substep. Unilateral: C = d - radii >= 0 with d the
// signed distance to the collider's surface, or the distance between the two particles.
struct Contact {
  ParticleIndex particle = 0;
  ParticleIndex other = 0;      // particle-particle: the second particle (> particle)
  std::int32_t collider = -1;   // collider contacts: index in Model::colliders; -1 for particle pairs
  double allowance = 0.0;       // m, overlap tolerated in this substep (maxDepenetrationVelocity)
  double normalVelocity = 0.0;  // m/s, relative normal velocity before the solve (< 0: approaching)
  double lambda = 0.0;          // accumulated multiplier; normal force = lambda / h^2 (N)
  // Relative tangential displacement (m) that static friction has undone in this substep; its
  // impulse |friction| / w must stay within mu_s lambda (Mueller et al. 2020, sec. 3.5).
  Vec3 friction = Vec3::Zero();
};

// A contact of a rigid body found by the collide stage of a substep ([M20] sec. 3.5): one point of
// the manifold that collideShapes gives for a pair of bodies, or of a body and a collider. The two
// material points (one on each side, fixed in that side's frame for the substep) and the normal are
// frozen for the substep; the constraint is C = (p_B - p_A) . normal + allowance >= 0 with
// p = x + q local evaluated at the current poses.
struct BodyContact {
  BodyIndex bodyA = 0;           // index in Model::bodies
  BodyIndex bodyB = kWorldBody;  // the other body, or kWorldBody for a collider
  std::int32_t collider = -1;    // index in Model::colliders, or -1 for a body pair
  Vec3 localA = Vec3::Zero();    // m, A's material point in A's body frame (from its centre of mass)
  Vec3 localB = Vec3::Zero();    // m, B's in B's body frame, or in the collider's frame
  Vec3 normal = Vec3::UnitY();   // unit, world, from A to B
  double allowance = 0.0;        // m, overlap tolerated in this substep (maxDepenetrationVelocity)
  double normalVelocity = 0.0;   // m/s, velocity of A relative to B along -normal before the solve (< 0: approaching)
  // Accumulated normal multiplier (kg m); normal force = lambda / h^2 (N) once the passes have
  // converged (a resting column of three boxes carried 0.80 - 0.87 of its weights in the last substep
  // of 16 passes, all of them at 32). With SolverSettings::bodyStackMassScaling > 0 a stack's lower
  // contacts carry less than the weight above them (see there); the top one's is exact.
  double lambda = 0.0;
  // Accumulated static friction multiplier (kg m), a tangential vector: |friction| <= mu_s lambda.
  Vec3 friction = Vec3::Zero();
  ContactMaterial material;  // the pair's: friction coefficients' geometric mean, the larger restitution
};

// A contact of a particle with a rigid body's shape ([M20] sec. 3.5, coupling of particles and
// bodies): C = phi_body(x) - r + allowance >= 0 with phi the shape's signed distance at the body's
// current pose, r the particle's radius; its correction is shared by the particle and the body with
// the generalised inverse mass w = w_p + 1/m + (r_b x n)^T I^-1 (r_b x n).
struct ParticleBodyContact {
  ParticleIndex particle = 0;
  BodyIndex body = 0;
  double allowance = 0.0;       // m, overlap tolerated in this substep (maxDepenetrationVelocity)
  double normalVelocity = 0.0;  // m/s, of the particle relative to the body's surface before the solve
  double lambda = 0.0;          // accumulated multiplier (kg m); normal force = lambda / h^2 (N)
  // Accumulated static friction multiplier (kg m), a tangential vector: |friction| <= mu_s lambda.
  Vec3 friction = Vec3::Zero();
};

// Wall-clock time (s) spent in each stage of the step pipeline (the stages at the top of this
// file), summed over the steps since timing was switched on or reset; for profiling a scene
// (`pliant bench --stages`). A stage run by a team counts its time once, not per thread.
struct StageTimes {
  double predict = 0.0;            // 1-2: prediction, attachment targets and collider poses
  double colliderContacts = 0.0;   // 3: contacts of particles with colliders found
  double particleContacts = 0.0;   // 3: contacts between particles found
  double surfaceContacts = 0.0;    // 3: surface (self-collision) contacts found
  double bodyContacts = 0.0;       // 3: contacts of rigid bodies, and of particles with bodies, found
  double constraints = 0.0;        // 4-5: the constraint families and joints projected
  double contactProjection = 0.0;  // 5: every kind of contact projected
  double velocities = 0.0;         // 6-7: velocities formed, the contacts' velocity pass
  double stepEnd = 0.0;            // 8: sleeping and momentum-conserving object damping
  std::int64_t steps = 0;          // steps timed
  // The stages' sum (s): a step also checks its result (SolverSettings::checkSteps), outside them.
  double total() const;
};
// The StageTimes fields in pipeline order with their snake_case names (`pliant bench --stages`
// columns without the _ms, Python's stage_times() keys).
struct StageTimeField {
  const char* name;
  double StageTimes::*seconds;
};
std::span<const StageTimeField> stageTimeFields();

namespace detail {
class ThreadTuner;
class ConstraintProjection;
class ParticleContacts;
class SurfaceContacts;
class ColliderContacts;
class BodyContacts;
class ParticleCoupling;
class BodySleep;
struct StepTrace;
}  // namespace detail

class Solver {
 public:
  // Shares `model` (see ModelPtr: a built model never changes). Throws pliant::Error for invalid
  // settings or model.
  Solver(ModelPtr model, const SolverSettings& settings);
  ~Solver();
  Solver(Solver&&) noexcept;
  Solver& operator=(Solver&&) noexcept;

  // Advances `state` by settings().timeStep. A refused step leaves `state` exactly as it was.
  [[nodiscard]] StepResult step(State& state);
  // Advances by `steps` steps, stopping at the first refused one.
  [[nodiscard]] StepResult run(State& state, int steps);

  const SolverSettings& settings() const { return settings_; }
  void setSettings(const SolverSettings& settings);
  // The model this solver steps: the one it was given, or its own edited copy after the first edit
  // below. The first edit replaces it: a reference taken before then refers to the original, which
  // lives only as long as something else shares it (keep a ModelPtr, not a reference). An edit
  // after the edited copy was shared (a ModelPtr kept from modelPtr()) copies it again, so what was
  // handed out never changes.
  const Model& model() const { return *model_; }
  const ModelPtr& modelPtr() const { return model_; }

  // Changes between steps. A built Model is immutable, so the first edit gives this solver its own
  // copy of the model (other solvers and scenes sharing the original are unaffected); states made
  // from either model fit both. Changing which particles can move re-plans the parallel solve
  // before the next step. Each throws pliant::Error naming a bad argument.
  // Mass (kg) of a particle that is not kinematic; 0 or infinity fixes it (inverse mass 0).
  void setParticleMass(ParticleIndex particle, double mass);
  // Pins a particle where it is (inverse mass 0; its mass is kept for diagnostics). The State's
  // velocity of the particle is left as it is until the next step, which makes it 0.
  void fixParticle(ParticleIndex particle);
  // Frees a fixed particle again with its mass (which must be finite and > 0).
  void releaseParticle(ParticleIndex particle);
  // Compliance, damping and stiffness of one constraint (they do not change the plan).
  void setConstraintParameters(ConstraintRef constraint, const ConstraintParameters& params);

  // Called after every substep's velocity update with the state at that instant (e.g. for probes
  // recorded per substep). Empty by default; costs nothing when unset.
  void setSubstepObserver(std::function<void(const State&)> observer) { substepObserver_ = std::move(observer); }

  // Number of constraint projections made by the last step (all families, all passes).
  std::uint64_t lastProjectionCount() const { return lastProjectionCount_; }
  // Threads the last step used (see pliant/parallel.h: automatic or fixed thread count).
  int lastThreadCount() const { return stepThreads_; }
  // The contacts of the last substep, in solve order (sorted by particle, then collider or other
  // particle), with their multipliers. Valid until the next step.
  const std::vector<Contact>& lastColliderContacts() const;
  const std::vector<Contact>& lastParticleContacts() const;
  const std::vector<SurfaceContact>& lastSurfaceContacts() const;
  // The rigid bodies' contacts of the last substep, in solve order (body pairs by index, then bodies
  // against colliders), with their multipliers. Valid until the next step.
  const std::vector<BodyContact>& lastBodyContacts() const;
  // The particles' contacts with bodies of the last substep, in solve order (by particle, then
  // body), with their multipliers. Valid until the next step.
  const std::vector<ParticleBodyContact>& lastParticleBodyContacts() const;
  // Force (N) that body attachment `attachment` exerted on its particle in the last substep
  // (lambda n / h^2, [M20] sec. 3.2); the body feels the opposite. Zero before the first step.
  Vec3 bodyAttachmentForce(std::size_t attachment) const;
  // The particles' contacts of the last substep: with colliders, between particles and between
  // surfaces (the bodies' are lastBodyContacts(), particles on bodies lastParticleBodyContacts()).
  std::size_t lastContactCount() const;
  // Surface contact work of the last step: how many times the broad phase ran over every triangle
  // (once in a step unless particles left the boxes they were given, see surface_contacts.cpp), how
  // many times it updated the pairs of a few such particles only instead, and how many candidate
  // pairs it holds now (vertex-triangle plus edge-edge: the last run's and those updates added).
  int lastSurfaceBroadPhaseRuns() const;
  int lastSurfaceBroadPhaseUpdates() const;
  std::size_t lastSurfaceCandidateCount() const;
  // How many collision triangles lie in patches whose pairs within the patch the last run skipped
  // (normal cones under 90 degrees, see surface_contacts.cpp).
  std::size_t lastSurfaceSkippedTriangles() const;

  // Times the stages of every step from now on (on) or no longer (off, the default: reading the
  // clock costs about 0.1 us per stage and substep, a tenth of a small scene's substep). Switching
  // on starts from zero.
  void setStageTiming(bool on);
  bool stageTiming() const { return stageTiming_; }
  const StageTimes& stageTimes() const { return stageTimes_; }

 private:
  // The stages of one step, in order (the comment at the top of this file): one function each, in
  // solver.cpp. StepFrame carries what the stages of a step share, with the variants chosen once
  // per step (a fused or skipped stage is a named alternative, as in Box2D's solver stages).
  struct StepFrame;
  void advance(State& state, detail::StepTrace* trace);
  StepFrame beginStep(State& state, detail::StepTrace* trace);
  bool predict(StepFrame& frame, State& state);                                          // 1
  void updateTargets(StepFrame& frame, State& state);                                    // 2
  bool collide(StepFrame& frame, State& state);                                          // 3
  bool project(StepFrame& frame, State& state);                                          // 4 and 5
  void updateVelocities(StepFrame& frame, State& state);                                 // 6 and 7
  void dampObjects(State& state);                                                        // 8
  StepResult diagnose(State& state);                                                     // after 9: names the culprit
  StepResult overflowRefusal(const State& state) const;                                  // after 3 overflowed
  StepResult bodyRefusal(State& state, std::size_t body, bool nonFinite, double moved);  // after 9, a body
  Model& ownModel();
  void replan();
  void measureModel();  // modelExtent_ and prescribed_

  ModelPtr model_;          // shared and immutable, or this solver's own edited copy
  bool ownsModel_ = false;  // model_ is this solver's private copy (made by the first edit)
  bool planStale_ = false;  // an edit changed which particles move; re-plan before the next step
  SolverSettings settings_;
  State backup_;                      // the state before the step being checked
  std::vector<Vec3> scratch_;         // gradients of variable-size families, sized at construction
  std::vector<double> valueScratch_;  // values of a group of batch user constraints, sized likewise
  std::string userFunctionError_;     // what a user constraint function threw in the last step
  std::string contactOverflow_;       // what overflowed its bound in the last step's collide stage
  // The divergence bound (SolverSettings::divergenceFactor): the model's extent L (m), fixed at
  // construction; per particle whether a path prescribes its position (kinematic: only the
  // absolute bound applies); and the last checked step's bound (m) and its reach before the factor.
  double modelExtent_ = 0.0;
  std::vector<std::uint8_t> prescribed_;
  double stepBound_ = 0.0;
  double stepBoundReach_ = 0.0;
  std::function<void(const State&)> substepObserver_;
  std::uint64_t lastProjectionCount_ = 0;
  bool stageTiming_ = false;
  StageTimes stageTimes_;
  int maxStepThreads() const;  // threadCount(), or 1 when the model has nothing worth splitting
  int stepThreads_ = 1;        // threads of the step under way
  std::unique_ptr<detail::ThreadTuner> tuner_;
  // The parts, each owning its scratch (src/core/constraint_projection.h, collision/*_contacts.h).
  std::unique_ptr<detail::ConstraintProjection> constraints_;
  std::unique_ptr<detail::ParticleContacts> particleContacts_;
  std::unique_ptr<detail::SurfaceContacts> surfaceContacts_;
  std::unique_ptr<detail::ColliderContacts> colliderContacts_;
  std::unique_ptr<detail::BodyContacts> bodyContacts_;
  std::unique_ptr<detail::ParticleCoupling> coupling_;
  std::unique_ptr<detail::BodySleep> sleep_;  // islands and sleeping of bodies (rigid/sleeping.h)
  friend struct SolverAccess;
};

}  // namespace pliant
