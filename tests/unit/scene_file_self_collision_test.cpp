// Scene-file support of surface contact (cloth self-collision and cloth-cloth collision): the
// per-cloth "self_collision" flag, the top-level "surface_contact" block, the "intersections" probe,
// the built-in scenes that use them, and the messages for bad input (each names the field).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "pliant/error.h"
#include "pliant/io/probes.h"
#include "pliant/io/scenes.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant {
namespace {

using ::testing::HasSubstr;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no pliant::Error thrown";
  return {};
}

// Two 4 x 4 cloths; `first` and `second` are extra fields of each, `top` extra top-level fields.
std::string twoCloths(const std::string& first, const std::string& second, const std::string& top) {
  return R"({"objects": [
      {"type": "cloth", "name": "a", "grid": {"nodes": [4, 4], "size": [1, 1]}, "mass": 0.1)" +
         first + R"(},
      {"type": "cloth", "name": "b", "grid": {"nodes": [4, 4], "size": [1, 1], "origin": [0, 0.5, 0]}, "mass": 0.1)" +
         second + "}]" + top + "}";
}

Scene parse(const std::string& text) { return parseScene(text, "inline.json", ""); }
std::string parseError(const std::string& text) {
  return errorOf([&] { (void)parse(text); });
}

TEST(SceneFileSelfCollision, OffByDefault) {
  const Scene scene = parse(twoCloths("", "", ""));
  EXPECT_FALSE(scene.model->selfCollision);
  EXPECT_TRUE(scene.model->collisionTriangles.empty());
}

TEST(SceneFileSelfCollision, EachClothOptsInWithItsTriangles) {
  const Scene scene = parse(twoCloths(
      R"(, "self_collision": true)", R"(, "self_collision": false)",
      R"(, "surface_contact": {"thickness": 0.004, "friction": {"static": 0.5, "dynamic": 0.4}, "restitution": 0.1})"));
  EXPECT_TRUE(scene.model->selfCollision);
  ASSERT_EQ(scene.model->collisionTriangles.size(), 2u * 3u * 3u);  // cloth a only
  for (const CollisionTriangle& t : scene.model->collisionTriangles)
    for (ParticleIndex p : t.particles) EXPECT_LT(p, 16u);
  EXPECT_DOUBLE_EQ(scene.model->surfaceThickness, 0.004);
  EXPECT_DOUBLE_EQ(scene.model->surfaceContactMaterial.staticFriction, 0.5);
  EXPECT_DOUBLE_EQ(scene.model->surfaceContactMaterial.dynamicFriction, 0.4);
  EXPECT_DOUBLE_EQ(scene.model->surfaceContactMaterial.restitution, 0.1);
}

TEST(SceneFileSelfCollision, DefaultsWithoutSurfaceContactBlockAndSwitchOff) {
  const Scene on = parse(twoCloths(R"(, "self_collision": true)", R"(, "self_collision": true)", ""));
  EXPECT_TRUE(on.model->selfCollision);
  EXPECT_EQ(on.model->collisionTriangles.size(), 2u * 2u * 3u * 3u);
  EXPECT_DOUBLE_EQ(on.model->surfaceThickness, Model().surfaceThickness);
  // "enabled": false keeps the triangles (for measuring) but turns the contacts off.
  const Scene off = parse(twoCloths(R"(, "self_collision": true)", "", R"(, "surface_contact": {"enabled": false})"));
  EXPECT_FALSE(off.model->selfCollision);
  EXPECT_EQ(off.model->collisionTriangles.size(), 2u * 3u * 3u);
}

TEST(SceneFileSelfCollision, IntersectionsProbeWritesAPairsColumn) {
  const Scene scene = parse(twoCloths("", "", R"(, "probes": [{"name": "x", "type": "intersections"}])"));
  ASSERT_EQ(scene.probes.size(), 1u);
  EXPECT_EQ(scene.probes[0].kind, Probe::Kind::Intersections);
  const ProbeRecorder recorder(scene);
  EXPECT_EQ(recorder.header(), "time,x.pairs\n");
  std::string row;
  recorder.record(State::fromModel(*scene.model), row);
  EXPECT_EQ(row, "0,0\n");
}

TEST(SceneFileSelfCollision, BuiltinScenesUseIt) {
  for (const char* name : {"cloth-fold", "two-cloths"}) {
    SCOPED_TRACE(name);
    const Scene scene = makeBuiltinScene(name);
    EXPECT_TRUE(scene.model->selfCollision);
    EXPECT_EQ(scene.model->collisionTriangles.size(), scene.topology.triangles.size());
    EXPECT_GT(scene.model->surfaceThickness, 0.0);
    bool probe = false;
    for (const Probe& p : scene.probes) probe |= p.kind == Probe::Kind::Intersections;
    EXPECT_TRUE(probe);
  }
}

