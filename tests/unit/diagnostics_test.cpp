// Unit tests of src/diagnostics.cpp: energy, momentum, residual and force estimates on
// configurations whose values are known by hand.
#include "pliant/diagnostics.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <span>
#include <vector>

#include "pliant/builders.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

// Particle 0: 2 kg at (1,3,0) moving (1,2,0); particle 1: fixed, 5 kg; particle 2: 0.5 kg at
// (0,-1,2) moving (0,0,-4). |x0 - x2| = sqrt(21).
struct Known {
  ModelPtr model;
  State state;
};
Known knownConfiguration() {
  ModelBuilder b;
  b.addParticle(Vec3(1, 3, 0), 2.0, Vec3(1, 2, 0));
  b.addParticle(Vec3(7, 7, 7), 5.0);
  b.fixParticle(1);
  b.addParticle(Vec3(0, -1, 2), 0.5, Vec3(0, 0, -4));
  const double d = std::sqrt(21.0);
  b.addDistance(0, 2, {0.01, 0.0, 1.0}, d - 0.5);       // C = 0.5: U = 0.25 / 0.02 = 12.5 J
  b.addDistance(0, 2, {0.0, 0.0, 1.0}, d - 0.3);        // hard: stores no energy
  b.addMaxDistance(0, 2, {0.04, 0.0, 1.0}, d - 0.2);    // violated, C = -0.2: U = 0.04 / 0.08 = 0.5 J
  b.addMaxDistance(0, 2, {1.0, 0.0, 1.0}, 10.0);        // slack: no energy
  b.addAttachment(2, Vec3(0, -1, 0), {0.5, 0.0, 1.0});  // C = 2: U = 4 / 1 = 4 J
  const std::array<ParticleIndex, 1> p0 = {0};
  // Satisfied unilateral generic (C = 3 >= 0) stores nothing even though it is compliant.
  b.addGeneric(
      [](std::span<const Vec3> x, std::span<Vec3> g) {
        g[0] = Vec3(0, 1, 0);
        return x[0].y();
      },
      p0, true, {2.0, 0.0, 1.0});
  // Violated one (C = 3 - 4 = -1), compliance 0.25: U = 1 / 0.5 = 2 J.
  b.addGeneric(
      [](std::span<const Vec3> x, std::span<Vec3> g) {
        g[0] = Vec3(0, 1, 0);
        return x[0].y() - 4.0;
      },
      p0, true, {0.25, 0.0, 1.0});
  Known k;
  k.model = b.build();
  k.state = State::fromModel(*k.model);
  k.state.velocity[1] = Vec3(100, 100, 100);  // ignored: fixed particles carry no energy or momentum
  return k;
}

TEST(Diagnostics, EnergyOfAKnownConfiguration) {
  const Known k = knownConfiguration();
  SolverSettings settings;  // g = (0, -9.81, 0)
  const EnergyReport e = computeEnergy(*k.model, k.state, settings);
  EXPECT_NEAR(e.kinetic, 0.5 * 2.0 * 5.0 + 0.5 * 0.5 * 16.0, 1e-13);
  // -sum m g.x = 2 * 9.81 * 3 + 0.5 * 9.81 * (-1)
  EXPECT_NEAR(e.gravitational, 2.0 * 9.81 * 3.0 - 0.5 * 9.81, 1e-12);
  EXPECT_NEAR(e.elasticFromPositions, 12.5 + 0.5 + 4.0 + 2.0, 1e-12);
  EXPECT_EQ(e.elastic, 0.0);  // no step yet: no force applied
  EXPECT_NEAR(e.total(), e.kinetic + e.gravitational + e.elastic, 0.0);
  // The potential follows the settings' gravity.
  settings.gravity = Vec3(0.0, 0.0, -2.0);
  EXPECT_NEAR(computeEnergy(*k.model, k.state, settings).gravitational, 0.5 * 2.0 * 2.0, 1e-14);
}

