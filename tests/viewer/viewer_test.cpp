// Unit tests of the viewer library (viewer/): base64, the frame size budget and subsampling, the
// viewer data file, the page and the PNG renderer. The page in a real browser: tests/browser.
#include "pliant/viewer/viewer.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>

#include "pliant/pliant.h"

namespace {

// Render options of a size, the rest left at their defaults.
pliant::viewer::RenderOptions sized(int width, int height) {
  pliant::viewer::RenderOptions options;
  options.width = width;
  options.height = height;
  return options;
}

using pliant::viewer::base64Decode;
using pliant::viewer::base64Encode;
using pliant::viewer::ViewerRecorder;

pliant::Scene clothScene(int nodes) {
  pliant::Scene scene;
  scene.name = "test-cloth";
  pliant::ModelBuilder builder;
  pliant::ClothGridDef cloth;
  cloth.nodesX = cloth.nodesY = nodes;
  cloth.origin = pliant::Vec3(-0.5, 1.0, -0.5);
  const pliant::GeneratedObject made = pliant::addClothGrid(builder, cloth);
  scene.topology.triangles = made.triangles;
  builder.addCollider(pliant::Collider::sphere(pliant::Vec3(0, 0.3, 0), 0.3));
  builder.addCollider(pliant::Collider::plane(pliant::Vec3(0, 0, 0), pliant::Vec3(0, 1, 0)));
  // A kinematic capsule moving along x at 1 m/s.
  builder.addCollider(pliant::Collider::capsule(pliant::Vec3(0, 2, -0.2), pliant::Vec3(0, 2, 0.2), 0.05),
                      [](double t) { return pliant::Vec3(t, 2, 0); });
  scene.model = builder.build();
  return scene;
}

std::vector<float> floatsOf(const std::string& base64) {
  const std::string bytes = base64Decode(base64);
  std::vector<float> out(bytes.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t bits = 0;
    for (int k = 3; k >= 0; --k) bits = (bits << 8) | static_cast<std::uint8_t>(bytes[4 * i + std::size_t(k)]);
    out[i] = std::bit_cast<float>(bits);
  }
  return out;
}

// Decodes an 8-bit RGB PNG written by encodePng (filter 0 on every row).
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};
Image decodePng(const std::string& png) {
  Image image;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::size_t at = 8;
  std::string idat;
  auto be32 = [&](std::size_t i) {
    return (std::uint32_t(std::uint8_t(png[i])) << 24) | (std::uint32_t(std::uint8_t(png[i + 1])) << 16) |
           (std::uint32_t(std::uint8_t(png[i + 2])) << 8) | std::uint8_t(png[i + 3]);
  };
  while (at + 12 <= png.size()) {
    const std::uint32_t length = be32(at);
    const std::string type = png.substr(at + 4, 4);
    const uLong crc = crc32(0, reinterpret_cast<const Bytef*>(png.data() + at + 4), length + 4);
    EXPECT_EQ(crc, be32(at + 8 + length)) << type;
    if (type == "IHDR") {
      image.width = static_cast<int>(be32(at + 8));
      image.height = static_cast<int>(be32(at + 12));
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, length);
    }
    at += 12 + length;
  }
  const std::size_t row = std::size_t(image.width) * 3;
  std::string raw((row + 1) * std::size_t(image.height), '\0');
  uLongf size = raw.size();
  EXPECT_EQ(
      uncompress(reinterpret_cast<Bytef*>(raw.data()), &size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()),
      Z_OK);
  EXPECT_EQ(size, raw.size());
  for (int y = 0; y < image.height; ++y) {
    EXPECT_EQ(raw[std::size_t(y) * (row + 1)], '\0');
    image.rgb.insert(image.rgb.end(), raw.begin() + std::ptrdiff_t(std::size_t(y) * (row + 1) + 1),
                     raw.begin() + std::ptrdiff_t((std::size_t(y) + 1) * (row + 1)));
  }
  return image;
}

