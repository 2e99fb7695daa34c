// No allocation inside a step (STYLE.md): once a solver has taken its first step, further steps
// allocate nothing, on one thread or several, with contacts or without. This test binary replaces
// the global operator new with one that counts calls while counting is switched on.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <vector>

#include "collision/particle_contacts.h"
#include "determinism/crossed_cloths.h"
#include "pliant/bodies.h"
#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/io/scenes.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/rigid_shapes.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "solve_plan.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
std::vector<double>* volatile kept = nullptr;  // keeps the compiler from eliding the test's allocation

void* allocate(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace pliant {
namespace {

// Runs `steps` steps with operator new counted from zero.
StepResult countedRun(Solver& solver, State& state, int steps) {
  allocations = 0;
  counting = true;
  const StepResult r = solver.run(state, steps);
  counting = false;
  return r;
}

// Splits the colours across threads even at this size (SolverSettings::parallelBlockSize).
constexpr std::uint32_t kSmallBlock = 16;

ModelPtr scene(bool contacts) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 20;
  def.origin = Vec3(-0.5, 1.0, -0.5);
  def.stretch.compliance = 1e-7;
  def.bending = BendingModel::Isometric;
  def.bendingParams.compliance = 0.1;
  def.dampingFactor = 0.02;
  const GeneratedObject c = addClothGrid(b, def);
  b.fixParticle(c.firstParticle);
  b.fixParticle(c.firstParticle + 19);
  addTethers(b, {c.firstParticle, c.firstParticle + 19}, c.firstParticle, c.particleCount, ConstraintParameters{});
  TetBoxDef box;
  box.cellsX = 4;
  box.cellsY = box.cellsZ = 2;
  box.origin = Vec3(1.0, 0.4, 0.0);
  box.size = Vec3(0.8, 0.4, 0.4);
  box.volume.compliance = 1e-8;
  box.edges.compliance = 1e-7;
  addTetBox(b, box);
  if (contacts) {
    b.setParticleRadius(0, static_cast<std::uint32_t>(b.particleCount()), 0.01);
    b.addCollider(Collider::sphere(Vec3(0.0, 0.5, 0.0), 0.3));
    b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.5, 0.4, 0.0}));
    // Surface contacts too (issue 13): the cloth's triangles against each other, so the broad
    // phase, its candidate lists and the contact scratch run every substep.
    b.addCollisionTriangles(c.triangles);
  }
  return b.build();
}

// Steps `warmUp` steps (scratch sized, thread pool started), then counts allocations over `counted` more.
void expectNoAllocationAfter(Solver& solver, State& state, int warmUp, int counted) {
  ASSERT_TRUE(solver.run(state, warmUp).ok());
  const StepResult r = countedRun(solver, state, counted);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(allocations.load(), 0);
}

TEST(StepAllocation, StepsAfterTheFirstAllocateNothing) {
  const int saved = threadCount();
  for (bool contacts : {false, true})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(testing::Message() << "contacts " << contacts << ", threads " << threads);
      setThreadCount(threads);
      const ModelPtr model = scene(contacts);
      ASSERT_TRUE(detail::planSolve(*model, kSmallBlock).hasParallelBatch());
      SolverSettings settings = SolverSettings::smallSteps(8);
      settings.parallelBlockSize = kSmallBlock;
      Solver solver(model, settings);
      State state = State::fromModel(*model);
      // The first steps size the solver's scratch (the backup state, contact lists) and start
      // OpenMP's thread pool. Surface-contact candidate lists keep growing (by doubling) while the
      // swinging cloth folds into more contact: about 80 steps here; after that, nothing.
      expectNoAllocationAfter(solver, state, 83, 40);
      if (contacts) {
        EXPECT_GT(solver.lastContactCount(), 0u);
        EXPECT_GT(model->collisionTriangles.size(), 0u);
      }
    }
  setThreadCount(saved);
}