TEST(Diagnostics, ElasticEnergyOfAStretchedSpringIsCSquaredOverTwoAlpha) {
  // XPBD energy U = C^2 / (2 alpha) for several stretches of one compliant spring.
  const double alpha = 2.5e-3;  // m/N
  for (double stretch : {-0.3, 1e-4, 0.05, 0.7}) {
    ModelBuilder b;
    b.addParticle(Vec3(0, 0, 0), 1.0);
    b.addParticle(Vec3(0, -1.0 - stretch, 0), 1.0);
    b.addDistance(0, 1, {alpha, 3.0, 1.0}, 1.0);
    const ModelPtr m = b.build();
    const State s = State::fromModel(*m);
    const EnergyReport e = computeEnergy(*m, s, SolverSettings{});
    EXPECT_NEAR(e.elasticFromPositions, stretch * stretch / (2.0 * alpha), 1e-12 * (1.0 + e.elasticFromPositions))
        << stretch;
    EXPECT_NEAR(constraintValue(*m, s, {ConstraintFamily::Distance, 0}), stretch, 1e-15);
  }
}

TEST(Diagnostics, ElasticEnergyIsThatOfTheAppliedForces) {
  // 1/2 alpha f^2 with f = lambda / h^2 of the last substep, whatever the positions say; PBD mode,
  // which has no compliance, reports C^2 / (2 alpha).
  const Known k = knownConfiguration();
  State s = k.state;
  s.lastSubstep = 0.01;
  for (double& lambda : s.lambda) lambda = 0.0;
  const std::size_t first = k.model->lambdaIndex({ConstraintFamily::Distance, 0});
  const std::size_t hard = k.model->lambdaIndex({ConstraintFamily::Distance, 1});
  s.lambda[first] = -3e-4;  // f = -3 N on compliance 0.01 m/N: 0.045 J
  s.lambda[hard] = 1.0;     // hard: no energy whatever its force
  SolverSettings settings;
  EXPECT_NEAR(computeEnergy(*k.model, s, settings).elastic, 0.5 * 0.01 * 9.0, 1e-15);
  settings.mode = SolverMode::Pbd;
  EXPECT_NEAR(computeEnergy(*k.model, s, settings).elastic, 12.5 + 0.5 + 4.0 + 2.0, 1e-12);
}

TEST(Diagnostics, RelativeResidualAndConvergenceWarning) {
  // One compliant spring: C = 0.5 m; with lambda = -C h^2 / alpha it is converged (relative 0),
  // with lambda = 0 nothing explains the stretch (relative 1) and the warning names what to change.
  ModelBuilder b;
  b.addParticle(Vec3(0, 0, 0), 0.0);
  b.addParticle(Vec3(0, -1.5, 0), 1.0);
  b.addDistance(0, 1, {0.01, 0.0, 1.0}, 1.0);
  const ModelPtr m = b.build();
  State s = State::fromModel(*m);
  s.lastSubstep = 0.01;
  SolverSettings settings;
  settings.substeps = 3;
  ResidualReport r = computeResidual(*m, s, settings);
  EXPECT_NEAR(r.relative, 1.0, 1e-15);
  // The stretch left unexplained, 0.5 m over the spring's 1.5 m (|grad C| = 1 for a distance).
  EXPECT_NEAR(r.strain, 0.5 / 1.5, 1e-15);
  EXPECT_TRUE(farFromConverged(r));
  const std::string warning = convergenceWarning(r, settings);
  EXPECT_NE(warning.find("far from converged"), std::string::npos) << warning;
  EXPECT_NE(warning.find("substeps (now 3"), std::string::npos) << warning;
  EXPECT_NE(warning.find("iterations (now 1"), std::string::npos) << warning;
  s.lambda[0] = -0.5 * 0.01 * 0.01 / 0.01;
  r = computeResidual(*m, s, settings);
  EXPECT_LT(r.relative, 1e-12);
  EXPECT_EQ(convergenceWarning(r, settings), "");
}

