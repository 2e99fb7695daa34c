// The parallel solve plan (detail::planSolve, made by the Solver from its model and
// SolverSettings::parallelBlockSize) and the SIMD kernels it enables: batches cover each family in
// order, an independent batch really shares no movable particle, colours of generated objects
// become long independent batches, and the SIMD kernels give the scalar kernels' bits.
#include "solve_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "constraint_projection.h"
#include "constraints/families.h"
#include "pliant/builders.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "support/coloured_models.h"

namespace pliant {
namespace {

std::vector<ParticleIndex> particlesOf(const Model& m, ConstraintFamily family, std::uint32_t c) {
  switch (family) {
    case ConstraintFamily::Attachment:
      return {m.attachments[c].particle};
    case ConstraintFamily::Distance:
      return {m.distances[c].particles[0], m.distances[c].particles[1]};
    case ConstraintFamily::MaxDistance:
      return {m.maxDistances[c].particles[0], m.maxDistances[c].particles[1]};
    case ConstraintFamily::IsometricBending: {
      const auto& p = m.isometricBendings[c].particles;
      return {p[0], p[1], p[2], p[3]};
    }
    case ConstraintFamily::DihedralBending: {
      const auto& p = m.dihedralBendings[c].particles;
      return {p[0], p[1], p[2], p[3]};
    }
    case ConstraintFamily::TetVolume: {
      const auto& p = m.tetVolumes[c].particles;
      return {p[0], p[1], p[2], p[3]};
    }
    default:
      return {};
  }
}

using detail::planSolve;
using detail::SolveBatch;
using detail::SolvePlan;

// The default SolverSettings::parallelBlockSize.
const std::uint32_t kDefaultBlock = SolverSettings{}.parallelBlockSize;

// Checks the invariants of `plan` (made for `m` with `blockSize`) for every family; returns the
// number of constraints in parallel batches.
std::size_t checkPlan(const Model& m, const SolvePlan& plan, std::uint32_t blockSize) {
  std::size_t inParallel = 0;
  // A plan goes parallel only for a batch of 2 x blockSize; then shorter ones down to 2 x partSize.
  bool longBatch = false;
  for (const auto& batches : plan.batches)
    for (const SolveBatch& b : batches) longBatch = longBatch || (b.independent && b.end - b.begin >= 2u * blockSize);
  EXPECT_EQ(plan.hasParallelBatch(), longBatch);
  EXPECT_EQ(plan.partSize, std::max(blockSize / 4, 1u));
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const auto family = static_cast<ConstraintFamily>(f);
    const auto& batches = plan.batches[f];
    const auto count = static_cast<std::uint32_t>(m.constraintCount(family));
    if (count == 0) {
      EXPECT_TRUE(batches.empty());
      continue;
    }
    EXPECT_FALSE(batches.empty());
    std::uint32_t next = 0;
    for (const SolveBatch& b : batches) {
      EXPECT_EQ(b.begin, next) << familyName(family);
      EXPECT_LT(b.begin, b.end);
      next = b.end;
      if (b.parallel) {
        EXPECT_TRUE(b.independent);
        EXPECT_GE(b.end - b.begin, 2u * plan.partSize);
        inParallel += b.end - b.begin;
      }
      // Every independent batch long enough for two parts is shared once the plan is parallel.
      if (b.independent && longBatch) {
        EXPECT_EQ(b.parallel, b.end - b.begin >= 2u * plan.partSize);
      }
      if (!b.independent) continue;
      std::set<ParticleIndex> seen;
      for (std::uint32_t c = b.begin; c < b.end; ++c)
        for (ParticleIndex p : particlesOf(m, family, c)) {
          if (m.inverseMass[p] == 0.0) continue;
          EXPECT_TRUE(seen.insert(p).second) << familyName(family) << " constraint " << c << " particle " << p;
        }
    }
    EXPECT_EQ(next, count) << familyName(family);
  }
  return inParallel;
}

using testing::pinnedCloth;

TEST(SolvePlan, ClothColoursAreLongIndependentBatches) {
  const ModelPtr m = pinnedCloth(40);
  const SolvePlan plan = planSolve(*m, 256);
  checkPlan(*m, plan, 256);
  for (ConstraintFamily family : {ConstraintFamily::Distance, ConstraintFamily::IsometricBending}) {
    const auto& batches = plan.batches[static_cast<int>(family)];
    // Greedy colouring of a grid: a handful of colours, each one batch (the last few colours of a
    // greedy colouring can be tiny and join a dependent batch).
    EXPECT_LE(batches.size(), 20u) << familyName(family);
    std::size_t independent = 0;
    for (const SolveBatch& b : batches)
      if (b.independent) independent += b.end - b.begin;
    EXPECT_GT(independent, 0.97 * static_cast<double>(m->constraintCount(family))) << familyName(family);
  }
  // Tethers to two pinned anchors: one batch per anchor, since the anchors never move.
  const auto& tethers = plan.batches[static_cast<int>(ConstraintFamily::MaxDistance)];
  ASSERT_EQ(tethers.size(), 2u);
  EXPECT_TRUE(tethers[0].parallel && tethers[1].parallel);
  EXPECT_EQ(tethers[0].end - tethers[0].begin, 40u * 40u - 2u);
}

TEST(SolvePlan, DefaultBlockSizeKeepsSmallModelsSerial) {
  const ModelPtr m = pinnedCloth(20);  // 400 particles, tethers of 398
  EXPECT_EQ(kDefaultBlock, 512u);
  const SolvePlan small = planSolve(*m, kDefaultBlock);
  EXPECT_EQ(checkPlan(*m, small, kDefaultBlock), 0u);
  EXPECT_FALSE(small.hasParallelBatch());
  const SolvePlan split = planSolve(*m, 16);
  EXPECT_GT(checkPlan(*m, split, 16), m->totalConstraintCount() / 2);
  EXPECT_TRUE(split.hasParallelBatch());
}

TEST(SolvePlan, ShortColoursAreSharedOnceTheModelIsParallel) {
  // 48 x 48 nodes: the first distance colours (1,152) reach 2 x 512, the bending colours (306 -
  // 576, issue 14) do not; before, they ran on thread 0 while the other threads waited.
  const ModelPtr m = pinnedCloth(48);
  const SolvePlan plan = planSolve(*m, kDefaultBlock);
  checkPlan(*m, plan, kDefaultBlock);
  ASSERT_TRUE(plan.hasParallelBatch());
  std::size_t shortShared = 0;
  for (const SolveBatch& b : plan.batches[static_cast<int>(ConstraintFamily::IsometricBending)])
    if (b.parallel && b.end - b.begin < 2 * kDefaultBlock) ++shortShared;
  EXPECT_GE(shortShared, 10u);
}

// pinThreadsToCores binds the calling thread to one core, after which omp_get_num_procs() counts
// one CPU: the projection took that for more threads than cores and stopped sharing the short
// colours, so `pliant bench`, which binds its threads, ran them on thread 0 while the other waited
// (found in session 36: 5 of contact-fold-64's 26 batches split). It counts the process's CPUs.
TEST(SolvePlan, ShortColoursStaySharedWithThreadsBoundToCores) {
  const int cores = availableCores();
  if (cores < 2) GTEST_SKIP() << "one CPU: two threads would share it";
  const int saved = threadCount();
  setThreadCount(2);
  ASSERT_GE(pinThreadsToCores(), 1);
  EXPECT_EQ(availableCores(), cores);
  detail::ConstraintProjection projection;
  projection.plan(*pinnedCloth(48), kDefaultBlock);
  projection.prepare(2);
  EXPECT_TRUE(projection.sharesShortBatches());
  projection.prepare(cores + 1);  // more threads than cores: a barrier would cost a time slice
  EXPECT_FALSE(projection.sharesShortBatches());
  setThreadCount(saved);
}

TEST(SolvePlan, TetBoxVolumesAndEdgesAreColoured) {
  ModelBuilder b;
  TetBoxDef def;
  def.cellsX = 8;
  def.cellsY = def.cellsZ = 4;
  addTetBox(b, def);
  const ModelPtr m = b.build();
  const SolvePlan plan = planSolve(*m, 4);
  EXPECT_GT(checkPlan(*m, plan, 4), m->totalConstraintCount() / 2);
  for (ConstraintFamily family : {ConstraintFamily::Distance, ConstraintFamily::TetVolume})
    EXPECT_LE(plan.batches[static_cast<int>(family)].size(), 64u) << familyName(family);
}

TEST(SolvePlan, ConstraintsInNoParticularOrderFormFewDependentBatches) {
  // A chain added link by link: every link shares a particle with the next, so nothing is
  // independent; the plan is one dependent batch, not one batch per link.
  ModelBuilder b;
  std::vector<ParticleIndex> p;
  for (int i = 0; i < 100; ++i) p.push_back(b.addParticle(Vec3(0.1 * i, 0.0, 0.0), 1.0));
  for (int i = 0; i + 1 < 100; ++i) b.addDistance(p[i], p[i + 1], ConstraintParameters{});
  const ModelPtr m = b.build();
  const SolvePlan plan = planSolve(*m, kDefaultBlock);
  checkPlan(*m, plan, kDefaultBlock);
  const auto& batches = plan.batches[static_cast<int>(ConstraintFamily::Distance)];
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_FALSE(batches[0].independent);
  // Families the plan never splits: one serial batch each.
  ModelBuilder g;
  const ParticleIndex q = g.addParticle(Vec3::Zero(), 1.0);
  g.addGeneric(
      [](std::span<const Vec3> x, std::span<Vec3> grad) {
        grad[0] = Vec3::UnitY();
        return x[0].y();
      },
      std::span<const ParticleIndex>(&q, 1), false, ConstraintParameters{});
  const ModelPtr gm = g.build();
  const SolvePlan generic = planSolve(*gm, 1);
  ASSERT_EQ(generic.batches[static_cast<int>(ConstraintFamily::Generic)].size(), 1u);
  EXPECT_FALSE(generic.batches[static_cast<int>(ConstraintFamily::Generic)][0].independent);
}

// The context of one XPBD substep of 1/600 s over `state`, for one family's kernels.
detail::SolveContext xpbdContext(const Model& m, State& state, ConstraintFamily family) {
  detail::SolveContext ctx;
  ctx.mode = SolverMode::Xpbd;
  ctx.h = 1.0 / 600.0;
  ctx.invH = 1.0 / ctx.h;
  ctx.invH2 = ctx.invH * ctx.invH;
  ctx.x = state.position.data();
  ctx.xPrev = state.previousPosition.data();
  ctx.w = m.inverseMass.data();
  ctx.lambda = state.lambda.data() + m.lambdaOffset[static_cast<int>(family)];
  return ctx;
}

// The model's rest state with every position and every start-of-substep position moved by up to
// `amplitude` (m) along each axis: damping reads both.
State movedState(const Model& m, unsigned seed, double amplitude) {
  State s = State::fromModel(m);
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> jitter(-amplitude, amplitude);
  for (Vec3& x : s.position) x += Vec3(jitter(random), jitter(random), jitter(random));
  for (Vec3& x : s.previousPosition) x += Vec3(jitter(random), jitter(random), jitter(random));
  return s;
}

// The family's scalar loop against `lanes` (a four-lane kernel) over the batch from four starts,
// which group the constraints differently into lanes: the same bits, and a change from `s`.
template <class Lanes>
void expectLanesGiveTheScalarBits(const Model& m, const State& s, ConstraintFamily family, const SolveBatch& batch,
                                  const Lanes& lanes) {
  auto context = [&](State& state) { return xpbdContext(m, state, family); };
  for (std::uint32_t start = batch.begin; start < batch.begin + 4; ++start) {
    State a = s, b = s;
    detail::familyKernels(family).project(m, context(a), start, batch.end);
    lanes(m, context(b), start, batch.end);
    EXPECT_EQ(a.hash(), b.hash()) << "start " << start;
    EXPECT_NE(a.hash(), s.hash());
  }
}

// One independent batch projected by the scalar and by the SIMD kernel (AVX2 quads where the CPU has
// AVX2) from the same perturbed state.
TEST(SolvePlan, SimdDistanceKernelGivesTheScalarBits) {
  // Mixed materials: damped constraints (scalar fallback inside the SIMD kernel), a hard one, and a
  // zero-length edge (skipped); PBD stiffnesses for the PBD runs. Set on a copy of the built model
  // (a built model is immutable); materials do not change the plan.
  const auto m = std::make_shared<Model>(*pinnedCloth(17));
  for (std::size_t c = 0; c < m->distances.size(); ++c) {
    m->distances[c].params.compliance = c % 7 == 0 ? 0.0 : 1e-6 * (1.0 + static_cast<double>(c % 5));
    m->distances[c].params.damping = c % 11 == 0 ? 3.0 : 0.0;
    m->distances[c].params.stiffness = c % 3 == 0 ? 1.0 : 0.3 + 0.1 * static_cast<double>(c % 6);
  }
  State s = State::fromModel(*m);
  std::mt19937 random(7);
  std::uniform_real_distribution<double> jitter(-0.02, 0.02);
  for (Vec3& x : s.position) x += Vec3(jitter(random), jitter(random), jitter(random));
  s.previousPosition = State::fromModel(*m).position;
  const SolvePlan plan = planSolve(*m, 4096);
  const auto& batches = plan.batches[static_cast<int>(ConstraintFamily::Distance)];
  ASSERT_FALSE(batches.empty());
  const SolveBatch batch = batches.front();
  ASSERT_TRUE(batch.independent);
  s.position[m->distances[batch.begin + 3].particles[1]] = s.position[m->distances[batch.begin + 3].particles[0]];
  // XPBD with two starting multipliers, PBD with k and with k' = 1 - (1 - k)^(1/3).
  struct Run {
    SolverMode mode;
    double lambda0;
    double stiffnessExponent;
  };
  for (const Run run : {Run{SolverMode::Xpbd, 0.0, 1.0}, Run{SolverMode::Xpbd, 0.25, 1.0},
                        Run{SolverMode::Pbd, 0.0, 1.0}, Run{SolverMode::Pbd, 0.0, 1.0 / 3.0}}) {
    SCOPED_TRACE(::testing::Message() << (run.mode == SolverMode::Xpbd ? "XPBD" : "PBD") << " lambda0 " << run.lambda0
                                      << " exponent " << run.stiffnessExponent);
    std::fill(s.lambda.begin(), s.lambda.end(), run.lambda0);
    State scalar = s, simd = s;
    auto context = [&](State& state) {
      detail::SolveContext ctx = xpbdContext(*m, state, ConstraintFamily::Distance);
      ctx.mode = run.mode;
      ctx.stiffnessExponent = run.stiffnessExponent;
      return ctx;
    };
    const auto& kernels = detail::familyKernels(ConstraintFamily::Distance);
    // Starts 0..3 group the constraints differently into SIMD lanes.
    for (std::uint32_t start = batch.begin; start < batch.begin + 4; ++start) {
      State a = scalar, b = simd;
      kernels.project(*m, context(a), start, batch.end);
      kernels.projectIndependent(*m, context(b), start, batch.end);
      EXPECT_EQ(a.hash(), b.hash()) << "start " << start;
      EXPECT_NE(a.hash(), s.hash());
      for (int lanes : {1, 4}) {
        State c = simd;
        detail::projectDistanceLanes(lanes, *m, context(c), start, batch.end);
        EXPECT_EQ(a.hash(), c.hash()) << lanes << " lanes, start " << start;
      }
    }
  }
}

// Damped cloth (every constraint damped, as a Vellum-like stretch is): four damped constraints per
// AVX2 instruction, against the scalar loop; some lanes undamped (compliance 0) or immovable (the
// pins) or of zero length take the scalar kernel inside the SIMD one, so every group kind meets.
TEST(SolvePlan, SimdDampedDistanceKernelGivesTheScalarBits) {
  const auto m = std::make_shared<Model>(*pinnedCloth(17));
  for (std::size_t c = 0; c < m->distances.size(); ++c) {
    m->distances[c].params.compliance = c % 29 == 0 ? 0.0 : 1e-7 * (1.0 + static_cast<double>(c % 5));
    m->distances[c].params.damping = 0.5 + static_cast<double>(c % 4);
  }
  State s = movedState(*m, 13, 0.02);
  const SolvePlan plan = planSolve(*m, 4096);
  const auto& batches = plan.batches[static_cast<int>(ConstraintFamily::Distance)];
  ASSERT_FALSE(batches.empty());
  const SolveBatch batch = batches.front();
  ASSERT_TRUE(batch.independent);
  ASSERT_GT(batch.end - batch.begin, 40u);
  s.position[m->distances[batch.begin + 9].particles[1]] = s.position[m->distances[batch.begin + 9].particles[0]];
  for (const double lambda0 : {0.0, -0.125}) {
    SCOPED_TRACE(::testing::Message() << "lambda0 " << lambda0);
    std::fill(s.lambda.begin(), s.lambda.end(), lambda0);
    expectLanesGiveTheScalarBits(*m, s, ConstraintFamily::Distance, batch,
                                 [](const Model& model, const detail::SolveContext& ctx, std::uint32_t begin,
                                    std::uint32_t end) { detail::projectDistanceLanes(4, model, ctx, begin, end); });
  }
}

// The same for isometric bending: scalar kernel in order, the independent kernel, and 1 or 4 lanes.
TEST(SolvePlan, SimdIsometricBendingKernelGivesTheScalarBits) {
  const auto m = std::make_shared<Model>(*pinnedCloth(17));  // a copy, given mixed materials
  for (std::size_t c = 0; c < m->isometricBendings.size(); ++c) {
    m->isometricBendings[c].params.compliance = c % 5 == 0 ? 0.0 : 0.01 * (1.0 + static_cast<double>(c % 3));
    m->isometricBendings[c].params.damping = c % 13 == 0 ? 0.5 : 0.0;
  }
  State s = State::fromModel(*m);
  std::mt19937 random(11);
  std::uniform_real_distribution<double> jitter(-0.03, 0.03);
  for (Vec3& x : s.position) x += Vec3(jitter(random), jitter(random), jitter(random));
  s.previousPosition = State::fromModel(*m).position;
  const int family = static_cast<int>(ConstraintFamily::IsometricBending);
  const SolveBatch batch = planSolve(*m, 4096).batches[family].front();
  ASSERT_TRUE(batch.independent);
  ASSERT_GT(batch.end - batch.begin, 20u);
  auto context = [&](State& state) { return xpbdContext(*m, state, ConstraintFamily::IsometricBending); };
  const auto& kernels = detail::familyKernels(ConstraintFamily::IsometricBending);
  for (std::uint32_t start = batch.begin; start < batch.begin + 4; ++start) {
    State a = s, b = s, c = s;
    kernels.project(*m, context(a), start, batch.end);
    kernels.projectIndependent(*m, context(b), start, batch.end);
    detail::projectIsometricBendingLanes(1, *m, context(c), start, batch.end);
    EXPECT_EQ(a.hash(), b.hash()) << "start " << start;
    EXPECT_EQ(a.hash(), c.hash()) << "start " << start;
    EXPECT_NE(a.hash(), s.hash());
  }
}

// Damped bending (every stencil damped but a few with compliance 0, so damped, undamped and mixed
// groups of four meet): the AVX2 lanes against the scalar loop, from a start that moved.
TEST(SolvePlan, SimdDampedIsometricBendingKernelGivesTheScalarBits) {
  const auto m = std::make_shared<Model>(*pinnedCloth(17));
  for (std::size_t c = 0; c < m->isometricBendings.size(); ++c) {
    m->isometricBendings[c].params.compliance = c % 23 == 0 ? 0.0 : 0.01 * (1.0 + static_cast<double>(c % 3));
    m->isometricBendings[c].params.damping = 0.25 + 0.5 * static_cast<double>(c % 3);
  }
  State s = movedState(*m, 17, 0.03);
  const int family = static_cast<int>(ConstraintFamily::IsometricBending);
  const SolveBatch batch = planSolve(*m, 4096).batches[family].front();
  ASSERT_TRUE(batch.independent);
  ASSERT_GT(batch.end - batch.begin, 40u);
  std::fill(s.lambda.begin(), s.lambda.end(), 0.0625);
  expectLanesGiveTheScalarBits(
      *m, s, ConstraintFamily::IsometricBending, batch,
      [](const Model& model, const detail::SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
        detail::projectIsometricBendingLanes(4, model, ctx, begin, end);
      });
}

// The first pass of a substep (SolveContext::multipliersFresh): the independent distance and
// bending kernels start every multiplier of the range from 0 without reading it, and write it, so
// the solver does not zero them first (FamilyKernels::independentStartsFresh). Against the scalar
// loop over multipliers zeroed by hand: the same bits, from multipliers left NaN (one read, or one
// left unwritten, changes the hash). Mixed materials send some groups of four, and the tail after
// the last group, to the scalar kernel inside the lanes; starts 0..3 group them differently.
TEST(SolvePlan, FreshMultipliersAreWrittenByTheIndependentKernelsNotRead) {
  const auto m = std::make_shared<Model>(*pinnedCloth(17));
  for (std::size_t c = 0; c < m->distances.size(); ++c) {
    m->distances[c].params.compliance = c % 7 == 0 ? 0.0 : 1e-6 * (1.0 + static_cast<double>(c % 5));
    m->distances[c].params.damping = c % 3 == 0 ? 0.0 : 0.5 + static_cast<double>(c % 4);
  }
  for (std::size_t c = 0; c < m->isometricBendings.size(); ++c) {
    m->isometricBendings[c].params.compliance = c % 5 == 0 ? 0.0 : 0.01 * (1.0 + static_cast<double>(c % 3));
    m->isometricBendings[c].params.damping = c % 4 == 0 ? 0.0 : 0.25;
  }
  ASSERT_TRUE(detail::familyKernels(ConstraintFamily::Distance).independentStartsFresh);
  ASSERT_TRUE(detail::familyKernels(ConstraintFamily::IsometricBending).independentStartsFresh);
  State s = movedState(*m, 19, 0.02);
  const SolvePlan plan = planSolve(*m, 4096);
  for (const ConstraintFamily family : {ConstraintFamily::Distance, ConstraintFamily::IsometricBending}) {
    const SolveBatch batch = plan.batches[static_cast<int>(family)].front();
    ASSERT_TRUE(batch.independent);
    ASSERT_GT(batch.end - batch.begin, 40u);
    // A zero-length edge: skipped, its multiplier still 0.
    if (family == ConstraintFamily::Distance)
      s.position[m->distances[batch.begin + 5].particles[1]] = s.position[m->distances[batch.begin + 5].particles[0]];
    std::fill(s.lambda.begin(), s.lambda.end(), std::numeric_limits<double>::quiet_NaN());
    const std::uint32_t offset = m->lambdaOffset[static_cast<int>(family)];
    const auto& kernels = detail::familyKernels(family);
    for (std::uint32_t start = batch.begin; start < batch.begin + 4; ++start) {
      for (const std::uint32_t end : {batch.end, batch.end - 1}) {
        SCOPED_TRACE(::testing::Message()
                     << "family " << static_cast<int>(family) << " start " << start << " end " << end);
        State zeroed = s;
        std::fill(zeroed.lambda.begin() + offset + start, zeroed.lambda.begin() + offset + end, 0.0);
        kernels.project(*m, xpbdContext(*m, zeroed, family), start, end);
        ASSERT_NE(zeroed.hash(), s.hash());
        for (int lanes : {0, 1, 4}) {
          State fresh = s;
          detail::SolveContext ctx = xpbdContext(*m, fresh, family);
          ctx.multipliersFresh = true;
          if (lanes == 0) kernels.projectIndependent(*m, ctx, start, end);
          else if (family == ConstraintFamily::Distance) detail::projectDistanceLanes(lanes, *m, ctx, start, end);
          else detail::projectIsometricBendingLanes(lanes, *m, ctx, start, end);
          EXPECT_EQ(zeroed.hash(), fresh.hash()) << lanes << " lanes (0: projectIndependent)";
        }
      }
    }
  }
}

// Tethers and limits: the independent kernel (slackness tested four at a time, taut undamped XPBD
// lanes projected in the lanes) against the scalar loop. Tethers of a pinned anchor, and limits
// between free pairs (both ends move), stretched so that slack and taut lanes mix in every group;
// damped limits take the scalar kernel inside the SIMD one.
TEST(SolvePlan, SimdMaxDistanceKernelGivesTheScalarBits) {
  ModelPtr built;
  {
    ModelBuilder b;
    ClothGridDef def;
    def.nodesX = def.nodesY = 17;
    const GeneratedObject cloth = addClothGrid(b, def);
    const ParticleIndex pins[2] = {cloth.firstParticle, cloth.firstParticle + 16};
    for (ParticleIndex p : pins) b.fixParticle(p);
    addTethers(b, {pins[0], pins[1]}, cloth.firstParticle, cloth.particleCount, ConstraintParameters{});
    std::mt19937 random(5);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int pair = 0; pair < 41; ++pair) {
      const Vec3 at(3.0 + pair, 0.0, 0.0);
      const ParticleIndex p = b.addParticle(at, 1.0 + unit(random));
      const ParticleIndex q = b.addParticle(at + Vec3(0.3 * unit(random), 0.5, 0.1), 0.5);
      ConstraintParameters params;
      params.compliance = pair % 3 == 0 ? 0.0 : 1e-5;
      params.damping = pair % 7 == 0 ? 2.0 : 0.0;
      params.stiffness = 0.7;
      b.addMaxDistance(p, q, params, pair % 2 == 0 ? 0.45 : 0.7);
    }
    built = b.build();
  }
  const Model& m = *built;
  State s = State::fromModel(m);
  std::mt19937 random(3);
  std::uniform_real_distribution<double> jitter(-0.03, 0.03);
  for (Vec3& x : s.position) x = 1.02 * x + Vec3(jitter(random), jitter(random), jitter(random));
  s.previousPosition = State::fromModel(m).position;
  const SolvePlan plan = planSolve(m, kDefaultBlock);
  const auto& batches = plan.batches[static_cast<int>(ConstraintFamily::MaxDistance)];
  ASSERT_GE(batches.size(), 2u);  // the anchors (the second one's batch may hold the free pairs too)
  const auto& kernels = detail::familyKernels(ConstraintFamily::MaxDistance);
  for (const SolverMode mode : {SolverMode::Xpbd, SolverMode::Pbd}) {
    // Starting multipliers: none; all holding (lambda > 0, so slack lanes are projected too and
    // reach the clamp max(dlambda, -lambda) when they give everything back); holding and not mixed
    // in every group of four (lambda0 NaN below); and a negative one (never left by the solver),
    // which reaches the clamp in taut lanes.
    for (const double lambda0 : {0.0, 0.3, std::numeric_limits<double>::quiet_NaN(), -0.3}) {
      for (std::size_t c = 0; c < s.lambda.size(); ++c)
        s.lambda[c] = std::isnan(lambda0) ? (c % 3 == 1 ? 0.3 : c % 3 == 2 ? 1e-4 : 0.0) : lambda0;
      for (const SolveBatch& batch : batches) {
        ASSERT_TRUE(batch.independent);
        for (std::uint32_t start = batch.begin; start < batch.begin + 4; ++start) {
          SCOPED_TRACE(::testing::Message() << (mode == SolverMode::Xpbd ? "XPBD" : "PBD") << " lambda0 " << lambda0
                                            << " batch " << batch.begin << " start " << start);
          State a = s, b = s;
          auto context = [&](State& state, bool fresh) {
            detail::SolveContext ctx = xpbdContext(m, state, ConstraintFamily::MaxDistance);
            ctx.mode = mode;
            ctx.multipliersFresh = fresh;
            return ctx;
          };
          kernels.project(m, context(a, false), start, batch.end);
          kernels.projectIndependent(m, context(b, false), start, batch.end);
          EXPECT_EQ(a.hash(), b.hash());
          EXPECT_NE(a.hash(), s.hash());
          if (lambda0 == 0.0) {
            // A first pass (all lambda 0) may skip looking at lambda: the same bits either way.
            State c = s, d = s;
            kernels.project(m, context(c, true), start, batch.end);
            kernels.projectIndependent(m, context(d, true), start, batch.end);
            EXPECT_EQ(a.hash(), c.hash());
            EXPECT_EQ(a.hash(), d.hash());
          }
        }
      }
    }
  }
}

