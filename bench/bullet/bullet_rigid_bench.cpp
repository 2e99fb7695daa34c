// Bullet's side of issue 17's rigid body speed comparison: btDiscreteDynamicsWorld with its usual
// settings on the two scenes of bench/bullet/README.md (a pile of 1,000 boxes dropped onto the
// ground; a 100-link hinge chain), so that Pliant's side runs the very same scenes.
//
// Bullet as its users run it: btDefaultCollisionConfiguration, btCollisionDispatcher,
// btDbvtBroadphase, btSequentialImpulseConstraintSolver (10 iterations, split impulse, default ERP
// and CFM), the default collision margin (0.04 m, inside btBoxShape), one stepSimulation(1/60 s)
// per frame (one 1/60 s substep), friction 0.5, restitution 0, single precision (Debian's build).
//
// Output (CSV on stdout or --csv FILE):
//   scene,engine,bodies,frames,ms_per_frame,max_penetration_m,max_joint_error_m,drift_m
//   ms_per_frame       mean wall time of stepSimulation per frame (steady clock, this process)
//   max_penetration_m  largest depth of any contact point (-distance) in the last frame
//   max_joint_error_m  chain: largest distance between a hinge's two pivot points in the world, over
//                      every frame (0 for the pile)
//   drift_m            pile: largest displacement of a box over the last `--rest-frames` frames (the
//                      pile at rest should not creep); chain: largest change of any link's distance
//                      from the fixed pivot over the last `--rest-frames` frames of a chain hanging
//                      at rest (the chain is first swung, see the README)
//
// --trace: the pile's motion each simulated second on stderr (as pliant_rigid_bench --trace).
//
// Usage: pliant_bullet_rigid_bench [--frames N] [--rest-frames N] [--trace] [--csv FILE] [--scene pile|chain]
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bullet_harness.h"
#include "rigid_scenes.h"

namespace {

using namespace pliant::bench::bullet;

using pliant::bench::rigid::ChainScene;
using pliant::bench::rigid::PileScene;
using pliant::bench::rigid::Row;

// A world and everything it points to, released in the right order.
struct World {
  btDefaultCollisionConfiguration configuration;
  btCollisionDispatcher dispatcher{&configuration};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &configuration};
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btDefaultMotionState>> motions;
  std::vector<std::unique_ptr<btRigidBody>> bodies;
  std::vector<std::unique_ptr<btTypedConstraint>> constraints;

  World() { world.setGravity(btVector3(0, btScalar(-PileScene::kGravity), 0)); }
  ~World() {
    for (auto& c : constraints) world.removeConstraint(c.get());
    for (auto& b : bodies) world.removeRigidBody(b.get());
  }

  btRigidBody* addBody(btCollisionShape* shape, double mass, const btTransform& pose) {
    btVector3 inertia(0, 0, 0);
    if (mass > 0.0) shape->calculateLocalInertia(btScalar(mass), inertia);
    motions.push_back(std::make_unique<btDefaultMotionState>(pose));
    btRigidBody::btRigidBodyConstructionInfo info(btScalar(mass), motions.back().get(), shape, inertia);
    info.m_friction = btScalar(PileScene::kFriction);
    info.m_restitution = 0;
    bodies.push_back(std::make_unique<btRigidBody>(info));
    world.addRigidBody(bodies.back().get());
    return bodies.back().get();
  }

  double maxPenetration() {
    double deepest = 0.0;
    for (int m = 0; m < dispatcher.getNumManifolds(); ++m) {
      const btPersistentManifold* manifold = dispatcher.getManifoldByIndexInternal(m);
      for (int p = 0; p < manifold->getNumContacts(); ++p)
        deepest = std::max(deepest, -double(manifold->getContactPoint(p).getDistance()));
    }
    return deepest;
  }
};

