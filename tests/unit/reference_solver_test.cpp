// Unit tests of the reference implicit solver (src/reference_solver.cpp): Newton on Macklin et al.
// 2016, eqs. (8)-(9). Its answers are checked against closed forms (V6: backward Euler for a linear
// spring) and against the equations themselves, re-evaluated here with the families' evaluators.
#include "pliant/reference/reference_solver.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "constraints/families.h"
#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/solver.h"

namespace pliant {
namespace {

// Largest residuals of eqs. (8) and (9) at a reference result, recomputed independently of the
// solver: max_i |w_i g_i| (m) and max_j |C_j + alpha~_j lambda_j| ([C]); satisfied unilateral
// constraints with lambda = 0 count as zero.
struct EquationResidual {
  double g = 0.0;
  double h = 0.0;
};

EquationResidual equationResidual(const Model& model, const State& start, const ReferenceStep& r, const Vec3& gravity) {
  const double h = r.timeStep;
  std::vector<Vec3> g(model.particleCount(), Vec3::Zero());
  for (std::size_t i = 0; i < model.particleCount(); ++i) {
    const double w = model.inverseMass[i];
    if (w == 0.0) continue;
    const Vec3 predicted = start.position[i] + h * start.velocity[i] + h * h * (gravity + w * start.externalForce[i]);
    g[i] = (r.position[i] - predicted) / w;
  }
  EquationResidual out;
  std::vector<ParticleIndex> particles;
  std::vector<Vec3> gradient;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const auto family = static_cast<ConstraintFamily>(f);
    for (std::uint32_t c = 0; c < model.constraintCount(family); ++c) {
      const ConstraintRef ref{family, c};
      const double lambda = r.lambda[model.lambdaIndex(ref)];
      const double C = detail::familyKernels(family).evaluate(model, r.position.data(), r.attachmentTarget.data(), c,
                                                              particles, gradient);
      for (std::size_t k = 0; k < particles.size(); ++k) g[particles[k]] -= lambda * gradient[k];
      const double alphaTilde = detail::constraintParameters(model, ref).compliance / (h * h);
      const bool slack = detail::isUnilateral(model, ref) && lambda == 0.0 && C >= -1e-12;
      if (!slack) out.h = std::max(out.h, std::abs(C + alphaTilde * lambda));
    }
  }
  for (std::size_t i = 0; i < model.particleCount(); ++i)
    if (model.inverseMass[i] > 0.0) out.g = std::max(out.g, (model.inverseMass[i] * g[i]).norm());
  return out;
}

// One particle on a line at x = L + u from a fixed anchor at the origin: XPBD is backward Euler
// for this linear spring (docs/validation.md V6), and so must the reference be, in one Newton step.
TEST(V6_ReferenceSolver, LinearSpringIsBackwardEuler) {
  const double m = 0.5, L = 1.0, alpha = 1e-3, h = 0.01, u = 0.05, v = 0.3;
  const double K = 1.0 / alpha;
  for (int variant = 0; variant < 2; ++variant) {
    ModelBuilder b;
    ConstraintParameters spring;
    spring.compliance = alpha;
    const ParticleIndex p = [&] {
      if (variant == 0) {  // distance constraint to a fixed particle
        const ParticleIndex anchor = b.addParticle(Vec3::Zero(), 0.0);
        const ParticleIndex q = b.addParticle(Vec3(L + u, 0, 0), m, Vec3(v, 0, 0));
        b.addDistance(anchor, q, spring, L);
        return q;
      }
      const ParticleIndex q = b.addParticle(Vec3(L + u, 0, 0), m, Vec3(v, 0, 0));  // attachment
      b.addAttachment(q, Vec3::Zero(), spring, L);
      return q;
    }();
    const ModelPtr model = b.build();
    State state = State::fromModel(*model);
    ReferenceSettings settings;
    settings.timeStep = h;
    settings.gravity = Vec3::Zero();

    // Three steps, each against the closed form from the previous one.
    double uk = u, vk = v;
    for (int step = 0; step < 3; ++step) {
      const ReferenceStep r = solveReferenceStep(*model, state, settings);
      const double vNext = (m * vk - h * K * uk) / (m + h * h * K);
      const double uNext = uk + h * vNext;
      ASSERT_TRUE(r.converged) << r.message;
      EXPECT_LE(r.iterations, 2);  // linear along the line: Newton is exact in one step
      EXPECT_NEAR(r.position[p].x(), L + uNext, 1e-12);
      EXPECT_NEAR(r.position[p].y(), 0.0, 1e-15);
      EXPECT_NEAR(r.velocity[p].x(), vNext, 1e-10 * std::abs(vNext) + 1e-13);
      // h = C + alpha~ lambda = 0 gives lambda = -u' h^2 / alpha (kg m); stretched: negative.
      EXPECT_NEAR(r.lambda[0], -uNext * h * h / alpha, 1e-12 * std::abs(uNext * h * h / alpha));
      // And XPBD with one iteration lands on the same point (V6).
      SolverSettings xpbd;
      xpbd.timeStep = h;
      xpbd.gravity = Vec3::Zero();
      State viaXpbd = state;
      ASSERT_TRUE(Solver(model, xpbd).step(viaXpbd).ok());
      const ReferenceDistance d = distanceToReference(viaXpbd, r);
      EXPECT_LT(d.maxPosition, 1e-13);
      EXPECT_LT(d.maxLambda, 1e-12 * std::abs(r.lambda[0]));
      applyReferenceStep(r, state);
      uk = uNext;
      vk = vNext;
    }
    EXPECT_EQ(state.stepCount, 3u);
    EXPECT_NEAR(state.time, 3 * h, 1e-15);
  }
}

// A zero-rest attachment is a zero-length spring, solved in vector form: backward Euler in 3D,
// m (x' - x~) = -K h^2 (x' - t), and lambda = -|x' - t| / alpha~.
TEST(V6_ReferenceSolver, ZeroRestAttachmentIsBackwardEulerIn3D) {
  const double m = 0.2, alpha = 2e-3, h = 1.0 / 60.0;
  const Vec3 target(0.1, 1.0, -0.2), x0(0.3, 0.8, 0.1), v0(0.5, -1.0, 0.25), gravity(0, -9.81, 0);
  ModelBuilder b;
  const ParticleIndex p = b.addParticle(x0, m, v0);
  ConstraintParameters spring;
  spring.compliance = alpha;
  b.addAttachment(p, target, spring, 0.0);
  const ModelPtr model = b.build();
  const State state = State::fromModel(*model);
  ReferenceSettings settings;
  settings.timeStep = h;
  settings.gravity = gravity;
  const ReferenceStep r = solveReferenceStep(*model, state, settings);
  ASSERT_TRUE(r.converged) << r.message;
  const Vec3 predicted = x0 + h * v0 + h * h * gravity;
  const double kh2 = h * h / alpha;  // K h^2 = 1 / alpha~
  const Vec3 expected = (m * predicted + kh2 * target) / (m + kh2);
  EXPECT_LT((r.position[p] - expected).norm(), 1e-13);
  EXPECT_NEAR(r.lambda[0], -(expected - target).norm() * kh2, 1e-12);
  // The hard pin (alpha = 0) lands on the target with lambda = -m |x~ - t|, XPBD's first update.
  ModelBuilder hard;
  const ParticleIndex q = hard.addParticle(x0, m, v0);
  hard.addAttachment(q, target, ConstraintParameters{}, 0.0);
  const ModelPtr pinned = hard.build();
  const ReferenceStep rp = solveReferenceStep(*pinned, State::fromModel(*pinned), settings);
  ASSERT_TRUE(rp.converged) << rp.message;
  EXPECT_LT((rp.position[q] - target).norm(), 1e-14);
  EXPECT_NEAR(rp.lambda[0], -m * (predicted - target).norm(), 1e-14);
}

// A hard pendulum chain, released horizontally with sideways velocities and a large step: a
// strongly nonlinear step. Newton with the constraint Hessians converges quadratically.
TEST(ReferenceSolver, PendulumChainConvergesQuadratically) {
  for (double compliance : {0.0, 1e-4}) {
    ModelBuilder b;
    ChainDef def;
    def.particles = 6;
    def.start = Vec3::Zero();
    def.end = Vec3(0.5, 0, 0);
    def.particleMass = 0.1;
    def.stretch.compliance = compliance;
    addChain(b, def);
    const ModelPtr model = b.build();
    State state = State::fromModel(*model);
    for (std::size_t i = 1; i < state.velocity.size(); ++i) {
      const auto s = static_cast<double>(i);
      state.velocity[i] = Vec3(0.3 * std::sin(s), 0.5 * std::cos(2.0 * s), 0.4);
    }
    ReferenceSettings settings;
    settings.timeStep = 1.0 / 30.0;
    const ReferenceStep r = solveReferenceStep(*model, state, settings);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_LT(r.residualNorm, 1e-10);
    EXPECT_LE(r.iterations, 7);
    ASSERT_EQ(r.residualHistory.size(), static_cast<std::size_t>(r.iterations) + 1);
    // Quadratic: once in the basin (residual < 1e-3 m), r_{k+1} <= c r_k^2 with c = 100 /m, until
    // round-off (1e-13 m) takes over.
    int quadraticSteps = 0;
    for (std::size_t k = 0; k + 1 < r.residualHistory.size(); ++k) {
      const double now = r.residualHistory[k], next = r.residualHistory[k + 1];
      EXPECT_LT(next, now);
      if (now < 1e-3 && next > 1e-13) {
        EXPECT_LE(next, 100.0 * now * now) << "iteration " << k;
        ++quadraticSteps;
      }
    }
    EXPECT_GE(quadraticSteps, 1);
    const EquationResidual e = equationResidual(*model, state, r, settings.gravity);
    EXPECT_LT(e.g, 1e-10);
    EXPECT_LT(e.h, 1e-10);
    // Hard links keep their rest length (0.1 m) exactly.
    for (std::size_t j = 0; j < r.lambda.size(); ++j) {
      const double length = (r.position[j + 1] - r.position[j]).norm();
      if (compliance == 0.0) {
        EXPECT_NEAR(length, 0.1, 1e-11);
      }
    }
  }
}

// Every constraint family at once, with a kinematic particle and a moving target: the result
// satisfies eqs. (8)-(9) as re-evaluated here, in a handful of Newton iterations.
TEST(ReferenceSolver, SatisfiesEquationsForEveryFamily) {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = 3;
  cloth.nodesY = 3;
  cloth.sizeX = 0.2;
  cloth.sizeY = 0.2;
  cloth.totalMass = 0.09;
  cloth.stretch.compliance = 1e-4;
  cloth.bending = BendingModel::Dihedral;
  cloth.bendingParams.compliance = 0.5;
  const GeneratedObject sheet = addClothGrid(b, cloth);
  std::vector<std::array<ParticleIndex, 3>> sheetTriangles = sheet.triangles;
  addBendingConstraints(b, sheetTriangles, BendingModel::Isometric, ConstraintParameters{2.0, 0.0, 1.0});
  b.addKinematic(sheet.firstParticle, [](double t) { return Vec3(0.05 * std::sin(3.0 * t), 0.02 * t, 0.0); });
  ConstraintParameters soft;
  soft.compliance = 1e-3;
  b.addMovingAttachment(
      sheet.firstParticle + 2, [](double t) { return Vec3(0.2 + 0.1 * t, 0.05, 0.0); }, soft, 0.0);
  b.addAttachment(sheet.firstParticle + 8, Vec3(0.2, 0.1, 0.25), soft, 0.05);

  TetBoxDef box;
  box.cellsX = 1;
  box.cellsY = 1;
  box.cellsZ = 1;
  box.origin = Vec3(0.5, 0.0, 0.0);
  box.size = Vec3(0.1, 0.1, 0.1);
  box.volume.compliance = 1e-6;
  box.edges.compliance = 1e-4;
  const GeneratedObject block = addTetBox(b, box);
  b.addGlobalVolume(block.triangles, 1.1, ConstraintParameters{1e-5, 0.0, 1.0});
  // A generic equality: keep one corner's height 1 cm below where it starts, C = y - y0 + 0.01 (m).
  const ParticleIndex corner = block.firstParticle + 7;
  const double y0 = b.position(corner).y();
  const std::array<ParticleIndex, 1> cornerList{corner};
  b.addGeneric(
      [y0](std::span<const Vec3> x, std::span<Vec3> grad) {
        grad[0] = Vec3(0, 1, 0);
        return x[0].y() - y0 + 0.01;
      },
      cornerList, false, ConstraintParameters{1e-4, 0.0, 1.0});
  const ModelPtr model = b.build();
  ASSERT_GT(model->dihedralBendings.size(), 0u);
  ASSERT_GT(model->isometricBendings.size(), 0u);
  ASSERT_GT(model->tetVolumes.size(), 0u);

  State state = State::fromModel(*model);
  for (std::size_t i = 0; i < state.velocity.size(); ++i) {
    const auto s = static_cast<double>(i);
    if (model->inverseMass[i] > 0.0) state.velocity[i] = Vec3(0.2 * std::sin(2.0 * s), 0.1 * std::cos(s), 0.3);
  }
  state.externalForce[sheet.firstParticle + 4] = Vec3(0.0, 0.0, 0.05);
  ReferenceSettings settings;
  settings.timeStep = 1.0 / 60.0;
  const ReferenceStep r = solveReferenceStep(*model, state, settings);
  ASSERT_TRUE(r.converged) << r.message;
  EXPECT_LE(r.iterations, 10);
  const EquationResidual e = equationResidual(*model, state, r, settings.gravity);
  EXPECT_LT(e.g, 1e-10);
  EXPECT_LT(e.h, 1e-10);
  // The kinematic particle and the moving target are at t + h.
  const double t = settings.timeStep;
  EXPECT_EQ(r.position[sheet.firstParticle], Vec3(0.05 * std::sin(3.0 * t), 0.02 * t, 0.0));
  EXPECT_EQ(r.attachmentTarget[0], Vec3(0.2 + 0.1 * t, 0.05, 0.0));
  EXPECT_LT(
      (r.velocity[sheet.firstParticle] - (r.position[sheet.firstParticle] - state.position[sheet.firstParticle]) / t)
          .norm(),
      1e-12);
}

// Unilateral constraints: a slack max-distance does nothing; a taut hard one holds its length
// exactly with a pushing (>= 0) multiplier, which XPBD also reaches along a line.
TEST(ReferenceSolver, MaxDistanceActiveSet) {
  const double h = 0.01, m = 0.3, maxLength = 0.5;
  for (double speed : {1.0, 40.0}) {  // slack after the step, or pulled past maxLength
    ModelBuilder b;
    const ParticleIndex anchor = b.addParticle(Vec3::Zero(), 0.0);
    const ParticleIndex p = b.addParticle(Vec3(0.45, 0, 0), m, Vec3(speed, 0, 0));
    b.addMaxDistance(anchor, p, ConstraintParameters{}, maxLength);
    const ModelPtr model = b.build();
    const State state = State::fromModel(*model);
    ReferenceSettings settings;
    settings.timeStep = h;
    settings.gravity = Vec3::Zero();
    const ReferenceStep r = solveReferenceStep(*model, state, settings);
    ASSERT_TRUE(r.converged) << r.message;
    const double free = 0.45 + h * speed;
    if (free <= maxLength) {
      EXPECT_DOUBLE_EQ(r.position[p].x(), free);
      EXPECT_EQ(r.lambda[0], 0.0);
    } else {
      EXPECT_NEAR(r.position[p].x(), maxLength, 1e-14);
      // lambda = m (x~ - L_max) from g = 0 with gradC = -n: positive (pushes back inside).
      EXPECT_NEAR(r.lambda[0], m * (free - maxLength), 1e-14);
      SolverSettings xpbd;
      xpbd.timeStep = h;
      xpbd.gravity = Vec3::Zero();
      State viaXpbd = state;
      ASSERT_TRUE(Solver(model, xpbd).step(viaXpbd).ok());
      EXPECT_LT(distanceToReference(viaXpbd, r).maxPosition, 1e-14);
      EXPECT_LT(distanceToReference(viaXpbd, r).maxLambda, 1e-14);
    }
  }
}

// A floor C = y >= 0 (generic inequality) is violated at the prediction, but a stiff zero-length
// spring pulls the particle well above it: the first round finds a pulling multiplier, the
// second drops the floor. The answer is the spring's backward-Euler step alone.
TEST(ReferenceSolver, InequalityLeavesTheActiveSetWhenItWouldPull) {
  const double h = 0.01, m = 0.1, alpha = 1e-4;
  ModelBuilder b;
  const ParticleIndex p = b.addParticle(Vec3(0, 0.001, 0), m, Vec3(0, -0.3, 0));
  const std::array<ParticleIndex, 1> list{p};
  b.addGeneric(
      [](std::span<const Vec3> x, std::span<Vec3> grad) {
        grad[0] = Vec3(0, 1, 0);
        return x[0].y();
      },
      list, true, ConstraintParameters{});
  ConstraintParameters spring;
  spring.compliance = alpha;
  b.addAttachment(p, Vec3(0, 1, 0), spring, 0.0);
  const ModelPtr model = b.build();
  const State state = State::fromModel(*model);
  ReferenceSettings settings;
  settings.timeStep = h;
  const ReferenceStep r = solveReferenceStep(*model, state, settings);
  ASSERT_TRUE(r.converged) << r.message;
  const double predicted = 0.001 - 0.3 * h - 9.81 * h * h;
  ASSERT_LT(predicted, 0.0);  // the floor starts active
  const double kh2 = h * h / alpha;
  EXPECT_NEAR(r.position[p].y(), (m * predicted + kh2 * 1.0) / (m + kh2), 1e-13);
  EXPECT_EQ(r.lambda[model->lambdaIndex({ConstraintFamily::Generic, 0})], 0.0);
  EXPECT_EQ(r.activeSetRounds, 2);
}

// Two identical hard links make lambda non-unique (a singular Newton matrix); the shifted solve
// still finds the unique positions, and the two multipliers share the one link's force.
TEST(ReferenceSolver, RedundantHardConstraints) {
  auto build = [](int copies) {
    ModelBuilder b;
    const ParticleIndex anchor = b.addParticle(Vec3::Zero(), 0.0);
    const ParticleIndex p = b.addParticle(Vec3(0.3, 0.0, 0.0), 0.1, Vec3(0.0, 0.5, 0.2));
    for (int c = 0; c < copies; ++c) b.addDistance(anchor, p, ConstraintParameters{});
    return b.build();
  };
  const ModelPtr single = build(1), doubled = build(2);
  ReferenceSettings settings;
  settings.timeStep = 1.0 / 30.0;
  const ReferenceStep one = solveReferenceStep(*single, State::fromModel(*single), settings);
  const ReferenceStep two = solveReferenceStep(*doubled, State::fromModel(*doubled), settings);
  ASSERT_TRUE(one.converged) << one.message;
  ASSERT_TRUE(two.converged) << two.message;
  EXPECT_LT((one.position[1] - two.position[1]).norm(), 1e-11);
  EXPECT_NEAR(two.lambda[0] + two.lambda[1], one.lambda[0], 1e-11);
  EXPECT_NEAR(two.position[1].norm(), 0.3, 1e-11);
}

TEST(ReferenceSolver, DegenerateInputDoesNotCrash) {
  ReferenceSettings settings;
  {  // empty model
    const ModelPtr empty = ModelBuilder().build();
    const ReferenceStep r = solveReferenceStep(*empty, State::fromModel(*empty), settings);
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.iterations, 0);
    EXPECT_TRUE(r.position.empty());
  }
  {  // constraints on fixed particles only: lambda = -C / alpha~ (0 when hard), nothing moves
    ModelBuilder b;
    const ParticleIndex a = b.addParticle(Vec3::Zero(), 0.0);
    const ParticleIndex c = b.addParticle(Vec3(1.0, 0, 0), 0.0);
    b.addDistance(a, c, ConstraintParameters{}, 0.5);
    b.addDistance(a, c, ConstraintParameters{1e-3, 0.0, 1.0}, 0.5);
    const ModelPtr model = b.build();
    const ReferenceStep r = solveReferenceStep(*model, State::fromModel(*model), settings);
    EXPECT_TRUE(r.converged) << r.message;
    EXPECT_EQ(r.lambda[0], 0.0);
    EXPECT_NEAR(r.lambda[1], -0.5 * settings.timeStep * settings.timeStep / 1e-3, 1e-15);
    EXPECT_EQ(r.position[c], Vec3(1.0, 0, 0));
  }
  {  // coincident particles on a hard link of nonzero length: no direction at all
    ModelBuilder b;
    const ParticleIndex a = b.addParticle(Vec3::Zero(), 1.0);
    const ParticleIndex c = b.addParticle(Vec3::Zero(), 1.0);
    b.addDistance(a, c, ConstraintParameters{}, 0.1);
    const ModelPtr model = b.build();
    ReferenceSettings quick = settings;
    quick.maxIterations = 5;
    const ReferenceStep r = solveReferenceStep(*model, State::fromModel(*model), quick);
    EXPECT_FALSE(r.converged);
    EXPECT_FALSE(r.message.empty());
    for (const Vec3& x : r.position) EXPECT_TRUE(x.allFinite());
  }
  {  // a NaN velocity is reported, not thrown
    ModelBuilder b;
    const ParticleIndex a = b.addParticle(Vec3::Zero(), 0.0);
    const ParticleIndex c = b.addParticle(Vec3(0.1, 0, 0), 1.0);
    b.addDistance(a, c, ConstraintParameters{});
    const ModelPtr model = b.build();
    State state = State::fromModel(*model);
    state.velocity[c].x() = std::numeric_limits<double>::quiet_NaN();
    const ReferenceStep r = solveReferenceStep(*model, state, settings);
    EXPECT_FALSE(r.converged);
    EXPECT_NE(r.message.find("non-finite"), std::string::npos) << r.message;
    // Too few iterations for a nonlinear step: not converged, with a reason.
    ModelBuilder swing;
    ChainDef def;
    def.particles = 4;
    addChain(swing, def);
    const ModelPtr chain = swing.build();
    ReferenceSettings one = settings;
    one.maxIterations = 1;
    one.timeStep = 0.1;
    const ReferenceStep r1 = solveReferenceStep(*chain, State::fromModel(*chain), one);
    EXPECT_FALSE(r1.converged);
    EXPECT_EQ(r1.iterations, 1);
    EXPECT_FALSE(r1.message.empty());
  }
  {  // wrong state or settings: pliant::Error at the API edge
    ModelBuilder b;
    b.addParticle(Vec3::Zero(), 1.0);
    const ModelPtr model = b.build();
    State state = State::fromModel(*model);
    state.position.push_back(Vec3::Zero());
    EXPECT_THROW(solveReferenceStep(*model, state, settings), Error);
    ReferenceSettings bad = settings;
    bad.timeStep = 0.0;
    EXPECT_THROW(solveReferenceStep(*model, State::fromModel(*model), bad), Error);
    bad = settings;
    bad.tolerance = -1.0;
    EXPECT_THROW(bad.validate(), Error);
    bad = settings;
    bad.maxIterations = 0;
    EXPECT_THROW(bad.validate(), Error);
    const ReferenceStep r = solveReferenceStep(*model, State::fromModel(*model), settings);
    EXPECT_THROW(distanceToReference(state, r), Error);
    EXPECT_THROW(applyReferenceStep(r, state), Error);
  }
}

