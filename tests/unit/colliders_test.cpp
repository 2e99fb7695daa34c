// Unit tests of src/core/collision/colliders.cpp (signed distance and normal of each shape against the
// closed form, poses of kinematic colliders) and of the contact stages in
// src/core/collision/collider_contacts.cpp and particle_contacts.cpp that no validation case (docs/validation.md)
// covers: particle-particle contacts, the rest neighbour exclusion, the depenetration cap, kinematic colliders,
// validation and step refusal.
#include "pliant/colliders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "pliant/builders.h"
#include "pliant/diagnostics.h"
#include "pliant/error.h"
#include "pliant/io/scenes.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

constexpr double kTol = 1e-12;
constexpr double kG = 9.81;  // m/s^2

// Points around the origin at the scale of the shapes below, inside and outside.
std::vector<Vec3> samplePoints() {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<Vec3> points;
  for (int i = 0; i < 400; ++i) points.emplace_back(u(rng), u(rng), u(rng));
  return points;
}

// A pose with a rotation about a skew axis and a translation.
ColliderPose skewPose() {
  ColliderPose pose;
  pose.position = Vec3(0.3, -0.2, 0.5);
  pose.rotation = Quat(Eigen::AngleAxisd(0.7, Vec3(1.0, 2.0, -0.5).normalized()));
  return pose;
}

// The distance must be a signed distance: its gradient (by central differences) is the normal.
void expectNormalIsGradient(const Collider& c, const ColliderPose& pose, const Vec3& x) {
  Vec3 n;
  colliderDistance(c, pose, x, n);
  const double e = 1e-6;
  Vec3 gradient;
  for (int k = 0; k < 3; ++k) {
    Vec3 up = x, down = x, unused;
    up[k] += e;
    down[k] -= e;
    gradient[k] = (colliderDistance(c, pose, up, unused) - colliderDistance(c, pose, down, unused)) / (2.0 * e);
  }
  EXPECT_LT((gradient - n).norm(), 1e-6) << "at " << x.transpose();
  EXPECT_NEAR(n.norm(), 1.0, kTol);
}

TEST(Colliders, PlaneDistanceIsTheSignedHeightAlongItsNormal) {
  const Vec3 point(0.2, -0.3, 0.1);
  const Vec3 normal = Vec3(1.0, 2.0, -2.0) / 3.0;
  const Collider c = Collider::plane(point, 3.0 * normal);  // any length
  for (const Vec3& x : samplePoints()) {
    Vec3 n;
    const double d = colliderDistance(c, c.pose, x, n);
    EXPECT_NEAR(d, normal.dot(x - point), kTol);
    EXPECT_LT((n - normal).norm(), kTol);
  }
}

TEST(Colliders, SphereDistanceIsDistanceToCentreMinusRadius) {
  const Collider c = Collider::sphere(Vec3(0.1, 0.2, -0.3), 0.8);
  for (const ColliderPose& pose : {c.pose, skewPose()})
    for (const Vec3& x : samplePoints()) {
      Vec3 n;
      const double d = colliderDistance(c, pose, x, n);
      EXPECT_NEAR(d, (x - pose.position).norm() - 0.8, kTol);
      EXPECT_LT((n - (x - pose.position).normalized()).norm(), 1e-12);
      expectNormalIsGradient(c, pose, x);
    }
  // At the centre the normal is the frame's +y axis (any unit vector would do; this one is fixed).
  Vec3 n;
  EXPECT_NEAR(colliderDistance(c, c.pose, c.pose.position, n), -0.8, kTol);
  EXPECT_EQ(n, Vec3::UnitY());
}

// Closed form of a box's signed distance in its own frame.
double boxDistance(const Vec3& q, const Vec3& half) {
  const Vec3 d = q.cwiseAbs() - half;
  return d.cwiseMax(0.0).norm() + std::min(d.maxCoeff(), 0.0);
}