double stepTimed(World& w) {
  const auto start = std::chrono::steady_clock::now();
  w.world.stepSimulation(btScalar(1.0 / PileScene::kFrameRate), 1, btScalar(1.0 / PileScene::kFrameRate));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

Row runPile(int frames, int restFrames, bool trace) {
  World w;
  w.shapes.push_back(std::make_unique<btStaticPlaneShape>(btVector3(0, 1, 0), btScalar(0)));
  w.addBody(w.shapes.back().get(), 0.0, btTransform::getIdentity());
  const double h = PileScene::kHalfExtent;
  w.shapes.push_back(std::make_unique<btBoxShape>(btVector3(btScalar(h), btScalar(h), btScalar(h))));
  btCollisionShape* box = w.shapes.back().get();
  for (int i = 0; i < PileScene::kBoxCount; ++i) {
    const PileScene::Box b = PileScene::box(i);
    btTransform pose;
    pose.setOrigin(btVector3(btScalar(b.position[0]), btScalar(b.position[1]), btScalar(b.position[2])));
    pose.setRotation(btQuaternion(btVector3(0, 1, 0), btScalar(b.yaw)));
    w.addBody(box, PileScene::kMass, pose);
  }
  Row row;
  row.scene = "box-pile-1000";
  row.bodies = PileScene::kBoxCount;
  row.frames = frames;
  double total = 0.0;
  std::vector<btVector3> rest(w.bodies.size());
  for (int f = 0; f < frames; ++f) {
    if (f == frames - restFrames)
      for (std::size_t b = 0; b < w.bodies.size(); ++b) rest[b] = w.bodies[b]->getCenterOfMassPosition();
    total += stepTimed(w);
    if (trace && (f + 1) % static_cast<int>(PileScene::kFrameRate) == 0) {
      pliant::bench::rigid::PileMotion motion;
      for (std::size_t b = 1; b < w.bodies.size(); ++b)
        motion.add(w.bodies[b]->getLinearVelocity().length(), w.bodies[b]->getAngularVelocity().length(),
                   w.bodies[b]->getCenterOfMassPosition().y(), w.bodies[b]->isActive());
      motion.print("bullet", (f + 1) / static_cast<int>(PileScene::kFrameRate));
    }
  }
  row.msPerFrame = total / frames;
  row.maxPenetration = w.maxPenetration();
  for (std::size_t b = 1; b < w.bodies.size() && restFrames > 0 && restFrames <= frames; ++b)
    row.drift = std::max(row.drift, double((w.bodies[b]->getCenterOfMassPosition() - rest[b]).length()));
  int off = 0;
  for (std::size_t b = 1; b < w.bodies.size(); ++b) {
    const btVector3 c = w.bodies[b]->getCenterOfMassPosition();
    off += PileScene::offPlace(static_cast<int>(b - 1), c.x(), c.y(), c.z());
  }
  std::fprintf(stderr, "bullet_rigid_bench pile: %d of %d boxes off their place in the standing pile at the end\n", off,
               PileScene::kBoxCount);
  return row;
}

Row runChain(int frames, int restFrames) {
  World w;
  const double hx = ChainScene::kHalfLength, hw = ChainScene::kHalfWidth;
  w.shapes.push_back(std::make_unique<btBoxShape>(btVector3(btScalar(hx), btScalar(hw), btScalar(hw))));
  btCollisionShape* link = w.shapes.back().get();
  std::vector<btRigidBody*> links;
  for (int i = 0; i < ChainScene::kLinkCount; ++i) {
    btTransform pose = btTransform::getIdentity();
    const auto c = ChainScene::linkCentre(i);
    pose.setOrigin(btVector3(btScalar(c[0]), btScalar(c[1]), btScalar(c[2])));
    links.push_back(w.addBody(link, ChainScene::kMass, pose));
  }
  // Hinges about z at the links' shared ends; the first link's free end hinged to the world.
  const btVector3 axis(0, 0, 1);
  const btVector3 leftEnd(btScalar(-hx), 0, 0), rightEnd(btScalar(hx), 0, 0);
  w.constraints.push_back(std::make_unique<btHingeConstraint>(*links[0], leftEnd, axis));
  for (int i = 0; i + 1 < ChainScene::kLinkCount; ++i)
    w.constraints.push_back(
        std::make_unique<btHingeConstraint>(*links[i], *links[i + 1], rightEnd, leftEnd, axis, axis));
  for (auto& c : w.constraints) w.world.addConstraint(c.get(), true);  // no collision between linked bodies

  auto jointError = [&] {
    double worst =
        (links[0]->getCenterOfMassTransform() * leftEnd -
         btVector3(btScalar(ChainScene::kPivot[0]), btScalar(ChainScene::kPivot[1]), btScalar(ChainScene::kPivot[2])))
            .length();
    for (int i = 0; i + 1 < ChainScene::kLinkCount; ++i)
      worst = std::max(worst, double((links[i]->getCenterOfMassTransform() * rightEnd -
                                      links[i + 1]->getCenterOfMassTransform() * leftEnd)
                                         .length()));
    return worst;
  };
  Row row;
  row.scene = "hinge-chain-100";
  row.bodies = ChainScene::kLinkCount;
  row.frames = frames;
  double total = 0.0;
  for (int f = 0; f < frames; ++f) {
    total += stepTimed(w);
    row.maxJointError = std::max(row.maxJointError, jointError());
  }
  row.msPerFrame = total / frames;
  row.maxPenetration = w.maxPenetration();
  // Drift at rest: the chain damped to rest hanging straight down (velocities removed every frame
  // for the settling period), then left alone for restFrames: how far does any link creep?
  std::vector<btVector3> rest(links.size());
  for (int f = 0; f < ChainScene::kSettleFrames; ++f) {
    for (btRigidBody* b : links) {
      b->setLinearVelocity(b->getLinearVelocity() * btScalar(0.9));
      b->setAngularVelocity(b->getAngularVelocity() * btScalar(0.9));
    }
    w.world.stepSimulation(btScalar(1.0 / ChainScene::kFrameRate), 1, btScalar(1.0 / ChainScene::kFrameRate));
  }
  for (std::size_t i = 0; i < links.size(); ++i) rest[i] = links[i]->getCenterOfMassPosition();
  for (int f = 0; f < restFrames; ++f)
    w.world.stepSimulation(btScalar(1.0 / ChainScene::kFrameRate), 1, btScalar(1.0 / ChainScene::kFrameRate));
  for (std::size_t i = 0; i < links.size(); ++i)
    row.drift = std::max(row.drift, double((links[i]->getCenterOfMassPosition() - rest[i]).length()));
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 600, restFrames = 60;
  bool trace = false;
  std::string csvPath, only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--frames" && value) frames = parseCount("pliant_bullet_rigid_bench", "--frames", value, 1), ++i;
    else if (arg == "--rest-frames" && value)
      restFrames = parseCount("pliant_bullet_rigid_bench", "--rest-frames", value, 0), ++i;
    else if (arg == "--trace") trace = true;
    else if (arg == "--csv" && value) csvPath = value, ++i;
    else if (arg == "--scene" && value) only = value, ++i;
    else {
      std::fprintf(stderr,
                   "Usage: pliant_bullet_rigid_bench [--frames N] [--rest-frames N] [--trace] [--csv FILE] [--scene "
                   "pile|chain]\n"
                   "Bullet's btDiscreteDynamicsWorld on issue 17's rigid scenes (bench/bullet/README.md).\n");
      return arg == "--help" ? 0 : 2;
    }
  }
  if (frames < 1 || restFrames < 0 || restFrames > frames || (!only.empty() && only != "pile" && only != "chain")) {
    std::fprintf(
        stderr,
        "pliant_bullet_rigid_bench: expected --frames >= 1, 0 <= --rest-frames <= --frames, --scene pile|chain\n");
    return 2;
  }
  std::vector<Row> rows;
  if (only.empty() || only == "pile") rows.push_back(runPile(frames, restFrames, trace));
  if (only.empty() || only == "chain") rows.push_back(runChain(frames, restFrames));
  try {
    writeCsv(csvPath, pliant::bench::rigid::csvText(rows, "bullet"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pliant_bullet_rigid_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