TEST(ViewerBase64, RoundTripsEveryLengthAndMatchesRfc4648) {
  EXPECT_EQ(base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64Encode(""), "");
  std::string bytes;
  for (int n = 0; n < 300; ++n) {
    EXPECT_EQ(base64Decode(base64Encode(bytes)), bytes) << n;
    bytes.push_back(static_cast<char>((n * 37) & 0xff));
  }
  EXPECT_THROW(base64Decode("Zm9v!"), pliant::Error);
}

TEST(ViewerRecorder, KeepsEveryFrameWithinTheBudgetAndTheirPositionsAsFloat32) {
  pliant::Scene scene = clothScene(8);
  ViewerRecorder recorder(scene, 0, 10);
  EXPECT_EQ(recorder.stride(), 1);
  pliant::Solver solver(scene.model, scene.settings);
  pliant::State state = pliant::State::fromModel(*scene.model);
  recorder.record(0, state);
  for (int frame = 1; frame <= 10; ++frame) {
    ASSERT_TRUE(solver.step(state).ok());
    recorder.record(frame, state);
  }
  const nlohmann::json data = nlohmann::json::parse(recorder.json());
  EXPECT_EQ(data.at("format"), "pliant-viewer");
  EXPECT_EQ(data.at("particles"), 64);
  EXPECT_EQ(data.at("frames").at("numbers").size(), 11u);
  const std::vector<float> last = floatsOf(data.at("frames").at("positions").back().get<std::string>());
  ASSERT_EQ(last.size(), 64u * 3u);
  for (std::size_t i = 0; i < 64; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(last[3 * i + std::size_t(k)], static_cast<float>(state.position[i][k]));
  EXPECT_EQ(base64Decode(data.at("topology").at("triangles").get<std::string>()).size(),
            scene.topology.triangles.size() * 12);
  ASSERT_EQ(data.at("colliders").size(), 3u);
  EXPECT_EQ(data.at("colliders")[0].at("shape"), "sphere");
  EXPECT_DOUBLE_EQ(data.at("colliders")[0].at("radius").get<double>(), 0.3);
  EXPECT_EQ(data.at("colliders")[1].at("shape"), "plane");
  EXPECT_EQ(data.at("colliders")[1].at("poses").size(), 1u);  // static: one pose
  const nlohmann::json& capsule = data.at("colliders")[2];
  EXPECT_EQ(capsule.at("shape"), "capsule");
  EXPECT_TRUE(capsule.at("kinematic").get<bool>());
  EXPECT_DOUBLE_EQ(capsule.at("half_height").get<double>(), 0.2);
  ASSERT_EQ(capsule.at("poses").size(), 11u);  // kinematic: a pose per frame, following its path
  EXPECT_DOUBLE_EQ(capsule.at("poses")[10][0].get<double>(), state.time);
  EXPECT_DOUBLE_EQ(capsule.at("poses")[10][1].get<double>(), 2.0);
}

// Issue 18: a soft body from a surface is drawn as its skin, whose vertices follow the particles in
// each frame's points, and whose triangles replace the tets' boundary.
TEST(ViewerRecorder, DrawsASkinnedBodyAsItsSurface) {
  const pliant::Scene scene = pliant::makeBuiltinScene("bunny-slope");
  const pliant::io::TopologyPart& part = scene.topology.parts.front();
  ASSERT_TRUE(part.skin);
  const std::size_t particles = scene.model->particleCount(), skin = part.skin->vertexCount();
  ViewerRecorder recorder(scene, 0, 0);
  pliant::State state = pliant::State::fromModel(*scene.model);
  for (pliant::Vec3& x : state.position) x.y() += 1.0;
  recorder.record(0, state);
  const nlohmann::json data = nlohmann::json::parse(recorder.json());
  EXPECT_EQ(data.at("particles"), particles + skin);
  const std::vector<float> points = floatsOf(data.at("frames").at("positions").front().get<std::string>());
  ASSERT_EQ(points.size(), (particles + skin) * 3);
  std::vector<pliant::Vec3> posed(skin);
  part.skin->pose(state.position, posed);
  for (std::size_t v = 0; v < skin; ++v)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(points[3 * (particles + v) + std::size_t(k)], static_cast<float>(posed[v][k]));
  const std::string triangles = base64Decode(data.at("topology").at("triangles").get<std::string>());
  ASSERT_EQ(triangles.size(), part.skin->triangles.size() * 12);
  std::uint32_t first = 0;
  std::memcpy(&first, triangles.data(), 4);
  EXPECT_EQ(first, particles + part.skin->triangles.front()[0]);
}

TEST(ViewerRecorder, SubsamplesAboveTheBudgetKeepingTheFirstAndLastFrames) {
  pliant::Scene scene = clothScene(10);  // 100 particles: 1600 base64 bytes a frame
  ViewerRecorder recorder(scene, 0, 100, 1600 * 20);
  EXPECT_GT(recorder.stride(), 1);
  pliant::State state = pliant::State::fromModel(*scene.model);
  for (int frame = 0; frame <= 100; ++frame) recorder.record(frame, state);
  EXPECT_LE(recorder.recordedFrames(), 20u);
  const nlohmann::json data = nlohmann::json::parse(recorder.json());
  const auto numbers = data.at("frames").at("numbers").get<std::vector<int>>();
  EXPECT_EQ(numbers.front(), 0);
  EXPECT_EQ(numbers.back(), 100);
  EXPECT_EQ(data.at("frames").at("stride"), recorder.stride());
}

// The issue's size rule: a 100 x 100 cloth over 600 frames gives a page under 50 MB.
TEST(ViewerRecorder, HundredByHundredClothOver600FramesStaysUnder50MB) {
  pliant::Scene scene = clothScene(100);
  ViewerRecorder recorder(scene, 0, 600);
  EXPECT_GT(recorder.stride(), 1);
  pliant::State state = pliant::State::fromModel(*scene.model);
  for (int frame = 0; frame <= 600; ++frame) recorder.record(frame, state);
  const std::string json = recorder.json();
  EXPECT_LT(json.size(), pliant::viewer::kFrameBudgetBytes + 2'000'000);
  if (pliant::viewer::pageAvailable()) {
    EXPECT_LT(pliant::viewer::buildPage(json, "time\n0\n").size(), 50'000'000u);
  }
}

TEST(ViewerPage, IsOneFileWithThreeJsAndTheDataAndNoExternalReferences) {
  if (!pliant::viewer::pageAvailable()) {
    // Built without node_modules: the page must say how to get it.
    try {
      pliant::viewer::buildPage("{}", "");
      FAIL() << "buildPage should throw without the embedded viewer";
    } catch (const pliant::Error& e) {
      EXPECT_NE(std::string(e.what()).find("npm ci"), std::string::npos) << e.what();
    }
    return;
  }
  pliant::Scene scene = clothScene(4);
  scene.description = "a </script> in a description <!-- must not end the data";
  ViewerRecorder recorder(scene, 0, 0);
  recorder.record(0, pliant::State::fromModel(*scene.model));
  const std::string summary = "{\"scene\": \"a </script> <!-- in the summary\"}";
  const std::string page = pliant::viewer::buildPage(recorder.json(), "time,e.total\n0,1\n", summary);
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("@DATA@"), std::string::npos);
  EXPECT_EQ(page.find("@SUMMARY@"), std::string::npos);
  // The only "</script" are the six closing tags of the template; "<!--" appears nowhere.
  std::size_t closings = 0;
  for (std::size_t at = page.find("</script"); at != std::string::npos; at = page.find("</script", at + 1)) ++closings;
  EXPECT_EQ(closings, 6u);
  EXPECT_EQ(page.find("<!--"), std::string::npos);
  EXPECT_NE(page.find("id=\"three-core\""), std::string::npos);
}

