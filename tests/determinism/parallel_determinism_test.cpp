// Determinism of the parallel Gauss-Seidel solve (the Solver's plan, src/core/solve_plan.h): the
// same model stepped on 1, 2, 3, 4 and 8 threads gives bit-identical states, and so does the same
// model with a plan that splits nothing, or planned again after a pin changed between steps. The
// models are small, so the settings ask for a small SolverSettings::parallelBlockSize to make the
// solver split their colours across threads as it does for large models (default 512).
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "solve_plan.h"
#include "support/coloured_models.h"

namespace pliant {
namespace {

constexpr std::uint32_t kSmallBlock = 8;

// `settings` with another parallel block size.
SolverSettings withBlockSize(SolverSettings settings, std::uint32_t blockSize) {
  settings.parallelBlockSize = blockSize;
  return settings;
}

struct Case {
  std::string name;
  std::function<ModelPtr()> build;
  SolverSettings settings;  // with parallelBlockSize kSmallBlock
  int steps = 30;
};

// A 24 x 20 cloth pinned at its top corners (particles 0 and 23) with tethers to both. `edit`, if
// given, changes the builder's model after the tethers are added (the pins they were made for stay
// their anchors).
ModelPtr cloth(bool contacts, double stretchDamping, const std::function<void(Model&)>& edit = {}) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = 24;
  def.nodesY = 20;
  def.sizeX = def.sizeY = 1.0;
  def.origin = Vec3(-0.5, 1.0, -0.5);
  def.stretch.compliance = 1e-7;
  def.stretch.damping = stretchDamping;
  def.bending = BendingModel::Isometric;
  def.bendingParams.compliance = 0.1;
  def.dampingFactor = 0.02;
  const GeneratedObject c = addClothGrid(b, def);
  const ParticleIndex pins[2] = {c.firstParticle, c.firstParticle + 23};
  for (ParticleIndex p : pins) b.fixParticle(p);
  addTethers(b, {pins[0], pins[1]}, c.firstParticle, c.particleCount, ConstraintParameters{}, 1.02);
  if (contacts) {
    b.setParticleRadius(c.firstParticle, c.particleCount, 0.01);
    b.addCollider(Collider::sphere(Vec3(0.0, 0.6, 0.1), 0.3, {0.4, 0.3, 0.0}));
    b.addCollider(Collider::plane(Vec3(0.0, 0.2, 0.0), Vec3::UnitY(), {0.5, 0.4, 0.1}));
  }
  if (edit) edit(b.model());
  return b.build();
}

ModelPtr dihedralCloth() {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 16;
  def.origin = Vec3(-0.5, 1.0, -0.5);
  def.stretch.stiffness = 0.9;
  def.bending = BendingModel::Dihedral;
  def.bendingParams.stiffness = 0.2;
  const GeneratedObject c = addClothGrid(b, def);
  b.fixParticle(c.firstParticle);
  b.fixParticle(c.firstParticle + 15);
  return b.build();
}

ModelPtr tetBeam(bool contacts) {
  ModelBuilder b;
  TetBoxDef def;
  def.cellsX = 8;
  def.cellsY = 3;
  def.cellsZ = 3;
  def.size = Vec3(1.6, 0.6, 0.6);
  def.origin = Vec3(0.0, 0.5, -0.3);
  def.volume.compliance = 1e-8;
  def.edges.compliance = 1e-7;
  def.edges.damping = contacts ? 0.0 : 2.0;
  const GeneratedObject box = addTetBox(b, def);
  for (std::uint32_t k = 0; k < box.particleCount; k += def.cellsX + 1) b.fixParticle(box.firstParticle + k);
  if (contacts) {
    b.setParticleRadius(box.firstParticle, box.particleCount, 0.02);
    // Just under the beam's free half, which rests on it and slides.
    b.addCollider(Collider::box(Vec3(1.2, 0.42, 0.0), Vec3(0.2, 0.06, 0.5), Quat::Identity(), {0.6, 0.5, 0.0}));
  }
  return b.build();
}

ModelPtr balloon(bool contacts) {
  ModelBuilder b;
  BalloonDef def;
  def.rings = 14;
  def.segments = 24;
  def.radius = 0.4;
  def.centre = Vec3(0.0, 0.6, 0.0);
  def.pressure = 1.2;
  def.stretch.compliance = 1e-6;
  def.dampingFactor = 0.05;
  const GeneratedObject ball = addBalloon(b, def);
  b.addAttachment(ball.firstParticle, b.position(ball.firstParticle), ConstraintParameters{1e-5, 0.0, 1.0});
  if (contacts) {
    b.setParticleRadius(ball.firstParticle, ball.particleCount, 0.015);
    b.addCollider(Collider::plane(Vec3(0.0, 0.25, 0.0), Vec3(0.1, 1.0, 0.0), {0.5, 0.4, 0.3}));
  }
  return b.build();
}

// A cloth whose overlapping shape matching clusters (linear mode, cells of 0.2 m) share particles
// with each other and with the edges: the clusters are projected serially in index order between
// the edges' parallel colours.
ModelPtr shapeMatchedCloth() {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = 16;
  def.nodesY = 12;
  def.origin = Vec3(-0.5, 1.0, -0.5);
  def.stretch.compliance = 1e-6;
  const GeneratedObject c = addClothGrid(b, def);
  b.fixParticle(c.firstParticle);
  b.fixParticle(c.firstParticle + 15);
  std::vector<ParticleIndex> particles;
  for (std::uint32_t i = 0; i < c.particleCount; ++i) particles.push_back(c.firstParticle + i);
  ShapeMatchingSettings settings;
  settings.mode = ShapeMatchingMode::Linear;
  settings.beta = 0.3;
  settings.params.compliance = 1e-4;
  settings.params.damping = 1.0;
  addShapeMatchingClusters(b, particles, 0.2, settings, nullptr);
  return b.build();
}

std::vector<Case> cases() {
  SolverSettings xpbd = SolverSettings::smallSteps(6);
  xpbd.parallelBlockSize = kSmallBlock;
  SolverSettings twoIterations = xpbd;
  twoIterations.substeps = 3;
  twoIterations.iterations = 2;
  SolverSettings pbd;
  pbd.parallelBlockSize = kSmallBlock;
  pbd.mode = SolverMode::Pbd;
  pbd.substeps = 4;
  pbd.iterations = 2;
  return {
      {"cloth", [] { return cloth(false, 0.0); }, xpbd},
      {"cloth_shuffled_colours",
       [] { return cloth(false, 0.0, [](Model& m) { testing::shuffleColours(m, kSmallBlock, 3); }); }, xpbd},
      {"cloth_damped_two_iterations", [] { return cloth(false, 5.0); }, twoIterations},
      {"cloth_contacts", [] { return cloth(true, 0.0); }, xpbd, 60},
      {"cloth_pbd_dihedral", [] { return dihedralCloth(); }, pbd},
      {"tet_beam", [] { return tetBeam(false); }, xpbd},
      {"tet_beam_contacts", [] { return tetBeam(true); }, xpbd, 60},
      {"balloon", [] { return balloon(false); }, xpbd},
      {"balloon_contacts", [] { return balloon(true); }, xpbd, 60},
      {"shape_matching_cloth", [] { return shapeMatchedCloth(); }, xpbd},
  };
}

std::uint64_t finalHash(const ModelPtr& model, const SolverSettings& settings, int steps, std::size_t* contacts) {
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  for (int i = 0; i < steps; ++i) {
    const StepResult r = solver.step(state);
    EXPECT_TRUE(r.ok()) << r.message;
    if (!r.ok()) break;
    if (contacts) *contacts = std::max(*contacts, solver.lastContactCount());
  }
  return state.hash();
}

class ThreadCountRestorer : public ::testing::Test {
 protected:
  void TearDown() override { setThreadCount(saved_); }
  int saved_ = threadCount();
};

using ParallelDeterminism = ThreadCountRestorer;

TEST_F(ParallelDeterminism, EveryThreadCountGivesTheSameBits) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const ModelPtr model = c.build();
    // The plan does split this model, so the parallel path is what is compared.
    ASSERT_TRUE(detail::planSolve(*model, c.settings.parallelBlockSize).hasParallelBatch());
    std::vector<std::uint64_t> hashes;
    std::size_t contacts = 0;
    // 4 and 8 are more threads than the test machines have cores: the spin barrier then yields.
    // Under ThreadSanitizer (the `tsan` preset) three threads find what more would, at a tenth of
    // the time.
#ifdef PLIANT_UNDER_TSAN
    const int threadCounts[] = {1, 2, 3};
#else
    const int threadCounts[] = {1, 2, 3, 4, 8};
#endif
    for (int threads : threadCounts) {
      setThreadCount(threads);
      hashes.push_back(finalHash(model, c.settings, c.steps, &contacts));
    }
    for (std::size_t i = 1; i < hashes.size(); ++i) EXPECT_EQ(hashes[0], hashes[i]) << threadCounts[i] << " threads";
    if (c.name.find("contacts") != std::string::npos) {
      EXPECT_GT(contacts, 10u);  // the contact stage really ran
    }
    // The same model planned with no parallel batch at all (one thread for everything).
    setThreadCount(2);
    const SolverSettings serial = withBlockSize(c.settings, 1u << 30);
    ASSERT_FALSE(detail::planSolve(*model, serial.parallelBlockSize).hasParallelBatch());
    EXPECT_EQ(finalHash(model, serial, c.steps, nullptr), hashes[0]);
    // The scene moved: the hashes compare real work.
    EXPECT_NE(hashes[0], State::fromModel(*model).hash());
  }
}

