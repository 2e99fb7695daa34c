// Unit tests of the step check in src/core/solver.cpp (pipeline stage 9): a step that produces NaN/Inf or
// moves a particle further than the divergence bounds is refused, the state is restored bit for
// bit, and the result names the particle and the constraint whose projection went wrong.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <class T>
bool bitEqual(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  return a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;  // no memcmp on null
}

// Every field of the state, compared by bit pattern (NaN == NaN here).
void expectBitIdentical(const State& a, const State& b) {
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_TRUE(bitEqual(a.position, b.position));
  EXPECT_TRUE(bitEqual(a.velocity, b.velocity));
  EXPECT_TRUE(bitEqual(a.previousPosition, b.previousPosition));
  EXPECT_TRUE(bitEqual(a.externalForce, b.externalForce));
  EXPECT_TRUE(bitEqual(a.lambda, b.lambda));
  EXPECT_TRUE(bitEqual(a.attachmentTarget, b.attachmentTarget));
  EXPECT_EQ(std::memcmp(&a.time, &b.time, sizeof a.time), 0);
  EXPECT_EQ(std::memcmp(&a.lastSubstep, &b.lastSubstep, sizeof a.lastSubstep), 0);
  EXPECT_EQ(a.stepCount, b.stepCount);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A hanging chain of 6 particles (index 0 fixed), stepped a few times so the state is not trivial.
struct Chain {
  ModelPtr model;
  SolverSettings settings;
};
Chain makeChain(const std::function<void(ModelBuilder&)>& extra = {}) {
  ModelBuilder builder;
  ChainDef def;
  def.particles = 6;
  def.end = Vec3(1.0, -0.5, 0.2);
  def.stretch.compliance = 1e-5;
  addChain(builder, def);
  if (extra) extra(builder);
  Chain c;
  c.model = builder.build();
  c.settings.substeps = 2;
  c.settings.iterations = 2;
  return c;
}

TEST(StepRefusal, NaNExternalForceIsRefusedInThePredictionAndRestoresTheState) {
  const Chain chain = makeChain();
  Solver solver(chain.model, chain.settings);
  State state = State::fromModel(*chain.model);
  ASSERT_TRUE(solver.run(state, 5).ok());
  state.externalForce[3] = Vec3(0.0, kNaN, 0.0);
  const State before = state;
  const StepResult r = solver.step(state);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status, StepStatus::NonFinite);
  EXPECT_EQ(r.particle, 3);
  EXPECT_FALSE(r.hasConstraint);  // the prediction itself went bad
  EXPECT_TRUE(contains(r.message, "particle 3")) << r.message;
  EXPECT_TRUE(contains(r.message, "prediction")) << r.message;
  EXPECT_TRUE(contains(r.message, "step 6")) << r.message;
  expectBitIdentical(state, before);
  // Refusal is not sticky: remove the bad force and the same step goes through.
  state.externalForce[3].setZero();
  EXPECT_TRUE(solver.step(state).ok());
  EXPECT_EQ(state.stepCount, 6u);
}

TEST(StepRefusal, InfiniteExternalForceIsNonFinite) {
  const Chain chain = makeChain();
  Solver solver(chain.model, chain.settings);
  State state = State::fromModel(*chain.model);
  state.externalForce[5] = Vec3(kInf, 0.0, 0.0);
  const State before = state;
  const StepResult r = solver.step(state);
  EXPECT_EQ(r.status, StepStatus::NonFinite);
  EXPECT_EQ(r.particle, 5);
  expectBitIdentical(state, before);
}