TEST(Colliders, BoxDistanceMatchesTheClosedFormInAnyPose) {
  const Vec3 half(0.5, 0.3, 0.8);
  const ColliderPose pose = skewPose();
  const Collider c = Collider::box(pose.position, half, pose.rotation);
  for (const Vec3& x : samplePoints()) {
    Vec3 n;
    const double d = colliderDistance(c, c.pose, x, n);
    const Vec3 q = pose.rotation.conjugate() * (x - pose.position);
    EXPECT_NEAR(d, boxDistance(q, half), kTol);
    // Moving along the normal by -d lands on the surface (outside: the nearest point; inside: the
    // nearest face).
    Vec3 unused;
    EXPECT_NEAR(colliderDistance(c, c.pose, x - d * n, unused), 0.0, 1e-12);
    const Vec3 dq = q.cwiseAbs() - half;
    const bool nearMedial = dq.maxCoeff() < 0.0 && [&] {
      Vec3 sorted = dq;
      std::sort(sorted.data(), sorted.data() + 3);
      return sorted[2] - sorted[1] < 1e-3;
    }();
    if (!nearMedial) expectNormalIsGradient(c, c.pose, x);
  }
  // A point just above the top face: distance and +y normal of the box frame.
  const Vec3 top = pose.position + pose.rotation * Vec3(0.1, 0.3 + 0.25, -0.2);
  Vec3 n;
  EXPECT_NEAR(colliderDistance(c, c.pose, top, n), 0.25, kTol);
  EXPECT_LT((n - pose.rotation * Vec3::UnitY()).norm(), kTol);
}

TEST(Colliders, CapsuleDistanceIsDistanceToItsSegmentMinusRadius) {
  const Vec3 a(-0.4, 0.1, 0.3), b(0.6, -0.5, -0.2);
  const double radius = 0.35;
  const Collider c = Collider::capsule(a, b, radius);
  for (const Vec3& x : samplePoints()) {
    const double s = std::clamp((x - a).dot(b - a) / (b - a).squaredNorm(), 0.0, 1.0);
    const Vec3 closest = a + s * (b - a);
    Vec3 n;
    const double d = colliderDistance(c, c.pose, x, n);
    EXPECT_NEAR(d, (x - closest).norm() - radius, 1e-12);
    EXPECT_LT((n - (x - closest).normalized()).norm(), 1e-9);
    expectNormalIsGradient(c, c.pose, x);
  }
  // Degenerate: a == b is a sphere.
  const Collider ball = Collider::capsule(a, a, radius);
  Vec3 n;
  EXPECT_NEAR(colliderDistance(ball, ball.pose, a + Vec3(0, 0, 1), n), 1.0 - radius, kTol);
}

TEST(Colliders, KinematicPoseFollowsItsPaths) {
  ModelBuilder b;
  b.addParticle(Vec3::Zero(), 1.0);
  const std::uint32_t still = b.addCollider(Collider::sphere(Vec3(1, 2, 3), 0.5));
  const std::uint32_t moving = b.addCollider(
      Collider::box(Vec3::Zero(), Vec3(0.5, 0.5, 0.5)), [](double t) { return Vec3(t, 2.0 * t, -t); },
      [](double t) { return Quat(Eigen::AngleAxisd(t, Vec3::UnitZ())); });
  const ModelPtr model = b.build();
  EXPECT_FALSE(model->colliders[still].kinematic());
  EXPECT_TRUE(model->colliders[moving].kinematic());
  for (double t : {0.0, 0.25, 1.5}) {
    EXPECT_EQ(colliderPose(*model, still, t).position, Vec3(1, 2, 3));
    const ColliderPose p = colliderPose(*model, moving, t);
    EXPECT_LT((p.position - Vec3(t, 2.0 * t, -t)).norm(), kTol);
    EXPECT_NEAR(p.rotation.angularDistance(Quat(Eigen::AngleAxisd(t, Vec3::UnitZ()))), 0.0, 1e-12);
  }
}