TEST(Diagnostics, AStiffLinkStretchedInvisiblyIsNotFarFromConverged) {
  // A stiff link (1e-9 m/N) stretched 2 % with no force to explain it: relative residual 1 (its
  // compliance is not honoured), but the shape is off by 2 % only, under the 5 % that warns;
  // stretched 8 %, it warns. A hard link (alpha = 0) counts too: its residual is C.
  for (const double stretch : {0.02, 0.08}) {
    ModelBuilder b;
    b.addParticle(Vec3(0, 0, 0), 0.0);
    b.addParticle(Vec3(0, -(1.0 + stretch), 0), 1.0);
    b.addDistance(0, 1, {1e-9, 0.0, 1.0}, 1.0);
    const ModelPtr m = b.build();
    State s = State::fromModel(*m);
    s.lastSubstep = 0.01;
    const ResidualReport r = computeResidual(*m, s, SolverSettings{});
    EXPECT_NEAR(r.relative, 1.0, 1e-12) << stretch;
    EXPECT_NEAR(r.strain, stretch / (1.0 + stretch), 1e-12) << stretch;
    EXPECT_EQ(farFromConverged(r), stretch > kFarFromConvergedStrain) << stretch;
    EXPECT_EQ(convergenceWarning(r, SolverSettings{}).empty(), stretch < kFarFromConvergedStrain) << stretch;
    ModelBuilder hard;
    hard.addParticle(Vec3(0, 0, 0), 0.0);
    hard.addParticle(Vec3(0, -(1.0 + stretch), 0), 1.0);
    hard.addDistance(0, 1, {0.0, 0.0, 1.0}, 1.0);
    const ModelPtr hm = hard.build();
    State hs = State::fromModel(*hm);
    hs.lastSubstep = 0.01;
    const ResidualReport hr = computeResidual(*hm, hs, SolverSettings{});
    EXPECT_EQ(hr.relative, 0.0) << stretch;  // no compliant constraint
    EXPECT_NEAR(hr.strain, stretch / (1.0 + stretch), 1e-12) << stretch;
    SolverSettings pbd;
    pbd.mode = SolverMode::Pbd;
    EXPECT_EQ(computeResidual(*hm, hs, pbd).strain, 0.0) << "PBD has no residual to resolve";
  }
}

TEST(Diagnostics, StrainResidualOfATetIsItsLargestMoveOverHalfItsExtent) {
  // A unit right tet (rest volume 1/6 m^3) with its apex raised 0.03 m, compliant, no force: the
  // residual is the volume change 0.005 m^3. V = a.(b x c)/6 with a, b, c the edges from x0, so the
  // gradients are (b x c, c x a, a x b)/6 = (1.03, 0, 0)/6, (0, 1.03, 0)/6, (0, 0, 1)/6 m^2 and
  // x0's, minus their sum. The minimum-norm correction moves x0 the most, by
  // dV |grad_0 V| / sum |grad_i V|^2; half the diagonal of the box [0,1] x [0,1] x [0,1.03] is the size.
  ModelBuilder b;
  b.addParticle(Vec3(0, 0, 0), 1.0);
  b.addParticle(Vec3(1, 0, 0), 1.0);
  b.addParticle(Vec3(0, 1, 0), 1.0);
  b.addParticle(Vec3(0, 0, 1), 1.0);
  b.addTetVolume(0, 1, 2, 3, {1e-6, 0.0, 1.0});
  const ModelPtr m = b.build();
  State s = State::fromModel(*m);
  s.position[3].z() = 1.03;
  s.lastSubstep = 0.01;
  const ResidualReport r = computeResidual(*m, s, SolverSettings{});
  const double dV = 0.03 / 6.0;
  const double g0 = std::sqrt(2.0 * 1.03 * 1.03 + 1.0) / 6.0;
  const double sum = (2.0 * 1.03 * 1.03 + 1.0 + 2.0 * 1.03 * 1.03 + 1.0) / 36.0;
  const double halfExtent = 0.5 * std::sqrt(2.0 + 1.03 * 1.03);
  EXPECT_NEAR(r.strain, dV * g0 / sum / halfExtent, 1e-12);
}