TEST(StepRefusal, GenericConstraintReturningNaNIsNamed) {
  // Generic 0 is well behaved; generic 1 returns NaN with a nonzero gradient.
  const Chain chain = makeChain([](ModelBuilder& b) {
    const std::array<ParticleIndex, 1> first = {2};
    b.addGeneric(
        [](std::span<const Vec3> x, std::span<Vec3> g) {
          g[0] = Vec3(0, 1, 0);
          return x[0].y() + 10.0;
        },
        first, true, ConstraintParameters{});
    const std::array<ParticleIndex, 2> pair = {4, 1};
    b.addGeneric(
        [](std::span<const Vec3>, std::span<Vec3> g) {
          g[0] = Vec3(1, 0, 0);
          g[1] = Vec3(-1, 0, 0);
          return kNaN;
        },
        pair, false, ConstraintParameters{});
  });
  Solver solver(chain.model, chain.settings);
  State state = State::fromModel(*chain.model);
  const State before = state;
  const StepResult r = solver.step(state);
  EXPECT_EQ(r.status, StepStatus::NonFinite);
  ASSERT_TRUE(r.hasConstraint);
  EXPECT_EQ(r.constraint.family, ConstraintFamily::Generic);
  EXPECT_EQ(r.constraint.index, 1u);
  EXPECT_TRUE(r.particle == 4 || r.particle == 1) << r.particle;
  EXPECT_TRUE(contains(r.message, "generic constraint 1")) << r.message;
  EXPECT_TRUE(contains(r.message, "particle " + std::to_string(r.particle))) << r.message;
  expectBitIdentical(state, before);
}

TEST(StepRefusal, HugeCorrectionIsExcessiveDisplacementNamingTheConstraint) {
  // C = 50 m with a unit gradient: a hard projection moves the particle 50 m in one step, beyond
  // the 10 m bound. Everything else in the model is tame.
  const Chain chain = makeChain([](ModelBuilder& b) {
    const std::array<ParticleIndex, 1> p = {3};
    b.addGeneric(
        [](std::span<const Vec3>, std::span<Vec3> g) {
          g[0] = Vec3(0, 0, 1);
          return 0.0;
        },
        p, false, ConstraintParameters{});
    b.addGeneric(
        [](std::span<const Vec3> x, std::span<Vec3> g) {
          g[0] = Vec3(1, 0, 0);
          return x[0].x() + 50.0;
        },
        p, false, ConstraintParameters{});
  });
  SolverSettings settings = chain.settings;
  settings.maxDisplacementPerStep = 10.0;
  Solver solver(chain.model, settings);
  State state = State::fromModel(*chain.model);
  const State before = state;
  const StepResult r = solver.step(state);
  EXPECT_EQ(r.status, StepStatus::ExcessiveDisplacement);
  ASSERT_TRUE(r.hasConstraint);
  EXPECT_EQ(r.constraint.family, ConstraintFamily::Generic);
  EXPECT_EQ(r.constraint.index, 1u);
  EXPECT_EQ(r.particle, 3);
  EXPECT_TRUE(contains(r.message, "displacement")) << r.message;
  EXPECT_TRUE(contains(r.message, "generic constraint 1")) << r.message;
  expectBitIdentical(state, before);

  // The default bound, relative to the model (a few metres), refuses the 50 m jump as well; with
  // the bounds off the same model steps: the bound is what refused it.
  Solver relative(chain.model, chain.settings);
  State again = state;
  EXPECT_EQ(relative.step(again).status, StepStatus::ExcessiveDisplacement);
  SolverSettings off = chain.settings;
  off.divergenceFactor = kInf;
  off.maxStrain = kInf;
  Solver lenient(chain.model, off);
  EXPECT_TRUE(lenient.step(state).ok());
}

TEST(StepRefusal, BuiltInFamilyWithAbsurdRestLengthIsNamed) {
  // A distance constraint asking for 1e4 m between particles 1 m apart moves each by ~5e3 m.
  ModelBuilder builder;
  builder.addParticle(Vec3(0, 0, 0), 1.0);
  builder.addParticle(Vec3(1, 0, 0), 1.0);
  builder.addParticle(Vec3(2, 0, 0), 1.0);
  builder.addDistance(0, 1, ConstraintParameters{});
  builder.addDistance(1, 2, ConstraintParameters{}, 1e4);
  const ModelPtr model = builder.build();
  Solver solver(model, SolverSettings{});
  State state = State::fromModel(*model);
  const State before = state;
  const StepResult r = solver.step(state);
  EXPECT_EQ(r.status, StepStatus::ExcessiveDisplacement);
  ASSERT_TRUE(r.hasConstraint);
  EXPECT_EQ(r.constraint.family, ConstraintFamily::Distance);
  EXPECT_EQ(r.constraint.index, 1u);
  EXPECT_TRUE(r.particle == 1 || r.particle == 2) << r.particle;
  EXPECT_TRUE(contains(r.message, "distance constraint 1")) << r.message;
  expectBitIdentical(state, before);
}