// A plane moving up at 1 m/s carries a particle resting on it (friction-free, so only the normal
// matters): the particle ends each step on the plane, moving with it.
TEST(Colliders, KinematicPlaneLiftsARestingParticle) {
  ModelBuilder b;
  const ParticleIndex p = b.addParticle(Vec3(0.0, 0.1, 0.0), 1.0);
  b.setParticleRadius(p, 0.1);
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY()), [](double t) { return Vec3(0.0, 1.0 * t, 0.0); });
  const ModelPtr model = b.build();
  Solver solver(model, SolverSettings::smallSteps(5));
  State state = State::fromModel(*model);
  for (int s = 0; s < 60; ++s) {
    ASSERT_TRUE(solver.step(state).ok());
    EXPECT_NEAR(state.position[p].y(), state.time + 0.1, 1e-9) << "step " << s;
  }
  EXPECT_NEAR(state.velocity[p].y(), 1.0, 1e-9);
}

// A sphere swept sideways through a particle resting on the ground pushes it aside, and static
// friction with a moving box makes a particle ride along.
TEST(Colliders, KinematicCollidersPushAndCarryParticles) {
  ModelBuilder b;
  const ParticleIndex pushed = b.addParticle(Vec3(0.0, 0.05, 0.0), 0.1);
  const ParticleIndex rider = b.addParticle(Vec3(0.0, 1.05, 3.0), 0.1);
  b.setParticleRadius(pushed, 0.05);
  b.setParticleRadius(rider, 0.05);
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY()));
  b.addCollider(Collider::sphere(Vec3::Zero(), 0.3), [](double t) { return Vec3(-1.0 + 2.0 * t, 0.3, 0.0); });
  b.addCollider(Collider::box(Vec3::Zero(), Vec3(0.5, 0.5, 0.5), Quat::Identity(), {1.0, 1.0, 0.0}),
                [](double t) { return Vec3(0.5 * t, 0.5, 3.0); });
  const ModelPtr model = b.build();
  Solver solver(model, SolverSettings::smallSteps(10));
  State state = State::fromModel(*model);
  const Model& m = *model;
  for (int s = 0; s < 60; ++s) {
    ASSERT_TRUE(solver.step(state).ok());
    Vec3 n;
    const double clearance =
        colliderDistance(m.colliders[1], colliderPose(m, 1, state.time), state.position[pushed], n) - 0.05;
    EXPECT_GT(clearance, -1e-9) << "step " << s;
  }
  EXPECT_GT(std::abs(state.position[pushed].x()), 0.2);  // pushed out of the sphere's way
  // The rider slips while the box jumps from rest to 0.5 m/s (dynamic friction accelerates it at
  // mu_d g, for about 0.05 s), then rides along stuck: same speed, on the top face.
  EXPECT_NEAR(state.velocity[rider].x(), 0.5, 1e-9);
  EXPECT_NEAR(state.position[rider].x(), 0.5 - 0.5 * 0.5 * 0.5 / kG, 2e-3);
  EXPECT_NEAR(state.position[rider].y(), 1.05, 1e-9);
}

// ---------------------------------------------------------------------------------------------
// Particle-particle contacts