TEST(Diagnostics, MomentumOfKnownVelocities) {
  const Known k = knownConfiguration();
  const MomentumReport all = computeMomentum(*k.model, k.state);
  EXPECT_NEAR(all.mass, 2.5, 1e-15);
  EXPECT_NEAR((all.linear - Vec3(2, 4, -2)).norm(), 0.0, 1e-14);
  EXPECT_NEAR((all.centreOfMass - Vec3(0.8, 2.2, 0.4)).norm(), 0.0, 1e-14);
  // (1,3,0) x (2,4,0) + (0,-1,2) x (0,0,-2) = (0,0,-2) + (2,0,0)
  EXPECT_NEAR((all.angular - Vec3(2, 0, -2)).norm(), 0.0, 1e-14);
  const std::vector<ParticleIndex> subset = {2, 1};  // the fixed particle is skipped
  const MomentumReport part = computeMomentum(*k.model, k.state, &subset);
  EXPECT_NEAR(part.mass, 0.5, 1e-15);
  EXPECT_NEAR((part.linear - Vec3(0, 0, -2)).norm(), 0.0, 1e-15);
  EXPECT_NEAR((part.centreOfMass - Vec3(0, -1, 2)).norm(), 0.0, 1e-15);
  EXPECT_NEAR((part.angular - Vec3(2, 0, 0)).norm(), 0.0, 1e-15);
}

// V3: a particle of mass m on a spring of compliance alpha below a fixed anchor rests at
// elongation m g alpha. Started exactly there, one XPBD step keeps it there and the multiplier
// holds the weight: lambda/h^2 = -m g (stretched: negative), residual C + alpha~ lambda = 0.
struct Hanging {
  ModelPtr model;
  double mass = 0.5, alpha = 1e-3, g = 9.81;
};
Hanging hanging() {
  Hanging h;
  ModelBuilder b;
  b.addParticle(Vec3(0, 0, 0), 0.0);
  b.addParticle(Vec3(0, -(1.0 + h.mass * h.g * h.alpha), 0), h.mass);
  b.addDistance(0, 1, {h.alpha, 0.0, 1.0}, 1.0);
  h.model = b.build();
  return h;
}

TEST(Diagnostics, V3_V11_ResidualVanishesAtTheRestSolution) {
  const Hanging h = hanging();
  SolverSettings settings;
  settings.substeps = 4;
  settings.iterations = 3;
  Solver solver(h.model, settings);
  State state = State::fromModel(*h.model);
  // Not solved yet: lambda = 0, so the residual is |C| = m g alpha.
  const ResidualReport before = computeResidual(*h.model, state, settings);
  EXPECT_NEAR(before.max, h.mass * h.g * h.alpha, 1e-15);
  ASSERT_TRUE(solver.step(state).ok());
  const ResidualReport r = computeResidual(*h.model, state, settings);
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.worst.family, ConstraintFamily::Distance);
  EXPECT_LT(r.max, 1e-14);
  EXPECT_LT(r.rms, 1e-14);
  EXPECT_LT(state.velocity[1].norm(), 1e-11);
  const double hSub = settings.timeStep / settings.substeps;
  EXPECT_EQ(state.lastSubstep, hSub);
  EXPECT_NEAR(constraintForce(*h.model, state, {ConstraintFamily::Distance, 0}), -h.mass * h.g, 1e-9);
  // In PBD terms (alpha~ = 0) the same state has residual |C| = m g alpha.
  SolverSettings pbd = settings;
  pbd.mode = SolverMode::Pbd;
  EXPECT_NEAR(computeResidual(*h.model, state, pbd).max, h.mass * h.g * h.alpha, 1e-12);
}