// Issue 12 item 7: a step that per-object damping (stage 8) makes non-finite names the particle
// and the object. Two particles 2e160 m apart: the object's inertia m r^2 overflows to infinity,
// its angular velocity becomes NaN and so do the damped velocities.
TEST(StepRefusal, ObjectDampingThatGoesBadNamesTheParticleAndTheObject) {
  ModelBuilder builder;
  const ParticleIndex a = builder.addParticle(Vec3(-1e160, 0, 0), 1.0, Vec3(0, 1, 0));
  const ParticleIndex b = builder.addParticle(Vec3(1e160, 0, 0), 1.0, Vec3(0, -1, 0));
  builder.addObject("far_pair", {a, b}, 0.5);
  const ModelPtr model = builder.build();
  SolverSettings settings;
  settings.gravity = Vec3::Zero();
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  const State before = state;
  const StepResult r = solver.step(state);
  EXPECT_EQ(r.status, StepStatus::NonFinite);
  EXPECT_EQ(r.particle, 0);
  EXPECT_TRUE(contains(r.message, "at particle 0 after the per-object damping of object 0 'far_pair'")) << r.message;
  expectBitIdentical(state, before);
  // Without the damping the same model steps fine: the damping is the culprit named.
  ModelBuilder undamped;
  undamped.addParticle(Vec3(-1e160, 0, 0), 1.0, Vec3(0, 1, 0));
  undamped.addParticle(Vec3(1e160, 0, 0), 1.0, Vec3(0, -1, 0));
  Solver plain(undamped.build(), settings);
  State s = State::fromModel(plain.model());
  EXPECT_TRUE(plain.step(s).ok());
}

TEST(StepRefusal, RunStopsAtTheFirstRefusedStep) {
  const Chain chain = makeChain();
  Solver solver(chain.model, chain.settings);
  State state = State::fromModel(*chain.model);
  ASSERT_TRUE(solver.run(state, 3).ok());
  state.externalForce[2] = Vec3(kNaN, 0, 0);
  const State before = state;
  const StepResult r = solver.run(state, 10);
  EXPECT_EQ(r.status, StepStatus::NonFinite);
  expectBitIdentical(state, before);
  EXPECT_EQ(state.stepCount, 3u);
}

TEST(StepRefusal, UncheckedStepsDoNotRefuse) {
  // checkSteps = false trades the safety net for speed: the NaN goes through.
  const Chain chain = makeChain();
  SolverSettings settings = chain.settings;
  settings.checkSteps = false;
  Solver solver(chain.model, settings);
  State state = State::fromModel(*chain.model);
  state.externalForce[3] = Vec3(kNaN, 0, 0);
  EXPECT_TRUE(solver.step(state).ok());
  EXPECT_FALSE(state.position[3].allFinite());
}

TEST(StepRefusal, InfiniteOrNaNInitialVelocityIsRejectedByTheBuilder) {
  ModelBuilder builder;
  builder.addParticle(Vec3::Zero(), 1.0);
  for (const Vec3& v : {Vec3(kInf, 0, 0), Vec3(0, -kInf, 0), Vec3(0, 0, kNaN)}) {
    try {
      builder.addParticle(Vec3(1, 0, 0), 1.0, v);
      ADD_FAILURE() << "accepted velocity " << v.transpose();
    } catch (const Error& e) {
      EXPECT_TRUE(contains(e.what(), "particle 1 velocity")) << e.what();
    }
  }
  EXPECT_EQ(builder.particleCount(), 1u);
  // A model edited by hand afterwards is caught when built.
  builder.model().initialVelocity[0] = Vec3(0, kInf, 0);
  EXPECT_THROW(builder.build(), Error);
}

TEST(StepRefusal, StateOfAnotherModelIsRejected) {
  const Chain chain = makeChain();
  Solver solver(chain.model, chain.settings);
  State state = State::fromModel(*chain.model);
  state.position.pop_back();
  EXPECT_THROW((void)solver.step(state), Error);
}

}  // namespace
}  // namespace pliant