// Two equal particles meet head-on: momentum is conserved exactly; e = 1 swaps their velocities,
// e = 0 leaves them moving together.
TEST(ParticleContacts, HeadOnCollisionConservesMomentumAndAppliesRestitution) {
  for (double e : {0.0, 1.0}) {
    ModelBuilder b;
    const ParticleIndex a = b.addParticle(Vec3(-0.5, 0.0, 0.0), 1.0, Vec3(2.0, 0.0, 0.0));
    const ParticleIndex c = b.addParticle(Vec3(0.5, 0.0, 0.0), 1.0, Vec3(-1.0, 0.0, 0.0));
    b.setParticleRadius(a, 0.1);
    b.setParticleRadius(c, 0.1);
    b.model().particleContactMaterial.restitution = e;
    const ModelPtr model = b.build();
    SolverSettings settings = SolverSettings::smallSteps(20);
    settings.gravity = Vec3::Zero();
    Solver solver(model, settings);
    State state = State::fromModel(*model);
    bool touched = false;
    for (int s = 0; s < 30; ++s) {
      ASSERT_TRUE(solver.step(state).ok());
      touched = touched || !solver.lastParticleContacts().empty();
      EXPECT_NEAR(state.velocity[a].x() + state.velocity[c].x(), 1.0, 1e-12);
      EXPECT_GT((state.position[a] - state.position[c]).norm(), 0.2 - 1e-9);
    }
    ASSERT_TRUE(touched);
    if (e == 1.0) {
      EXPECT_NEAR(state.velocity[a].x(), -1.0, 1e-9);
      EXPECT_NEAR(state.velocity[c].x(), 2.0, 1e-9);
    } else {
      EXPECT_NEAR(state.velocity[a].x(), 0.5, 1e-9);
      EXPECT_NEAR(state.velocity[c].x(), 0.5, 1e-9);
    }
  }
}

// Particles of one cloth that share a constraint overlap at rest without pushing each other; the
// same cloth does collide with a second, separate one.
TEST(ParticleContacts, RestNeighboursDoNotCollide) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 5;
  def.sizeX = def.sizeY = 0.4;  // spacing 0.1 m
  def.bending = BendingModel::Isometric;
  const GeneratedObject cloth = addClothGrid(b, def);
  b.setParticleRadius(cloth.firstParticle, cloth.particleCount, 0.06);  // neighbours overlap
  const ModelPtr model = b.build();
  SolverSettings settings = SolverSettings::smallSteps(4);
  settings.gravity = Vec3::Zero();
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 10).ok());
  // Only pairs two apart along a row or column without a shared constraint are within reach
  // (0.2 m > 0.12 m: none): nothing collides and nothing moves.
  EXPECT_EQ(solver.lastParticleContacts().size(), 0u);
  for (std::size_t i = 0; i < model->particleCount(); ++i)
    EXPECT_LT((state.position[i] - model->initialPosition[i]).norm(), 1e-12);

  // A free particle of the same radius placed overlapping a cloth node is pushed out.
  ModelBuilder b2;
  const GeneratedObject cloth2 = addClothGrid(b2, def);
  b2.setParticleRadius(cloth2.firstParticle, cloth2.particleCount, 0.06);
  const ParticleIndex intruder = b2.addParticle(Vec3(0.2, 0.05, 0.2), 0.1);
  b2.setParticleRadius(intruder, 0.06);
  const ModelPtr model2 = b2.build();
  Solver solver2(model2, settings);
  State state2 = State::fromModel(*model2);
  ASSERT_TRUE(solver2.run(state2, 60).ok());
  for (ParticleIndex p = 0; p < cloth2.particleCount; ++p)
    EXPECT_GT((state2.position[intruder] - state2.position[p]).norm(), 0.12 - 1e-9) << "node " << p;
  EXPECT_GT(state2.position[intruder].y(), 0.05);
}

// The Small Steps cap: an initial overlap is removed at no more than maxDepenetrationVelocity.
TEST(ParticleContacts, InitialOverlapIsPushedOutAtTheCappedSpeed) {
  for (double cap : {0.5, std::numeric_limits<double>::infinity()}) {
    ModelBuilder b;
    const ParticleIndex p = b.addParticle(Vec3(0.0, -0.2, 0.0), 1.0);  // 0.2 m inside the ground
    b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY()));
    const ModelPtr model = b.build();
    SolverSettings settings = SolverSettings::smallSteps(10, 0.01);
    settings.gravity = Vec3::Zero();
    settings.maxDepenetrationVelocity = cap;
    Solver solver(model, settings);
    State state = State::fromModel(*model);
    ASSERT_TRUE(solver.step(state).ok());
    if (std::isinf(cap)) {
      EXPECT_NEAR(state.position[p].y(), 0.0, 1e-12);  // out at once
    } else {
      EXPECT_NEAR(state.position[p].y(), -0.2 + cap * 0.01, 1e-12);
      ASSERT_TRUE(solver.run(state, 40).ok());
      EXPECT_NEAR(state.position[p].y(), 0.0, 1e-12);  // 0.2 m at 0.5 m/s: out after 0.4 s
    }
    // The push leaves no velocity behind: the velocity pass zeroes the normal speed (e = 0).
    EXPECT_LT(state.velocity[p].norm(), 1e-9);
  }
}