// Rigid bodies and joints (pliant/bodies.h) too: a chain of boxes on hinge, spherical, fixed and
// prismatic joints (each solved as one block, rigid/corrections.h).
TEST(StepAllocation, BodiesAndJointsAllocateNothing) {
  ModelBuilder b;
  BodyIndex above = kWorldBody;
  const JointKind kinds[4] = {JointKind::Hinge, JointKind::Spherical, JointKind::Fixed, JointKind::Prismatic};
  for (int k = 0; k < 4; ++k) {
    BodyDefinition body;
    body.shape.kind = BodyShapeKind::Box;
    body.shape.halfExtents = Vec3(0.2, 0.05, 0.05);
    body.pose.position = Vec3(0.4 * k + 0.2, 0.0, 0.0);
    const BodyIndex link = b.addBody(body);
    JointDefinition joint;
    joint.kind = kinds[k];
    joint.bodyA = above;
    joint.bodyB = link;
    joint.anchor = Vec3(0.4 * k, 0.0, 0.0);
    joint.axis = Vec3::UnitZ();
    joint.lower = -1.0;
    joint.upper = 1.0;
    if (kinds[k] == JointKind::Fixed) {
      joint.lower = -std::numeric_limits<double>::infinity();
      joint.upper = std::numeric_limits<double>::infinity();
    }
    b.addJoint(joint);
    above = link;
  }
  const ModelPtr model = b.build();
  Solver solver(model, SolverSettings::smallSteps(8));
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 2).ok());
  const StepResult r = countedRun(solver, state, 20);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(allocations.load(), 0);
}

// The built-in car: hinges with speed drives between a chassis and sphere wheels rolling on the
// ground.
TEST(StepAllocation, DrivenCarAllocatesNothing) {
  const Scene scene = makeBuiltinScene("car");
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  ASSERT_TRUE(solver.run(state, 2).ok());
  const StepResult r = countedRun(solver, state, 20);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(allocations.load(), 0);
}

// Rigid body contacts (rigid/body_contacts.h) too: a column of boxes and a sphere on the ground and
// on each other, so the broad phase, the narrow phase and the contact list run every substep (or,
// with per-step detection, once per step and re-evaluated in the others).
TEST(StepAllocation, BodyContactsAllocateNothing) {
  ModelBuilder b;
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.5, 0.4, 0.2}));
  for (int k = 0; k < 4; ++k) {
    BodyDefinition body;
    body.shape.kind = BodyShapeKind::Box;
    body.shape.halfExtents = Vec3(0.1, 0.1, 0.1);
    body.pose.position = Vec3(0.01 * k, 0.1 + 0.2 * k, 0.0);
    body.material = {0.5, 0.4, 0.2};
    b.addBody(body);
  }
  BodyDefinition ball;
  ball.shape.kind = BodyShapeKind::Sphere;
  ball.shape.radius = 0.1;
  ball.pose.position = Vec3(0.5, 0.3, 0.0);
  ball.velocity = Vec3(-1.0, 0.0, 0.0);
  b.addBody(ball);
  const ModelPtr model = b.build();
  for (const bool perSubstep : {true, false}) {  // contacts found every substep, or once per step
    SolverSettings settings = SolverSettings::smallSteps(8);
    settings.bodyCollisionPerSubstep = perSubstep;
    Solver solver(model, settings);
    State state = State::fromModel(*model);
    ASSERT_TRUE(solver.run(state, 2).ok());
    const StepResult r = countedRun(solver, state, 30);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(allocations.load(), 0) << perSubstep;
    EXPECT_GE(solver.lastBodyContacts().size(), 16u);
  }
}

