// Scene files: soft bodies from a closed surface ("surface" and "cell_size", issue 18), their
// errors, and their skin in the frame files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pliant/error.h"
#include "pliant/io/output.h"
#include "pliant/io/scenes.h"
#include "pliant/state.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kMeshes = std::string(PLIANT_TEST_DATA_DIR) + "/meshes";

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string errorOf(const std::string& text, const std::string& base, const pliant::SceneLoadOptions& options = {}) {
  try {
    (void)pliant::parseScene(text, "inline.json", base, options);
  } catch (const pliant::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

std::string ballScene(const std::string& fields) {
  return R"({"objects": [{"type": "softbody", "name": "ball", "surface": "sdf_icosphere.obj", "density": 500.0,
             "neo_hookean": {"youngs_modulus": 1e5, "poisson_ratio": 0.3})" +
         fields + "}]}";
}

class SurfaceSceneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pliant_surface_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SurfaceSceneTest, SoftBodyFromASurfaceHasTetsAndASkin) {
  const pliant::Scene scene = pliant::parseScene(ballScene(R"(, "cell_size": 0.25)"), "inline.json", kMeshes);
  ASSERT_EQ(scene.topology.parts.size(), 1u);
  const pliant::io::TopologyPart& part = scene.topology.parts.front();
  ASSERT_TRUE(part.skin);
  EXPECT_EQ(part.skin->vertexCount(), 162u);  // the icosphere's vertices
  EXPECT_EQ(part.skin->triangles.size(), 320u);
  EXPECT_EQ(part.particleCount, scene.model->particleCount());
  EXPECT_EQ(scene.model->neoHookeans.size(), scene.topology.tets.size());
  EXPECT_FALSE(scene.topology.tets.empty());
  // The skin reproduces the file's surface at rest.
  std::vector<pliant::Vec3> skin(part.skin->vertexCount());
  part.skin->pose(scene.model->initialPosition, skin);
  double radius = 0.0;
  for (const pliant::Vec3& x : skin) radius = std::max(radius, x.norm());
  EXPECT_NEAR(radius, 0.5, 1e-3);
}

TEST_F(SurfaceSceneTest, BadSurfacesAreRefusedNamingTheFileAndTheField) {
  // An open surface: the icosphere less one triangle.
  std::string text = readText(kMeshes + "/sdf_icosphere.obj");
  text.erase(text.rfind("\nf "));
  std::ofstream(dir_ / "sdf_icosphere.obj") << text << "\n";
  std::string message = errorOf(ballScene(R"(, "cell_size": 0.25)"), dir_.string());
  EXPECT_THAT(message, HasSubstr("/objects/0/surface"));
  EXPECT_THAT(message, HasSubstr((dir_ / "sdf_icosphere.obj").string()));
  EXPECT_THAT(message, HasSubstr("the surface is open: edge"));
  // Missing cell size, cell size without a surface, a second shape.
  EXPECT_THAT(errorOf(ballScene(""), kMeshes), HasSubstr("cell_size"));
  EXPECT_THAT(errorOf(R"({"objects": [{"type": "softbody", "name": "b", "box": {"cells": [1, 1, 1], "size": [1, 1, 1]},
                         "density": 1.0, "cell_size": 0.1}]})",
                      kMeshes),
              HasSubstr("\"cell_size\" belongs to a soft body from a \"surface\""));
  EXPECT_THAT(errorOf(ballScene(R"(, "cell_size": 0.25, "mesh": "cube.node")"), kMeshes), HasSubstr("exactly one of"));
  EXPECT_THAT(errorOf(ballScene(R"(, "cell_size": 0)"), kMeshes), HasSubstr("/objects/0/cell_size"));
  // A grid too large for the memory budget is refused before it is made.
  pliant::SceneLoadOptions small;
  small.maxMemoryBytes = 64 << 20;
  message = errorOf(ballScene(R"(, "cell_size": 0.01)"), kMeshes, small);
  EXPECT_THAT(message, HasSubstr("/objects/0/cell_size"));
  EXPECT_THAT(message, HasSubstr("memory"));
}

TEST_F(SurfaceSceneTest, FramesDrawTheSkinInsteadOfTheTets) {
  const pliant::Scene scene = pliant::parseScene(ballScene(R"(, "cell_size": 0.25)"), "inline.json", kMeshes);
  pliant::State state = pliant::State::fromModel(*scene.model);
  for (pliant::Vec3& x : state.position) x += pliant::Vec3(0.0, 2.0, 0.0);
  for (pliant::io::FrameFormat format : {pliant::io::FrameFormat::Obj, pliant::io::FrameFormat::Ply}) {
    pliant::io::FrameSeriesOptions options;
    options.format = format;
    const fs::path out = dir_ / pliant::io::frameFormatName(format);
    fs::create_directories(out / "frames");
    pliant::io::FrameSeries series(out.string(), *scene.model, scene.topology, options);
    series.write(0, state);
    series.finish();
    const std::string file = readText(
        (out / "frames" / (format == pliant::io::FrameFormat::Obj ? "frame_000000.obj" : "frame_000000.ply")).string());
    if (format == pliant::io::FrameFormat::Obj) {
      std::istringstream lines(file);
      std::string line;
      int vertices = 0, faces = 0;
      double lowest = 1e9;
      while (std::getline(lines, line)) {
        if (line.rfind("v ", 0) == 0) {
          ++vertices;
          std::istringstream v(line.substr(2));
          double x, y, z;
          v >> x >> y >> z;
          lowest = std::min(lowest, y);
        }
        if (line.rfind("f ", 0) == 0) ++faces;
      }
      EXPECT_EQ(vertices, 162);
      EXPECT_EQ(faces, 320);
      EXPECT_NEAR(lowest, 1.5, 1e-6);  // the skin moved with the particles
    } else {
      EXPECT_THAT(file, HasSubstr("element vertex 162\n"));
      EXPECT_THAT(file, HasSubstr("element face 320\n"));
    }
  }
}

TEST_F(SurfaceSceneTest, BuiltinBunnyIsEmbeddedWithItsMesh) {
  const std::string path = std::string(PLIANT_SOURCE_DIR) + "/scenes/meshes/bunny.obj";
  EXPECT_EQ(std::string(pliant::builtinMeshText("meshes/bunny.obj")), readText(path));
  EXPECT_TRUE(pliant::builtinMeshText("meshes/none.obj").empty());
  const pliant::Scene scene = pliant::makeBuiltinScene("bunny-slope");
  ASSERT_EQ(scene.topology.parts.size(), 1u);
  ASSERT_TRUE(scene.topology.parts.front().skin);
  EXPECT_EQ(scene.topology.parts.front().skin->triangles.size(), 2784u);
  EXPECT_EQ(scene.topology.tets.size(), 1518u);  // as its description says
}

}  // namespace
