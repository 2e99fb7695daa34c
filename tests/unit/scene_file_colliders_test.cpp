// Scene-file support of mesh colliders and of spinning colliders ("angular_velocity"): the example
// scene under tests/data/scenes, the fields, and the messages for bad mesh-collider input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "pliant/colliders.h"
#include "pliant/error.h"
#include "pliant/io/scenes.h"
#include "pliant/model.h"

namespace pliant {
namespace {

using ::testing::HasSubstr;

std::string dataPath(const std::string& relative) { return std::string(PLIANT_TEST_DATA_DIR) + "/" + relative; }

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no pliant::Error thrown";
  return {};
}

// A scene with one particle and the given collider JSON, parsed with the test data folder as base.
Scene withCollider(const std::string& collider) {
  return parseScene(R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 3, 0]], "mass": 0.1}],
                        "colliders": [)" +
                        collider + "]}",
                    "inline.json", dataPath("meshes"));
}

std::string colliderError(const std::string& collider) {
  return errorOf([&] { (void)withCollider(collider); });
}

TEST(SceneFileMeshCollider, ExampleSceneLoadsWithTwoMeshColliders) {
  const Scene scene = loadSceneFile(dataPath("scenes/mesh_collider.json"));
  ASSERT_EQ(scene.model->colliders.size(), 3u);
  const Collider& ball = scene.model->colliders[1];
  ASSERT_EQ(ball.shape, ColliderShape::Mesh);
  EXPECT_EQ(ball.grid->cellSize, 0.025);
  EXPECT_EQ(ball.grid->triangles.size(), 320u);
  EXPECT_FALSE(ball.kinematic());
  Vec3 n;
  // The icosphere (radius 0.5 m) sits at (0, 0.5, 0): its top vertex is at y = 1.
  EXPECT_NEAR(colliderDistance(ball, ball.pose, Vec3(0.0, 1.05, 0.0), n), 0.05, 1e-6);
  EXPECT_GT(n.y(), 0.97);  // over a vertex the trilinear gradient leans by up to a cell's slope
  EXPECT_EQ(ball.material.staticFriction, 0.4);
  EXPECT_EQ(ball.material.dynamicFriction, 0.3);
  const Collider& plate = scene.model->colliders[2];
  EXPECT_TRUE(plate.kinematic());
  EXPECT_NEAR(plate.grid->cellSize, (1.0 + 0.2) / 32, 1e-15);  // 64 -> 32 cells over the padded 1 m side
  // Scaled to half height: top at 0.25 + 0.25.
  const ColliderPose start = colliderPose(*scene.model, 2, 0.0);
  EXPECT_NEAR(colliderDistance(plate, start, Vec3(2.0, 0.8, 0.0), n), 0.3, 1e-9);
  EXPECT_EQ(scene.frames, 120);
}

TEST(SceneFileMeshCollider, PositionRotationScaleAndGridFields) {
  const Scene scene = withCollider(R"({"type": "mesh", "file": "sdf_cube.obj", "position": [1, 2, 3],
      "rotation": {"axis": [0, 0, 1], "angle": 0.7853981633974483}, "scale": 2, "cell_size": 0.1, "padding": 0.3,
      "friction": 0.2, "restitution": 0.5})");
  const Collider& c = scene.model->colliders[0];
  ASSERT_EQ(c.shape, ColliderShape::Mesh);
  EXPECT_EQ(c.grid->cellSize, 0.1);
  EXPECT_NEAR(c.grid->upper().x(), 1.0 + 0.3, 1e-9);  // scaled half size 1 m plus the padding
  EXPECT_EQ(c.pose.position, Vec3(1, 2, 3));
  EXPECT_EQ(c.material.restitution, 0.5);
  Vec3 n;
  // Rotated 45 degrees about z: a cube corner edge points along +x, sqrt(2) m from the centre.
  EXPECT_NEAR(colliderDistance(c, c.pose, Vec3(1.0 + std::sqrt(2.0) + 0.5, 2.0, 3.0), n), 0.5, 1e-6);
  EXPECT_NEAR(n.x(), 1.0, 1e-6);
  // 10 cells over the default-padded 1.2 m.
  EXPECT_NEAR(
      withCollider(R"({"type": "mesh", "file": "sdf_cube.obj", "max_cells": 10})").model->colliders[0].grid->cellSize,
      0.12, 1e-15);
}