// Neo-Hookean tets: the independent kernel (four coupled tets per AVX2 instruction) and
// the scalar kernel in order, from random deformations of random tets, give the same positions and
// multipliers bit for bit. Each tet has its own particles (one independent batch). Mixed in, one
// lane in a few groups: inverted, flat and nearly flat tets, tets with a pinned vertex and damped
// tets (solved in the lanes, damped ones beside undamped ones), and tets the scalar kernel solves
// another way (collapsed to a point, sequential by choice, hard constraints at rest), which send
// their group to the scalar kernel.
TEST(SolvePlan, SimdNeoHookeanKernelGivesTheScalarBits) {
  constexpr int kTets = 203;  // not a multiple of 4: a scalar tail
  std::mt19937 random(23);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  auto jitter = [&](double size) { return Vec3(size * unit(random), size * unit(random), size * unit(random)); };
  ModelPtr built;
  {
    ModelBuilder b;
    for (int t = 0; t < kTets; ++t) {
      const Vec3 at(0.5 * t, 0.0, 0.0);
      const double size = 0.05 * std::exp(unit(random));
      const Vec3 corners[4] = {Vec3::Zero(), Vec3(size, 0.0, 0.0), Vec3(0.0, size, 0.0), Vec3(0.0, 0.0, size)};
      ParticleIndex p[4];
      for (int k = 0; k < 4; ++k)
        p[k] = b.addParticle(at + corners[k] + jitter(0.2 * size), 0.01 * (2.0 + unit(random)));
      if (t % 29 == 5) b.fixParticle(p[t % 4]);
      NeoHookeanMaterial material;
      material.youngsModulus = 1e5 * std::exp(3.0 * unit(random));
      material.poissonRatio = 0.2 + 0.29 * (0.5 + 0.5 * unit(random));
      material.damping = t % 7 == 2 ? 1e-3 : 0.0;
      material.coupled = t % 37 != 11;
      b.addNeoHookeanTet(p[0], p[1], p[2], p[3], material);
    }
    built = b.build();
  }
  const auto m = std::make_shared<Model>(*built);  // a copy, given hard constraints
  for (std::size_t t = 0; t < m->neoHookeans.size(); ++t)
    if (t % 41 == 13) m->neoHookeans[t].deviatoric.compliance = m->neoHookeans[t].hydrostatic.compliance = 0.0;
  const SolveBatch batch = planSolve(*m, kDefaultBlock).batches[static_cast<int>(ConstraintFamily::NeoHookean)].front();
  ASSERT_TRUE(batch.independent);
  ASSERT_EQ(batch.end, static_cast<std::uint32_t>(kTets));
  State s = State::fromModel(*m);
  s.previousPosition = s.position;
  for (std::size_t t = 0; t < m->neoHookeans.size(); ++t) {
    const ParticleIndex* p = m->neoHookeans[t].particles;
    Vec3* x = s.position.data();
    const double size = (x[p[1]] - x[p[0]]).norm();
    for (int k = 0; k < 4; ++k) x[p[k]] += jitter(0.3 * size);
    if (t % 17 == 3) std::swap(x[p[1]], x[p[2]]);                                // inverted
    if (t % 19 == 6) x[p[3]] = 0.4 * x[p[0]] + 0.35 * x[p[1]] + 0.25 * x[p[2]];  // flat
    if (t % 23 == 9) x[p[3]] = 0.5 * (x[p[1]] + x[p[2]]) + jitter(1e-9 * size);  // nearly flat
    if (t % 43 == 21) x[p[1]] = x[p[2]] = x[p[3]] = x[p[0]];                     // collapsed
    if (t == 13) {  // a hard one at rest: parallel gradients, a (nearly) singular 2x2 system
      for (int k = 0; k < 4; ++k) x[p[k]] = m->initialPosition[p[k]];
    }
  }
  const auto& kernels = detail::familyKernels(ConstraintFamily::NeoHookean);
  auto context = [&](State& state) {
    detail::SolveContext ctx = xpbdContext(*m, state, ConstraintFamily::NeoHookean);
    ctx.multipliersFresh = true;
    return ctx;
  };
  auto sameBits = [](const auto& a, const auto& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
  };
  for (const double lambda0 : {0.0, -2e-4}) {
    std::fill(s.lambda.begin(), s.lambda.end(), lambda0);
    // Starts 0..3 group the tets differently into SIMD lanes.
    for (std::uint32_t start = 0; start < 4; ++start) {
      SCOPED_TRACE(::testing::Message() << "lambda0 " << lambda0 << " start " << start);
      State a = s, b = s, c = s;
      kernels.project(*m, context(a), start, batch.end);
      kernels.projectIndependent(*m, context(b), start, batch.end);
      detail::projectNeoHookeanLanes(4, *m, context(c), start, batch.end);
      EXPECT_TRUE(sameBits(a.position, b.position));
      EXPECT_TRUE(sameBits(a.lambda, b.lambda));
      EXPECT_TRUE(sameBits(a.position, c.position));
      EXPECT_TRUE(sameBits(a.lambda, c.lambda));
      EXPECT_FALSE(sameBits(a.position, s.position));
    }
  }
}

// The wide kernels are really compiled in: an x86-64 CPU with AVX2 projects four constraints at once
// (a missing header or macro would fall back to narrower kernels silently, with the same bits).
TEST(SolvePlan, IndependentKernelsUseTheWidestLanesTheCpuHas) {
#if defined(__x86_64__) && defined(__GNUC__)
  const int expected = __builtin_cpu_supports("avx2") ? 4 : 1;
  EXPECT_EQ(detail::distanceKernelLanes(), expected);
  EXPECT_EQ(detail::isometricBendingKernelLanes(), expected);
  EXPECT_EQ(detail::neoHookeanKernelLanes(), expected);
#else
  EXPECT_GE(detail::distanceKernelLanes(), 1);
  EXPECT_GE(detail::isometricBendingKernelLanes(), 1);
  EXPECT_GE(detail::neoHookeanKernelLanes(), 1);
#endif
}

}  // namespace
}  // namespace pliant
