// Unit tests of the Model and State bytes (src/io/model_bytes.cpp, io::encodeCheckpoint in
// src/io/output.cpp), which Python's pickling uses: a decoded model must step on bit-identically
// to the original, a model holding functions must be refused naming them, and damaged bytes must
// be refused with a message, never a crash.
#include "pliant/io/model_bytes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/io/checkpoint.h"
#include "pliant/io/output.h"
#include "pliant/io/scenes.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

std::uint64_t hashAfterSteps(const ModelPtr& model, const SolverSettings& settings, int steps) {
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  for (int i = 0; i < steps; ++i) EXPECT_TRUE(solver.step(state).ok());
  return state.hash();
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelBytes, EveryBuiltinSceneWithoutFunctionsRoundTripsAndStepsIdentically) {
  int roundTripped = 0;
  for (const std::string& name : builtinSceneNames()) {
    const Scene scene = makeBuiltinScene(name);
    if (!io::describeModelFunctions(*scene.model).empty()) {
      EXPECT_NE(errorOf([&] { io::encodeModel(*scene.model); }).find("cannot be written as bytes"), std::string::npos)
          << name;
      continue;
    }
    const std::string bytes = io::encodeModel(*scene.model);
    const ModelPtr decoded = std::make_shared<const Model>(io::decodeModel(bytes, name));
    EXPECT_EQ(io::encodeModel(*decoded), bytes) << name;
    EXPECT_EQ(hashAfterSteps(decoded, scene.settings, 5), hashAfterSteps(scene.model, scene.settings, 5)) << name;
    ++roundTripped;
  }
  // Most built-in scenes are plain data (cloth, rope, beam, balloon, the benchmark cloths, ...).
  EXPECT_GE(roundTripped, 6);
}

TEST(ModelBytes, MeshCollidersAndEveryFamilyRoundTrip) {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = 5;
  cloth.nodesY = 5;
  cloth.origin = Vec3(-0.5, 1.0, -0.5);
  cloth.bending = BendingModel::Isometric;
  cloth.selfCollision = true;
  addClothGrid(b, cloth);
  ClothGridDef second = cloth;
  second.bending = BendingModel::Dihedral;
  second.origin = Vec3(-0.5, 1.2, -0.5);
  const GeneratedObject upper = addClothGrid(b, second);
  addTethers(b, {upper.firstParticle}, upper.firstParticle, upper.particleCount, ConstraintParameters{}, 1.1);
  b.addAttachment(upper.firstParticle + 4, Vec3(0.5, 1.2, -0.5), ConstraintParameters{1e-5, 0.0, 1.0});
  TetBoxDef box;
  box.cellsX = 2;
  box.cellsY = 1;
  box.cellsZ = 1;
  box.origin = Vec3(2.0, 0.5, 0.0);
  box.size = Vec3(1.0, 0.5, 0.5);
  addTetBox(b, box);
  BalloonDef balloon;
  balloon.centre = Vec3(-2.0, 1.0, 0.0);
  balloon.rings = 4;
  balloon.segments = 6;
  addBalloon(b, balloon);
  b.setParticleRadius(0, 3, 0.01);
  const std::vector<Vec3> cube = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                  {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
  const std::vector<std::array<std::uint32_t, 3>> faces = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7},
                                                           {0, 1, 5}, {0, 5, 4}, {2, 3, 7}, {2, 7, 6},
                                                           {1, 2, 6}, {1, 6, 5}, {0, 4, 7}, {0, 7, 3}};
  SignedDistanceGridOptions grid;
  grid.maxCellsPerAxis = 8;
  b.addCollider(
      Collider::mesh(cube, faces, Vec3(0.0, -1.0, 0.0), Quat::Identity(), grid, ContactMaterial{0.3, 0.2, 0.1}));
  b.addCollider(Collider::sphere(Vec3(0.0, 0.2, 0.0), 0.3));
  b.addCollider(Collider::capsule(Vec3(1.0, 0.0, 0.0), Vec3(1.0, 0.5, 0.0), 0.1));
  b.addCollider(Collider::box(Vec3(3.0, 0.0, 0.0), Vec3(0.5, 0.2, 0.5)));
  b.addCollider(Collider::plane(Vec3(0.0, -2.0, 0.0), Vec3(0.0, 1.0, 0.0)));
  b.addObject("all", {0, 1, 2}, 0.1);
  const ModelPtr model = b.build();
  const std::string bytes = io::encodeModel(*model);
  const ModelPtr decoded = std::make_shared<const Model>(io::decodeModel(bytes, "test"));
  EXPECT_EQ(io::encodeModel(*decoded), bytes);
  ASSERT_EQ(decoded->colliders.size(), 5u);
  EXPECT_EQ(decoded->colliders[0].grid->distance, model->colliders[0].grid->distance);
  EXPECT_EQ(decoded->lambdaOffset, model->lambdaOffset);
  SolverSettings settings;
  settings.substeps = 4;
  EXPECT_EQ(hashAfterSteps(decoded, settings, 20), hashAfterSteps(model, settings, 20));
}

