// Scenario tests for docs/validation.md cases V7 to V12: XPBD damping, momentum, momentum-conserving
// damping (seed 000), fixed particles, force estimates and small steps (Macklin et al. 2019).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "pliant/pliant.h"
#include "scenario/scenario_util.h"

namespace pliant {
namespace {

using scenario::kG;
using scenario::relativeError;

// ---------------------------------------------------------------------------------------------
// V7 XPBD damping is backward Euler for a damped spring: v' = (m v - h K u)/(m + h^2 K + h beta).

TEST(V7_XpbdDampedSpring, OneStepMatchesDampedBackwardEulerForAnyIterations) {
  for (double beta : {0.5, 5.0, 50.0}) scenario::checkSpringAgainstBackwardEuler(beta);
}

TEST(V7_XpbdDampedSpring, OtherScalingsOfBetaAreDistinguished) {
  // The check above has teeth: reading beta as beta h or beta / h would be off by far more than 1e-10.
  const double mass = 0.3, alpha = 1e-2, beta = 5.0, h = 1.0 / 60.0, u0 = 0.1, v0 = 0.5;
  const scenario::SpringStep got = scenario::springSteps(true, mass, alpha, beta, h, 1, 3, u0, v0, 1);
  for (double wrongBeta : {beta * h, beta / h, 0.0}) {
    double u = u0, v = v0;
    scenario::backwardEulerSpring(mass, alpha, wrongBeta, h, u, v);
    EXPECT_GT(relativeError(got.v, v), 1e-3) << "beta read as " << wrongBeta;
  }
}

// ---------------------------------------------------------------------------------------------
// V8 Momentum. Internal constraints conserve total linear momentum exactly (every family's
// gradients sum to zero, so sum m dx = 0 for each projection); projections conserve angular momentum
// about the positions they see, and the velocity update v = (x - x^n)/h loses it at O(h).

// Free bodies (nothing fixed), one of each constraint family that acts inside a body.
ModelPtr freeCloth(BendingModel bending, const ConstraintParameters& stretch) {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = 7;
  cloth.nodesY = 6;
  cloth.origin = Vec3(-0.5, 0.1, -0.4);
  cloth.stretch = stretch;
  cloth.bending = bending;
  cloth.bendingParams = {1e-3, 0.0, 0.5};
  addClothGrid(b, cloth);
  return b.build();
}

ModelPtr freeTetBox(const ConstraintParameters& edges, const ConstraintParameters& volume) {
  ModelBuilder b;
  TetBoxDef box;
  box.cellsX = 3;
  box.cellsY = 2;
  box.cellsZ = 1;
  box.origin = Vec3(-0.3, -0.2, -0.1);
  box.size = Vec3(0.6, 0.4, 0.2);
  box.edges = edges;
  box.volume = volume;
  addTetBox(b, box);
  return b.build();
}

ModelPtr freeBalloon() {
  ModelBuilder b;
  BalloonDef balloon;
  balloon.rings = 6;
  balloon.segments = 10;
  balloon.centre = Vec3(0.2, -0.1, 0.3);
  balloon.pressure = 1.4;
  balloon.stretch = {1e-4, 0.0, 0.7};
  balloon.volume = {0.0, 0.0, 1.0};
  addBalloon(b, balloon);
  return b.build();
}

std::vector<std::pair<std::string, ModelPtr>> freeBodies() {
  return {{"cloth, dihedral bending", freeCloth(BendingModel::Dihedral, {1e-5, 0.0, 0.9})},
          {"cloth, isometric bending", freeCloth(BendingModel::Isometric, {0.0, 0.0, 1.0})},
          {"tet box", freeTetBox({1e-6, 0.0, 1.0}, {0.0, 0.0, 1.0})},
          {"balloon", freeBalloon()}};
}

TEST(V8_Momentum, InternalConstraintsConserveLinearMomentumExactly) {
  for (const auto& [name, model] : freeBodies())
    for (SolverMode mode : {SolverMode::Xpbd, SolverMode::Pbd}) {
      Solver solver(model, scenario::makeSettings(mode, 1.0 / 60.0, 2, 3, Vec3::Zero()));
      State state = State::fromModel(*model);
      scenario::randomVelocities(*model, state, 1.0, 11);
      const MomentumReport start = computeMomentum(*model, state);
      const double scale = scenario::momentumScale(*model, state).linear;
      double worst = 0.0, maxLambda = 0.0;
      for (int k = 0; k < 120; ++k) {
        ASSERT_TRUE(solver.step(state).ok()) << name;
        worst = std::max(worst, (computeMomentum(*model, state).linear - start.linear).norm() / scale);
        for (double l : state.lambda) maxLambda = std::max(maxLambda, std::abs(l));
      }
      // Round-off: a few eps per particle and step, far below any physical effect.
      EXPECT_LE(worst, 1e-12) << name << " " << scenario::describe(mode);
      EXPECT_GT(maxLambda, 0.0) << name;  // the constraints did act
    }
}

TEST(V8_Momentum, OneProjectionConservesAngularMomentum) {
  // From rest with no gravity the prediction is x^n, so after one projection of one constraint
  // L' = sum x^n x m dx / h, which is zero because sum_i x_i x gradC_i = 0 for a rotation-invariant C.
  auto check = [](const std::string& name, ModelBuilder& b) {
    const ModelPtr model = b.build();
    ASSERT_EQ(model->totalConstraintCount(), 1u) << name;
    Solver solver(model, scenario::makeSettings(SolverMode::Xpbd, 1.0 / 60.0, 1, 1, Vec3::Zero()));
    State state = State::fromModel(*model);
    ASSERT_TRUE(solver.step(state).ok());
    const MomentumReport m = computeMomentum(*model, state);
    const scenario::MomentumScale scale = scenario::momentumScale(*model, state);
    EXPECT_GT(scale.linear, 1e-3) << name;  // it moved
    EXPECT_LE(m.linear.norm() / scale.linear, 1e-13) << name;
    EXPECT_LE(m.angular.norm() / scale.angular, 1e-13) << name;
  };
  const ConstraintParameters soft{1e-4, 0.0, 1.0};
  {
    ModelBuilder b;
    const ParticleIndex a = b.addParticle(Vec3(0.1, 0.3, -0.2), 0.4);
    const ParticleIndex c = b.addParticle(Vec3(0.9, -0.2, 0.4), 1.1);
    b.addDistance(a, c, soft, 0.6);
    check("distance", b);
  }
  // Four particles of a bent hinge (triangles p0 p1 p2 and p1 p0 p3), unequal masses.
  const Vec3 hinge[4] = {Vec3(0.0, 0.0, 0.1), Vec3(1.0, 0.1, 0.0), Vec3(0.4, 0.9, 0.3), Vec3(0.6, -0.7, 0.6)};
  const double masses[4] = {0.3, 0.5, 0.7, 0.2};
  {
    ModelBuilder b;
    for (int i = 0; i < 4; ++i) b.addParticle(hinge[i], masses[i]);
    b.addDihedralBending(0, 1, 2, 3, soft, 0.0);
    check("dihedral bending", b);
  }
  {
    ModelBuilder b;
    const Vec3 flat[4] = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.4, 0.9, 0.0), Vec3(0.6, -0.8, 0.0)};
    for (int i = 0; i < 4; ++i) b.addParticle(flat[i], masses[i]);
    b.addIsometricBending(0, 1, 2, 3, soft);  // weights from the flat rest state
    for (int i = 0; i < 4; ++i) b.model().initialPosition[i] = hinge[i];
    check("isometric bending", b);
  }
  {
    ModelBuilder b;
    const Vec3 tet[4] = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0), Vec3(0.0, 0.0, 1.0)};
    for (int i = 0; i < 4; ++i) b.addParticle(tet[i], masses[i]);
    b.addTetVolume(0, 1, 2, 3, soft);
    b.model().initialPosition[3] = Vec3(0.2, 0.3, 0.5);  // squashed
    check("tet volume", b);
  }
  {
    ModelBuilder b;
    BalloonDef balloon;
    balloon.rings = 5;
    balloon.segments = 8;
    balloon.pressure = 1.5;
    balloon.volume = soft;
    balloon.centre = Vec3(0.3, 0.1, -0.2);
    // The builder adds stretch constraints too; keep only the volume constraint.
    addBalloon(b, balloon);
    b.model().distances.clear();
    check("global volume", b);
  }
}

