// Determinism: the same model stepped from the same state gives bit-identical states, whether run
// twice from scratch, continued from a copy, with any thread count, or after a refused step.
// State::hash is the witness, checked here to be sensitive to a single bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "pliant/builders.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

// A cloth with bending pinned at two corners, a tet box with one end fixed and a balloon, with
// momentum-conserving damping and velocity damping: every kind of work a step does.
ModelPtr mixedScene(BendingModel bending) {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = 8;
  cloth.nodesY = 8;
  cloth.origin = Vec3(-0.5, 1.0, -0.5);
  cloth.stretch.compliance = 1e-6;
  cloth.stretch.damping = 5.0;
  cloth.bending = bending;
  cloth.bendingParams.compliance = 1e-2;
  cloth.dampingFactor = 0.05;
  const GeneratedObject c = addClothGrid(b, cloth);
  b.fixParticle(c.firstParticle);
  b.fixParticle(c.firstParticle + 7);
  addTethers(b, {c.firstParticle, c.firstParticle + 7}, c.firstParticle, c.particleCount, ConstraintParameters{}, 1.05);
  TetBoxDef box;
  box.cellsX = 3;
  box.cellsY = 1;
  box.cellsZ = 1;
  box.size = Vec3(0.9, 0.3, 0.3);
  box.origin = Vec3(1.0, 0.0, 0.0);
  box.volume.compliance = 1e-7;
  box.edges.compliance = 1e-6;
  const GeneratedObject beam = addTetBox(b, box);
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j) b.fixParticle(beam.firstParticle + static_cast<ParticleIndex>((k * 2 + j) * 4));
  BalloonDef balloon;
  balloon.rings = 6;
  balloon.segments = 8;
  balloon.radius = 0.3;
  balloon.centre = Vec3(-1.5, 1.0, 0.0);
  balloon.pressure = 1.3;
  balloon.stretch.compliance = 1e-5;
  balloon.dampingFactor = 0.1;
  const GeneratedObject ball = addBalloon(b, balloon);
  b.addAttachment(ball.firstParticle, b.position(ball.firstParticle) + Vec3(0, 0.1, 0),
                  ConstraintParameters{1e-4, 0, 1});
  return b.build();
}

SolverSettings mixedSettings() {
  SolverSettings s;
  s.substeps = 4;
  s.iterations = 2;
  s.velocityDamping = 0.1;
  return s;
}

template <class T>
bool bitEqual(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  return a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;  // no memcmp on null
}

// Runs a fresh model, state and solver for `steps` steps; returns the hash after every step.
std::vector<std::uint64_t> freshRun(BendingModel bending, int steps, State* final = nullptr) {
  const ModelPtr model = mixedScene(bending);
  Solver solver(model, mixedSettings());
  State state = State::fromModel(*model);
  std::vector<std::uint64_t> hashes;
  for (int i = 0; i < steps; ++i) {
    const StepResult r = solver.step(state);
    EXPECT_TRUE(r.ok()) << r.message;
    hashes.push_back(state.hash());
  }
  if (final) *final = state;
  return hashes;
}

TEST(Determinism, IndependentRunsAreBitIdentical) {
  for (BendingModel bending : {BendingModel::Dihedral, BendingModel::Isometric}) {
    State first, second;
    const auto a = freshRun(bending, 100, &first);
    const auto b = freshRun(bending, 100, &second);
    EXPECT_EQ(a, b);
    EXPECT_TRUE(bitEqual(first.position, second.position));
    EXPECT_TRUE(bitEqual(first.velocity, second.velocity));
    EXPECT_TRUE(bitEqual(first.lambda, second.lambda));
    // The scene moved and the hash followed it (it is not constant).
    EXPECT_NE(a.front(), a.back());
    const ModelPtr m = mixedScene(bending);
    EXPECT_NE(State::fromModel(*m).hash(), a.back());
  }
}

TEST(Determinism, CopiedStateContinuesIdentically) {
  const ModelPtr model = mixedScene(BendingModel::Dihedral);
  Solver solver(model, mixedSettings());
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 50).ok());
  State copy = state;
  EXPECT_EQ(copy.hash(), state.hash());
  Solver other(model, mixedSettings());  // a second solver: no hidden state in the solver matters
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(solver.step(state).ok());
    ASSERT_TRUE(other.step(copy).ok());
    ASSERT_EQ(copy.hash(), state.hash()) << "step " << 51 + i;
  }
  EXPECT_TRUE(bitEqual(copy.position, state.position));
  // Continuing the copy with the first solver, interleaved, also agrees.
  State third = state;
  ASSERT_TRUE(solver.step(state).ok());
  ASSERT_TRUE(solver.step(third).ok());
  EXPECT_EQ(third.hash(), state.hash());
}