TEST_F(ParallelDeterminism, BlockSizeDoesNotChangeTheResult) {
  // Different block sizes split each colour at different places and into different numbers of
  // parts; none may change a bit.
  setThreadCount(2);
  const ModelPtr base = cloth(false, 0.0);
  const SolverSettings settings = withBlockSize(SolverSettings::smallSteps(6), kSmallBlock);
  const std::uint64_t reference = finalHash(base, settings, 20, nullptr);
  for (std::uint32_t block : {1u, 3u, 50u, 333u}) {
    SCOPED_TRACE(block);
    EXPECT_EQ(finalHash(base, withBlockSize(settings, block), 20, nullptr), reference);
  }
  // Changed between steps (Solver::setSettings plans again): still the same bits.
  Solver solver(base, settings);
  State state = State::fromModel(*base);
  for (std::uint32_t block : {1u, 333u, 1u << 30, 3u}) {
    solver.setSettings(withBlockSize(settings, block));
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(solver.step(state).ok());
  }
  EXPECT_EQ(state.hash(), reference);
}

// Above 4096 particles the per-particle stages (prediction, velocities) are split across threads
// too; with threads bound to cores (pinThreadsToCores, as `pliant bench` does) nothing changes either.
TEST_F(ParallelDeterminism, SplitParticleLoopsAndBoundThreadsGiveTheSameBits) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 72;  // 5184 particles
  def.origin = Vec3(-0.5, 1.0, -0.5);
  def.bending = BendingModel::Isometric;
  def.bendingParams.compliance = 0.1;
  const GeneratedObject c = addClothGrid(b, def);
  const ParticleIndex pins[2] = {c.firstParticle, c.firstParticle + 71};
  for (ParticleIndex p : pins) b.fixParticle(p);
  addTethers(b, {pins[0], pins[1]}, c.firstParticle, c.particleCount, ConstraintParameters{});
  const ModelPtr model = b.build();
  const SolverSettings settings = SolverSettings::smallSteps(4);
  setThreadCount(1);
  const std::uint64_t reference = finalHash(model, settings, 8, nullptr);
  EXPECT_NE(reference, State::fromModel(*model).hash());
  setThreadCount(2);
  EXPECT_EQ(finalHash(model, settings, 8, nullptr), reference);
  const int bound = pinThreadsToCores();