// A pile large enough for the body contacts' parallel paths (the grid's cells, the narrow phase and
// the contacts' set-up per pair, the rows, the regions' passes and the bodies' prediction on the team):
// 5 x 8 x 8 boxes settling on the ground, on two threads.
TEST(StepAllocation, LargeBodyPileOnTwoThreadsAllocatesNothing) {
  const int saved = threadCount();
  setThreadCount(2);
  ModelBuilder b;
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.5, 0.5, 0.0}));
  for (int layer = 0; layer < 5; ++layer)
    for (int i = 0; i < 8; ++i)
      for (int k = 0; k < 8; ++k) {
        BodyDefinition body;
        body.shape.kind = BodyShapeKind::Box;
        body.shape.halfExtents = Vec3(0.1, 0.1, 0.1);
        body.pose.position = Vec3(0.21 * i + 0.01 * layer, 0.1 + 0.201 * layer, 0.21 * k);
        body.material = {0.5, 0.5, 0.0};
        b.addBody(body);
      }
  const ModelPtr model = b.build();
  SolverSettings settings = SolverSettings::smallSteps(4);
  settings.sleeping = false;  // every box in every step
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  expectNoAllocationAfter(solver, state, 20, 10);
  EXPECT_GE(solver.lastBodyContacts().size(), 1024u);  // enough manifolds for the regions
  setThreadCount(saved);
}

// Sleeping (rigid/sleeping.h) too: a stack of two boxes falls asleep after 0.5 s, a box dropped
// from 3 m wakes it at 0.75 s (the islands, the wake-up and the contacts found again), and the three
// fall asleep again. (A tower of four rocks for seconds after such a hit at some pass counts, which
// passes the solver alike before and after its linearised contact block: 15 passes never slept in 10 s.)
TEST(StepAllocation, SleepingAndWakingAllocateNothing) {
  ModelBuilder b;
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.6, 0.5, 0.0}));
  for (int k = 0; k < 3; ++k) {
    BodyDefinition body;
    body.shape.kind = BodyShapeKind::Box;
    body.shape.halfExtents = Vec3(0.1, 0.1, 0.1);
    body.pose.position = Vec3(0.0, k < 2 ? 0.1 + 0.2 * k : 3.0, 0.0);
    body.material = {0.6, 0.5, 0.0};
    b.addBody(body);
  }
  const ModelPtr model = b.build();
  Solver solver(model, SolverSettings::smallSteps(8));
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 1).ok());
  allocations = 0;
  counting = true;
  bool slept = false, woke = false;
  for (int frame = 0; frame < 150; ++frame) {
    const StepResult r = solver.step(state);
    if (!r.ok()) break;
    slept = slept || state.bodyAsleep(0);
    woke = woke || (slept && !state.bodyAsleep(0));
  }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_TRUE(slept);
  EXPECT_TRUE(woke);
  EXPECT_TRUE(state.bodyAsleep(2));
}

// Particles coupled with bodies (rigid/particle_coupling.h) too: a cloth with one corner pinned to
// a falling box and the rest landing on a sphere body, on one thread and two.
TEST(StepAllocation, ParticleBodyCouplingAllocatesNothing) {
  const int saved = threadCount();
  for (int threads : {1, 2}) {
    SCOPED_TRACE(testing::Message() << "threads " << threads);
    setThreadCount(threads);
    ModelBuilder b;
    b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.5, 0.4, 0.0}));
    ClothGridDef def;
    def.nodesX = def.nodesY = 16;
    def.origin = Vec3(-0.5, 0.8, -0.5);
    const GeneratedObject c = addClothGrid(b, def);
    b.setParticleRadius(c.firstParticle, c.particleCount, 0.01);
    BodyDefinition ball;
    ball.shape.kind = BodyShapeKind::Sphere;
    ball.shape.radius = 0.25;
    ball.pose.position = Vec3(0.0, 0.3, 0.0);
    ball.material = {0.5, 0.4, 0.2};
    b.addBody(ball);
    BodyDefinition box;
    box.shape.kind = BodyShapeKind::Box;
    box.shape.halfExtents = Vec3(0.05, 0.05, 0.05);
    box.pose.position = Vec3(-0.5, 0.85, -0.5);
    const BodyIndex boxIndex = b.addBody(box);
    b.addBodyAttachment(c.firstParticle, boxIndex, b.position(c.firstParticle), {});
    const ModelPtr model = b.build();
    Solver solver(model, SolverSettings::smallSteps(8));
    State state = State::fromModel(*model);
    ASSERT_TRUE(solver.run(state, 30).ok());
    const StepResult r = countedRun(solver, state, 20);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(allocations.load(), 0);
    EXPECT_GT(solver.lastParticleBodyContacts().size(), 0u);
  }
  setThreadCount(saved);
}