TEST(SceneFileMeshCollider, BadFieldsNameThePathAndTheProblem) {
  EXPECT_THAT(colliderError(R"({"type": "mesh", "file": "sdf_cube.obj", "cell_size": -0.1})"),
              HasSubstr("inline.json: /colliders/0/cell_size: expected a number greater than 0, got -0.1"));
  EXPECT_THAT(colliderError(R"({"type": "mesh", "file": "sdf_cube.obj", "cell_size": 0.1, "max_cells": 8})"),
              HasSubstr("inline.json: /colliders/0: give either \"cell_size\" or \"max_cells\", not both"));
  EXPECT_THAT(colliderError(R"({"type": "mesh", "file": "sdf_cube.obj", "max_cells": 0})"),
              HasSubstr("/colliders/0/max_cells: expected an integer from 1 to 4096, got 0"));
  EXPECT_THAT(colliderError(R"({"type": "mesh", "file": "sdf_cube.obj", "cell_size": 1e-5})"),
              HasSubstr("use a larger cell size"));
  EXPECT_THAT(colliderError(R"({"type": "mesh", "file": "sdf_cube.obj", "scale": [1, 0, 1]})"),
              HasSubstr("/colliders/0/scale: scale factors must be > 0"));
  EXPECT_THAT(colliderError(R"({"type": "mesh", "file": "sdf_cube.obj", "centre": [0, 0, 0]})"),
              HasSubstr("/colliders/0: unknown field 'centre'"));
  EXPECT_THAT(colliderError(R"({"type": "mesh"})"), HasSubstr("/colliders/0: missing required field 'file'"));
  EXPECT_THAT(colliderError(R"({"type": "mesh", "file": 3})"), HasSubstr("/colliders/0/file: expected a string"));
  EXPECT_THAT(colliderError(R"({"type": "mesh", "file": "sdf_cube.obj", "angular_velocity": [0, 1]})"),
              HasSubstr("/colliders/0/angular_velocity: expected an array of 3 numbers"));
  EXPECT_THAT(colliderError(R"({"type": "cone"})"),
              HasSubstr("unknown collider type 'cone' (expected plane, sphere, box, capsule or mesh)"));
  // Mesh problems: the scene, the collider entry, then the OBJ file and what is wrong with it.
  std::string e = colliderError(R"({"type": "mesh", "file": "bad/sdf_open_cube.obj"})");
  EXPECT_THAT(e, HasSubstr("inline.json: /colliders/0: "));
  EXPECT_THAT(e, HasSubstr("bad/sdf_open_cube.obj: not closed: the edge between vertices"));
  e = colliderError(R"({"type": "mesh", "file": "bad/sdf_nonmanifold.obj"})");
  EXPECT_THAT(e, HasSubstr("sdf_nonmanifold.obj: not manifold"));
  e = colliderError(R"({"type": "mesh", "file": "no_such.obj"})");
  EXPECT_THAT(e, HasSubstr("inline.json: /colliders/0: "));
  EXPECT_THAT(e, HasSubstr("no_such.obj: cannot open"));
}

TEST(SceneFileMeshCollider, BadSceneFilesNameTheSceneAndTheMesh) {
  const std::string open = dataPath("scenes/bad/mesh_collider_open.json");
  std::string e = errorOf([&] { (void)loadSceneFile(open); });
  EXPECT_EQ(e.rfind(open + ": /colliders/0: ", 0), 0u) << e;
  EXPECT_THAT(e, HasSubstr("sdf_open_cube.obj: not closed"));
  e = errorOf([&] { (void)loadSceneFile(dataPath("scenes/bad/mesh_collider_missing.json")); });
  EXPECT_THAT(e, HasSubstr("no_such_collider.obj: cannot open"));
  e = errorOf([&] { (void)loadSceneFile(dataPath("scenes/bad/mesh_collider_cell_size.json")); });
  EXPECT_THAT(e, HasSubstr("/colliders/0/cell_size: expected a number greater than 0"));
}

TEST(SceneFileColliderSpin, AngularVelocityRotatesAboutTheOriginFromTheInitialOrientation) {
  const Scene scene = withCollider(R"({"type": "box", "centre": [1, 0, 0], "half_extents": [0.5, 0.1, 0.2],
      "rotation": {"axis": [0, 1, 0], "angle": 0.5}, "angular_velocity": [0, 2, 0],
      "path": {"keyframes": [{"time": 0, "position": [0, 0, 0]}, {"time": 1, "position": [0, 1, 0]}]}})");
  const Model& m = *scene.model;
  ASSERT_TRUE(m.colliders[0].kinematic());
  for (double t : {0.0, 0.25, 1.0, 3.0}) {
    const ColliderPose pose = colliderPose(m, 0, t);
    const Quat expected(Eigen::AngleAxisd(0.5 + 2.0 * t, Vec3::UnitY()));
    EXPECT_LT(pose.rotation.angularDistance(expected), 1e-12) << t;
    EXPECT_LT((pose.position - Vec3(1.0, std::min(t, 1.0), 0.0)).norm(), 1e-12) << t;
  }
  // A zero angular velocity leaves the collider static.
  EXPECT_FALSE(withCollider(R"({"type": "sphere", "centre": [0, 0, 0], "radius": 1, "angular_velocity": [0, 0, 0]})")
                   .model->colliders[0]
                   .kinematic());
  // Every shape accepts it.
  for (const char* c :
       {R"({"type": "plane", "normal": [0, 1, 0], "angular_velocity": [1, 0, 0]})",
        R"({"type": "capsule", "start": [0, 0, 0], "end": [1, 0, 0], "radius": 0.1, "angular_velocity": [1, 0, 0]})",
        R"({"type": "mesh", "file": "sdf_cube.obj", "max_cells": 8, "angular_velocity": [1, 0, 0]})"})
    EXPECT_TRUE(withCollider(c).model->colliders[0].kinematic()) << c;
}

}  // namespace
}  // namespace pliant
