// Scenario tests for docs/validation.md cases V1 to V6: closed-form results of the time integrator and of
// the PBD / XPBD projections (Macklin et al. 2016, "XPBD"; Mueller et al. 2007, "PBD").
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <vector>

#include "pliant/pliant.h"
#include "scenario/scenario_util.h"

namespace pliant {
namespace {

using scenario::kG;
using scenario::relativeError;

// ---------------------------------------------------------------------------------------------
// V1 Free fall: symplectic Euler from rest gives y(t) = y0 - g t^2/2 - g h t/2, v(t) = -g t, exactly.

// The velocity is derived from positions, v = (x - x^n)/h, which rounds at eps |x| / h per substep;
// over a fixed time T that sums to a relative error of about eps |x| T / (h^2 |v|) (measured: 1e-12 at
// h = 1/240 s, 7e-11 at 1/960 s, 4e-10 at 1/2400 s over 1 s from y0 = 10 m). So the 1e-10 check runs
// for h >= 1/1000 s; the next test covers a smaller h against the same recurrence in plain doubles.
struct FreeFallRun {
  double worst = 0.0;  // largest relative error against the closed form over the run
  State state;
};
FreeFallRun runFreeFall(SolverMode mode, double timeStep, int substeps, double y0, const Vec3& drift) {
  ModelBuilder b;
  b.addParticle(Vec3(0.0, y0, 0.0), 0.7);
  b.addParticle(Vec3(1.0, y0, 2.0), 3.0, drift);
  const ModelPtr model = b.build();
  Solver solver(model, scenario::makeSettings(mode, timeStep, substeps, 3));
  FreeFallRun run{0.0, State::fromModel(*model)};
  const double h = timeStep / substeps;
  const int steps = static_cast<int>(std::lround(1.0 / timeStep));
  for (int k = 1; k <= steps; ++k) {
    EXPECT_TRUE(solver.step(run.state).ok());
    const double t = k * timeStep;
    const double drop = 0.5 * kG * t * t + 0.5 * kG * h * t;
    for (int p = 0; p < 2; ++p) {
      run.worst = std::max(run.worst, std::abs(run.state.position[p].y() - (y0 - drop)) / drop);
      run.worst = std::max(run.worst, relativeError(run.state.velocity[p].y(), -kG * t));
    }
    const Vec3 sideways = Vec3(1.0, 0.0, 2.0) + t * drift;
    run.worst = std::max(run.worst, std::abs(run.state.position[1].x() - sideways.x()) / sideways.norm());
    run.worst = std::max(run.worst, std::abs(run.state.position[1].z() - sideways.z()) / sideways.norm());
    EXPECT_EQ(run.state.position[0].x(), 0.0);
    EXPECT_EQ(run.state.position[0].z(), 0.0);
    EXPECT_NEAR(run.state.time, t, 1e-12);
  }
  return run;
}

TEST(V1_FreeFall, MatchesSymplecticEulerClosedFormForAnyStepAndSubsteps) {
  const Vec3 drift(3.0, 0.0, -1.5);  // the second particle also moves sideways at constant speed
  for (SolverMode mode : {SolverMode::Xpbd, SolverMode::Pbd})
    for (double timeStep : {1.0 / 30.0, 1.0 / 60.0, 1.0 / 240.0})
      for (int substeps : {1, 4, 10}) {
        if (timeStep / substeps < 1.0 / 1000.0) continue;  // below: round-off, see above
        const FreeFallRun run = runFreeFall(mode, timeStep, substeps, 10.0, drift);
        EXPECT_LE(run.worst, 1e-10) << scenario::describe(mode) << " dt=" << timeStep << " substeps=" << substeps;
      }
}

TEST(V1_FreeFall, TinySubstepsFollowTheSymplecticEulerRecurrence) {
  // h = 1/2400 s: the closed form is met only to the velocity update's round-off (about 4e-10), so
  // compare with the recurrence v += h g, x += h v, v = (x - x_old)/h evaluated in doubles.
  const double timeStep = 1.0 / 240.0, y0 = 10.0;
  const int substeps = 10;
  const FreeFallRun run = runFreeFall(SolverMode::Xpbd, timeStep, substeps, y0, Vec3::Zero());
  const double h = timeStep / substeps;
  double y = y0, v = 0.0;
  for (int k = 0; k < 240 * substeps; ++k) {
    const double old = y;
    v += h * -kG;
    y += h * v;
    v = (y - old) * (1.0 / h);
  }
  EXPECT_LE(relativeError(run.state.position[0].y(), y), 1e-13);
  EXPECT_LE(relativeError(run.state.velocity[0].y(), v), 1e-12);
  // The recurrence itself is off the closed form by the same round-off the solver shows.
  const double t = 1.0, drop = 0.5 * kG * t * t + 0.5 * kG * h * t;
  EXPECT_LE(std::abs(y - (y0 - drop)) / drop, 2e-9);
  EXPECT_LE(run.worst, 2e-9);
}

// ---------------------------------------------------------------------------------------------
// V2 XPBD with alpha = 0 is PBD with k = 1: the same trajectory, bit for bit (the multiplier update
// reduces to dlambda = -C / sum w|gradC|^2 in both modes).

// Scenes with every constraint hard (compliance 0) and fully stiff (k = 1); the damping coefficient
// is set too, since XPBD must ignore it on a hard constraint (gamma = alpha beta / h = 0).
ModelPtr v2SwingingChainWithFloor() {
  ModelBuilder b;
  ChainDef chain;
  chain.particles = 12;
  chain.start = Vec3(0.0, 0.0, 0.0);
  chain.end = Vec3(1.1, 0.0, 0.2);
  chain.particleMass = 0.05;
  chain.stretch = {0.0, 4.0, 1.0};
  addChain(b, chain);
  // A floor the swinging chain hits (unilateral generic constraint C = y + 0.6 >= 0).
  const std::uint32_t floor = b.addGenericFunction([](std::span<const Vec3> x, std::span<Vec3> grad) {
    grad[0] = Vec3(0.0, 1.0, 0.0);
    return x[0].y() + 0.6;
  });
  for (ParticleIndex p = 1; p < 12; ++p) {
    const ParticleIndex one[1] = {p};
    b.addGeneric(floor, one, true, {0.0, 4.0, 1.0});
  }
  return b.build();
}

ModelPtr v2PinnedCloth() {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = 8;
  cloth.nodesY = 8;
  cloth.stretch = {0.0, 2.0, 1.0};
  cloth.bending = BendingModel::Dihedral;
  cloth.bendingParams = {0.0, 2.0, 1.0};
  const GeneratedObject made = addClothGrid(b, cloth);
  b.fixParticle(made.firstParticle);
  b.addAttachment(made.firstParticle + 7, b.position(made.firstParticle + 7), {0.0, 2.0, 1.0});
  addTethers(b, {made.firstParticle}, made.firstParticle, made.particleCount, {0.0, 0.0, 1.0}, 1.05);
  return b.build();
}

ModelPtr v2Cantilever() {
  ModelBuilder b;
  TetBoxDef box;
  box.cellsX = 4;
  box.cellsY = 1;
  box.cellsZ = 1;
  box.size = Vec3(1.0, 0.25, 0.25);
  box.volume = {0.0, 1.0, 1.0};
  box.edges = {0.0, 1.0, 1.0};
  const GeneratedObject made = addTetBox(b, box);
  for (int k = 0; k <= 1; ++k)
    for (int j = 0; j <= 1; ++j) b.fixParticle(made.firstParticle + static_cast<ParticleIndex>((k * 2 + j) * 5));
  return b.build();
}

ModelPtr v2HangingBalloon() {
  ModelBuilder b;
  BalloonDef balloon;
  balloon.rings = 6;
  balloon.segments = 8;
  balloon.pressure = 1.3;
  balloon.stretch = {0.0, 1.0, 1.0};
  balloon.volume = {0.0, 1.0, 1.0};
  const GeneratedObject made = addBalloon(b, balloon);
  b.addAttachment(made.firstParticle, b.position(made.firstParticle) + Vec3(0.0, 0.1, 0.0), {0.0, 1.0, 1.0});
  ClothGridDef isometric;  // a small isometric-bending sheet falling beside it
  isometric.nodesX = 4;
  isometric.nodesY = 4;
  isometric.origin = Vec3(2.0, 0.0, 0.0);
  isometric.stretch = {0.0, 1.0, 1.0};
  isometric.bending = BendingModel::Isometric;
  isometric.bendingParams = {0.0, 1.0, 1.0};
  const GeneratedObject sheet = addClothGrid(b, isometric);
  b.fixParticle(sheet.firstParticle);
  return b.build();
}

void expectBitIdentical(const State& a, const State& b, const std::string& what) {
  ASSERT_EQ(a.hash(), b.hash()) << what;
  for (std::size_t i = 0; i < a.position.size(); ++i) {
    for (int c = 0; c < 3; ++c) {
      ASSERT_EQ(a.position[i][c], b.position[i][c]) << what << " particle " << i;
      ASSERT_EQ(a.velocity[i][c], b.velocity[i][c]) << what << " particle " << i;
    }
  }
  for (std::size_t c = 0; c < a.lambda.size(); ++c) ASSERT_EQ(a.lambda[c], b.lambda[c]) << what;
}

TEST(V2_XpbdHardEqualsPbdStiff, SameTrajectoryBitForBit) {
  const std::vector<std::pair<std::string, ModelPtr>> scenes = {{"chain with floor", v2SwingingChainWithFloor()},
                                                                {"pinned cloth", v2PinnedCloth()},
                                                                {"cantilever", v2Cantilever()},
                                                                {"balloon and isometric sheet", v2HangingBalloon()}};
  struct Config {
    int substeps, iterations;
    bool independentStiffness;  // k' = 1 - 0^(1/n) = 1 too
  };
  for (const auto& [name, model] : scenes)
    for (const Config& c : {Config{1, 1, false}, Config{1, 6, false}, Config{3, 4, false}, Config{2, 3, true}}) {
      SolverSettings xpbd = scenario::makeSettings(SolverMode::Xpbd, 1.0 / 60.0, c.substeps, c.iterations);
      SolverSettings pbd = xpbd;
      pbd.mode = SolverMode::Pbd;
      pbd.iterationIndependentStiffness = c.independentStiffness;
      Solver solverX(model, xpbd);
      Solver solverP(model, pbd);
      State x = State::fromModel(*model);
      State p = State::fromModel(*model);
      const std::string what =
          name + " substeps=" + std::to_string(c.substeps) + " iterations=" + std::to_string(c.iterations);
      for (int k = 0; k < 60; ++k) {
        ASSERT_TRUE(solverX.step(x).ok()) << what;
        ASSERT_TRUE(solverP.step(p).ok()) << what;
        expectBitIdentical(x, p, what + " step " + std::to_string(k));
      }
      // The scene really moved and the constraints really acted.
      double moved = 0.0, lambda = 0.0;
      for (std::size_t i = 0; i < model->particleCount(); ++i)
        moved = std::max(moved, (x.position[i] - model->initialPosition[i]).norm());
      for (double l : x.lambda) lambda = std::max(lambda, std::abs(l));
      EXPECT_GT(moved, 1e-3) << what;
      EXPECT_GT(lambda, 0.0) << what;
    }
}

// ---------------------------------------------------------------------------------------------
// V3 Static elongation m g alpha is independent of h and n.

// A particle of mass m hanging on one constraint below an anchor at the origin; returns the
// elongation at rest. `anchorAsParticle` uses a fixed particle and a distance constraint, otherwise
// an attachment to the point. Global velocity damping only speeds up the settling: at rest v = 0,
// so it cannot move the equilibrium.
struct Hanging {
  double elongation = 0.0;
  double speed = 0.0;
  double force = 0.0;
};
Hanging settleHangingParticle(SolverMode mode, double mass, const ConstraintParameters& params, double timeStep,
                              int substeps, int iterations, bool anchorAsParticle, double velocityDamping,
                              double duration) {
  const double length = 1.0;
  ModelBuilder b;
  ConstraintRef ref;
  if (anchorAsParticle) {
    const ParticleIndex anchor = b.addParticle(Vec3::Zero(), 0.0);
    const ParticleIndex p = b.addParticle(Vec3(0.0, -length, 0.0), mass);
    ref = {ConstraintFamily::Distance, b.addDistance(anchor, p, params, length)};
  } else {
    const ParticleIndex p = b.addParticle(Vec3(0.0, -length, 0.0), mass);
    ref = {ConstraintFamily::Attachment, b.addAttachment(p, Vec3::Zero(), params, length)};
  }
  const ModelPtr model = b.build();
  SolverSettings s = scenario::makeSettings(mode, timeStep, substeps, iterations);
  s.velocityDamping = velocityDamping;
  Solver solver(model, s);
  State state = State::fromModel(*model);
  const auto steps = static_cast<int>(std::lround(duration / timeStep));
  EXPECT_TRUE(solver.run(state, steps).ok());
  return {constraintValue(*model, state, ref), scenario::maxSpeed(state), constraintForce(*model, state, ref)};
}

TEST(V3_StaticElongation, SingleParticleIndependentOfStepAndIterations) {
  const double mass = 0.5, alpha = 2e-3;  // m g alpha = 9.81 mm
  const double expected = mass * kG * alpha;
  for (bool anchorAsParticle : {true, false})
    for (double timeStep : {1.0 / 30.0, 1.0 / 60.0, 1.0 / 240.0, 1.0 / 1000.0})
      for (int substeps : {1, 5})
        for (int iterations : {1, 3, 10}) {
          const Hanging r = settleHangingParticle(SolverMode::Xpbd, mass, {alpha, 0.0, 1.0}, timeStep, substeps,
                                                  iterations, anchorAsParticle, 40.0, 3.0);
          EXPECT_LE(relativeError(r.elongation, expected), 1e-6)
              << "dt=" << timeStep << " substeps=" << substeps << " n=" << iterations << " elongation=" << r.elongation;
          EXPECT_LE(r.speed, 1e-9);
          EXPECT_LE(relativeError(r.force, -mass * kG), 1e-9);  // and the force estimate is m g (V11)
        }
}

TEST(V3_StaticElongation, DampingDoesNotChangeTheStaticAnswer) {
  // Global velocity damping, XPBD constraint damping beta (eq. 26), or no damping at all but a
  // long run (backward Euler dissipates by itself): the same elongation.
  const double mass = 0.5, alpha = 2e-3, expected = mass * kG * alpha;
  const Hanging viscous =
      settleHangingParticle(SolverMode::Xpbd, mass, {alpha, 0.0, 1.0}, 1.0 / 60.0, 1, 2, true, 40.0, 3.0);
  const Hanging beta =
      settleHangingParticle(SolverMode::Xpbd, mass, {alpha, 20.0, 1.0}, 1.0 / 60.0, 1, 2, true, 0.0, 3.0);
  const Hanging none =
      settleHangingParticle(SolverMode::Xpbd, mass, {alpha, 0.0, 1.0}, 1.0 / 60.0, 1, 2, true, 0.0, 30.0);
  EXPECT_LE(relativeError(viscous.elongation, expected), 1e-6);
  EXPECT_LE(relativeError(beta.elongation, expected), 1e-6);
  EXPECT_LE(relativeError(none.elongation, expected), 1e-6);
}

// Chain of N equal masses below a fixed top: constraint k (0 = top) carries (N - k) m g, so it
// stretches (N - k) m g alpha and the chain N(N+1)/2 m g alpha in total.
struct ChainRest {
  std::vector<double> elongation;
  double total = 0.0;
  double speed = 0.0;
};
ChainRest settleChain(const scenario::HangingChain& chain, double timeStep, int substeps, int iterations,
                      double duration) {
  SolverSettings s = scenario::makeSettings(SolverMode::Xpbd, timeStep, substeps, iterations);
  s.velocityDamping = 10.0;
  Solver solver(chain.model, s);
  State state = State::fromModel(*chain.model);
  EXPECT_TRUE(solver.run(state, static_cast<int>(std::lround(duration / timeStep))).ok());
  ChainRest r;
  for (std::uint32_t k = 0; k < chain.model->distances.size(); ++k)
    r.elongation.push_back(constraintValue(*chain.model, state, {ConstraintFamily::Distance, k}));
  r.total = scenario::totalElongation(*chain.model, state);
  r.speed = scenario::maxSpeed(state);
  return r;
}

constexpr int kChainLinks = 5;
constexpr double kChainMass = 1.0;     // kg
constexpr double kChainAlpha = 2e-3;   // m/N
constexpr double kChainSpacing = 0.5;  // m

TEST(V3_StaticElongation, ChainStretchesNTimesNPlusOneOverTwoMgAlpha) {
  const scenario::HangingChain chain =
      scenario::makeHangingChain(kChainLinks, kChainMass, kChainSpacing, {kChainAlpha, 0.0, 1.0});
  const double N = kChainLinks;
  const double expected = N * (N + 1.0) / 2.0 * kChainMass * kG * kChainAlpha;
  // Gauss-Seidel converged within each (sub)step: see the next test for what fewer passes give.
  struct Config {
    double timeStep;
    int substeps, iterations;
  };
  for (const Config& c : {Config{1.0 / 30.0, 1, 40}, Config{1.0 / 60.0, 1, 40}, Config{1.0 / 240.0, 1, 20},
                          Config{1.0 / 60.0, 4, 20}, Config{1.0 / 60.0, 2, 30}}) {
    const ChainRest r = settleChain(chain, c.timeStep, c.substeps, c.iterations, 6.0);
    testing::Test::RecordProperty("dt=" + std::to_string(c.timeStep) + " substeps=" + std::to_string(c.substeps) +
                                      " n=" + std::to_string(c.iterations),
                                  "relative error " + scenario::sci(relativeError(r.total, expected)));
    EXPECT_LE(relativeError(r.total, expected), 1e-6)
        << "dt=" << c.timeStep << " substeps=" << c.substeps << " n=" << c.iterations << " total=" << r.total;
    for (int k = 0; k < kChainLinks; ++k)
      EXPECT_LE(relativeError(r.elongation[k], (N - k) * kChainMass * kG * kChainAlpha), 1e-6) << "link " << k;
    EXPECT_LE(r.speed, 1e-9);
  }
}

// With few Gauss-Seidel passes a chain's rest state is not the solution of the implicit equations
// C + alpha~ lambda = 0 but the fixed point of the truncated sweep: at rest the sweep must still
// return lambda_eq = -h^2 (tension) (force balance), from the right-hand side b = -C(x~) of
// A lambda = b, A = J W J^T + alpha~ I. With M_n the n-sweep Gauss-Seidel operator (lambda_n = M_n b):
//   C(x_rest) = h^2 g J 1 - M_n^{-1} lambda_eq,
// which is alpha (tension) only as M_n -> A^{-1}. This is why the chain case above needs converged
// sweeps; the single particle (one linear constraint, one sweep is exact) does not.
std::vector<double> truncatedSweepRestElongation(int links, double mass, double alpha, double h, int sweeps) {
  const int N = links;
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(N, N);  // rows: constraints top down; cols: particles 1..N (y)
  for (int k = 0; k < N; ++k) {
    J(k, k) = -1.0;  // C_k = y_{k-1} - y_k - l
    if (k > 0) J(k, k - 1) = 1.0;
  }
  const double alphaTilde = alpha / (h * h);
  const Eigen::MatrixXd A =
      J * (Eigen::MatrixXd::Identity(N, N) / mass) * J.transpose() + alphaTilde * Eigen::MatrixXd::Identity(N, N);
  Eigen::MatrixXd M(N, N);  // column j: n sweeps from lambda = 0 with b = e_j
  for (int j = 0; j < N; ++j) {
    Eigen::VectorXd b = Eigen::VectorXd::Unit(N, j), lambda = Eigen::VectorXd::Zero(N);
    for (int s = 0; s < sweeps; ++s)
      for (int k = 0; k < N; ++k) lambda[k] += (b[k] - A.row(k).dot(lambda)) / A(k, k);
    M.col(j) = lambda;
  }
  Eigen::VectorXd lambdaEq(N);
  for (int k = 0; k < N; ++k) lambdaEq[k] = -h * h * kG * mass * (N - k);
  const Eigen::VectorXd C = h * h * kG * (J * Eigen::VectorXd::Ones(N)) - M.partialPivLu().solve(lambdaEq);
  return {C.data(), C.data() + N};
}

TEST(V3_StaticElongation, ChainWithFewSweepsRestsAtTheTruncatedGaussSeidelFixedPoint) {
  const scenario::HangingChain chain =
      scenario::makeHangingChain(kChainLinks, kChainMass, kChainSpacing, {kChainAlpha, 0.0, 1.0});
  const double N = kChainLinks;
  const double exact = N * (N + 1.0) / 2.0 * kChainMass * kG * kChainAlpha;
  struct Config {
    double timeStep;
    int substeps, iterations;
  };
  for (const Config& c : {Config{1.0 / 30.0, 1, 1}, Config{1.0 / 60.0, 1, 1}, Config{1.0 / 60.0, 1, 2},
                          Config{1.0 / 30.0, 1, 4}, Config{1.0 / 60.0, 4, 1}, Config{1.0 / 240.0, 1, 1}}) {
    const double h = c.timeStep / c.substeps;
    const std::vector<double> predicted =
        truncatedSweepRestElongation(kChainLinks, kChainMass, kChainAlpha, h, c.iterations);
    double predictedTotal = 0.0;
    for (double e : predicted) predictedTotal += e;
    const ChainRest r = settleChain(chain, c.timeStep, c.substeps, c.iterations, 8.0);
    testing::Test::RecordProperty("dt=" + std::to_string(c.timeStep) + " substeps=" + std::to_string(c.substeps) +
                                      " n=" + std::to_string(c.iterations),
                                  "rest/converged " + scenario::sci(r.total / exact) + ", rest/predicted - 1 " +
                                      scenario::sci(r.total / predictedTotal - 1.0));
    EXPECT_LE(relativeError(r.total, predictedTotal), 1e-6)
        << "dt=" << c.timeStep << " substeps=" << c.substeps << " n=" << c.iterations << " total=" << r.total
        << " predicted=" << predictedTotal << " converged answer=" << exact;
    for (int k = 0; k < kChainLinks; ++k)
      EXPECT_NEAR(r.elongation[k], predicted[k], 1e-6 * predictedTotal) << "link " << k;
    EXPECT_LE(r.speed, 1e-9);
    // The departure is real (more than the tolerance) and always a softer chain.
    EXPECT_GT(r.total, exact * (1.0 + 1e-5));
  }
}

// ---------------------------------------------------------------------------------------------
// V4 PBD stiffness depends on h and n: the hanging particle's steady elongation is
// (1-k)^n h^2 g / (1 - (1-k)^n) (each projection leaves (1-k) of C; at rest C = (1-k)^n (C + h^2 g)).

TEST(V4_PbdSteadyElongation, MatchesClosedFormForStiffnessIterationsAndStep) {
  for (double k : {0.1, 0.3, 0.5, 0.9})
    for (int n : {1, 2, 4})
      for (double timeStep : {1.0 / 30.0, 1.0 / 60.0, 1.0 / 240.0})
        for (int substeps : {1, 2}) {
          const double h = timeStep / substeps;
          const double r = std::pow(1.0 - k, n);
          const double expected = r * h * h * kG / (1.0 - r);
          // No damping: the deviation from rest decays by sqrt((1-k)^n) per substep on its own (the
          // update matrix [[r, r], [r-1, r]], r = (1-k)^n, has |eigenvalue|^2 = r); 1500 steps suffice.
          const Hanging rest = settleHangingParticle(SolverMode::Pbd, 0.3, {0.0, 0.0, k}, timeStep, substeps, n, true,
                                                     0.0, 1500 * timeStep);
          EXPECT_LE(relativeError(rest.elongation, expected), 1e-6)
              << "k=" << k << " n=" << n << " h=" << h << " elongation=" << rest.elongation << " expected=" << expected;
          EXPECT_LE(rest.speed, 1e-9);
        }
}

// ---------------------------------------------------------------------------------------------
// V5 Iteration-independent stiffness k' = 1 - (1-k)^(1/n): after n projections one isolated
// constraint keeps exactly (1-k) C0. Built with gravity 0, no velocity, one step, so the only motion
// is the projections.

enum class Isolated { FixedAnchor, TwoFreeParticles, Attachment };

double errorAfterOneStep(Isolated kind, double stiffness, int iterations, bool independent, double c0) {
  const double length = 0.8;
  const Vec3 dir = Vec3(1.0, -2.0, 2.0) / 3.0;
  ModelBuilder b;
  ConstraintRef ref;
  const ConstraintParameters params{0.0, 0.0, stiffness};
  switch (kind) {
    case Isolated::FixedAnchor: {
      const ParticleIndex a = b.addParticle(Vec3(0.1, 0.2, 0.3), 0.0);
      const ParticleIndex p = b.addParticle(Vec3(0.1, 0.2, 0.3) + (length + c0) * dir, 1.3);
      ref = {ConstraintFamily::Distance, b.addDistance(a, p, params, length)};
      break;
    }
    case Isolated::TwoFreeParticles: {
      const ParticleIndex a = b.addParticle(Vec3(-0.2, 0.0, 0.1), 0.4);
      const ParticleIndex p = b.addParticle(Vec3(-0.2, 0.0, 0.1) + (length + c0) * dir, 2.5);
      ref = {ConstraintFamily::Distance, b.addDistance(a, p, params, length)};
      break;
    }
    case Isolated::Attachment: {
      const ParticleIndex p = b.addParticle((length + c0) * dir, 0.9);
      ref = {ConstraintFamily::Attachment, b.addAttachment(p, Vec3::Zero(), params, length)};
      break;
    }
  }
  const ModelPtr model = b.build();
  SolverSettings s = scenario::makeSettings(SolverMode::Pbd, 1.0 / 60.0, 1, iterations, Vec3::Zero());
  s.iterationIndependentStiffness = independent;
  Solver solver(model, s);
  State state = State::fromModel(*model);
  EXPECT_NEAR(constraintValue(*model, state, ref), c0, 1e-15);
  EXPECT_TRUE(solver.step(state).ok());
  return constraintValue(*model, state, ref);
}

TEST(V5_IterationIndependentStiffness, RemainingErrorIsOneMinusKTimesC0ForEveryN) {
  for (Isolated kind : {Isolated::FixedAnchor, Isolated::TwoFreeParticles, Isolated::Attachment})
    for (double k : {0.2, 0.5, 0.9})
      for (int n : {1, 2, 3, 5, 10, 20})
        for (double c0 : {0.15, -0.1}) {
          const double remaining = errorAfterOneStep(kind, k, n, true, c0);
          EXPECT_LE(relativeError(remaining, (1.0 - k) * c0), 1e-10)
              << "kind=" << static_cast<int>(kind) << " k=" << k << " n=" << n << " C0=" << c0 << " got " << remaining;
          // Without k' the same constraint keeps (1-k)^n C0: the stiffness depends on n.
          const double plain = errorAfterOneStep(kind, k, n, false, c0);
          // (Measured against C0: for large n the remainder itself falls below the positions' round-off.)
          EXPECT_LE(std::abs(plain - std::pow(1.0 - k, n) * c0) / std::abs(c0), 1e-10) << "k=" << k << " n=" << n;
        }
}

// ---------------------------------------------------------------------------------------------
// V6 XPBD is backward Euler for a linear spring. A particle on a line through the anchor at 0 with
// C = |x| - L stays on that line, so C is linear in the position along it and the first projection
// solves C + alpha~ lambda = 0 exactly; later passes find a zero residual and change nothing. Hence
// one step from (u, v) gives v' = (m v - h K u)/(m + h^2 K + h beta), u' = u + h v' for every n
// (beta = 0 here; V7 adds it).

TEST(V6_XpbdBackwardEulerSpring, OneStepMatchesBackwardEulerForAnyIterations) {
  scenario::checkSpringAgainstBackwardEuler(0.0);
}

}  // namespace
}  // namespace pliant