TEST(SceneFileSelfCollisionBadInput, MessagesNameTheField) {
  EXPECT_THAT(parseError(twoCloths(R"(, "self_collision": 1)", "", "")),
              HasSubstr("inline.json: /objects/0/self_collision: expected true or false"));
  EXPECT_THAT(parseError(twoCloths(R"(, "self_collision": true)", "", R"(, "surface_contact": {"thickness": -0.01})")),
              HasSubstr("/surface_contact/thickness: expected a number greater than 0"));
  EXPECT_THAT(parseError(twoCloths(R"(, "self_collision": true)", "", R"(, "surface_contact": {"thickness": 0})")),
              HasSubstr("/surface_contact/thickness: expected a number greater than 0"));
  EXPECT_THAT(parseError(twoCloths(R"(, "self_collision": true)", "", R"(, "surface_contact": {"thicknes": 0.01})")),
              HasSubstr("/surface_contact: unknown field 'thicknes'"));
  EXPECT_THAT(parseError(twoCloths(R"(, "self_collision": true)", "", R"(, "surface_contact": {"friction": -1})")),
              HasSubstr("/surface_contact/friction: expected a number of at least 0"));
  EXPECT_THAT(parseError(twoCloths(R"(, "self_collision": true)", "", R"(, "surface_contact": {"enabled": "on"})")),
              HasSubstr("/surface_contact/enabled: expected true or false"));
  EXPECT_THAT(parseError(twoCloths("", "", R"(, "surface_contact": {"thickness": 0.01})")),
              HasSubstr("/surface_contact: no object has \"self_collision\": true"));
  EXPECT_THAT(parseError(twoCloths("", "", R"(, "probes": [{"name": "x", "type": "intersections", "object": "a"}])")),
              HasSubstr("/probes/0: unknown field 'object'"));
  // Other object types do not take the flag.
  EXPECT_THAT(parseError(R"({"objects": [{"type": "rope", "name": "r", "start": [0, 0, 0], "end": [1, 0, 0],
                                          "particles": 3, "mass": 1, "self_collision": true}]})"),
              HasSubstr("/objects/0: unknown field 'self_collision'"));
}

TEST(SceneFileSelfCollisionBadInput, FilesUnderBadNameTheFileAndField) {
  const std::string dir = std::string(PLIANT_TEST_DATA_DIR) + "/scenes/bad/";
  EXPECT_THAT(errorOf([&] { (void)loadSceneFile(dir + "surface_contact_thickness.json"); }),
              HasSubstr(dir + "surface_contact_thickness.json: /surface_contact/thickness"));
  EXPECT_THAT(errorOf([&] { (void)loadSceneFile(dir + "self_collision_not_boolean.json"); }),
              HasSubstr(dir + "self_collision_not_boolean.json: /objects/0/self_collision"));
  EXPECT_THAT(errorOf([&] { (void)loadSceneFile(dir + "surface_contact_without_self_collision.json"); }),
              HasSubstr(dir + "surface_contact_without_self_collision.json: /surface_contact"));
}

TEST(ModelSurfaceContact, BuilderAndValidationRefuseBadTriangles) {
  ModelBuilder b;
  for (int i = 0; i < 3; ++i) b.addParticle(Vec3(i, 0, i * i), 1.0);
  const std::array<std::array<ParticleIndex, 3>, 1> outOfRange = {{{0, 1, 3}}};
  EXPECT_THAT(errorOf([&] { b.addCollisionTriangles(outOfRange); }), HasSubstr("collision triangle 0"));
  const std::array<std::array<ParticleIndex, 3>, 1> repeated = {{{0, 1, 1}}};
  EXPECT_THAT(errorOf([&] { b.addCollisionTriangles(repeated); }), HasSubstr("three particles must differ"));
  EXPECT_FALSE(b.model().selfCollision);
  const std::array<std::array<ParticleIndex, 3>, 1> good = {{{0, 1, 2}}};
  EXPECT_EQ(b.addCollisionTriangles(good), 0u);
  EXPECT_TRUE(b.model().selfCollision);
  b.model().surfaceThickness = 0.0;
  EXPECT_THAT(errorOf([&] { (void)b.build(); }), HasSubstr("surfaceThickness must be a finite number > 0 m"));
  b.model().surfaceThickness = 0.01;
  b.model().surfaceContactMaterial.staticFriction = -1.0;
  EXPECT_THAT(errorOf([&] { (void)b.build(); }), HasSubstr("surface contact material"));
}

}  // namespace
}  // namespace pliant
