// The rigid bodies' broad phase (rigid/body_contacts.cpp: a uniform grid of the bounds' centres,
// wide bodies tested against all) misses no pair: the pairs with contacts after one substep are
// exactly those whose shapes collideShapes finds within the contact margin, over bodies of mixed
// kinds and sizes, a wide static slab, and one body far away, crowded and spread out. With
// per-substep detection the later substeps of a step filter the step's candidate pairs: they give
// the contacts a search of their own would, also when a body leaves its grown bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>

#include "pliant/bodies.h"
#include "pliant/colliders.h"
#include "pliant/model.h"
#include "pliant/rigid_shapes.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "rigid/body_contacts.h"

namespace pliant {
namespace {

ModelPtr mixedBodies(std::uint32_t seed, double spreadX) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  ModelBuilder b;
  BodyDefinition slab;
  slab.shape.kind = BodyShapeKind::Box;
  slab.shape.halfExtents = Vec3(20.0, 0.5, 20.0);
  slab.motion = BodyMotion::Static;
  slab.pose.position = Vec3(0.0, -0.45, 0.0);
  b.addBody(slab);
  for (int k = 0; k < 300; ++k) {
    BodyDefinition body;
    const int kind = k % 3;
    body.shape.kind = kind == 0 ? BodyShapeKind::Box : kind == 1 ? BodyShapeKind::Sphere : BodyShapeKind::Capsule;
    const double size = k % 50 == 0 ? 0.8 : 0.05 + 0.2 * unit(random);  // a few wide ones
    body.shape.halfExtents = Vec3(size, 0.5 * size + 0.02, 0.8 * size);
    body.shape.radius = 0.6 * size;
    body.shape.halfHeight = size;
    body.motion = k % 17 == 0 ? BodyMotion::Static : BodyMotion::Dynamic;
    body.pose.position = Vec3(spreadX * unit(random), 2.5 * unit(random), 3.0 * unit(random));
    body.pose.rotation =
        Quat(Eigen::AngleAxisd(6.0 * unit(random), Vec3(unit(random), unit(random), 1.0).normalized()));
    b.addBody(body);
  }
  BodyDefinition far;
  far.shape.kind = BodyShapeKind::Sphere;
  far.shape.radius = 0.1;
  far.pose.position = Vec3(1e7, 0.0, -3e6);
  b.addBody(far);
  return b.build();
}

// Crowded (3 m along x: the sweep along x gives way to the grid) and spread out (30 m: the sweep).
TEST(BodyBroadPhase, FindsEveryPairThatTouches) {
  for (const double spreadX : {3.0, 30.0})
    for (std::uint32_t seed : {1u, 2u, 3u}) {
      const ModelPtr model = mixedBodies(seed, spreadX);
      SolverSettings settings = SolverSettings::smallSteps(1);
      settings.gravity = Vec3::Zero();  // the predicted poses are the initial ones
      settings.sleeping = false;
      Solver solver(model, settings);
      State state = State::fromModel(*model);
      ASSERT_TRUE(solver.step(state).ok());
      std::set<std::pair<BodyIndex, BodyIndex>> found, expected;
      for (const BodyContact& k : solver.lastBodyContacts()) found.insert({k.bodyA, k.bodyB});
      const State initial = State::fromModel(*model);
      for (BodyIndex i = 0; i < model->bodyCount(); ++i)
        for (BodyIndex j = i + 1; j < model->bodyCount(); ++j) {
          const RigidBody &a = model->bodies[i], &c = model->bodies[j];
          if (!a.dynamic() && !c.dynamic()) continue;
          ContactManifold m;
          collideShapes(a.shape, a.shapePose(initial.bodyPosition[i], initial.bodyRotation[i]), c.shape,
                        c.shapePose(initial.bodyPosition[j], initial.bodyRotation[j]), settings.contactMargin, m);
          if (m.count > 0) expected.insert({i, j});
        }
      EXPECT_GT(expected.size(), spreadX < 10.0 ? 100u : 10u);  // on the slab and on each other
      EXPECT_EQ(found, expected) << "seed " << seed << ", spread " << spreadX;
    }
}

// The contacts of the substeps of one step, each found by a BodyContacts that keeps the step's candidate
// pairs (as the Solver's does) and by a fresh one that searches the substep's bounds, must be the same list,
// bit for bit. In the third substep one box is put onto a body it was far from (an escape from its grown
// bounds: without the check, its new pair would be missing).
TEST(BodyBroadPhase, StepCandidatesGiveEachSubstepsContacts) {
  const ModelPtr model = mixedBodies(4, 3.0);
  SolverSettings settings = SolverSettings::smallSteps(4);
  settings.gravity = Vec3::Zero();
  settings.sleeping = false;
  const double h = settings.timeStep / settings.substeps;
  State state = State::fromModel(*model);
  std::mt19937 random(7);
  std::uniform_real_distribution<double> speed(-1.0, 1.0);
  for (std::size_t b = 0; b < model->bodyCount(); ++b) {
    if (!model->bodies[b].dynamic()) continue;
    state.bodyVelocity[b] = Vec3(speed(random), speed(random), speed(random));
    state.bodyAngularVelocity[b] = 3.0 * Vec3(speed(random), speed(random), speed(random));
  }
  // A dynamic box (index 1: k = 0) and a dynamic body far from it.
  const BodyIndex moved = 1;
  ASSERT_EQ(model->bodies[moved].shape.kind, BodyShapeKind::Box);
  BodyIndex target = 0;
  for (BodyIndex b = 2; b + 1 < model->bodyCount() && target == 0; ++b)
    if (model->bodies[b].dynamic() && (state.bodyPosition[b] - state.bodyPosition[moved]).norm() > 1.5) target = b;
  ASSERT_NE(target, 0u);
  detail::BodyContacts kept;
  kept.prepare(*model);
  const auto samePair = [&](const BodyContact& k) {
    return (k.bodyA == std::min(moved, target) && k.bodyB == std::max(moved, target));
  };
  bool movedPairFound = false;
  std::size_t laterContacts = 0;
  for (int substep = 0; substep < settings.substeps; ++substep) {
    // A prediction of the poses (the solve is left out: the broad phase sees poses only).
    for (std::size_t b = 0; b < model->bodyCount(); ++b) {
      if (!model->bodies[b].dynamic()) continue;
      state.bodyPreviousPosition[b] = state.bodyPosition[b];
      state.bodyPreviousRotation[b] = state.bodyRotation[b];
      state.bodyPosition[b] += h * state.bodyVelocity[b];
      const Vec3 turn = h * state.bodyAngularVelocity[b];
      state.bodyRotation[b] =
          (Quat(Eigen::AngleAxisd(turn.norm(), turn.normalized())) * state.bodyRotation[b]).normalized();
    }
    if (substep == 2) state.bodyPosition[moved] = state.bodyPosition[target] + Vec3(0.02, 0.03, 0.0);
    const double start = substep * h, end = (substep + 1) * h;
    kept.collide(*model, settings, state, h, substep, start, end, 1);
    detail::BodyContacts fresh;
    fresh.prepare(*model);
    fresh.collide(*model, settings, state, h, 0, start, end, 1);  // substep 0: a search of its own
    const auto& a = kept.contacts();
    const auto& b = fresh.contacts();
    ASSERT_EQ(a.size(), b.size()) << "substep " << substep;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].bodyA, b[i].bodyA);
      EXPECT_EQ(a[i].bodyB, b[i].bodyB);
      EXPECT_EQ(a[i].collider, b[i].collider);
      EXPECT_EQ(a[i].localA, b[i].localA);
      EXPECT_EQ(a[i].localB, b[i].localB);
      EXPECT_EQ(a[i].normal, b[i].normal);
      EXPECT_EQ(a[i].allowance, b[i].allowance);
    }
    if (substep > 0) laterContacts += a.size();
    if (substep >= 2) movedPairFound = movedPairFound || std::any_of(a.begin(), a.end(), samePair);
  }
  EXPECT_GT(laterContacts, 100u);  // the later substeps did find contacts
  EXPECT_TRUE(movedPairFound);     // and the box put onto its target touches it
}

}  // namespace
}  // namespace pliant