// The text inside <script ... id="ID">...</script> of a page.
std::string scriptText(const std::string& page, const std::string& id) {
  const std::size_t open = page.find("id=\"" + id + "\">");
  if (open == std::string::npos) return "<missing>";
  const std::size_t begin = page.find('>', open) + 1;
  return page.substr(begin, page.find("</script>", begin) - begin);
}

TEST(ViewerPage, EmbedsTheRunSummaryAsWrittenOrNull) {
  if (!pliant::viewer::pageAvailable()) GTEST_SKIP() << "built without the embedded viewer";
  pliant::Scene scene = clothScene(3);
  ViewerRecorder recorder(scene, 0, 0);
  recorder.record(0, pliant::State::fromModel(*scene.model));
  const std::string summary =
      "{\n  \"convergence\": {\"converged\": false, \"unconverged_frames\": [[3, 5]]},\n  \"note\": \"</b>\"\n}\n";
  const std::string page = pliant::viewer::buildPage(recorder.json(), "", summary);
  // As written, except "</" (which could close the element) written as the JSON escape "\u003c/".
  EXPECT_EQ(scriptText(page, "pliant-summary"),
            "{\n  \"convergence\": {\"converged\": false, \"unconverged_frames\": [[3, 5]]},\n  \"note\": "
            "\"\\u003c/b>\"\n}\n");
  EXPECT_EQ(nlohmann::json::parse(scriptText(page, "pliant-summary")), nlohmann::json::parse(summary));
  EXPECT_EQ(scriptText(pliant::viewer::buildPage(recorder.json(), ""), "pliant-summary"), "null");
  EXPECT_THROW(pliant::viewer::buildPage(recorder.json(), "", "{\"frames\": "), pliant::Error);
}

