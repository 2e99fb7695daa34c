// Scenario tests for docs/validation.md case V17: inequality constraints C >= 0 (tethers, contacts)
// are solved by projected Gauss-Seidel. A constraint that pushed earlier in a substep and was then
// left slack by the others gives back what it no longer needs, so after enough iterations it ends
// at its limit with a force, or slack with lambda = 0 (no force reported); it never stays
// over-pulled. The configurations are one-dimensional (or two-dimensional) with equal masses, so
// the converged positions and multipliers are the mass-weighted projection, known by hand.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "pliant/pliant.h"
#include "scenario/scenario_util.h"

namespace pliant {
namespace {

constexpr double kMass = 0.5;    // kg, every free particle
constexpr double kStep = 1e-3;   // s, one step of many iterations
constexpr int kIterations = 80;  // the error halves per iteration below: 80 is far past round-off

// Anchor (fixed) at the origin, p and q free on the x axis at rest, no gravity. Tether 0 keeps
// |p - anchor| <= 1 m, tether 1 keeps |p - q| <= 0.4 m. Tethers are projected in index order, so in
// the first iteration tether 0 pulls p to 1 m and tether 1 then pulls p further in.
struct TwoTethers {
  ModelPtr model;
  SolverSettings settings;
};
TwoTethers twoTethers(double p0, double q0) {
  ModelBuilder b;
  const ParticleIndex anchor = b.addParticle(Vec3::Zero(), 0.0);
  const ParticleIndex p = b.addParticle(Vec3(p0, 0.0, 0.0), kMass);
  const ParticleIndex q = b.addParticle(Vec3(q0, 0.0, 0.0), kMass);
  b.addMaxDistance(anchor, p, ConstraintParameters{}, 1.0);
  b.addMaxDistance(p, q, ConstraintParameters{}, 0.4);
  TwoTethers t;
  t.model = b.build();
  t.settings = scenario::makeSettings(SolverMode::Xpbd, kStep, 1, kIterations, Vec3::Zero());
  return t;
}

TEST(V17_Inequality, TetherLeftSlackByAnotherGivesItsForceBackAndReportsNone) {
  // p at 1.2 m, q at 0.2 m. The projection of (p, q) onto {p <= 1, p - q <= 0.4} with equal masses
  // is p = 0.9, q = 0.5: tether 1 at its limit, tether 0 slack (lambda 0). Skipping tether 0
  // because it is slack would leave p at 0.8 m, pulled in by a tether that holds nothing.
  const TwoTethers t = twoTethers(1.2, 0.2);
  Solver solver(t.model, t.settings);
  State state = State::fromModel(*t.model);
  ASSERT_TRUE(solver.step(state).ok());
  EXPECT_NEAR(state.position[1].x(), 0.9, 1e-12);
  EXPECT_NEAR(state.position[2].x(), 0.5, 1e-12);
  EXPECT_EQ(state.lambda[t.model->lambdaIndex({ConstraintFamily::MaxDistance, 0})], 0.0);
  EXPECT_EQ(constraintForce(*t.model, state, {ConstraintFamily::MaxDistance, 0}), 0.0);
  EXPECT_GT(constraintValue(*t.model, state, {ConstraintFamily::MaxDistance, 0}), 0.09);  // slack by 0.1 m
  // Tether 1 carries the whole pull: it moved q by 0.3 m, lambda = m * 0.3 m.
  EXPECT_NEAR(state.lambda[t.model->lambdaIndex({ConstraintFamily::MaxDistance, 1})], kMass * 0.3, 1e-12);
}

TEST(V17_Inequality, TetherPushedBeyondItsLimitByAnotherEndsAtItWithItsForce) {
  // p at 1.5 m, q at 0.2 m: without tether 0 the projection would be p = 1.05 m; with it, p = 1 m
  // and q = 0.6 m. The multipliers follow from the moves: q moved 0.4 m (tether 1: lambda_1 =
  // 0.4 m kg), p moved -0.5 m = -(lambda_0 + lambda_1) / m, so lambda_0 = 0.1 m kg, a force of
  // lambda_0 / h^2 pulling p towards the anchor.
  const TwoTethers t = twoTethers(1.5, 0.2);
  Solver solver(t.model, t.settings);
  State state = State::fromModel(*t.model);
  ASSERT_TRUE(solver.step(state).ok());
  EXPECT_NEAR(state.position[1].x(), 1.0, 1e-12);
  EXPECT_NEAR(state.position[2].x(), 0.6, 1e-12);
  EXPECT_NEAR(constraintForce(*t.model, state, {ConstraintFamily::MaxDistance, 0}), kMass * 0.1 / (kStep * kStep),
              1e-9 * kMass * 0.1 / (kStep * kStep));
  EXPECT_NEAR(constraintForce(*t.model, state, {ConstraintFamily::MaxDistance, 1}), kMass * 0.4 / (kStep * kStep),
              1e-9 * kMass * 0.4 / (kStep * kStep));
}

TEST(V17_Inequality, ContactLeftSlackByAnotherContactGivesItsPushBack) {
  // A particle predicted at (1, -0.5) in the wedge {y >= 0} (collider 0) and {y >= x} (collider 1),
  // no friction. Its projection onto the wedge is (0.25, 0.25), on collider 1 only. Collider 0 is
  // projected first and pushes it to (1, 0), collider 1 then to (0.5, 0.5), where collider 0 is
  // slack but would keep its push if skipped.
  ModelBuilder b;
  const Vec3 start(1.0, 1.0, 0.0);
  b.addParticle(start, kMass, Vec3(0.0, -1.5 / kStep, 0.0));  // predicted at (1, -0.5)
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.0, 1.0, 0.0)));
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(-1.0, 1.0, 0.0)));
  const ModelPtr model = b.build();
  SolverSettings settings = scenario::makeSettings(SolverMode::Xpbd, kStep, 1, kIterations, Vec3::Zero());
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.step(state).ok());
  ASSERT_EQ(solver.lastColliderContacts().size(), 2u);
  EXPECT_NEAR(state.position[0].x(), 0.25, 1e-12);
  EXPECT_NEAR(state.position[0].y(), 0.25, 1e-12);
  EXPECT_EQ(solver.lastColliderContacts()[0].lambda, 0.0);  // the floor holds nothing at the end
  // The wall's push: the particle moved 0.75 * sqrt(2) m along the wall's normal.
  EXPECT_NEAR(solver.lastColliderContacts()[1].lambda, kMass * 0.75 * std::sqrt(2.0), 1e-12);
}

