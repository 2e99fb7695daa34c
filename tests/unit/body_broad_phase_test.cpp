// The rigid bodies' broad phase (rigid/body_contacts.cpp: a uniform grid of the bounds' centres,
// wide bodies tested against all) misses no pair: the pairs with contacts after one substep are
// exactly those whose shapes collideShapes finds within the contact margin, over bodies of mixed
// kinds and sizes, a wide static slab, and one body far away, crowded and spread out.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace pliant