TEST(ViewerRender, DrawsTheSceneAndDifferentFramesDiffer) {
  pliant::Scene scene = clothScene(12);
  ViewerRecorder recorder(scene, 0, 30);
  pliant::Solver solver(scene.model, scene.settings);
  pliant::State state = pliant::State::fromModel(*scene.model);
  recorder.record(0, state);
  for (int frame = 1; frame <= 30; ++frame) {
    ASSERT_TRUE(solver.step(state).ok());
    recorder.record(frame, state);
  }
  const std::string json = recorder.json();
  int shown = -2;
  const Image first = decodePng(pliant::viewer::renderPng(json, 0, sized(160, 120), &shown));
  EXPECT_EQ(shown, 0);
  ASSERT_EQ(first.width, 160);
  ASSERT_EQ(first.height, 120);
  const Image last = decodePng(pliant::viewer::renderPng(json, -1, sized(160, 120), &shown));
  EXPECT_EQ(shown, 30);
  std::size_t inked = 0, changed = 0;
  for (std::size_t p = 0; p < first.rgb.size(); p += 3) {
    if (std::abs(first.rgb[p] - 0x15) + std::abs(first.rgb[p + 1] - 0x18) + std::abs(first.rgb[p + 2] - 0x1c) > 30)
      ++inked;
    if (std::abs(first.rgb[p] - last.rgb[p]) + std::abs(first.rgb[p + 1] - last.rgb[p + 1]) > 30) ++changed;
  }
  const std::size_t pixels = first.rgb.size() / 3;
  EXPECT_GT(inked, pixels / 20) << "the image is (nearly) blank";
  EXPECT_GT(changed, pixels / 100) << "frames 0 and 30 look the same";
  EXPECT_THROW(pliant::viewer::renderPng(json, 0, sized(4, 4)), pliant::Error);
}