TEST(V8_Momentum, AngularMomentumLossIsFirstOrderInH) {
  // A body spinning as a rigid whole plus a little random motion, no gravity, for T = 1 s at h,
  // h/2, h/4, h/8: the relative change of L must halve with h (log-log slope 1).
  struct Body {
    std::string name;
    ModelPtr model;
  };
  const std::vector<Body> bodies = {{"hard tet box", freeTetBox({0.0, 0.0, 1.0}, {0.0, 0.0, 1.0})},
                                    {"compliant tet box", freeTetBox({1e-5, 0.0, 1.0}, {1e-8, 0.0, 1.0})},
                                    {"cloth", freeCloth(BendingModel::Dihedral, {1e-4, 0.0, 1.0})}};
  const Vec3 omega(0.3, 2.0, 0.5);  // rad/s
  for (const Body& body : bodies) {
    std::vector<double> loss;
    for (int level = 0; level < 4; ++level) {
      const double h = (1.0 / 60.0) / (1 << level);
      Solver solver(body.model, scenario::makeSettings(SolverMode::Xpbd, h, 1, 4, Vec3::Zero()));
      State state = State::fromModel(*body.model);
      std::mt19937_64 rng(5);
      std::uniform_real_distribution<double> u(-0.05, 0.05);
      for (std::size_t i = 0; i < body.model->particleCount(); ++i)
        state.velocity[i] = omega.cross(state.position[i]) + Vec3(u(rng), u(rng), u(rng));
      const MomentumReport before = computeMomentum(*body.model, state);
      ASSERT_TRUE(solver.run(state, static_cast<int>(std::lround(1.0 / h))).ok());
      const MomentumReport after = computeMomentum(*body.model, state);
      const Vec3 change = after.angular - before.angular;
      loss.push_back(change.norm() / before.angular.norm());
      // It is a loss: |L| decreases.
      EXPECT_LT(after.angular.norm(), before.angular.norm()) << body.name << " h=" << h;
    }
    std::string losses;
    for (double l : loss) losses += scenario::sci(l) + " ";
    testing::Test::RecordProperty("relative_L_loss " + body.name, losses);
    for (std::size_t k = 0; k + 1 < loss.size(); ++k) {
      const double slope = std::log2(loss[k] / loss[k + 1]);
      EXPECT_GE(slope, 0.7) << body.name << " level " << k << " loss " << loss[k] << " -> " << loss[k + 1];
      EXPECT_LE(slope, 1.3) << body.name << " level " << k << " loss " << loss[k] << " -> " << loss[k + 1];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// V9 Momentum-conserving damping (seed 000): v_i += k (v_cm + omega x r_i - v_i) with omega = I^-1 L.
// It conserves P and L for any k, removes (1 - (1-k)^2) of the kinetic energy of the non-rigid
// motion, and k = 1 leaves v_i = v_cm + omega x r_i.

// Splits a velocity field into its rigid part (least-squares fit, as seed 000) and the rest.
struct RigidFit {
  Vec3 centre = Vec3::Zero();
  Vec3 velocity = Vec3::Zero();
  Vec3 omega = Vec3::Zero();
  double deviationEnergy = 0.0;  // J, 1/2 sum m |v_i - (v_cm + omega x r_i)|^2
  double maxDeviation = 0.0;     // m/s
};
RigidFit fitRigid(const Model& model, const State& state) {
  RigidFit f;
  double mass = 0.0;
  for (std::size_t i = 0; i < model.particleCount(); ++i) {
    if (model.inverseMass[i] == 0.0) continue;
    mass += model.mass[i];
    f.centre += model.mass[i] * state.position[i];
    f.velocity += model.mass[i] * state.velocity[i];
  }
  f.centre /= mass;
  f.velocity /= mass;
  Vec3 L = Vec3::Zero();
  Mat3 I = Mat3::Zero();
  for (std::size_t i = 0; i < model.particleCount(); ++i) {
    if (model.inverseMass[i] == 0.0) continue;
    const Vec3 r = state.position[i] - f.centre;
    L += r.cross(model.mass[i] * state.velocity[i]);
    I += model.mass[i] * (r.squaredNorm() * Mat3::Identity() - r * r.transpose());
  }
  f.omega = I.ldlt().solve(L);
  for (std::size_t i = 0; i < model.particleCount(); ++i) {
    if (model.inverseMass[i] == 0.0) continue;
    const Vec3 d = state.velocity[i] - f.velocity - f.omega.cross(state.position[i] - f.centre);
    f.deviationEnergy += 0.5 * model.mass[i] * d.squaredNorm();
    f.maxDeviation = std::max(f.maxDeviation, d.norm());
  }
  return f;
}

ModelPtr dampedCloud(double dampingFactor, bool withConstraints) {
  ModelBuilder b;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-0.5, 0.5), m(0.1, 2.0);
  std::vector<ParticleIndex> members;
  for (int i = 0; i < 24; ++i)
    members.push_back(b.addParticle(Vec3(u(rng), u(rng), u(rng)) + Vec3(1.0, 2.0, -0.5), m(rng)));
  if (withConstraints)
    for (int i = 0; i + 1 < 24; ++i) b.addDistance(members[i], members[i + 1], {1e-4, 0.0, 1.0});
  b.addObject("cloud", members, dampingFactor);
  return b.build();
}

TEST(V9_MomentumConservingDamping, FreeParticlesKeepMomentumAndLoseNonRigidEnergy) {
  // Without constraints and gravity the step itself conserves P and L exactly (x' = x + h v), so
  // any change is the damping's.
  for (double k : {0.0, 0.3, 0.7, 1.0}) {
    const ModelPtr model = dampedCloud(k, false);
    Solver solver(model, scenario::makeSettings(SolverMode::Xpbd, 1.0 / 60.0, 1, 1, Vec3::Zero()));
    State state = State::fromModel(*model);
    scenario::randomVelocities(*model, state, 1.0, 17);
    for (int step = 0; step < 5; ++step) {
      const MomentumReport before = computeMomentum(*model, state);
      const scenario::MomentumScale scale = scenario::momentumScale(*model, state);
      const double kinetic = computeEnergy(*model, state, solver.settings()).kinetic;
      // The damping fits the rigid motion at the drifted positions x + h v: split v there too.
      State drifted = state;
      for (std::size_t i = 0; i < model->particleCount(); ++i)
        drifted.position[i] += (1.0 / 60.0) * drifted.velocity[i];
      const RigidFit fitBefore = fitRigid(*model, drifted);
      ASSERT_TRUE(solver.step(state).ok());
      const MomentumReport after = computeMomentum(*model, state);
      // Round-off of v = (x - x^n)/h is eps |x| / h per particle: about 1e-14 of the scale here.
      EXPECT_LE((after.linear - before.linear).norm() / scale.linear, 1e-13) << "k=" << k;
      EXPECT_LE((after.angular - before.angular).norm() / scale.angular, 1e-13) << "k=" << k;
      const RigidFit fitAfter = fitRigid(*model, state);
      const double kineticAfter = computeEnergy(*model, state, solver.settings()).kinetic;
      // The non-rigid kinetic energy scales by (1-k)^2; the rigid part is untouched.
      EXPECT_NEAR(fitAfter.deviationEnergy, (1.0 - k) * (1.0 - k) * fitBefore.deviationEnergy, 1e-12 * kinetic)
          << "k=" << k;
      EXPECT_NEAR(kinetic - kineticAfter, (1.0 - (1.0 - k) * (1.0 - k)) * fitBefore.deviationEnergy, 1e-12 * kinetic)
          << "k=" << k;
      if (k > 0.0) {
        EXPECT_LT(kineticAfter, kinetic) << "k=" << k;
      }
      if (k == 0.0) {
        EXPECT_NEAR(kineticAfter, kinetic, 1e-13 * kinetic);
      }
      if (k == 1.0) {
        EXPECT_LE(fitAfter.maxDeviation, 1e-12 * scenario::maxSpeed(state)) << "rigid field";
      }
    }
  }
}

TEST(V9_MomentumConservingDamping, WithConstraintsDampingChangesOnlyTheNonRigidVelocity) {
  // The damping runs after the velocity update and leaves positions alone: a step with factor k and
  // one with factor 0 from the same state end at the same positions with the same P and L.
  for (double k : {0.0, 0.3, 1.0}) {
    const ModelPtr damped = dampedCloud(k, true);
    const ModelPtr plain = dampedCloud(0.0, true);
    const SolverSettings s = scenario::makeSettings(SolverMode::Xpbd, 1.0 / 60.0, 2, 3, Vec3::Zero());
    Solver solverDamped(damped, s);
    Solver solverPlain(plain, s);
    State a = State::fromModel(*damped);
    scenario::randomVelocities(*damped, a, 2.0, 23);
    State b = a;
    ASSERT_TRUE(solverDamped.step(a).ok());
    ASSERT_TRUE(solverPlain.step(b).ok());
    for (std::size_t i = 0; i < damped->particleCount(); ++i) ASSERT_EQ(a.position[i], b.position[i]);
    const MomentumReport ma = computeMomentum(*damped, a), mb = computeMomentum(*plain, b);
    const scenario::MomentumScale scale = scenario::momentumScale(*plain, b);
    EXPECT_LE((ma.linear - mb.linear).norm() / scale.linear, 1e-14) << "k=" << k;
    EXPECT_LE((ma.angular - mb.angular).norm() / scale.angular, 1e-13) << "k=" << k;
    const RigidFit fa = fitRigid(*damped, a), fb = fitRigid(*plain, b);
    const double kinetic = computeEnergy(*plain, b, s).kinetic;
    EXPECT_NEAR(fa.deviationEnergy, (1.0 - k) * (1.0 - k) * fb.deviationEnergy, 1e-12 * kinetic) << "k=" << k;
    if (k > 0.0) {
      EXPECT_LT(computeEnergy(*damped, a, s).kinetic, kinetic) << "k=" << k;
    }
    if (k == 1.0) {
      EXPECT_LE(fa.maxDeviation, 1e-12 * scenario::maxSpeed(b)) << "rigid field";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// V10 Fixed particles (w = 0) never move, whatever pulls on them.

TEST(V10_FixedParticles, NeverMoveWhateverPullsOnThem) {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = 6;
  cloth.nodesY = 6;
  cloth.totalMass = 50.0;  // heavy cloth
  cloth.stretch = {1e-6, 5.0, 0.8};
  cloth.bending = BendingModel::Dihedral;
  cloth.bendingParams = {1e-2, 0.0, 0.5};
  cloth.dampingFactor = 0.3;
  const GeneratedObject sheet = addClothGrid(b, cloth);
  std::vector<ParticleIndex> fixed = {sheet.firstParticle, sheet.firstParticle + 5};
  for (ParticleIndex p : fixed) b.fixParticle(p);
  // A fixed particle given a velocity and the mass it keeps for diagnostics.
  fixed.push_back(b.addParticle(Vec3(3.0, 0.0, 0.0), 0.0, Vec3(5.0, 5.0, 5.0)));
  const ParticleIndex heavy = b.addParticle(Vec3(4.0, 0.0, 0.0), 1000.0);  // swings down
  b.addDistance(fixed.back(), heavy, {0.0, 0.0, 1.0});
  // Attachments pulling fixed particles hard towards far targets, stiff and compliant.
  b.addAttachment(fixed[0], Vec3(-10.0, -10.0, 0.0), {0.0, 0.0, 1.0});
  b.addAttachment(fixed[2], Vec3(10.0, 5.0, 0.0), {1e-6, 1.0, 1.0});
  // Tethers from the fixed corners, and a tet box fixed on one face with a pressurised balloon.
  addTethers(b, {fixed[0], fixed[1]}, sheet.firstParticle, sheet.particleCount, {0.0, 0.0, 1.0});
  TetBoxDef box;
  box.cellsX = 2;
  box.cellsY = 1;
  box.cellsZ = 1;
  box.origin = Vec3(0.0, 2.0, 0.0);
  box.size = Vec3(1.0, 0.5, 0.5);
  box.edges = {1e-7, 0.0, 1.0};
  box.volume = {0.0, 0.0, 1.0};
  const GeneratedObject beam = addTetBox(b, box);
  for (ParticleIndex k : {0u, 3u, 6u, 9u}) {  // the i = 0 face
    b.fixParticle(beam.firstParticle + k);
    fixed.push_back(beam.firstParticle + k);
  }
  BalloonDef balloon;
  balloon.rings = 5;
  balloon.segments = 8;
  balloon.centre = Vec3(-3.0, 0.0, 0.0);
  balloon.pressure = 3.0;
  balloon.stretch = {1e-5, 0.0, 0.9};
  const GeneratedObject ball = addBalloon(b, balloon);
  b.fixParticle(ball.firstParticle);
  fixed.push_back(ball.firstParticle);
  const ModelPtr model = b.build();

  struct Config {
    SolverMode mode;
    int substeps, iterations;
    bool independent;
  };
  for (const Config& c : {Config{SolverMode::Xpbd, 1, 1, false}, Config{SolverMode::Xpbd, 1, 10, false},
                          Config{SolverMode::Xpbd, 4, 2, false}, Config{SolverMode::Pbd, 1, 5, false},
                          Config{SolverMode::Pbd, 2, 3, true}}) {
    SolverSettings s = scenario::makeSettings(c.mode, 1.0 / 60.0, c.substeps, c.iterations);
    s.iterationIndependentStiffness = c.independent;
    s.velocityDamping = 0.5;
    Solver solver(model, s);
    State state = State::fromModel(*model);
    for (ParticleIndex p : fixed) state.externalForce[p] = Vec3(1e6, -1e6, 1e6);  // ignored: w = 0
    ASSERT_TRUE(solver.run(state, 90).ok());
    for (ParticleIndex p : fixed) {
      EXPECT_EQ(state.position[p], model->initialPosition[p]) << "fixed particle " << p;
      EXPECT_EQ(state.velocity[p], Vec3::Zero()) << "fixed particle " << p;
    }
    // Everything else did move.
    EXPECT_GT((state.position[heavy] - model->initialPosition[heavy]).norm(), 0.1);
    EXPECT_GT((state.position[sheet.firstParticle + 35] - model->initialPosition[sheet.firstParticle + 35]).norm(),
              0.1);
    // In XPBD the compliant attachment pulls its fixed particle with the full spring force -C/alpha
    // (the hard one on a w = 0 particle has nothing to solve and is skipped: lambda stays 0).
    if (c.mode == SolverMode::Xpbd) {
      const ConstraintRef pull{ConstraintFamily::Attachment, 1};
      const double spring = -constraintValue(*model, state, pull) / model->attachments[1].params.compliance;
      EXPECT_LE(relativeError(constraintForce(*model, state, pull), spring), 1e-12);
      EXPECT_GT(std::abs(spring), 1e6);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// V11 Force estimates: the top link of a chain of N particles of mass m hanging at rest carries
// lambda / h^2 = -N m g (negative: tension), also with one iteration per substep. At rest the
// total correction of each substep must cancel gravity's h^2 g exactly, which fixes every lambda
// whatever the number of sweeps.

TEST(V11_ForceEstimate, TopLinkCarriesNmgAtRest) {
  const double mass = 0.2;
  struct Config {
    double timeStep;
    int substeps, iterations;
  };
  for (int N : {3, 8})
    for (double alpha : {0.0, 1e-3})
      for (const Config& c : {Config{1.0 / 60.0, 1, 20}, Config{1.0 / 60.0, 1, 1}, Config{1.0 / 60.0, 20, 1},
                              Config{1.0 / 240.0, 1, 1}, Config{1.0 / 30.0, 4, 2}}) {
        const scenario::HangingChain chain = scenario::makeHangingChain(N, mass, 0.1, {alpha, 0.0, 1.0});
        SolverSettings s = scenario::makeSettings(SolverMode::Xpbd, c.timeStep, c.substeps, c.iterations);
        s.velocityDamping = 10.0;  // only to reach rest sooner; v = 0 at rest
        Solver solver(chain.model, s);
        State state = State::fromModel(*chain.model);
        ASSERT_TRUE(solver.run(state, static_cast<int>(std::lround(8.0 / c.timeStep))).ok());
        const std::string what = "N=" + std::to_string(N) + " alpha=" + std::to_string(alpha) +
                                 " dt=" + std::to_string(c.timeStep) + " substeps=" + std::to_string(c.substeps) +
                                 " n=" + std::to_string(c.iterations);
        EXPECT_LE(scenario::maxSpeed(state), 1e-9) << what;
        const double top = constraintForce(*chain.model, state, {ConstraintFamily::Distance, 0});
        testing::Test::RecordProperty(what,
                                      "top force relative error " + scenario::sci(relativeError(top, -N * mass * kG)));
        EXPECT_LE(relativeError(top, -N * mass * kG), 1e-9) << what << " force " << top;
        for (int k = 1; k < N; ++k)
          EXPECT_LE(relativeError(constraintForce(*chain.model, state,
                                                  {ConstraintFamily::Distance, static_cast<std::uint32_t>(k)}),
                                  -(N - k) * mass * kG),
                    1e-9)
              << what << " link " << k;
        // As a vector: the first free particle is pulled up by N m g.
        std::vector<ParticleIndex> particles;
        std::vector<Vec3> forces;
        constraintForceVectors(*chain.model, state, {ConstraintFamily::Distance, 0}, particles, forces);
        ASSERT_EQ(particles.size(), 2u);
        EXPECT_EQ(particles[1], 1u);
        EXPECT_LE((forces[1] - Vec3(0.0, N * mass * kG, 0.0)).norm() / (N * mass * kG), 1e-9) << what;
      }
}

// ---------------------------------------------------------------------------------------------
// V12 Small steps beat iterations (Macklin et al. 2019): at equal cost, n substeps x 1 iteration
// against 1 step x n iterations, a hard chain with a heavy end mass stretches far less with substeps;
// the ratio of the stretches grows roughly like n.

double restStretch(const scenario::HangingChain& chain, int substeps, int iterations) {
  SolverSettings s = scenario::makeSettings(SolverMode::Xpbd, 1.0 / 240.0, substeps, iterations);
  s.velocityDamping = 4.0;  // settling only; the rest state is a fixed point with v = 0
  Solver solver(chain.model, s);
  State state = State::fromModel(*chain.model);
  EXPECT_TRUE(solver.run(state, 240 * 8).ok());
  EXPECT_LE(scenario::maxSpeed(state), 1e-8);
  return scenario::totalElongation(*chain.model, state) / (chain.links * chain.spacing);
}

TEST(V12_SmallStepsBeatIterations, SubstepsStretchLessAndTheRatioGrowsLikeN) {
  // Ten links of 0.1 kg and 10 cm, hard (alpha = 0), with a 10 kg end mass.
  const scenario::HangingChain chain = scenario::makeHangingChain(10, 0.1, 0.1, {0.0, 0.0, 1.0}, 10.0);
  std::vector<double> ratio;
  for (int n : {2, 4, 8, 16}) {
    const double iterated = restStretch(chain, 1, n);
    const double substepped = restStretch(chain, n, 1);
    EXPECT_GT(iterated, 0.0);
    EXPECT_LT(substepped, iterated) << "n=" << n;
    ratio.push_back(iterated / substepped);
    testing::Test::RecordProperty("stretch_n" + std::to_string(n),
                                  scenario::sci(iterated) + " iterated, " + scenario::sci(substepped) + " substepped");
  }
  for (std::size_t k = 0; k + 1 < ratio.size(); ++k) EXPECT_GT(ratio[k + 1], ratio[k]) << "ratio " << k;
  EXPECT_GT(ratio.back() / ratio.front(), 4.0) << "ratio(16)/ratio(2)";
  // Roughly like n: within a factor 2 of n/2 * ratio(2) ... checked loosely through the slope.
  const double slope = std::log2(ratio.back() / ratio.front()) / 3.0;
  EXPECT_GT(slope, 0.7);
  EXPECT_LT(slope, 1.3);
}

}  // namespace
}  // namespace pliant