// XPBD damping (eq. 26) is not part of eqs. (8)-(9): the reference ignores it.
TEST(ReferenceSolver, IgnoresDamping) {
  auto build = [](double damping) {
    ModelBuilder b;
    ChainDef def;
    def.particles = 4;
    def.stretch.compliance = 1e-3;
    def.stretch.damping = damping;
    def.dampingFactor = 0.5;
    addChain(b, def);
    return b.build();
  };
  const ModelPtr plain = build(0.0), damped = build(5.0);
  ReferenceSettings settings;
  const ReferenceStep a = solveReferenceStep(*plain, State::fromModel(*plain), settings);
  const ReferenceStep c = solveReferenceStep(*damped, State::fromModel(*damped), settings);
  ASSERT_TRUE(a.converged);
  for (std::size_t i = 0; i < a.position.size(); ++i) EXPECT_EQ(a.position[i], c.position[i]);
}

TEST(ReferenceSolver, SettingsFromSolverUseTheSubstep) {
  SolverSettings solver = SolverSettings::smallSteps(8, 1.0 / 60.0);
  solver.gravity = Vec3(0.0, 0.0, -3.0);
  const ReferenceSettings r = ReferenceSettings::fromSolver(solver);
  EXPECT_DOUBLE_EQ(r.timeStep, 1.0 / 480.0);
  EXPECT_EQ(r.gravity, Vec3(0.0, 0.0, -3.0));
}