TEST(ViewerRender, DrawsAMeshColliderFromTheTrianglesItsGridWasBuiltFrom) {
  // A few particles above a mesh cube: the data carries the cube's mesh, and the picture with
  // the cube has more ink than the same picture with the cube's triangles removed.
  pliant::Scene scene;
  scene.name = "mesh-collider";
  pliant::ModelBuilder builder;
  for (int i = 0; i < 4; ++i) builder.addParticle(pliant::Vec3(0.3 * i - 0.45, 1.2, 0.0), 1.0);
  pliant::SignedDistanceGridOptions grid;
  grid.cellSize = 0.1;
  builder.addCollider(pliant::io::readMeshCollider(std::string(PLIANT_TEST_DATA_DIR) + "/meshes/sdf_cube.obj",
                                                   pliant::Vec3(0, 0.5, 0), pliant::Quat::Identity(), grid));
  scene.model = builder.build();
  ViewerRecorder recorder(scene, 0, 0);
  recorder.record(0, pliant::State::fromModel(*scene.model));
  nlohmann::json data = nlohmann::json::parse(recorder.json());
  const auto& mesh = data.at("colliders").at(0);
  ASSERT_EQ(mesh.at("shape"), "mesh");
  const pliant::SignedDistanceGrid& sdf = *scene.model->colliders[0].grid;
  const std::vector<float> vertices = floatsOf(mesh.at("vertices").get<std::string>());
  ASSERT_EQ(vertices.size(), 3 * sdf.vertices.size());
  for (std::size_t v = 0; v < sdf.vertices.size(); ++v)
    for (int k = 0; k < 3; ++k)
      EXPECT_FLOAT_EQ(vertices[3 * v + std::size_t(k)], static_cast<float>(sdf.vertices[v][k]));
  EXPECT_EQ(base64Decode(mesh.at("triangles").get<std::string>()).size(), 12 * sdf.triangles.size());

  auto ink = [](const Image& image) {
    std::size_t inked = 0;
    for (std::size_t p = 0; p < image.rgb.size(); p += 3)
      if (std::abs(image.rgb[p] - 0x15) + std::abs(image.rgb[p + 1] - 0x18) + std::abs(image.rgb[p + 2] - 0x1c) > 30)
        ++inked;
    return inked;
  };
  const std::size_t withCube = ink(decodePng(pliant::viewer::renderPng(data.dump(), 0, sized(160, 120))));
  data["colliders"][0]["triangles"] = "";
  const std::size_t withoutCube = ink(decodePng(pliant::viewer::renderPng(data.dump(), 0, sized(160, 120))));
  EXPECT_GT(withCube, withoutCube + 160 * 120 / 20) << "the mesh collider is not drawn";
}

TEST(ViewerRender, FramesThePositionsOfTheWholeRunAndDrawsAGridWithoutColliders) {
  // A triangle that goes 3 m to the side in its middle frame and comes back: framed on the first and
  // last frames only, the middle one would be out of the picture.
  auto floatsBase64 = [](const std::vector<float>& values) {
    std::string bytes;
    for (float v : values)
      for (int k = 0; k < 4; ++k) bytes += static_cast<char>((std::bit_cast<std::uint32_t>(v) >> (8 * k)) & 0xffu);
    return base64Encode(bytes);
  };
  const std::vector<float> home = {0.0f, 1.0f, 0.0f, 0.3f, 1.0f, 0.0f, 0.0f, 1.0f, 0.3f};
  std::vector<float> away = home;
  for (std::size_t i = 0; i < away.size(); i += 3) away[i] += 3.0f;
  nlohmann::json data = {{"format", "pliant-viewer"}, {"particles", 3}, {"colliders", nlohmann::json::array()}};
  data["frames"] = {{"numbers", {0, 1, 2}},
                    {"times_s", {0.0, 0.1, 0.2}},
                    {"positions", {floatsBase64(home), floatsBase64(away), floatsBase64(home)}}};
  const std::uint32_t triangle[3] = {0, 1, 2};
  data["topology"] = {
      {"triangles", base64Encode(std::string_view(reinterpret_cast<const char*>(triangle), sizeof triangle))},
      {"lines", ""}};
  // Pixels of the body's colour (orange) and of the grid's (grey-blue lines on the dark background).
  auto count = [](const Image& image, bool body) {
    std::size_t n = 0;
    for (std::size_t p = 0; p < image.rgb.size(); p += 3) {
      const int r = image.rgb[p], g = image.rgb[p + 1], b = image.rgb[p + 2];
      if (body ? r - b > 40 && r > g : b > r && b - 0x1c > 25 && std::abs(r - g) < 20) ++n;
    }
    return n;
  };
  for (int frame = 0; frame <= 2; ++frame) {
    const Image image = decodePng(pliant::viewer::renderPng(data.dump(), frame, sized(160, 120)));
    EXPECT_GT(count(image, true), 20u) << "frame " << frame << " is not in the picture";
    EXPECT_GT(count(image, false), 160u * 120u / 50u) << "no ground grid under a scene without colliders";
  }
}