#if defined(__linux__)
  EXPECT_GE(bound, 1);
#endif
  EXPECT_EQ(threadCount(), 2);
  EXPECT_EQ(finalHash(model, settings, 8, nullptr), reference);
  setThreadCount(1);
  EXPECT_EQ(finalHash(model, settings, 8, nullptr), reference);
}

// The threads' parts of a parallel batch move with measured time (src/batch_split.h), so each run
// splits differently; a solver whose thread count changes between steps starts new cuts; and a
// step taken inside another parallel region gets a team of one, which projects every part in turn.
TEST_F(ParallelDeterminism, TimedCutsChangedThreadCountsAndSmallerTeamsGiveTheSameBits) {
  const ModelPtr model = cloth(false, 0.0);
  const SolverSettings settings = withBlockSize(SolverSettings::smallSteps(6), kSmallBlock);
  setThreadCount(1);
  const std::uint64_t reference = finalHash(model, settings, 24, nullptr);
  EXPECT_NE(reference, State::fromModel(*model).hash());
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  for (int threads : {2, 3, 2, 1, 3, 2}) {
    setThreadCount(threads);
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(solver.step(state).ok());
  }
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(1);
  setThreadCount(3);
  bool teamOfOne = false;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int i = 0; i < 12; ++i) EXPECT_TRUE(solver.step(state).ok());
#pragma omp parallel num_threads(3)
#pragma omp single
    teamOfOne = omp_get_num_threads() == 1;
  }
  omp_set_max_active_levels(levels);
  EXPECT_TRUE(teamOfOne);
  EXPECT_EQ(state.hash(), reference);
}