// The wedge {y >= t} and {(y - x) / sqrt(2) >= t} (a gap t kept from both faces): the projection
// of (1, -0.5) touches the second face only.
Vec3 wedgeProjection(double t) {
  const Vec3 n(-1.0 / std::sqrt(2.0), 1.0 / std::sqrt(2.0), 0.0);
  const Vec3 predicted(1.0, -0.5, 0.0);
  return predicted + (t - n.dot(predicted)) * n;
}

TEST(V17_Inequality, ParticlePairContactLeftSlackGivesItsPushBack) {
  // The same wedge made of two fixed particles so large (R = 1e4 m) that their surfaces are planes
  // to 1e-4 m where the small particle (radius t) meets them; pairs are projected in (particle,
  // other) order, the floor first.
  const double R = 1e4, t = 0.01;
  const Vec3 wall(-1.0 / std::sqrt(2.0), 1.0 / std::sqrt(2.0), 0.0);
  ModelBuilder b;
  // From (0.5, 1), clear of both faces (a start inside one would be given an allowance), to (1, -0.5).
  const ParticleIndex p = b.addParticle(Vec3(0.5, 1.0, 0.0), kMass, Vec3(0.5 / kStep, -1.5 / kStep, 0.0));
  const ParticleIndex floor = b.addParticle(Vec3(0.8, -R, 0.0), 0.0);
  const ParticleIndex side = b.addParticle(Vec3(0.25, 0.25, 0.0) - R * wall, 0.0);
  b.setParticleRadius(p, t);
  b.setParticleRadius(floor, R);
  b.setParticleRadius(side, R);
  const ModelPtr model = b.build();
  Solver solver(model, scenario::makeSettings(SolverMode::Xpbd, kStep, 1, kIterations, Vec3::Zero()));
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.step(state).ok());
  ASSERT_EQ(solver.lastParticleContacts().size(), 2u);
  EXPECT_LT((state.position[p] - wedgeProjection(t)).norm(), 1e-3) << state.position[p].transpose();
  EXPECT_EQ(solver.lastParticleContacts()[0].lambda, 0.0);
}

TEST(V17_Inequality, SurfaceContactLeftSlackGivesItsPushBack) {
  // The wedge as two fixed collision triangles sharing the edge on the z axis, and a small free
  // collision triangle whose corners all move as the particle above (no constraints join them):
  // each corner meets the floor triangle (index 0, projected first), then the side.
  const double t = 0.01;
  ModelBuilder b;
  const ParticleIndex e0 = b.addParticle(Vec3(0.0, 0.0, -2.0), 0.0);
  const ParticleIndex e1 = b.addParticle(Vec3(0.0, 0.0, 2.0), 0.0);
  const ParticleIndex f = b.addParticle(Vec3(3.0, 0.0, 0.0), 0.0);
  const ParticleIndex s = b.addParticle(Vec3(2.0, 2.0, 0.0), 0.0);
  const Vec3 v(0.5 / kStep, -1.5 / kStep, 0.0);  // from (0.5, 1) to (1, -0.5) in the step
  const ParticleIndex a = b.addParticle(Vec3(0.5, 1.0, 0.0), kMass, v);
  const ParticleIndex c = b.addParticle(Vec3(0.5, 1.0, 0.01), kMass, v);
  const ParticleIndex d = b.addParticle(Vec3(0.51, 1.0, 0.0), kMass, v);
  const std::array<ParticleIndex, 3> triangles[] = {{e0, e1, f}, {e0, e1, s}, {a, c, d}};
  b.addCollisionTriangles(triangles);
  b.model().surfaceThickness = t;
  const ModelPtr model = b.build();
  Solver solver(model, scenario::makeSettings(SolverMode::Xpbd, kStep, 1, kIterations, Vec3::Zero()));
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.step(state).ok());
  ASSERT_EQ(solver.lastSurfaceContacts().size(), 6u);  // each corner against each face
  EXPECT_LT((state.position[a] - wedgeProjection(t)).norm(), 1e-12) << state.position[a].transpose();
  EXPECT_EQ(solver.lastSurfaceContacts()[0].lambda, 0.0);
}

}  // namespace
}  // namespace pliant