TEST(ParticleContacts, DisabledOrZeroRadiusMeansNoPairs) {
  ModelBuilder b;
  b.setParticleRadius(b.addParticle(Vec3(0, 0, 0), 1.0), 0.1);
  b.setParticleRadius(b.addParticle(Vec3(0.05, 0, 0), 1.0), 0.1);
  b.addParticle(Vec3(0.0, 0.01, 0), 1.0);  // radius 0: a point, never in a pair
  SolverSettings settings;
  settings.gravity = Vec3::Zero();
  const ModelPtr model = b.build();
  {
    Solver solver(model, settings);
    State state = State::fromModel(*model);
    ASSERT_TRUE(solver.step(state).ok());
    EXPECT_EQ(solver.lastParticleContacts().size(), 1u);
  }
  // The same model with particle contacts off (a built model is immutable: edit a copy).
  auto copy = std::make_shared<Model>(*model);
  copy->particleCollisions = false;
  const ModelPtr disabled = copy;
  Solver solver(disabled, settings);
  State state = State::fromModel(*disabled);
  ASSERT_TRUE(solver.step(state).ok());
  EXPECT_EQ(solver.lastContactCount(), 0u);
  EXPECT_EQ(state.position[0], Vec3::Zero());
}

// Many particles in a box: every pair within reach is found once (against brute force), in
// (particle, other) order.
TEST(ParticleContacts, HashGridFindsExactlyThePairsWithinReach) {
  ModelBuilder b;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-0.5, 0.5), r(0.01, 0.04);
  for (int i = 0; i < 300; ++i) b.setParticleRadius(b.addParticle(Vec3(u(rng), u(rng), u(rng)), 1.0), r(rng));
  const ModelPtr model = b.build();
  SolverSettings settings;
  settings.gravity = Vec3::Zero();
  settings.maxDepenetrationVelocity = 1e-9;  // keep the overlaps: we only look at detection
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.step(state).ok());
  // Detection ran on the predicted positions, which equal the initial ones (no gravity, no velocity).
  std::vector<std::pair<ParticleIndex, ParticleIndex>> expected;
  for (ParticleIndex a = 0; a < model->particleCount(); ++a)
    for (ParticleIndex c = a + 1; c < model->particleCount(); ++c) {
      const double reach = model->radius(a) + model->radius(c) + settings.contactMargin;
      if ((model->initialPosition[a] - model->initialPosition[c]).norm() < reach) expected.emplace_back(a, c);
    }
  std::vector<std::pair<ParticleIndex, ParticleIndex>> found;
  for (const Contact& c : solver.lastParticleContacts()) found.emplace_back(c.particle, c.other);
  ASSERT_GT(expected.size(), 10u);
  EXPECT_EQ(found, expected);
}