// The particle-pair list's local updates (particle_contacts.cpp) use the scratch that prepare
// reserved: two thick crossed cloths draping over a sphere update their list in most substeps. A
// contact stage of its own, fed the substeps' states, counts the updates (and its allocations
// are counted too).
TEST(StepAllocation, ParticleListUpdatesAllocateNothing) {
  ModelBuilder b;
  addCrossedCloths(b, 24, 0.25, 0.27, 0.02, false);
  b.addCollider(Collider::sphere(Vec3::Zero(), 0.2, {0.3, 0.2, 0.0}));
  const ModelPtr model = b.build();
  const SolverSettings settings = SolverSettings::smallSteps(8);
  detail::ParticleContacts stage;
  stage.prepare(*model);
  Solver solver(model, settings);
  const double h = settings.timeStep / settings.substeps;
  solver.setSubstepObserver([&](const State& substep) { stage.collide(*model, settings, substep, h, 1); });
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 10).ok());
  const std::uint64_t updates = stage.listUpdates();
  const StepResult r = countedRun(solver, state, 30);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_GT(stage.listUpdates(), updates + 10);
  EXPECT_GT(solver.lastParticleContacts().size(), 0u);
}

TEST(StepAllocation, TheCounterSeesAnAllocation) {
  allocations = 0;
  counting = true;
  kept = new std::vector<double>(10);
  counting = false;
  delete kept;
  EXPECT_GE(allocations.load(), 1);
}

// The rigid narrow phase (pliant/rigid_shapes.h) allocates nothing per call, for every pair of
// shape kinds: it runs inside the step once bodies collide.
TEST(StepAllocation, CollideShapesAllocatesNothing) {
  std::vector<Vec3> corners;
  for (int i = 0; i < 8; ++i) corners.push_back(Vec3((i & 1) ? 0.5 : -0.5, (i & 2) ? 0.4 : -0.4, (i & 4) ? 0.6 : -0.6));
  std::vector<BodyShape> shapes(6);
  shapes[0].kind = BodyShapeKind::Sphere;
  shapes[0].radius = 0.5;
  shapes[1].kind = BodyShapeKind::Capsule;
  shapes[1].radius = 0.3;
  shapes[1].halfHeight = 0.5;
  shapes[2].kind = BodyShapeKind::Box;
  shapes[2].halfExtents = Vec3(0.5, 0.4, 0.3);
  shapes[3].kind = BodyShapeKind::ConvexHull;
  shapes[3].hull = std::make_shared<const ConvexHull>(buildConvexHull(corners, "hull"));
  shapes[4] = shapeFromCollider(Collider::mesh(shapes[3].hull->vertices, shapes[3].hull->triangles));
  shapes[5].kind = BodyShapeKind::Plane;
  const ColliderPose a{Vec3(0.1, 0.2, 0.0), Quat(Eigen::AngleAxisd(0.3, Vec3::UnitX()))};
  const ColliderPose b{Vec3(0.2, 0.7, 0.1), Quat(Eigen::AngleAxisd(-0.4, Vec3::UnitZ()))};
  ContactManifold m;
  int touching = 0;
  auto all = [&] {
    for (const BodyShape& x : shapes)
      for (const BodyShape& y : shapes) {
        collideShapes(x, a, y, b, 0.05, m);
        touching += m.count > 0;
        Vec3 n, lower, upper;
        shapeDistance(x, a, b.position, n);
        shapeBounds(x, a, 0.05, lower, upper);
      }
  };
  all();  // the first call builds the shared unit box topology
  touching = 0;
  allocations = 0;
  counting = true;
  all();
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_GT(touching, 20);
}

}  // namespace
}  // namespace pliant
