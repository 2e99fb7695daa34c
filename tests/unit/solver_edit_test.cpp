// Unit tests of the changes a user makes between steps through the Solver (src/core/solver.cpp:
// setParticleMass, fixParticle, releaseParticle, setConstraintParameters). A built Model is shared
// and immutable, so the first edit gives the solver its own copy (copy-on-write), and an edit that
// changes which particles move plans the solve again (src/core/solve_plan.h). The same across
// thread counts is in tests/determinism/parallel_determinism_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "pliant/builders.h"
#include "pliant/diagnostics.h"
#include "pliant/error.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "solve_plan.h"

namespace pliant {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kG = 9.81;  // m/s^2, the default gravity's magnitude

// Runs `action`, which must throw pliant::Error with every string of `parts` in its message.
template <class Action>
void expectError(Action&& action, std::initializer_list<const char*> parts) {
  try {
    action();
    ADD_FAILURE() << "no pliant::Error thrown";
  } catch (const Error& e) {
    for (const char* part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// A fixed particle once fixed through the solver stays exactly where it was; released, it falls
// freely from rest: after k steps of h (one substep, symplectic Euler) v = -k h g and it has
// dropped h^2 g k (k + 1) / 2. Masses of 0 and infinity fix, a finite one frees.
TEST(SolverEdit, FixAndReleaseHoldAndFreeAParticleBetweenSteps) {
  ModelBuilder b;
  const ParticleIndex p = b.addParticle(Vec3(0.0, 1.0, 0.0), 0.5);
  const ParticleIndex q = b.addParticle(Vec3(1.0, 1.0, 0.0), 0.5);
  const ModelPtr model = b.build();
  const SolverSettings settings;
  const double h = settings.timeStep;
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 5).ok());
  ASSERT_LT(state.velocity[p].y(), 0.0);  // falling

  solver.fixParticle(p);
  EXPECT_EQ(solver.model().inverseMass[p], 0.0);
  EXPECT_EQ(solver.model().mass[p], 0.5);  // kept for diagnostics and for releaseParticle
  const Vec3 held = state.position[p];
  const double qBefore = state.position[q].y();
  ASSERT_TRUE(solver.run(state, 10).ok());
  EXPECT_EQ(state.position[p], held);
  EXPECT_EQ(state.velocity[p], Vec3::Zero());
  EXPECT_LT(state.position[q].y(), qBefore);  // the steps did run

  solver.releaseParticle(p);
  EXPECT_EQ(solver.model().inverseMass[p], 2.0);
  const int k = 12;
  ASSERT_TRUE(solver.run(state, k).ok());
  EXPECT_NEAR(state.velocity[p].y(), -k * h * kG, 1e-12);
  EXPECT_NEAR(state.position[p].y(), held.y() - h * h * kG * k * (k + 1) / 2.0, 1e-12);
  EXPECT_EQ(state.position[p].x(), held.x());

  for (double fixing : {0.0, kInf}) {
    SCOPED_TRACE(fixing);
    solver.setParticleMass(q, fixing);
    EXPECT_EQ(solver.model().inverseMass[q], 0.0);
    ASSERT_TRUE(solver.step(state).ok());  // the first step fixed stops it (v = dx / h = 0)
    const Vec3 stopped = state.position[q];
    ASSERT_TRUE(solver.run(state, 3).ok());
    EXPECT_EQ(state.position[q], stopped);
  }
  solver.setParticleMass(q, 2.0);
  EXPECT_EQ(solver.model().mass[q], 2.0);
  EXPECT_EQ(solver.model().inverseMass[q], 0.5);
  const double qHeld = state.position[q].y();
  ASSERT_TRUE(solver.run(state, 3).ok());
  EXPECT_NEAR(state.position[q].y(), qHeld - h * h * kG * 6.0, 1e-12);  // 1 + 2 + 3 steps of fall
}

// A cloth pinned at two corners with tethers to both, its colours split across threads (small
// block size). Releasing a tether anchor makes its tethers share a movable particle; pinning a
// free particle changes which constraints are independent.
ModelPtr tetheredCloth(const std::function<void(Model&)>& edit = {}) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 12;
  def.origin = Vec3(-0.5, 1.0, -0.5);
  def.stretch.compliance = 1e-7;
  def.bending = BendingModel::Isometric;
  def.bendingParams.compliance = 0.1;
  const GeneratedObject c = addClothGrid(b, def);
  b.fixParticle(c.firstParticle);
  b.fixParticle(c.firstParticle + 11);
  addTethers(b, {c.firstParticle, c.firstParticle + 11}, c.firstParticle, c.particleCount, ConstraintParameters{});
  if (edit) edit(b.model());
  return b.build();
}

// After a pin change the solver goes on with the bits of a fresh solver on a model built with the
// new pins (and of a fresh solver on its own edited model): it planned the solve again.
TEST(SolverEdit, PinChangeGivesTheBitsOfAFreshSolver) {
  constexpr ParticleIndex kAnchor = 11, kCorner = 143;
  const ModelPtr original = tetheredCloth();
  const ModelPtr repinned = tetheredCloth([](Model& m) {
    m.inverseMass[kAnchor] = 1.0 / m.mass[kAnchor];
    m.inverseMass[kCorner] = 0.0;
  });
  SolverSettings settings = SolverSettings::smallSteps(4);
  settings.parallelBlockSize = 4;
  ASSERT_TRUE(detail::planSolve(*original, 4).hasParallelBatch());
  ASSERT_NE(detail::planSolve(*original, 4).batches, detail::planSolve(*repinned, 4).batches);

  Solver edited(original, settings);
  State state = State::fromModel(*original);
  ASSERT_TRUE(edited.run(state, 6).ok());
  State fresh = state, own = state;
  const Vec3 pinnedAt = state.position[kCorner];
  edited.releaseParticle(kAnchor);
  edited.fixParticle(kCorner);
  ASSERT_TRUE(edited.run(state, 20).ok());
  Solver rebuilt(repinned, settings);
  ASSERT_TRUE(rebuilt.run(fresh, 20).ok());
  EXPECT_EQ(state.hash(), fresh.hash());
  Solver onEdited(edited.modelPtr(), settings);
  ASSERT_TRUE(onEdited.run(own, 20).ok());
  EXPECT_EQ(state.hash(), own.hash());
  // The released anchor fell away from its pin, the pinned corner stayed.
  EXPECT_GT((state.position[kAnchor] - original->initialPosition[kAnchor]).norm(), 1e-3);
  EXPECT_EQ(state.position[kCorner], pinnedAt);
}

// Edits copy the model on the first change: the shared model, and another solver stepping it, are
// unaffected; edits that change nothing copy nothing; later edits change the solver's own copy.
TEST(SolverEdit, EditsCopyTheModelAndLeaveItsOtherUsersAlone) {
  ModelBuilder b;
  ChainDef def;
  def.particles = 5;
  def.end = Vec3(1.0, -0.4, 0.0);
  def.stretch.compliance = 1e-5;
  addChain(b, def);  // particle 0 fixed
  const ModelPtr model = b.build();
  const Model before = *model;
  const SolverSettings settings;
  Solver a(model, settings), other(model, settings), untouched(model, settings);
  EXPECT_EQ(a.modelPtr(), model);

  a.fixParticle(0);      // fixed already
  a.releaseParticle(1);  // free already
  EXPECT_EQ(a.modelPtr(), model);

  a.fixParticle(2);
  EXPECT_NE(a.modelPtr(), model);
  EXPECT_EQ(&a.model(), a.modelPtr().get());
  const Model* own = &a.model();
  a.setParticleMass(3, 4.0);
  a.setConstraintParameters({ConstraintFamily::Distance, 1}, {1e-3, 0.5, 0.8});
  EXPECT_EQ(&a.model(), own);  // one copy, edited in place from then on
  EXPECT_EQ(a.model().inverseMass[2], 0.0);
  EXPECT_EQ(a.model().mass[3], 4.0);
  EXPECT_EQ(a.model().inverseMass[3], 0.25);
  EXPECT_EQ(a.model().distances[1].params.compliance, 1e-3);
  EXPECT_EQ(a.model().distances[1].params.damping, 0.5);
  EXPECT_EQ(a.model().distances[1].params.stiffness, 0.8);

  // The shared model is as built.
  EXPECT_EQ(model->inverseMass, before.inverseMass);
  EXPECT_EQ(model->mass, before.mass);
  ASSERT_EQ(model->distances.size(), before.distances.size());
  for (std::size_t c = 0; c < before.distances.size(); ++c) {
    EXPECT_EQ(model->distances[c].params.compliance, before.distances[c].params.compliance) << c;
    EXPECT_EQ(model->distances[c].params.damping, before.distances[c].params.damping) << c;
    EXPECT_EQ(model->distances[c].params.stiffness, before.distances[c].params.stiffness) << c;
  }
  EXPECT_EQ(other.modelPtr(), model);
  // Another solver on it steps exactly as one that never saw an edit; the edited one differs. States
  // made from the shared model fit the edited copy.
  State sa = State::fromModel(*model), so = sa, su = sa;
  ASSERT_TRUE(a.run(sa, 30).ok());
  ASSERT_TRUE(other.run(so, 30).ok());
  ASSERT_TRUE(untouched.run(su, 30).ok());
  EXPECT_EQ(so.hash(), su.hash());
  EXPECT_NE(sa.hash(), so.hash());
  EXPECT_EQ(sa.position[2], model->initialPosition[2]);  // held by the edited solver only
  EXPECT_NE(so.position[2], model->initialPosition[2]);

  // A solver that is its model's only holder edits it as well.
  Solver alone(b.build(), settings);
  State sl = State::fromModel(alone.model());
  alone.fixParticle(4);
  ASSERT_TRUE(alone.run(sl, 10).ok());
  EXPECT_EQ(sl.position[4], alone.model().initialPosition[4]);
}

// The edited copy, once shared (kept from modelPtr(), as Python's Solver.model does), is immutable
// too: the next edit copies again, and a solver stepping the shared copy is unaffected.
TEST(SolverEdit, AnEditAfterSharingTheEditedCopyCopiesAgain) {
  ModelBuilder b;
  ChainDef def;
  def.particles = 4;
  addChain(b, def);
  Solver a(b.build(), SolverSettings{});
  a.fixParticle(3);
  const ModelPtr shared = a.modelPtr();
  Solver onShared(shared, SolverSettings{});
  a.fixParticle(2);
  EXPECT_NE(a.modelPtr(), shared);
  EXPECT_NE(shared->inverseMass[2], 0.0);  // the shared copy was not edited
  EXPECT_EQ(a.model().inverseMass[2], 0.0);
  EXPECT_EQ(a.model().inverseMass[3], 0.0);
  const Model* own = &a.model();
  a.fixParticle(1);  // not shared any more: edited in place
  EXPECT_EQ(&a.model(), own);
}

// Every bad argument throws pliant::Error naming the particle or the constraint, and leaves the
// solver's model as it was (not even copied).
TEST(SolverEdit, BadArgumentsNameTheParticleOrConstraint) {
  ModelBuilder b;
  b.addParticle(Vec3::Zero(), 0.0);          // 0: fixed, mass 0
  b.addParticle(Vec3(0.0, -1.0, 0.0), 1.0);  // 1: free
  b.addParticle(Vec3(1.0, 0.0, 0.0), 1.0);   // 2: kinematic
  b.addKinematic(2, [](double t) { return Vec3(1.0, 0.0, t); });
  b.addDistance(0, 1, ConstraintParameters{});
  b.addAttachment(1, Vec3(0.0, -1.0, 0.0), ConstraintParameters{1e-4, 0.0, 1.0});
  const ModelPtr model = b.build();
  Solver solver(model, SolverSettings{});

  expectError([&] { solver.setParticleMass(3, 1.0); },
              {"setParticleMass", "particle 3", "out of range", "3 particles"});
  expectError([&] { solver.fixParticle(7); }, {"fixParticle", "particle 7", "out of range"});
  expectError([&] { solver.releaseParticle(7); }, {"releaseParticle", "particle 7", "out of range"});
  expectError([&] { solver.setParticleMass(2, 1.0); }, {"setParticleMass", "particle 2", "kinematic"});
  expectError([&] { solver.fixParticle(2); }, {"fixParticle", "particle 2", "kinematic"});
  expectError([&] { solver.releaseParticle(2); }, {"releaseParticle", "particle 2", "kinematic"});
  expectError([&] { solver.setParticleMass(1, -1.0); }, {"setParticleMass", "mass of particle 1", ">= 0 kg"});
  expectError([&] { solver.setParticleMass(1, kNaN); }, {"setParticleMass", "mass of particle 1", ">= 0 kg"});
  expectError([&] { solver.releaseParticle(0); }, {"releaseParticle", "particle 0", "has mass", "setParticleMass"});

  const ConstraintParameters good{1e-3, 0.0, 1.0};
  expectError(
      [&] {
        solver.setConstraintParameters({ConstraintFamily::Distance, 1}, good);
      },
      {"setConstraintParameters", "distance constraint 1"});
  expectError(
      [&] {
        solver.setConstraintParameters({ConstraintFamily::TetVolume, 0}, good);
      },
      {"setConstraintParameters", "tet-volume constraint 0"});
  expectError(
      [&] {
        solver.setConstraintParameters({static_cast<ConstraintFamily>(kConstraintFamilyCount), 0}, good);
      },
      {"setConstraintParameters", "constraint 0"});
  expectError(
      [&] {
        solver.setConstraintParameters({ConstraintFamily::Distance, 0}, {-1.0, 0.0, 1.0});
      },
      {"distance constraint 0", "compliance"});
  expectError(
      [&] {
        solver.setConstraintParameters({ConstraintFamily::Attachment, 0}, {0.0, kNaN, 1.0});
      },
      {"attachment constraint 0", "damping"});
  expectError(
      [&] {
        solver.setConstraintParameters({ConstraintFamily::Attachment, 0}, {0.0, 0.0, 1.5});
      },
      {"attachment constraint 0", "stiffness"});

  EXPECT_EQ(solver.modelPtr(), model);  // nothing was copied or changed
  State state = State::fromModel(*model);
  EXPECT_TRUE(solver.run(state, 3).ok());

  // Fixed by an infinite mass, a particle has no finite mass to be released with.
  solver.setParticleMass(1, kInf);
  expectError([&] { solver.releaseParticle(1); }, {"releaseParticle", "particle 1", "has mass"});
  solver.setParticleMass(1, 2.0);
  EXPECT_EQ(solver.model().inverseMass[1], 0.5);
}

// V3 through setConstraintParameters and setParticleMass: a particle of mass m hanging on a
// constraint of compliance alpha settles at elongation m g alpha, and follows a new compliance,
// then a new mass, set between steps. Global velocity damping only shortens the settling.
TEST(SolverEdit, V3_StaticElongationFollowsNewComplianceAndMass) {
  const double mass = 0.5, alpha = 2e-3, stiffer = 5e-4, heavier = 1.5;  // kg, m/N, m/N, kg
  for (bool anchorAsParticle : {true, false}) {
    SCOPED_TRACE(anchorAsParticle ? "distance to a fixed particle" : "attachment");
    ModelBuilder b;
    ConstraintRef ref;
    ParticleIndex p = 0;
    if (anchorAsParticle) {
      const ParticleIndex anchor = b.addParticle(Vec3::Zero(), 0.0);
      p = b.addParticle(Vec3(0.0, -1.0, 0.0), mass);
      ref = {ConstraintFamily::Distance, b.addDistance(anchor, p, {alpha, 0.0, 1.0}, 1.0)};
    } else {
      p = b.addParticle(Vec3(0.0, -1.0, 0.0), mass);
      ref = {ConstraintFamily::Attachment, b.addAttachment(p, Vec3::Zero(), {alpha, 0.0, 1.0}, 1.0)};
    }
    const ModelPtr model = b.build();
    SolverSettings settings;
    settings.iterations = 2;
    settings.velocityDamping = 40.0;
    Solver solver(model, settings);
    State state = State::fromModel(*model);
    auto settle = [&](double m, double a) {
      ASSERT_TRUE(solver.run(state, 180).ok());  // 3 s
      EXPECT_LE(state.velocity[p].norm(), 1e-9);
      const double elongation = constraintValue(solver.model(), state, ref);
      EXPECT_NEAR(elongation, m * kG * a, 1e-6 * m * kG * a) << "m=" << m << " alpha=" << a;
      EXPECT_NEAR(constraintForce(solver.model(), state, ref), -m * kG, 1e-9 * m * kG);
    };
    settle(mass, alpha);
    solver.setConstraintParameters(ref, {stiffer, 0.0, 1.0});
    settle(mass, stiffer);
    solver.setParticleMass(p, heavier);
    settle(heavier, stiffer);
    // The model the solver was given still says alpha.
    const ConstraintParameters& given = anchorAsParticle ? model->distances[0].params : model->attachments[0].params;
    EXPECT_EQ(given.compliance, alpha);
    EXPECT_EQ(model->mass[p], mass);
  }
}

}  // namespace
}  // namespace pliant