// Clouds dense enough that a particle meets more than a screening batch of others in its cell
// and the 13 after it (particle_contacts.cpp screens 64 at once), made of close pairs joined by a
// distance constraint (neighbours at rest): the pairs found are exactly those within reach that
// share no constraint, on one thread and on two.
TEST(ParticleContacts, DenseCloudWithRestNeighboursFindsExactlyThePairsWithinReach) {
  // Half-widths of the cloud's cube: at 0.2 m the pairs come from the candidate list; at 0.1 m
  // (eight times denser) the list would hold more than its 32 pairs per particle and the grid is
  // searched directly (particle_contacts.cpp), which must exclude the same neighbours.
  for (const double half : {0.2, 0.1}) {
    ModelBuilder b;
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-half, half), r(0.004, 0.008), near(-0.005, 0.005);
    ConstraintParameters link;
    link.compliance = 1.0;  // soft: the links barely move anything in one step
    constexpr int kCount = 4000;
    for (int i = 0; i < kCount; i += 2) {
      // Pairs of particles a few millimetres apart, each joined by a distance constraint.
      const Vec3 x(u(rng), u(rng), u(rng));
      const ParticleIndex a = b.addParticle(x, 1.0);
      const ParticleIndex c = b.addParticle(x + Vec3(near(rng), near(rng), near(rng)), 1.0);
      b.setParticleRadius(a, r(rng));
      b.setParticleRadius(c, r(rng));
      b.addDistance(a, c, link);
    }
    const ModelPtr model = b.build();
    SolverSettings settings;
    settings.gravity = Vec3::Zero();
    settings.maxDepenetrationVelocity = 1e-9;
    std::vector<std::pair<ParticleIndex, ParticleIndex>> expected;
    for (ParticleIndex a = 0; a < model->particleCount(); ++a)
      for (ParticleIndex c = a + 1; c < model->particleCount(); ++c) {
        const double reach = model->radius(a) + model->radius(c) + settings.contactMargin;
        const bool linked = a % 2 == 0 && c == a + 1;
        if (!linked && (model->initialPosition[a] - model->initialPosition[c]).norm() < reach)
          expected.emplace_back(a, c);
      }
    // At 0.2 m, cells of 2 (2 r_max + margin) = 0.042 m hold about 4.6 particles on average, so a
    // cell and the 13 after it about 65: many particles meet more than 64 others.
    ASSERT_GT(expected.size(), 200u);
    const int saved = threadCount();
    for (int threads : {1, 2}) {
      setThreadCount(threads);
      Solver solver(model, settings);
      State state = State::fromModel(*model);
      ASSERT_TRUE(solver.step(state).ok());
      std::vector<std::pair<ParticleIndex, ParticleIndex>> found;
      for (const Contact& c : solver.lastParticleContacts()) found.emplace_back(c.particle, c.other);
      EXPECT_EQ(found, expected) << threads << " threads, half-width " << half << " m";
    }
    setThreadCount(saved);
  }
}

// ---------------------------------------------------------------------------------------------
// Validation and refusal

TEST(ColliderValidation, BadShapesMaterialsAndRadiiNameTheField) {
  auto expectError = [](auto&& f, const std::string& part) {
    try {
      f();
      ADD_FAILURE() << "no error, expected one mentioning '" << part << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  ModelBuilder b;
  b.addParticle(Vec3::Zero(), 1.0);
  expectError([&] { b.addCollider(Collider::sphere(Vec3::Zero(), 0.0)); }, "sphere radius");
  expectError([&] { b.addCollider(Collider::capsule(Vec3::Zero(), Vec3::UnitX(), -1.0)); }, "capsule radius");
  expectError([&] { b.addCollider(Collider::box(Vec3::Zero(), Vec3(1, 0, 1))); }, "half extents");
  expectError([&] { b.addCollider(Collider::plane(Vec3::Zero(), Vec3::Zero())); }, "non-zero normal");
  expectError(
      [&] {
        b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {-0.1, 0.0, 0.0}));
      },
      "static friction");
  expectError(
      [&] {
        b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.0, -1.0, 0.0}));
      },
      "dynamic friction");
  expectError([&] { b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.0, 0.0, 1.5})); }, "restitution");
  expectError([&] { b.setParticleRadius(0, -0.1); }, "radius");
  expectError([&] { b.setParticleRadius(3, 0.1); }, "out of range");
  expectError([&] { b.setParticleRadius(0, 2, 0.1); }, "particles 0 to 1 out of range");
  expectError([&] { b.setParticleRadius(0, 1, -0.1); }, "radius");
  // A copy of the built model, broken by hand below for validate().
  const auto m = std::make_shared<Model>(*b.build());
  m->particleRadius.push_back(0.1);
  expectError([&] { m->validate(); }, "particleRadius");
  m->particleRadius.pop_back();
  m->colliders.push_back(Collider::sphere(Vec3::Zero(), 1.0));
  m->colliders.back().path = 2;
  expectError([&] { m->validate(); }, "collider 0: path 2");
  SolverSettings s;
  s.contactMargin = -1.0;
  expectError([&] { s.validate(); }, "contactMargin");
  s.contactMargin = 0.0;
  s.maxDepenetrationVelocity = 0.0;
  expectError([&] { s.validate(); }, "maxDepenetrationVelocity");
}