// Pins and masses changed between steps through the Solver (releaseParticle, fixParticle,
// setParticleMass) plan the solve again: the edited solver goes on with exactly the bits of fresh
// solvers on models built with those pins and masses, on 1, 2 and 3 threads. Releasing a tether
// anchor makes its tethers share a movable particle, so a solver that kept its old plan would
// project them as independent, in SIMD lanes and on several threads, and leave other bits.
TEST_F(ParallelDeterminism, PinChangesBetweenStepsGiveTheBitsOfAFreshSolver) {
  const ParticleIndex anchor = 23;                  // the second pinned top corner
  const ParticleIndex bottomMiddle = 24 * 19 + 12;  // free at first
  const ParticleIndex bottomLeft = 24 * 19;
  const ParticleIndex heavy = 24 * 10 + 5;
  const ModelPtr original = cloth(false, 0.0);
  const double heavyMass = 3.0 * original->mass[heavy];
  auto massEdits = [&](Model& m) {
    m.mass[heavy] = heavyMass;
    m.inverseMass[heavy] = 1.0 / heavyMass;
    m.mass[bottomLeft] = 0.0;
    m.inverseMass[bottomLeft] = 0.0;
  };
  // Built with the pins and masses of each phase: the anchor released and the bottom middle pinned,
  // then the anchor pinned again and the bottom middle released.
  const ModelPtr released = cloth(false, 0.0, [&](Model& m) {
    massEdits(m);
    m.inverseMass[anchor] = 1.0 / m.mass[anchor];
    m.inverseMass[bottomMiddle] = 0.0;
  });
  const ModelPtr repinned = cloth(false, 0.0, massEdits);
  const SolverSettings settings = withBlockSize(SolverSettings::smallSteps(6), kSmallBlock);
  const detail::SolvePlan plans[3] = {detail::planSolve(*original, kSmallBlock),
                                      detail::planSolve(*released, kSmallBlock),
                                      detail::planSolve(*repinned, kSmallBlock)};
  ASSERT_TRUE(plans[0].hasParallelBatch());
  EXPECT_NE(plans[0].batches, plans[1].batches);  // the edits do need another plan
  EXPECT_NE(plans[1].batches, plans[2].batches);
  const int phaseSteps[3] = {8, 15, 15};

  std::vector<std::uint64_t> reference;  // the hash after each phase, on 1 thread
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    setThreadCount(threads);
    // One solver, edited between steps.
    Solver edited(original, settings);
    State state = State::fromModel(*original);
    std::vector<std::uint64_t> editedHashes;
    for (int phase = 0; phase < 3; ++phase) {
      if (phase == 1) {
        edited.releaseParticle(anchor);
        edited.fixParticle(bottomMiddle);
        edited.setParticleMass(heavy, heavyMass);
        edited.setParticleMass(bottomLeft, 0.0);
      } else if (phase == 2) {
        edited.fixParticle(anchor);
        edited.releaseParticle(bottomMiddle);
      }
      for (int i = 0; i < phaseSteps[phase]; ++i) ASSERT_TRUE(edited.step(state).ok()) << "phase " << phase;
      editedHashes.push_back(state.hash());
    }
    EXPECT_EQ(edited.model().inverseMass, repinned->inverseMass);
    EXPECT_EQ(edited.model().mass, repinned->mass);
    // A fresh solver per phase, on the model built with that phase's pins, from the state reached.
    State fresh = State::fromModel(*original);
    const ModelPtr models[3] = {original, released, repinned};
    for (int phase = 0; phase < 3; ++phase) {
      Solver solver(models[phase], settings);
      for (int i = 0; i < phaseSteps[phase]; ++i) ASSERT_TRUE(solver.step(fresh).ok()) << "phase " << phase;
      EXPECT_EQ(fresh.hash(), editedHashes[phase]) << "phase " << phase;
    }
    if (reference.empty()) reference = editedHashes;
    EXPECT_EQ(editedHashes, reference);
  }
  // The edits changed the motion: the unedited cloth ends elsewhere.
  setThreadCount(1);
  EXPECT_NE(finalHash(original, settings, phaseSteps[0] + phaseSteps[1] + phaseSteps[2], nullptr), reference.back());
  // The model the solvers shared is as built.
  EXPECT_EQ(original->inverseMass[anchor], 0.0);
  EXPECT_NE(original->inverseMass[bottomMiddle], 0.0);
  EXPECT_NE(original->mass[heavy], heavyMass);
}

}  // namespace
}  // namespace pliant