TEST(ReferenceSolver, DistanceToReferenceMeasuresPositionsAndMultipliers) {
  ModelBuilder b;
  ChainDef def;
  def.particles = 5;
  def.stretch.compliance = 1e-4;
  addChain(b, def);
  const ModelPtr model = b.build();
  const State start = State::fromModel(*model);
  const ReferenceStep r = solveReferenceStep(*model, start, ReferenceSettings{});
  ASSERT_TRUE(r.converged);
  State state = start;
  applyReferenceStep(r, state);
  EXPECT_EQ(state.previousPosition, start.position);
  ReferenceDistance d = distanceToReference(state, r);
  EXPECT_EQ(d.maxPosition, 0.0);
  EXPECT_EQ(d.rmsPosition, 0.0);
  EXPECT_EQ(d.maxLambda, 0.0);
  state.position[2] += Vec3(3e-3, 4e-3, 0.0);  // 5 mm on one of 5 particles
  state.lambda[1] += 0.25;
  d = distanceToReference(state, r);
  EXPECT_NEAR(d.maxPosition, 5e-3, 1e-15);
  EXPECT_NEAR(d.rmsPosition, 5e-3 / std::sqrt(5.0), 1e-15);
  EXPECT_NEAR(d.maxLambda, 0.25, 1e-15);
  EXPECT_EQ(d.maxVelocity, 0.0);
}

}  // namespace
}  // namespace pliant