// A collider path that jumps far makes the contact push the particle beyond the step bound: the
// refusal names the contact.
TEST(ColliderValidation, RefusedStepNamesTheContact) {
  ModelBuilder b;
  const ParticleIndex p = b.addParticle(Vec3(0.0, 0.0, 0.0), 1.0);
  b.addParticle(Vec3(5.0, 0.0, 0.0), 1.0);
  b.addCollider(Collider::plane(Vec3(0, -10, 0), Vec3::UnitY()));
  b.addCollider(Collider::sphere(Vec3::Zero(), 2.0),
                [](double t) { return t < 0.06 ? Vec3(0.0, 10.0, 0.0) : Vec3(0.0, -1.5, 0.0); });
  const ModelPtr model = b.build();
  SolverSettings settings;
  settings.gravity = Vec3::Zero();
  settings.maxDisplacementPerStep = 0.1;
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 3).ok());
  const State before = state;
  const StepResult r = solver.step(state);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status, StepStatus::ExcessiveDisplacement);
  EXPECT_EQ(r.particle, p);
  EXPECT_FALSE(r.hasConstraint);
  EXPECT_TRUE(r.hasContact);
  EXPECT_EQ(r.contactCollider, 1);
  EXPECT_NE(r.message.find("contact of particle 0 with collider 1"), std::string::npos) << r.message;
  EXPECT_EQ(state.hash(), before.hash());
}

// ---------------------------------------------------------------------------------------------
// Scene files (src/scene_file.cpp): colliders, particle radii, particle contacts, solver fields.

std::string sceneWith(const std::string& colliders, const std::string& extra = "") {
  return R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 1, 0], [0.5, 1, 0]], "mass": 0.1,
                          "particle_radius": 0.02}],
             "colliders": )" +
         colliders + extra + "}";
}

