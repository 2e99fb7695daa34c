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

std::vector<std::uint64_t> run(int threads, std::size_t& contacts) {
  const int saved = threadCount();
  setThreadCount(threads);
  const ModelPtr model = pileScene();
  SolverSettings settings = SolverSettings::smallSteps(8);
  settings.parallelBlockSize = 16;  // splits the cloth's colours even at this size
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  std::vector<std::uint64_t> hashes;
  contacts = 0;
  for (int step = 0; step < 90; ++step) {
    EXPECT_TRUE(solver.step(state).ok());
    contacts += solver.lastBodyContacts().size();
    if (step % 10 == 9) hashes.push_back(state.hash());
  }
  setThreadCount(saved);
  return hashes;
}

TEST(BodyContactDeterminism, PileIsBitIdenticalRunTwiceAndForOneAndTwoThreads) {
  std::size_t contacts1 = 0, contacts1again = 0, contacts2 = 0;
  const std::vector<std::uint64_t> one = run(1, contacts1);
  const std::vector<std::uint64_t> again = run(1, contacts1again);
  const std::vector<std::uint64_t> two = run(2, contacts2);
  EXPECT_GT(contacts1, 100u);  // the pile is in contact for most of the run
  EXPECT_EQ(one, again);
  EXPECT_EQ(one, two);
  EXPECT_EQ(contacts1, contacts2);
}

// 300 cubes in three staggered layers of 10 x 10, resting on each other and dropped 1 cm onto the
// ground: over 1,024 contacts (so over 256 manifolds: the passes cut the bodies into regions and
// the narrow phase runs on the team), bit-identical for 1, 2 and 3 threads.
std::vector<std::uint64_t> runLargePile(int threads, std::size_t& mostContacts) {
  const int saved = threadCount();
  setThreadCount(threads);
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
  const ModelPtr model = b.build();
  Solver solver(model, SolverSettings::smallSteps(4));
  State state = State::fromModel(*model);
  std::vector<std::uint64_t> hashes;
  mostContacts = 0;
  for (int step = 0; step < 16; ++step) {
    EXPECT_TRUE(solver.step(state).ok());
    mostContacts = std::max(mostContacts, solver.lastBodyContacts().size());
    if (step % 4 == 3) hashes.push_back(state.hash());
  }
  setThreadCount(saved);
  return hashes;
}

TEST(BodyContactDeterminism, LargePileIsBitIdenticalForOneTwoAndThreeThreads) {
  std::size_t contacts1 = 0, contacts2 = 0, contacts3 = 0;
  const std::vector<std::uint64_t> one = runLargePile(1, contacts1);
  const std::vector<std::uint64_t> two = runLargePile(2, contacts2);
  const std::vector<std::uint64_t> three = runLargePile(3, contacts3);
  EXPECT_GT(contacts1, 1024u);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, three);
  EXPECT_EQ(contacts1, contacts2);
}

}  // namespace
}  // namespace pliant