TEST(Determinism, HashSeesOneBitOfOneCoordinate) {
  const ModelPtr model = mixedScene(BendingModel::Isometric);
  Solver solver(model, mixedSettings());
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 5).ok());
  const std::uint64_t reference = state.hash();
  auto flip = [](double& v, int bit) {
    v = std::bit_cast<double>(std::bit_cast<std::uint64_t>(v) ^ (std::uint64_t{1} << bit));
  };
  // The lowest mantissa bit, a middle one and the sign, in positions, velocities and multipliers.
  for (int bit : {0, 31, 63}) {
    State s = state;
    flip(s.position[17].y(), bit);
    EXPECT_NE(s.hash(), reference) << "position bit " << bit;
    flip(s.position[17].y(), bit);
    EXPECT_EQ(s.hash(), reference);
    flip(s.velocity.back().z(), bit);
    EXPECT_NE(s.hash(), reference) << "velocity bit " << bit;
    flip(s.velocity.back().z(), bit);
    flip(s.lambda[s.lambda.size() / 2], bit);
    EXPECT_NE(s.hash(), reference) << "lambda bit " << bit;
    flip(s.lambda[s.lambda.size() / 2], bit);
    EXPECT_EQ(s.hash(), reference);
  }
  State later = state;
  later.stepCount += 1;
  EXPECT_NE(later.hash(), reference);
  later = state;
  later.time = std::nextafter(later.time, 1.0);
  EXPECT_NE(later.hash(), reference);
  // Swapping two particles' positions keeps the same multiset of bits but must change the hash.
  later = state;
  std::swap(later.position[3], later.position[4]);
  EXPECT_NE(later.hash(), reference);
}

TEST(Determinism, RefusedStepLeavesNoTrace) {
  const ModelPtr model = mixedScene(BendingModel::Dihedral);
  Solver solver(model, mixedSettings());
  State state = State::fromModel(*model);
  State clean = state;
  Solver cleanSolver(model, mixedSettings());
  ASSERT_TRUE(solver.run(state, 20).ok());
  ASSERT_TRUE(cleanSolver.run(clean, 20).ok());
  // The hash covers external forces, so take it after the bad force is set.
  state.externalForce[10] = Vec3(0.0, std::numeric_limits<double>::quiet_NaN(), 0.0);
  const std::uint64_t before = state.hash();
  const StepResult r = solver.step(state);
  ASSERT_EQ(r.status, StepStatus::NonFinite);
  EXPECT_EQ(state.hash(), before);
  // Remove the bad force and go on: the run is indistinguishable from one never refused.
  state.externalForce[10].setZero();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(solver.step(state).ok());
    ASSERT_TRUE(cleanSolver.step(clean).ok());
  }
  EXPECT_EQ(state.hash(), clean.hash());
  EXPECT_TRUE(bitEqual(state.position, clean.position));
}

TEST(Determinism, ThreadCountDoesNotChangeTheResult) {
  // Above the parallel threshold (16384 particles) the per-particle loops run on threads; every
  // particle's arithmetic is the same whatever the split, so the hash must not depend on it.
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = 131;
  cloth.nodesY = 131;
  cloth.stretch.compliance = 1e-6;
  const GeneratedObject c = addClothGrid(b, cloth);
  b.fixParticle(c.firstParticle);
  b.fixParticle(c.firstParticle + 130);
  const ModelPtr model = b.build();
  ASSERT_GT(model->particleCount(), 16384u);
  const int saved = threadCount();
  std::vector<std::uint64_t> hashes;
  for (int threads : {1, 2, 3}) {
    setThreadCount(threads);
    SolverSettings s;
    s.substeps = 2;
    s.velocityDamping = 0.2;
    Solver solver(model, s);
    State state = State::fromModel(*model);
    EXPECT_TRUE(solver.run(state, 3).ok());
    hashes.push_back(state.hash());
  }
  setThreadCount(saved);
  EXPECT_EQ(hashes[0], hashes[1]);
  EXPECT_EQ(hashes[0], hashes[2]);
}

}  // namespace
}  // namespace pliant