TEST(Diagnostics, ForceVectorsAreGradientTimesLambdaOverHSquared) {
  const Hanging h = hanging();
  SolverSettings settings;
  settings.substeps = 2;
  Solver solver(h.model, settings);
  State state = State::fromModel(*h.model);
  std::vector<ParticleIndex> particles;
  std::vector<Vec3> forces;
  // Before any step there is no substep to divide by: zero force.
  EXPECT_EQ(constraintForce(*h.model, state, {ConstraintFamily::Distance, 0}), 0.0);
  ASSERT_TRUE(solver.step(state).ok());
  constraintForceVectors(*h.model, state, {ConstraintFamily::Distance, 0}, particles, forces);
  ASSERT_EQ(particles, (std::vector<ParticleIndex>{0, 1}));
  ASSERT_EQ(forces.size(), 2u);
  const double weight = h.mass * h.g;
  // The spring holds the particle up with its weight and pulls the anchor down; they cancel.
  EXPECT_NEAR((forces[1] - Vec3(0, weight, 0)).norm(), 0.0, 1e-9);
  EXPECT_NEAR((forces[0] - Vec3(0, -weight, 0)).norm(), 0.0, 1e-9);
  EXPECT_NEAR((forces[0] + forces[1]).norm(), 0.0, 1e-15);
}

TEST(Diagnostics, ResidualIsZeroForEveryFamilyAtRest) {
  // An undeformed scene without gravity: C = 0 for every constraint and nothing moves.
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = 4;
  cloth.nodesY = 4;
  cloth.stretch.compliance = 1e-6;
  cloth.bending = BendingModel::Dihedral;
  addClothGrid(b, cloth);
  cloth.origin = Vec3(0, 1, 0);
  cloth.bending = BendingModel::Isometric;
  const GeneratedObject second = addClothGrid(b, cloth);
  b.fixParticle(second.firstParticle);
  addTethers(b, {second.firstParticle}, second.firstParticle, second.particleCount, ConstraintParameters{});
  TetBoxDef box;
  box.cellsX = 2;
  box.cellsY = 1;
  box.cellsZ = 1;
  box.origin = Vec3(3, 0, 0);
  addTetBox(b, box);
  TetBoxDef neoHookean;  // neo-Hookean tets: C != 0 at rest, balanced by their multipliers
  neoHookean.cellsX = neoHookean.cellsY = neoHookean.cellsZ = 1;
  neoHookean.size = Vec3(0.1, 0.1, 0.1);
  neoHookean.origin = Vec3(6, 0, 0);
  neoHookean.neoHookean = NeoHookeanMaterial{1.0e3, 0.3};
  addTetBox(b, neoHookean);
  BalloonDef balloon;
  balloon.rings = 4;
  balloon.segments = 6;
  balloon.centre = Vec3(-3, 0, 0);
  const GeneratedObject ball = addBalloon(b, balloon);
  // Shape matching clusters over the balloon's surface: C = 0 at rest, in either mode.
  std::vector<ParticleIndex> surface;
  for (std::uint32_t k = 0; k < ball.particleCount; ++k) surface.push_back(ball.firstParticle + k);
  ShapeMatchingSettings clusters;
  clusters.mode = ShapeMatchingMode::Linear;
  clusters.params.compliance = 1e-5;
  addShapeMatchingClusters(b, surface, 0.3, clusters, nullptr);
  clusters.mode = ShapeMatchingMode::Rigid;
  addShapeMatchingClusters(b, surface, 0.0, clusters, nullptr);
  b.addAttachment(0, b.position(0), ConstraintParameters{});
  const ModelPtr m = b.build();
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    if (static_cast<ConstraintFamily>(f) == ConstraintFamily::Generic) continue;
    EXPECT_GT(m->constraintCount(static_cast<ConstraintFamily>(f)), 0u) << familyName(static_cast<ConstraintFamily>(f));
  }
  SolverSettings settings;
  settings.gravity = Vec3::Zero();
  Solver solver(m, settings);
  State state = State::fromModel(*m);
  ASSERT_TRUE(solver.run(state, 3).ok());
  const ResidualReport r = computeResidual(*m, state, settings);
  EXPECT_EQ(r.count, m->totalConstraintCount());
  EXPECT_LT(r.max, 1e-12);
  for (std::size_t i = 0; i < m->particleCount(); ++i)
    EXPECT_LT((state.position[i] - m->initialPosition[i]).norm(), 1e-12);
  const EnergyReport e = computeEnergy(*m, state, settings);
  EXPECT_LT(e.kinetic, 1e-20);
  EXPECT_LT(e.elastic, 1e-12);
}

}  // namespace
}  // namespace pliant