TEST(ViewerRender, ARopeFillsThePictureAsABandAndTheTimeIsWritten) {
  // A 2 m straight rope of 20 segments that swings down in the x-y plane: a thin object whose
  // motion is planar. It must span much of the picture and be drawn wider than a hairline.
  auto floatsBase64 = [](const std::vector<float>& values) {
    std::string bytes;
    for (float v : values)
      for (int k = 0; k < 4; ++k) bytes += static_cast<char>((std::bit_cast<std::uint32_t>(v) >> (8 * k)) & 0xffu);
    return base64Encode(bytes);
  };
  constexpr int kSegments = 20;
  std::vector<float> level, hanging;
  std::string segments;
  for (int i = 0; i <= kSegments; ++i) {
    const float s = 2.0f * static_cast<float>(i) / kSegments;
    level.insert(level.end(), {s, 2.0f, 0.0f});
    hanging.insert(hanging.end(), {0.0f, 2.0f - s, 0.0f});
    if (i < kSegments)
      for (std::uint32_t p : {std::uint32_t(i), std::uint32_t(i + 1)})
        for (int k = 0; k < 4; ++k) segments += static_cast<char>((p >> (8 * k)) & 0xffu);
  }
  nlohmann::json data = {
      {"format", "pliant-viewer"}, {"particles", kSegments + 1}, {"colliders", nlohmann::json::array()}};
  data["frames"] = {
      {"numbers", {0, 1}}, {"times_s", {0.0, 1.25}}, {"positions", {floatsBase64(level), floatsBase64(hanging)}}};
  data["topology"] = {{"triangles", ""}, {"lines", base64Encode(segments)}};
  const bool isBody = true;
  auto bodyPixel = [](const Image& image, int x, int y) {
    const std::size_t p = 3 * (std::size_t(y) * std::size_t(image.width) + std::size_t(x));
    return image.rgb[p] - image.rgb[p + 2] > 40 && image.rgb[p] > image.rgb[p + 1];
  };
  pliant::viewer::RenderOptions options = sized(320, 240);
  options.timeOverlay = false;
  const Image level0 = decodePng(pliant::viewer::renderPng(data.dump(), 0, options));
  int left = level0.width, right = -1, thickest = 0;
  for (int x = 0; x < level0.width; ++x) {
    int run = 0;
    for (int y = 0; y < level0.height; ++y) {
      run = bodyPixel(level0, x, y) == isBody ? run + 1 : 0;
      thickest = std::max(thickest, run);
      if (run > 0) {
        left = std::min(left, x);
        right = std::max(right, x);
      }
    }
  }
  EXPECT_GT(right - left, level0.width / 2) << "the rope spans " << right - left << " of " << level0.width << " pixels";
  EXPECT_GE(thickest, 3) << "the rope is a hairline";  // a 2-pixel brush covers 3 rows where it crosses them

  // The time overlay: light text in the top-left corner, absent when turned off.
  options.timeOverlay = true;
  const Image timed = decodePng(pliant::viewer::renderPng(data.dump(), 1, options));
  options.timeOverlay = false;
  const Image plain = decodePng(pliant::viewer::renderPng(data.dump(), 1, options));
  auto lightInCorner = [](const Image& image) {
    int n = 0;
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 80; ++x)
        n += image.rgb[3 * (std::size_t(y) * std::size_t(image.width) + std::size_t(x))] > 200;
    return n;
  };
  EXPECT_GT(lightInCorner(timed), 40) << "no time written";
  EXPECT_EQ(lightInCorner(plain), 0);

  // A camera asked for is used: looking away from the rope shows none of it.
  options.cameraPosition = pliant::Vec3(0, 1, 5);
  options.cameraTarget = pliant::Vec3(0, 1, 10);
  const Image away = decodePng(pliant::viewer::renderPng(data.dump(), 0, options));
  int body = 0;
  for (int y = 0; y < away.height; ++y)
    for (int x = 0; x < away.width; ++x) body += bodyPixel(away, x, y);
  EXPECT_EQ(body, 0) << "the camera option is ignored";
  options.cameraTarget = pliant::Vec3(1, 2, 0);
  const Image toward = decodePng(pliant::viewer::renderPng(data.dump(), 0, options));
  body = 0;
  for (int y = 0; y < toward.height; ++y)
    for (int x = 0; x < toward.width; ++x) body += bodyPixel(toward, x, y);
  EXPECT_GT(body, 100);
  options.fieldOfViewDegrees = 0.0;
  EXPECT_THROW(pliant::viewer::renderPng(data.dump(), 0, options), pliant::Error);
}

}  // namespace
