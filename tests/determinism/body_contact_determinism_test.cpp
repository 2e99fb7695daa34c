// Determinism of rigid body contacts: a small pile of boxes, spheres, capsules and a hull dropped on
// the ground, a kinematic box collider sweeping through it and a static body, next to a cloth whose
// solve is split across threads, gives bit-identical states run twice and with 1 and 2 threads
// (body contacts: the narrow phase per pair and, from 256 manifolds, the passes over regions of
// space run on the team, with results that do not depend on it; the second test is a pile that large).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "pliant/bodies.h"
#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/rigid_shapes.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

ModelPtr pileScene() {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = cloth.nodesY = 12;
  cloth.origin = Vec3(2.0, 1.0, -0.5);
  cloth.stretch.compliance = 1e-6;
  const GeneratedObject c = addClothGrid(b, cloth);
  b.fixParticle(c.firstParticle);
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.02, 1.0, 0.0), {0.6, 0.4, 0.2}));
  b.addCollider(Collider::box(Vec3::Zero(), Vec3(0.05, 0.1, 0.5), Quat::Identity(), {0.3, 0.2, 0.0}),
                [](double t) { return Vec3(-0.8 + 0.5 * t, 0.1, 0.0); });
  const ContactMaterial material{0.5, 0.4, 0.3};
  std::vector<Vec3> points;
  for (int i = 0; i < 8; ++i)
    points.emplace_back((i & 1) ? 0.08 : -0.1, (i & 2) ? 0.06 : -0.07, (i & 4) ? 0.09 : -0.05);
  const auto hull = std::make_shared<const ConvexHull>(buildConvexHull(points, "pile hull"));
  for (int k = 0; k < 12; ++k) {
    BodyDefinition body;
    body.material = material;
    body.density = 500.0 + 50.0 * k;
    switch (k % 4) {
      case 0:
        body.shape.kind = BodyShapeKind::Box;
        body.shape.halfExtents = Vec3(0.1, 0.07, 0.08);
        break;
      case 1:
        body.shape.kind = BodyShapeKind::Sphere;
        body.shape.radius = 0.08;
        break;
      case 2:
        body.shape.kind = BodyShapeKind::Capsule;
        body.shape.radius = 0.05;
        body.shape.halfHeight = 0.08;
        break;
      default:
        body.shape.kind = BodyShapeKind::ConvexHull;
        body.shape.hull = hull;
        break;
    }
    body.pose.position = Vec3(0.13 * (k % 3) - 0.1, 0.15 + 0.2 * k, 0.05 * (k % 2));
    body.pose.rotation = Quat(Eigen::AngleAxisd(0.3 * k, Vec3(1.0, 2.0, 0.5).normalized()));
    body.angularVelocity = Vec3(0.5, -0.2 * k, 0.1);
    b.addBody(body);
  }
  BodyDefinition base;
  base.motion = BodyMotion::Static;
  base.shape.kind = BodyShapeKind::Box;
  base.shape.halfExtents = Vec3(0.3, 0.05, 0.3);
  base.pose.position = Vec3(0.5, 0.05, 0.0);
  base.material = material;
  b.addBody(base);
  return b.build();
}

// Steps `model` `steps` times on `threads` threads: the state's hash every `every` steps, and the
// body contacts seen (their sum over the steps and the most in one).
struct Outcome {
  std::vector<std::uint64_t> hashes;
  std::size_t contacts = 0;
  std::size_t mostContacts = 0;
};
Outcome runOn(const ModelPtr& model, const SolverSettings& settings, int threads, int steps, int every) {
  const int saved = threadCount();
  setThreadCount(threads);
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  Outcome run;
  for (int step = 0; step < steps; ++step) {
    EXPECT_TRUE(solver.step(state).ok());
    run.contacts += solver.lastBodyContacts().size();
    run.mostContacts = std::max(run.mostContacts, solver.lastBodyContacts().size());
    if (step % every == every - 1) run.hashes.push_back(state.hash());
  }
  setThreadCount(saved);
  return run;
}

TEST(BodyContactDeterminism, PileIsBitIdenticalRunTwiceAndForOneAndTwoThreads) {
  const ModelPtr model = pileScene();
  SolverSettings settings = SolverSettings::smallSteps(8);
  settings.parallelBlockSize = 16;  // splits the cloth's colours even at this size
  const Outcome one = runOn(model, settings, 1, 90, 10);
  const Outcome again = runOn(model, settings, 1, 90, 10);
  const Outcome two = runOn(model, settings, 2, 90, 10);
  EXPECT_GT(one.contacts, 100u);  // the pile is in contact for most of the run
  EXPECT_EQ(one.hashes, again.hashes);
  EXPECT_EQ(one.hashes, two.hashes);
  EXPECT_EQ(one.contacts, two.contacts);
}

// 300 cubes in three staggered layers of 10 x 10, resting on each other and dropped 1 cm onto the
// ground: over 1,024 contacts (so over 256 manifolds: the passes cut the bodies into regions and
// the narrow phase runs on the team), bit-identical for 1, 2 and 3 threads.
ModelPtr largePile() {
  ModelBuilder b;
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.6, 0.5, 0.0}));
  for (int i = 0; i < 300; ++i) {
    const int x = i % 10, z = (i / 10) % 10, layer = i / 100;
    const double shift = layer % 2 ? 0.05 : 0.0;
    BodyDefinition body;
    body.shape.kind = BodyShapeKind::Box;
    body.shape.halfExtents = Vec3(0.1, 0.1, 0.1);
    body.pose.position = Vec3((x - 4.5) * 0.2 + shift, 0.11 + 0.2 * layer, (z - 4.5) * 0.2 + shift);
    body.pose.rotation = Quat(Eigen::AngleAxisd(0.01 * (i % 7), Vec3::UnitY()));
    body.material = {0.6, 0.5, 0.0};
    b.addBody(body);
  }
  return b.build();
}

// Runs the large pile with `settings` on 1, 2 and 3 threads, expecting the same hashes and contacts
// from each (and over 1,024 contacts); returns the one-thread run.
Outcome expectLargePileBitIdenticalOnOneTwoThree(const SolverSettings& settings) {
  const ModelPtr model = largePile();
  const Outcome one = runOn(model, settings, 1, 16, 4);
  const Outcome two = runOn(model, settings, 2, 16, 4);
  const Outcome three = runOn(model, settings, 3, 16, 4);
  EXPECT_GT(one.mostContacts, 1024u);
  EXPECT_EQ(one.hashes, two.hashes);
  EXPECT_EQ(one.hashes, three.hashes);
  EXPECT_EQ(one.contacts, two.contacts);
  return one;
}

TEST(BodyContactDeterminism, LargePileIsBitIdenticalForOneTwoAndThreeThreads) {
  expectLargePileBitIdenticalOnOneTwoThree(SolverSettings::smallSteps(4));
}

// The same pile with stack mass scaling (SolverSettings::bodyStackMassScaling): the factors are a
// function of the poses at the start of each solve, so the regions' passes give the same bits on any
// team; and they change the solve (the hashes differ from the unscaled run's).
TEST(BodyContactDeterminism, LargePileWithStackMassScalingIsBitIdenticalForOneTwoAndThreeThreads) {
  SolverSettings settings = SolverSettings::smallSteps(4);
  const Outcome unscaled = runOn(largePile(), settings, 1, 16, 4);
  settings.bodyStackMassScaling = 5.0;
  const Outcome scaled = expectLargePileBitIdenticalOnOneTwoThree(settings);
  EXPECT_NE(scaled.hashes, unscaled.hashes);
}

}  // namespace
}  // namespace pliant