TEST(ColliderSceneFile, EveryShapeMaterialAndPathIsRead) {
  const Scene scene =
      parseScene(sceneWith(R"([
      {"type": "plane", "normal": [0, 2, 0], "friction": {"static": 0.6, "dynamic": 0.4}, "restitution": 0.3},
      {"type": "sphere", "centre": [1, 2, 3], "radius": 0.5, "friction": 0.7,
       "path": {"keyframes": [{"time": 0, "position": [10, 0, 0]}, {"time": 1, "position": [11, 0, 0]}]}},
      {"type": "box", "centre": [0, 1, 0], "half_extents": [1, 0.1, 2], "rotation": {"axis": [0, 0, 1], "angle": 0.5},
       "friction": {"static": 0.5}},
      {"type": "capsule", "start": [0, 0, 0], "end": [0, 0, 2], "radius": 0.25}
    ])",
                           R"(, "particle_contact": {"enabled": false, "friction": 0.2, "restitution": 0.1},
        "solver": {"contact_margin": 0.01, "max_depenetration_velocity": 5, "dynamic_friction": "velocity_pass"})"),
                 "test", "");
  const Model& m = *scene.model;
  ASSERT_EQ(m.colliders.size(), 4u);
  EXPECT_EQ(m.colliders[0].shape, ColliderShape::Plane);
  EXPECT_EQ(m.colliders[0].material.staticFriction, 0.6);
  EXPECT_EQ(m.colliders[0].material.dynamicFriction, 0.4);
  EXPECT_EQ(m.colliders[0].material.restitution, 0.3);
  EXPECT_EQ(m.colliders[1].shape, ColliderShape::Sphere);
  EXPECT_EQ(m.colliders[1].material.staticFriction, 0.7);  // a number sets both
  EXPECT_EQ(m.colliders[1].material.dynamicFriction, 0.7);
  EXPECT_TRUE(m.colliders[1].kinematic());
  // The path moves the sphere rigidly from its centre: +1 m in x over the first second.
  EXPECT_LT((colliderPose(m, 1, 0.5).position - Vec3(1.5, 2, 3)).norm(), 1e-12);
  EXPECT_EQ(m.colliders[2].shape, ColliderShape::Box);
  EXPECT_EQ(m.colliders[2].material.dynamicFriction, 0.5);  // a missing one takes the other's value
  Vec3 n;
  EXPECT_NEAR(colliderDistance(m.colliders[2], m.colliders[2].pose,
                               Vec3(0, 1, 0) + 0.3 * Vec3(-std::sin(0.5), std::cos(0.5), 0), n),
              0.2, 1e-12);
  EXPECT_EQ(m.colliders[3].shape, ColliderShape::Capsule);
  EXPECT_NEAR(m.colliders[3].halfHeight, 1.0, 1e-12);
  EXPECT_EQ(m.radius(0), 0.02);
  EXPECT_EQ(m.radius(1), 0.02);
  EXPECT_FALSE(m.particleCollisions);
  EXPECT_EQ(m.particleContactMaterial.staticFriction, 0.2);
  EXPECT_EQ(m.particleContactMaterial.restitution, 0.1);
  EXPECT_EQ(scene.settings.contactMargin, 0.01);
  EXPECT_EQ(scene.settings.maxDepenetrationVelocity, 5.0);
  EXPECT_TRUE(scene.settings.dynamicFrictionInVelocityPass);
}

TEST(ColliderSceneFile, BadCollidersNameThePathAndTheExpectation) {
  auto errorOf = [](const std::string& colliders) -> std::string {
    try {
      (void)parseScene(sceneWith(colliders), "bad.json", "");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  auto expectError = [&](const std::string& colliders, const std::string& part) {
    const std::string message = errorOf(colliders);
    EXPECT_NE(message.find(part), std::string::npos) << "got: '" << message << "' for " << colliders;
  };
  expectError(R"([{"type": "cylinder"}])", "/colliders/0/type: unknown collider type 'cylinder'");
  expectError(R"([{"type": "sphere", "centre": [0, 0, 0], "radius": 1, "colour": 3}])",
              "/colliders/0: unknown field 'colour'");
  expectError(R"([{"type": "sphere", "centre": [0, 0, 0], "radius": -1}])",
              "/colliders/0/radius: expected a number greater than 0");
  expectError(R"([{"type": "plane", "normal": [0, 0, 0]}])", "/colliders/0/normal: the normal must not be zero");
  expectError(R"([{"type": "plane"}])", "/colliders/0: missing required field 'normal'");
  expectError(R"([{"type": "box", "centre": [0, 0, 0], "half_extents": [1, 0, 1]}])", "/colliders/0/half_extents");
  expectError(R"([{"type": "plane", "normal": [0, 1, 0], "restitution": 1.5}])",
              "/colliders/0/restitution: expected a number from 0 to 1");
  expectError(R"([{"type": "plane", "normal": [0, 1, 0], "friction": {"kinetic": 0.5}}])",
              "/colliders/0/friction: unknown field 'kinetic'");
  expectError(R"([{"type": "plane", "normal": [0, 1, 0], "friction": -0.5}])",
              "/colliders/0/friction: expected a number of at least 0");
  expectError(R"([{"type": "capsule", "start": [0, 0, 0], "end": [0, 1, 0]}])",
              "/colliders/0: missing required field 'radius'");
  EXPECT_EQ(errorOf("[]"), "");  // no colliders is fine
}

}  // namespace
}  // namespace pliant