// Rigid bodies of every shape with a finite mass, and joints of every kind, round trip and step on
// bit-identically.
TEST(ModelBytes, BodiesAndJointsRoundTrip) {
  ModelBuilder b;
  BodyDefinition def;
  def.name = "sphere";
  def.shape.kind = BodyShapeKind::Sphere;
  def.shape.radius = 0.1;
  def.pose.position = Vec3(0.0, 1.0, 0.0);
  def.angularVelocity = Vec3(1.0, 2.0, 3.0);
  const BodyIndex sphere = b.addBody(def);
  def.name = "hull";
  def.shape.kind = BodyShapeKind::ConvexHull;
  def.shape.hull = std::make_shared<const ConvexHull>(
      buildConvexHull({{0, 0, 0}, {0.3, 0, 0}, {0, 0.2, 0}, {0, 0, 0.1}, {0.2, 0.2, 0.1}}, "test hull"));
  def.pose.position = Vec3(0.5, 1.0, 0.0);
  const BodyIndex hull = b.addBody(def);
  def.name = "capsule";
  def.shape = BodyShape{};
  def.shape.kind = BodyShapeKind::Capsule;
  def.shape.radius = 0.05;
  def.shape.halfHeight = 0.1;
  def.motion = BodyMotion::Static;
  def.pose.position = Vec3(1.0, 1.0, 0.0);
  const BodyIndex capsule = b.addBody(def);
  JointDefinition joint;
  joint.kind = JointKind::Hinge;
  joint.bodyA = kWorldBody;
  joint.bodyB = sphere;
  joint.anchor = Vec3(0.0, 1.1, 0.0);
  joint.lower = -0.5;
  joint.drive = JointDrive::Speed;
  joint.driveTarget = 2.0;
  joint.driveParams.compliance = 1e-4;
  b.addJoint(joint);
  joint = JointDefinition{};
  joint.kind = JointKind::Distance;
  joint.bodyA = sphere;
  joint.bodyB = hull;
  joint.anchor = Vec3(0.0, 1.0, 0.0);
  joint.anchorB = Vec3(0.5, 1.0, 0.0);
  joint.params.compliance = 1e-3;
  b.addJoint(joint);
  joint = JointDefinition{};
  joint.kind = JointKind::Spherical;
  joint.bodyA = capsule;
  joint.bodyB = hull;
  joint.anchor = Vec3(0.8, 1.0, 0.0);
  joint.swingLimit = 0.4;
  b.addJoint(joint);
  const ModelPtr model = b.build();
  const std::string bytes = io::encodeModel(*model);
  const ModelPtr decoded = std::make_shared<const Model>(io::decodeModel(bytes, "test"));
  EXPECT_EQ(io::encodeModel(*decoded), bytes);
  ASSERT_EQ(decoded->bodies.size(), 3u);
  ASSERT_EQ(decoded->joints.size(), 3u);
  EXPECT_EQ(decoded->bodies[1].shape.hull->faceNormals.size(), model->bodies[1].shape.hull->faceNormals.size());
  SolverSettings settings;
  settings.substeps = 4;
  EXPECT_EQ(hashAfterSteps(decoded, settings, 20), hashAfterSteps(model, settings, 20));
  EXPECT_NE(hashAfterSteps(model, settings, 20), hashAfterSteps(model, settings, 19));
}

TEST(ModelBytes, FunctionsAreNamedAndDamagedBytesRefused) {
  ModelBuilder b;
  ChainDef chain;
  chain.particles = 4;
  addChain(b, chain);
  const ModelPtr plain = b.build();
  b.addKinematic(3, [](double t) { return Vec3(t, 0.0, 0.0); });
  EXPECT_NE(errorOf([&] { io::encodeModel(*b.build()); }).find("1 kinematic particle path"), std::string::npos);

  const std::string bytes = io::encodeModel(*plain);
  EXPECT_NE(errorOf([&] { io::decodeModel("PLIANTCK1234", "x"); }).find("not Pliant model bytes"), std::string::npos);
  // Every truncation and every flipped byte is refused with a message (the checksum, the sizes).
  for (std::size_t size = 0; size < bytes.size(); ++size)
    EXPECT_NE(errorOf([&] { io::decodeModel(bytes.substr(0, size), "cut"); }).find("model bytes 'cut'"),
              std::string::npos)
        << size;
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x20);
    EXPECT_NE(errorOf([&] { io::decodeModel(damaged, "flip"); }), "(no error)") << at;
  }
}

TEST(CheckpointBytes, RoundTripWithAndWithoutAModel) {
  const Scene scene = makeBuiltinScene("rope");
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(solver.step(state).ok());
  const std::string bytes = io::encodeCheckpoint(state);
  EXPECT_EQ(io::decodeCheckpoint(bytes, "mem").hash(), state.hash());
  EXPECT_EQ(io::decodeCheckpoint(bytes, "mem", scene.model.get()).hash(), state.hash());
  const Scene other = makeBuiltinScene("cloth");
  EXPECT_NE(errorOf([&] { io::decodeCheckpoint(bytes, "mem", other.model.get()); }).find("checkpoint 'mem': saved for"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { io::decodeCheckpoint(bytes.substr(0, 40), "mem"); }).find("truncated"), std::string::npos);
}

}  // namespace
}  // namespace pliant
