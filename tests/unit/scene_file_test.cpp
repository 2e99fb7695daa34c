// Scene files (src/scene_file.cpp, docs/scene-format.md): the built-in scenes, a scene that uses
// every feature of the format, and one test per kind of bad input. Every bad input must throw
// pliant::Error naming the source, the JSON path (or line:column) and what was expected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/scenes.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace {

using pliant::ConstraintFamily;
using pliant::Vec3;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

std::string scenePath(const std::string& relative) { return std::string(PLIANT_TEST_DATA_DIR) + "/scenes/" + relative; }

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The message of the pliant::Error that `load` throws (fails the test when none is thrown).
template <typename Load>
std::string errorOf(Load load) {
  try {
    load();
  } catch (const pliant::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-pliant exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

// Loads tests/data/scenes/bad/<name> and returns the error message, checking that it starts with
// the file name (every message names the file first).
std::string badFileError(const std::string& name) {
  const std::string path = scenePath("bad/" + name);
  const std::string message = errorOf([&] { (void)pliant::loadSceneFile(path); });
  EXPECT_EQ(message.rfind(path + ":", 0), 0u) << "message does not start with the file name: " << message;
  return message;
}

std::string parseError(const std::string& text) {
  return errorOf([&] { (void)pliant::parseScene(text, "inline.json", ""); });
}

std::size_t count(const pliant::Model& model, ConstraintFamily family) { return model.constraintCount(family); }

double objectMass(const pliant::Scene& scene, int object) {
  const pliant::SceneObject& o = scene.objects[object];
  double sum = 0.0;
  for (std::uint32_t k = 0; k < o.particleCount; ++k) sum += scene.model->mass[o.firstParticle + k];
  return sum;
}

// ---------------------------------------------------------------------------------------------
// Built-in scenes

TEST(SceneFileBuiltin, NamesAreTheShippedScenesDefaultFirst) {
  const std::vector<std::string> names = pliant::builtinSceneNames();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "cloth");
  // Every file under scenes/ is built in, and nothing else is.
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(PLIANT_SOURCE_DIR) + "/scenes"))
    if (entry.path().extension() == ".json") files.push_back(entry.path().stem().string());
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(sorted, files);
  for (const char* required : {"cloth", "rope", "beam", "balloon", "cloth-sphere", "softbody-slope"})
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
}

TEST(SceneFileBuiltin, EmbeddedTextEqualsTheFileUnderScenes) {
  for (const std::string& name : pliant::builtinSceneNames()) {
    SCOPED_TRACE(name);
    const std::string file = std::string(PLIANT_SOURCE_DIR) + "/scenes/" + name + ".json";
    EXPECT_EQ(pliant::builtinSceneText(name), readText(file));
    EXPECT_FALSE(pliant::builtinSceneDescription(name).empty());
  }
  EXPECT_EQ(pliant::builtinSceneText("no-such-scene"), "");
}

TEST(SceneFileBuiltin, EveryBuiltinParsesLikeItsFile) {
  for (const std::string& name : pliant::builtinSceneNames()) {
    SCOPED_TRACE(name);
    const pliant::Scene builtin = pliant::makeBuiltinScene(name);
    const pliant::Scene file = pliant::loadSceneFile(std::string(PLIANT_SOURCE_DIR) + "/scenes/" + name + ".json");
    EXPECT_EQ(builtin.name, name);
    EXPECT_EQ(builtin.description, pliant::builtinSceneDescription(name));
    EXPECT_EQ(builtin.frames, file.frames);
    EXPECT_EQ(builtin.model->particleCount(), file.model->particleCount());
    for (int f = 0; f < pliant::kConstraintFamilyCount; ++f)
      EXPECT_EQ(count(*builtin.model, ConstraintFamily(f)), count(*file.model, ConstraintFamily(f)));
    EXPECT_EQ(builtin.settings.substeps, file.settings.substeps);
    EXPECT_EQ(builtin.probes.size(), file.probes.size());
    EXPECT_EQ(pliant::State::fromModel(*builtin.model).hash(), pliant::State::fromModel(*file.model).hash());
    EXPECT_GT(builtin.probes.size(), 0u);
    EXPECT_GT(builtin.frames, 0);
  }
}

TEST(SceneFileBuiltin, SizesMatchTheirDescriptions) {
  const pliant::Scene cloth = pliant::makeBuiltinScene("cloth");
  EXPECT_EQ(cloth.model->particleCount(), 48u * 48u);
  EXPECT_EQ(cloth.topology.triangles.size(), 2u * 47u * 47u);
  EXPECT_EQ(cloth.model->inverseMass[0], 0.0);  // pinned corners
  EXPECT_EQ(cloth.model->inverseMass[47], 0.0);
  EXPECT_GT(cloth.model->inverseMass[1], 0.0);
  EXPECT_EQ(cloth.settings.substeps, 15);
  EXPECT_EQ(cloth.settings.iterations, 1);
  EXPECT_EQ(cloth.frames, 240);
  EXPECT_NEAR(objectMass(cloth, 0), 0.3, 1e-12);

  const pliant::Scene rope = pliant::makeBuiltinScene("rope");
  EXPECT_EQ(rope.model->particleCount(), 41u);
  EXPECT_EQ(count(*rope.model, ConstraintFamily::Distance), 40u);
  EXPECT_EQ(rope.topology.lines.size(), 40u);
  EXPECT_EQ(rope.model->inverseMass[0], 0.0);
  EXPECT_NEAR(objectMass(rope, 0), 0.41, 1e-12);

  const pliant::Scene beam = pliant::makeBuiltinScene("beam");
  EXPECT_EQ(beam.model->particleCount(), 17u * 3u * 5u);
  EXPECT_EQ(count(*beam.model, ConstraintFamily::TetVolume), 768u);
  EXPECT_EQ(beam.topology.tets.size(), 768u);
  // density 100 kg/m^3 x 2 x 0.4 x 0.4 m^3
  EXPECT_NEAR(objectMass(beam, 0), 32.0, 1e-9);

  const pliant::Scene balloon = pliant::makeBuiltinScene("balloon");
  EXPECT_EQ(balloon.model->particleCount(), 2u + 11u * 24u + 1u);
  EXPECT_EQ(count(*balloon.model, ConstraintFamily::GlobalVolume), 1u);
  EXPECT_EQ(count(*balloon.model, ConstraintFamily::MaxDistance), 1u);
  EXPECT_DOUBLE_EQ(balloon.model->globalVolumes[0].pressure, 1.5);
}

TEST(SceneFileBuiltin, UnknownNameListsTheKnownOnes) {
  const std::string message = errorOf([] { (void)pliant::makeBuiltinScene("clothh"); });
  EXPECT_THAT(message, HasSubstr("clothh"));
  EXPECT_THAT(message, HasSubstr("cloth, rope, beam, balloon"));
}

// ---------------------------------------------------------------------------------------------
// A scene using every feature (tests/data/scenes/full.json)

class FullScene : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { scene_ = new pliant::Scene(pliant::loadSceneFile(scenePath("full.json"))); }
  static void TearDownTestSuite() {
    delete scene_;
    scene_ = nullptr;
  }
  static pliant::Scene* scene_;
  // Object indices in full.json.
  static constexpr int kSheet = 0, kRope = 1, kBlock = 2, kBall = 3, kPts = 4, kFixed = 5;
  static pliant::ParticleIndex particle(int object, std::uint32_t local) {
    return scene_->objects[object].firstParticle + local;
  }
};
pliant::Scene* FullScene::scene_ = nullptr;

TEST_F(FullScene, TopLevelAndSolverSettings) {
  const pliant::Scene& s = *scene_;
  EXPECT_EQ(s.name, "full");
  EXPECT_THAT(s.description, HasSubstr("every object type"));
  EXPECT_EQ(s.frames, 50);
  EXPECT_TRUE(s.probeEverySubstep);
  EXPECT_EQ(s.settings.mode, pliant::SolverMode::Xpbd);
  EXPECT_DOUBLE_EQ(s.settings.timeStep, 0.01);
  EXPECT_EQ(s.settings.substeps, 4);
  EXPECT_EQ(s.settings.iterations, 3);
  EXPECT_EQ(s.settings.gravity, Vec3(0.0, -9.0, 0.5));
  EXPECT_FALSE(s.settings.iterationIndependentStiffness);
  EXPECT_DOUBLE_EQ(s.settings.velocityDamping, 0.1);
  EXPECT_DOUBLE_EQ(s.settings.maxDisplacementPerStep, 5.0);
}

TEST_F(FullScene, ObjectsAndParticles) {
  const pliant::Scene& s = *scene_;
  const pliant::Model& m = *s.model;
  ASSERT_EQ(s.objects.size(), 6u);
  const std::vector<std::string> names = {"sheet", "rope", "block", "ball", "pts", "fixed"};
  // cloth 4x3 nodes, rope 11, box 3x2x2 nodes, UV sphere 2 + 5 rings x 8, 5 listed, 2 listed
  const std::vector<std::uint32_t> counts = {12, 11, 12, 42, 5, 2};
  std::uint32_t first = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(s.objects[i].name, names[i]);
    EXPECT_EQ(s.objects[i].firstParticle, first);
    EXPECT_EQ(s.objects[i].particleCount, counts[i]);
    first += counts[i];
  }
  EXPECT_EQ(m.particleCount(), 84u);
  ASSERT_EQ(m.objects.size(), 6u);
  EXPECT_DOUBLE_EQ(m.objects[kSheet].dampingFactor, 0.05);

  // Total masses (kg): given for cloth, rope, balloon; density x volume for the box.
  EXPECT_NEAR(objectMass(s, kSheet), 0.12, 1e-12);
  EXPECT_NEAR(objectMass(s, kRope), 0.11, 1e-12);
  EXPECT_NEAR(objectMass(s, kBlock), 500.0 * 0.2 * 0.1 * 0.1, 1e-12);
  EXPECT_NEAR(objectMass(s, kBall), 0.05, 1e-12);
  EXPECT_NEAR(objectMass(s, kPts), 6.0, 1e-12);
  EXPECT_NEAR(objectMass(s, kFixed), 1.0, 1e-12);

  // Grid node (i, j) is particle j * nx + i: node (0, 0) at the origin, node (3, 2) at the far corner.
  EXPECT_EQ(m.initialPosition[particle(kSheet, 0)], Vec3(0.0, 1.0, 0.0));
  EXPECT_TRUE(m.initialPosition[particle(kSheet, 11)].isApprox(Vec3(0.3, 1.0, 0.2), 1e-12));
  EXPECT_TRUE(m.initialPosition[particle(kRope, 10)].isApprox(Vec3(2.0, 2.0, 0.0), 1e-12));
  EXPECT_EQ(m.initialVelocity[particle(kPts, 1)], Vec3(0.0, 1.0, 0.0));

  // Pins: sheet by index (0) and indices ([3]); rope by box (particle 0); the box's x = 3 face
  // (nodes with i = 0: local 0, 3, 6, 9); "all" for `fixed`; mass 0 and kinematic particles too.
  std::vector<pliant::ParticleIndex> fixedParticles = {particle(kSheet, 0), particle(kSheet, 3), particle(kRope, 0),
                                                       particle(kFixed, 0), particle(kFixed, 1), particle(kPts, 4)};
  for (std::uint32_t k : {0u, 3u, 6u, 9u}) fixedParticles.push_back(particle(kBlock, k));
  std::size_t fixedCount = 0;
  for (std::size_t p = 0; p < m.particleCount(); ++p) fixedCount += m.inverseMass[p] == 0.0;
  EXPECT_EQ(fixedCount, fixedParticles.size());
  for (pliant::ParticleIndex p : fixedParticles) EXPECT_EQ(m.inverseMass[p], 0.0) << "particle " << p;
  EXPECT_DOUBLE_EQ(m.mass[particle(kFixed, 0)], 0.5);           // pinned particles keep their mass
  EXPECT_DOUBLE_EQ(m.inverseMass[particle(kSheet, 1)], 100.0);  // 12 nodes share 0.12 kg
  EXPECT_DOUBLE_EQ(m.inverseMass[particle(kRope, 1)], 100.0);   // 11 particles share 0.11 kg
  EXPECT_DOUBLE_EQ(m.inverseMass[particle(kPts, 0)], 1.0);
}

TEST_F(FullScene, ConstraintCountsPerFamilyAndObject) {
  const pliant::Scene& s = *scene_;
  const pliant::Model& m = *s.model;
  // Distances: cloth 4x3 grid edges 9 + 8 + 6 diagonals = 23; rope 10; box of 2 Kuhn cells:
  // 2 x 19 edges - 5 on the shared face = 33; UV sphere 3F/2 with F = 2 x 8 + 2 x 8 x 4 = 80 -> 120;
  // one explicit.
  EXPECT_EQ(count(m, ConstraintFamily::Distance), 23u + 10u + 33u + 120u + 1u);
  // Tethers from the 2 pinned corners to the 10 free sheet particles, plus one explicit.
  EXPECT_EQ(count(m, ConstraintFamily::MaxDistance), 20u + 1u);
  // Dihedral bending on the 23 - 10 = 13 interior sheet edges, plus one explicit.
  EXPECT_EQ(count(m, ConstraintFamily::DihedralBending), 13u + 1u);
  EXPECT_EQ(count(m, ConstraintFamily::IsometricBending), 1u);
  EXPECT_EQ(count(m, ConstraintFamily::TetVolume), 12u + 1u);
  EXPECT_EQ(count(m, ConstraintFamily::GlobalVolume), 1u);
  EXPECT_EQ(count(m, ConstraintFamily::Attachment), 3u);
  EXPECT_EQ(count(m, ConstraintFamily::Generic), 0u);
  EXPECT_EQ(m.kinematicParticles.size(), 1u);

  const int distance = static_cast<int>(ConstraintFamily::Distance);
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges = {{0, 23},   {23, 33},   {33, 66},
                                                                       {66, 186}, {186, 186}, {186, 186}};
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    SCOPED_TRACE(s.objects[i].name);
    EXPECT_EQ(s.objects[i].constraintBegin[distance], ranges[i].first);
    EXPECT_EQ(s.objects[i].constraintEnd[distance], ranges[i].second);
  }
  const int maxDistance = static_cast<int>(ConstraintFamily::MaxDistance);
  EXPECT_EQ(s.objects[kSheet].constraintBegin[maxDistance], 0u);
  EXPECT_EQ(s.objects[kSheet].constraintEnd[maxDistance], 20u);

  // Materials reach the constraints.
  EXPECT_DOUBLE_EQ(m.distances[0].params.compliance, 1e-6);
  EXPECT_DOUBLE_EQ(m.distances[0].params.damping, 0.5);
  EXPECT_DOUBLE_EQ(m.distances[23].params.compliance, 1e-8);
  EXPECT_DOUBLE_EQ(m.distances[33].params.compliance, 1e-5);
  EXPECT_DOUBLE_EQ(m.tetVolumes[0].params.compliance, 1e-6);
  EXPECT_DOUBLE_EQ(m.dihedralBendings[0].params.compliance, 0.1);
  EXPECT_DOUBLE_EQ(m.globalVolumes[0].pressure, 1.2);
  // Tethers: max length = rest distance x slack 1.1.
  for (std::size_t c = 0; c < 20; ++c) {
    const auto& t = m.maxDistances[c];
    const double rest = (m.initialPosition[t.particles[0]] - m.initialPosition[t.particles[1]]).norm();
    EXPECT_NEAR(t.maxLength, 1.1 * rest, 1e-12) << "tether " << c;
  }

  // Topology to draw: sheet 12 triangles, box surface 2 x (2 + 4 + 4) = 20, sphere 80; rope 10 segments.
  EXPECT_EQ(s.topology.triangles.size(), 12u + 20u + 80u);
  EXPECT_EQ(s.topology.tets.size(), 12u);
  EXPECT_EQ(s.topology.lines.size(), 10u);
}

TEST_F(FullScene, ExplicitConstraints) {
  const pliant::Model& m = *scene_->model;
  const pliant::ParticleIndex p0 = particle(kPts, 0), p1 = particle(kPts, 1), p2 = particle(kPts, 2),
                              p3 = particle(kPts, 3);
  const auto& d = m.distances.back();
  EXPECT_EQ(d.particles[0], particle(kRope, 10));
  EXPECT_EQ(d.particles[1], p0);
  EXPECT_DOUBLE_EQ(d.restLength, 0.5);
  EXPECT_DOUBLE_EQ(d.params.compliance, 1e-6);

  const auto& md = m.maxDistances.back();
  EXPECT_EQ(md.particles[0], p1);
  EXPECT_EQ(md.particles[1], p2);
  EXPECT_DOUBLE_EQ(md.maxLength, 2.0);

  const auto& dihedral = m.dihedralBendings.back();
  EXPECT_EQ(std::vector<pliant::ParticleIndex>(dihedral.particles, dihedral.particles + 4),
            (std::vector<pliant::ParticleIndex>{p0, p1, p2, p3}));
  EXPECT_DOUBLE_EQ(dihedral.restAngle, 0.5);

  EXPECT_EQ(m.isometricBendings[0].particles[3], p3);
  EXPECT_DOUBLE_EQ(m.isometricBendings[0].params.compliance, 0.01);

  const auto& tet = m.tetVolumes.back();
  EXPECT_NEAR(tet.restVolume, 1.0 / 6.0, 1e-15);
  EXPECT_DOUBLE_EQ(tet.params.damping, 0.1);
}

TEST_F(FullScene, AttachmentsAndKinematicParticles) {
  const pliant::Model& m = *scene_->model;
  ASSERT_EQ(m.attachments.size(), 3u);
  // Fixed target.
  EXPECT_EQ(m.attachments[0].particle, particle(kSheet, 11));
  EXPECT_EQ(m.attachments[0].target, Vec3(0.3, 1.5, 0.2));
  EXPECT_EQ(m.attachments[0].targetPath, -1);
  EXPECT_DOUBLE_EQ(m.attachments[0].restDistance, 0.1);
  EXPECT_DOUBLE_EQ(m.attachments[0].params.compliance, 1e-5);
  // Path.
  EXPECT_EQ(m.attachments[1].particle, particle(kBlock, 11));
  EXPECT_GE(m.attachments[1].targetPath, 0);
  // Its own initial position.
  EXPECT_EQ(m.attachments[2].particle, particle(kBall, 0));
  EXPECT_EQ(m.attachments[2].targetPath, -1);
  EXPECT_EQ(m.attachments[2].target, m.initialPosition[particle(kBall, 0)]);
  EXPECT_DOUBLE_EQ(m.attachments[2].restDistance, 0.0);

  // Kinematic: follows its path from the particle's own start, (6,0,0) -> (6,0,1) over 1 s.
  ASSERT_EQ(m.kinematicParticles.size(), 1u);
  EXPECT_EQ(m.kinematicParticles[0].particle, particle(kPts, 4));
  EXPECT_TRUE(m.kinematicParticles[0].path(0.25).isApprox(Vec3(6.0, 0.0, 0.25), 1e-15));
  EXPECT_TRUE(m.kinematicParticles[0].path(5.0).isApprox(Vec3(6.0, 0.0, 1.0), 1e-15));
}

TEST_F(FullScene, MovingAttachmentTargetFollowsItsKeyframes) {
  const pliant::Model& m = *scene_->model;
  const auto& path = m.attachmentPaths.at(static_cast<std::size_t>(m.attachments[1].targetPath));
  // Block node (2, 1, 1) starts at origin + (0.2, 0.1, 0.1) and keeps that offset from the path,
  // whose keyframes are (0 s, 0), (1 s, (0,1,0)), (2 s, (1,1,0)), held outside [0, 2] s.
  const Vec3 x0(3.2, 1.1, 0.1);
  ASSERT_TRUE(m.initialPosition[particle(kBlock, 11)].isApprox(x0, 1e-12));
  const std::vector<std::pair<double, Vec3>> expected = {{-1.0, x0},
                                                         {0.0, x0},
                                                         {0.5, x0 + Vec3(0, 0.5, 0)},
                                                         {1.0, x0 + Vec3(0, 1, 0)},
                                                         {1.25, x0 + Vec3(0.25, 1, 0)},
                                                         {2.0, x0 + Vec3(1, 1, 0)},
                                                         {10.0, x0 + Vec3(1, 1, 0)}};
  for (const auto& [t, x] : expected) EXPECT_LT((path(t) - x).norm(), 1e-12) << "t = " << t;
}

TEST(SceneFileAttachment, HardAttachedParticleTracksTheMovingTargetWhileStepping) {
  // One free particle held (compliance 0) to a point moving along x at 1 m/s for 1 s, then still.
  const pliant::Scene scene = pliant::parseScene(R"({
    "solver": {"mode": "xpbd", "time_step": 0.05, "substeps": 2},
    "objects": [{"type": "particles", "name": "p", "positions": [[0, 1, 0]], "mass": 1.0}],
    "attachments": [{"object": "p", "select": {"all": true},
                     "path": {"keyframes": [{"time": 0, "position": [0, 0, 0]}, {"time": 1, "position": [1, 0, 0]}]}}]
  })",
                                                 "inline.json", "");
  pliant::Solver solver(scene.model, scene.settings);
  pliant::State state = pliant::State::fromModel(*scene.model);
  for (int frame = 1; frame <= 30; ++frame) {
    ASSERT_TRUE(solver.step(state).ok());
    const double x = std::min(state.time, 1.0);
    EXPECT_NEAR(state.attachmentTarget[0].x(), x, 1e-12) << "t = " << state.time;
    EXPECT_NEAR(state.attachmentTarget[0].y(), 1.0, 1e-12);
    EXPECT_LT((state.position[0] - Vec3(x, 1.0, 0.0)).norm(), 1e-9) << "t = " << state.time;
  }
  EXPECT_NEAR(state.time, 1.5, 1e-12);
}

TEST(SceneFileSolver, PbdModeWithDurationAndIterationIndependentStiffness) {
  const pliant::Scene scene = pliant::parseScene(R"({
    "solver": {"mode": "pbd", "time_step": 0.01, "iterations": 8, "iteration_independent_stiffness": true},
    "duration": 1.0,
    "objects": [{"type": "rope", "name": "r", "start": [0, 0, 0], "end": [1, 0, 0], "particles": 3, "mass": 0.3,
                 "stretch": {"stiffness": 0.5}}]
  })",
                                                 "inline.json", "");
  EXPECT_EQ(scene.settings.mode, pliant::SolverMode::Pbd);
  EXPECT_EQ(scene.settings.iterations, 8);
  EXPECT_EQ(scene.settings.substeps, 1);
  EXPECT_TRUE(scene.settings.iterationIndependentStiffness);
  EXPECT_EQ(scene.frames, 100);  // 1 s / 0.01 s
  EXPECT_DOUBLE_EQ(scene.model->distances[0].params.stiffness, 0.5);
  EXPECT_FALSE(scene.probeEverySubstep);
  EXPECT_TRUE(scene.probes.empty());
}

TEST(SceneFileSolver, SmallStepsDefaultsAndDurationRoundsUp) {
  const pliant::Scene scene = pliant::parseScene(R"({
    "solver": {"mode": "small-steps"},
    "duration": 0.1,
    "objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]], "mass": 1.0}]
  })",
                                                 "inline.json", "");
  EXPECT_EQ(scene.settings.mode, pliant::SolverMode::Xpbd);
  EXPECT_EQ(scene.settings.substeps, 10);
  EXPECT_EQ(scene.settings.iterations, 1);
  EXPECT_DOUBLE_EQ(scene.settings.timeStep, 1.0 / 60.0);
  EXPECT_EQ(scene.settings.gravity, Vec3(0.0, -9.81, 0.0));
  EXPECT_EQ(scene.frames, 6);  // ceil(0.1 s x 60 /s)
}

TEST(SceneFileSolver, ADurationOfMoreFramesThanAnIntHoldsIsRefused) {
  // Issue 12 item 2 (fuzz finding): 1e9 s at 60 frames/s was cast to int, giving a negative count.
  const std::string message = errorOf([] {
    (void)pliant::parseScene(R"({"duration": 1e9, "objects": [{"type": "particles", "name": "p",
                                  "positions": [[0, 0, 0]], "mass": 1}]})",
                             "inline.json", "");
  });
  EXPECT_THAT(message, HasSubstr("inline.json: /duration: is 60000000000"));
  EXPECT_THAT(message, HasSubstr("expected at most 100000000 frames"));
}

TEST(SceneFileSolver, BodyStackMassScalingIsReadAndItsRangeChecked) {
  const auto parse = [](const std::string& value) {
    return pliant::parseScene(R"({"solver": {"body_stack_mass_scaling": )" + value +
                                  R"(}, "objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]],
                                  "mass": 1}]})",
                              "inline.json", "");
  };
  EXPECT_EQ(parse("2.5").settings.bodyStackMassScaling, 2.5);
  EXPECT_EQ(pliant::parseScene(R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]],
                                  "mass": 1}]})",
                               "inline.json", "")
                .settings.bodyStackMassScaling,
            0.0);  // off unless asked for
  for (const char* bad : {"-1", "1e4", "\"2\""}) {
    const std::string message = errorOf([&] { (void)parse(bad); });
    EXPECT_THAT(message, HasSubstr("inline.json: /solver/body_stack_mass_scaling")) << bad;
  }
}

TEST(SceneFileSolver, DefaultsWithoutSolverAndFrames) {
  const pliant::Scene scene = pliant::parseScene(
      R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]], "mass": 1.0}]})", "inline.json", "");
  EXPECT_EQ(scene.settings.mode, pliant::SolverMode::Xpbd);
  EXPECT_EQ(scene.settings.substeps, 1);
  EXPECT_EQ(scene.settings.iterations, 1);
  EXPECT_EQ(scene.frames, 300);
  EXPECT_EQ(scene.name, "");
}

TEST(SceneFileMesh, ClothFromObjAndSoftBodyFromTetGenWithTransforms) {
  const pliant::Scene scene = pliant::loadSceneFile(scenePath("meshes.json"));
  const pliant::Model& m = *scene.model;
  ASSERT_EQ(scene.objects.size(), 2u);
  // The quad is fanned into 2 triangles: 4 particles, 5 edges, 1 interior edge.
  EXPECT_EQ(scene.objects[0].particleCount, 4u);
  EXPECT_EQ(scene.objects[1].particleCount, 5u);
  EXPECT_EQ(scene.objects[1].firstParticle, 4u);
  EXPECT_EQ(count(m, ConstraintFamily::Distance), 5u + 9u);  // 2 tets sharing a face: 9 edges
  EXPECT_EQ(count(m, ConstraintFamily::IsometricBending), 1u);
  EXPECT_EQ(count(m, ConstraintFamily::TetVolume), 2u);
  EXPECT_EQ(scene.topology.tets.size(), 2u);
  // OBJ scaled by 2, moved up 1 m.
  EXPECT_TRUE(m.initialPosition[0].isApprox(Vec3(0.0, 1.0, 0.0)));
  EXPECT_TRUE(m.initialPosition[2].isApprox(Vec3(2.0, 1.0, 2.0)));
  EXPECT_EQ(m.inverseMass[0], 0.0);
  EXPECT_NEAR(objectMass(scene, 0), 0.4, 1e-12);
  // TetGen: y scaled by 2 then moved by 3 m in x; mass = density x (1/6 + 2/6) x 2 m^3.
  EXPECT_TRUE(m.initialPosition[4 + 4].isApprox(Vec3(4.0, 2.0, 1.0)));
  EXPECT_NEAR(objectMass(scene, 1), 100.0 * 0.5 * 2.0, 1e-9);
  double volume = 0.0;
  for (const auto& t : m.tetVolumes) volume += t.restVolume;
  EXPECT_NEAR(volume, 1.0, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Bad input: one test per kind, each on a file under tests/data/scenes/bad/.

TEST(SceneFileBadInput, SyntaxErrorGivesLineAndColumn) {
  const std::string message = badFileError("syntax_error.json");
  EXPECT_THAT(message,
              HasSubstr("syntax_error.json:5:31: JSON syntax error: unexpected '}'; expected '[', '{', or a literal"));
}

TEST(SceneFileBadInput, NanIsNotJsonAndIsASyntaxError) {
  const std::string message = badFileError("nan.json");
  EXPECT_THAT(message, HasSubstr("nan.json:4:14: JSON syntax error: invalid literal"));
}

TEST(SceneFileBadInput, NumberTooLargeForADoubleIsNamedWithItsLine) {
  // nlohmann::json refuses 1e999 (out_of_range 406, "number overflow") rather than reading infinity.
  const std::string message = badFileError("infinity.json");
  EXPECT_THAT(message, HasSubstr("infinity.json:4:14: number 1e999 is out of range; expected a finite number"));
  EXPECT_THAT(
      parseError(R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, -1e999, 0]], "mass": 1}]})"),
      HasSubstr("inline.json:1:67: number -1e999 is out of range"));
}

TEST(SceneFileBadInput, MissingRequiredField) {
  EXPECT_THAT(badFileError("missing_field.json"), HasSubstr(": /objects/0: missing required field 'end'"));
  EXPECT_THAT(parseError(R"({"name": "x"})"), HasSubstr("inline.json: /: missing required field 'objects'"));
}

TEST(SceneFileBadInput, UnknownFieldIsATypoNotADefault) {
  EXPECT_THAT(
      badFileError("unknown_field.json"),
      HasSubstr(": /objects/0/stretch: unknown field 'complience' (expected one of: compliance, damping, stiffness)"));
  EXPECT_THAT(
      parseError(
          R"({"frame": 10, "objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]], "mass": 1}]})"),
      HasSubstr("inline.json: /: unknown field 'frame' (expected one of: "));
  EXPECT_THAT(parseError(R"({"solver": {"substep": 4}, "objects": []})"),
              HasSubstr("inline.json: /solver: unknown field 'substep'"));
}

TEST(SceneFileBadInput, WrongType) {
  EXPECT_THAT(badFileError("wrong_type.json"), HasSubstr(": /objects/0/particles: expected an integer, got a string"));
  EXPECT_THAT(parseError(R"({"objects": [{"type": "rope", "name": "r", "start": [0, 0, 0], "end": [1, 0, 0],
                             "particles": 3, "mass": 1, "stretch": 1e-6}]})"),
              HasSubstr("inline.json: /objects/0/stretch: expected an object, got a number"));
  EXPECT_THAT(parseError(R"({"objects": {"type": "rope"}})"),
              HasSubstr("inline.json: /objects: expected an array, got an object"));
  EXPECT_THAT(parseError(R"({"objects": [5]})"),
              HasSubstr("inline.json: /objects/0: expected an object, got a number"));
  EXPECT_THAT(parseError(R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]], "mass": 1}],
                             "probes": ["tip"]})"),
              HasSubstr("inline.json: /probes/0: expected an object, got a string"));
  EXPECT_THAT(parseError(R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0]], "mass": 1}]})"),
              HasSubstr("inline.json: /objects/0/positions/0: expected an array of 3 numbers"));
  EXPECT_THAT(parseError(R"({"objects": [{"type": "rope", "name": "r", "start": [0, 0, 0], "end": [1, 0, 0],
                             "particles": 3.5, "mass": 1}]})"),
              HasSubstr("inline.json: /objects/0/particles: expected an integer, got 3.5"));
}

TEST(SceneFileBadInput, NegativeMass) {
  EXPECT_THAT(badFileError("negative_mass.json"),
              HasSubstr(": /objects/0/mass: expected a number greater than 0, got -1"));
  EXPECT_THAT(parseError(R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0], [1, 0, 0]],
                             "masses": [1, -0.5]}]})"),
              HasSubstr("inline.json: /objects/0/masses/1: expected a number of at least 0, got -0.5"));
}

TEST(SceneFileBadInput, StiffnessAboveOne) {
  EXPECT_THAT(badFileError("stiffness_above_one.json"),
              HasSubstr(": /objects/0/stretch/stiffness: expected a number from 0 to 1, got 1.5"));
}

TEST(SceneFileBadInput, NegativeCompliance) {
  EXPECT_THAT(badFileError("negative_compliance.json"),
              HasSubstr(": /objects/0/stretch/compliance: expected a number of at least 0, got -1"));
}

TEST(SceneFileBadInput, PinIndexOutOfRange) {
  EXPECT_THAT(badFileError("pin_index.json"),
              ContainsRegex(": /objects/0/pins/0/index: expected an integer from 0 to 40, got 41$"));
}

TEST(SceneFileBadInput, NegativePinIndex) {
  EXPECT_THAT(
      parseError(R"({"objects": [{"type": "rope", "name": "r", "start": [0, 0, 0], "end": [1, 0, 0], "particles": 3,
                             "mass": 1, "pins": [{"indices": [0, -1]}]}]})"),
      HasSubstr("inline.json: /objects/0/pins/0/indices/1: expected an integer from 0 to 2, got -1"));
}

TEST(SceneFileBadInput, ProbeIndexOutOfRange) {
  EXPECT_THAT(badFileError("probe_index.json"),
              ContainsRegex(": /probes/0/index: expected an integer from 0 to 40, got 99$"));
  // A constraint-force probe's index counts the object's constraints of that family (40 here).
  EXPECT_THAT(
      parseError(
          R"({"objects": [{"type": "rope", "name": "r", "start": [0, 0, 0], "end": [1, 0, 0], "particles": 3, "mass": 1}],
                             "probes": [{"name": "f", "type": "constraint_force", "object": "r", "family": "distance", "index": 2}]})"),
      ContainsRegex("inline.json: /probes/0/index: expected an integer from 0 to 1, got 2$"));
}

TEST(SceneFileBadInput, ParticleReferenceOutOfRange) {
  EXPECT_THAT(badFileError("particle_reference.json"),
              ContainsRegex(": /constraints/0/particles/1/1: expected an integer from 0 to 40, got 41$"));
}

TEST(SceneFileBadInput, UnknownObjectName) {
  EXPECT_THAT(badFileError("unknown_object.json"),
              HasSubstr(": /attachments/0/object: no object named 'rop' (objects: rope)"));
}

TEST(SceneFileBadInput, DuplicateObjectName) {
  EXPECT_THAT(badFileError("duplicate_name.json"), HasSubstr(": /objects/1/name: duplicate object name 'rope'"));
}

TEST(SceneFileBadInput, UnknownObjectType) {
  EXPECT_THAT(
      badFileError("unknown_type.json"),
      HasSubstr(
          ": /objects/0/type: unknown object type 'clth' (expected cloth, rope, softbody, balloon or particles)"));
}

TEST(SceneFileBadInput, EmptyObjectsArray) {
  EXPECT_THAT(badFileError("empty_objects.json"), HasSubstr(": /objects: expected an array of at least 1 element"));
}

TEST(SceneFileBadInput, BoxSelectingNothing) {
  EXPECT_THAT(badFileError("empty_box.json"),
              HasSubstr(": /objects/0/pins/0/box: the box selects no particle of object 'rope'"));
}

TEST(SceneFileBadInput, FramesAndDurationBoth) {
  EXPECT_THAT(badFileError("frames_and_duration.json"), HasSubstr(": /: give either 'frames' or 'duration', not both"));
}

TEST(SceneFileBadInput, SmallStepsWithTwoIterations) {
  EXPECT_THAT(badFileError("small_steps_iterations.json"),
              HasSubstr(": /solver/iterations: small steps use exactly 1 iteration per substep"));
}

TEST(SceneFileBadInput, TimeStepAboveItsMaximum) {
  // An exclusive minimum must not switch off the maximum.
  EXPECT_THAT(badFileError("time_step_too_large.json"),
              HasSubstr(": /solver/time_step: expected a number greater than 0 and at most 10, got 20"));
  EXPECT_THAT(parseError(R"({"solver": {"time_step": 0}, "objects": []})"),
              HasSubstr("inline.json: /solver/time_step: expected a number greater than 0 and at most 10, got 0"));
}

TEST(SceneFileBadInput, UnknownFamilyInProbe) {
  EXPECT_THAT(badFileError("probe_family.json"),
              HasSubstr(": /probes/0/family: unknown constraint family 'distanse' (expected attachment, distance,"));
}

TEST(SceneFileBadInput, TopLevelNotAnObject) {
  EXPECT_THAT(badFileError("top_level_array.json"), HasSubstr(": /: expected a JSON object at the top level"));
}

// Mesh errors come from src/io/mesh_io.cpp; the loader prefixes the scene file and the object's
// JSON path, the reader names the mesh file (and line) and what it expected.
TEST(SceneFileBadInput, UnreadableMeshFileIsNamed) {
  const std::string message = badFileError("mesh_missing.json");
  EXPECT_THAT(message, HasSubstr(": /objects/0: "));
  EXPECT_THAT(message, HasSubstr("meshes/missing.obj: cannot open"));
}

TEST(SceneFileBadInput, EmptyMesh) {
  const std::string message = badFileError("mesh_empty.json");
  EXPECT_THAT(message, HasSubstr(": /objects/0: "));
  EXPECT_THAT(message, HasSubstr("meshes/empty.obj: empty mesh"));
  EXPECT_THAT(message, HasSubstr("expected"));
}

TEST(SceneFileBadInput, MeshIndexOutOfRange) {
  const std::string message = badFileError("mesh_index.json");
  EXPECT_THAT(message, HasSubstr(": /objects/0: "));
  EXPECT_THAT(message, HasSubstr("meshes/bad_index.obj:4: vertex index 9 is out of range"));
}

TEST(SceneFileBadInput, InvertedTet) {
  const std::string message = badFileError("mesh_inverted_tet.json");
  EXPECT_THAT(message, HasSubstr(": /objects/0: "));
  // Tet 2 is on line 4 of inverted.ele and has the minority orientation.
  EXPECT_THAT(message, HasSubstr("meshes/inverted.ele:4: "));
  EXPECT_THAT(message, HasSubstr("inverted ("));
  EXPECT_THAT(message, HasSubstr("expected"));
}

TEST(SceneFileBadInput, UnreadableSceneFile) {
  const std::string path = scenePath("bad/does_not_exist.json");
  const std::string message = errorOf([&] { (void)pliant::loadSceneFile(path); });
  EXPECT_THAT(message, HasSubstr(path + ": cannot open"));
  EXPECT_THAT(message, HasSubstr("expected a scene file"));
}

TEST(SceneFileBadInput, FolderGivenAsScene) {
  const std::string path = scenePath("bad");
  const std::string message = errorOf([&] { (void)pliant::loadSceneFile(path); });
  EXPECT_THAT(message, HasSubstr(path + ": is a folder, not a regular file; expected a scene file"));
}

// Issue 12 item 7: a particle_contact block that cannot act (no particle has a radius) is an error,
// as surface_contact without self-collision is, naming the block and what is expected.
// A radius above the object's links is refused before building the solver (it used to be refused
// at the first step, after building), naming the field, the limit and why.
TEST(SceneFileBadInput, ParticleRadiusAboveTheLinkLength) {
  const std::string message = badFileError("particle_radius_above_links.json");
  EXPECT_THAT(message, HasSubstr("particle_radius_above_links.json: /objects/0/particle_radius: "));
  EXPECT_THAT(message, HasSubstr("above the mean length of the object's links, 0.059652 m"));
  EXPECT_THAT(message, HasSubstr("particles two links apart would overlap at rest"));
  // At the limit it is accepted, and with particle contact off any radius is (colliders only).
  std::string text = pliant::io::readInputFile(scenePath("bad/particle_radius_above_links.json"), "scene", 1 << 20);
  const std::string radius = "\"particle_radius\": 0.2";
  text.replace(text.find(radius), radius.size(), "\"particle_radius\": 0.05");
  EXPECT_NO_THROW((void)pliant::parseScene(text, "limit.json", ""));
  const std::string friction = "\"friction\": 0.2";
  text.replace(text.find(friction), friction.size(), "\"enabled\": false");
  text.replace(text.find("0.05"), 4, "0.5");
  EXPECT_NO_THROW((void)pliant::parseScene(text, "off.json", ""));
}

TEST(SceneFileBadInput, ParticleContactWithoutAnyParticleRadius) {
  const std::string message = badFileError("particle_contact_without_radius.json");
  EXPECT_THAT(message, HasSubstr("particle_contact_without_radius.json: /particle_contact: "));
  EXPECT_THAT(message, HasSubstr("no object has a \"particle_radius\" > 0"));
  EXPECT_THAT(message, HasSubstr("expected \"particle_radius\" (m)"));
  // Turned off, or with a radius, it is accepted.
  const char* off = R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]], "mass": 1}],
                       "particle_contact": {"enabled": false}})";
  EXPECT_NO_THROW((void)pliant::parseScene(off, "off.json", ""));
  const char* radius = R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]], "mass": 1,
                                        "particle_radius": 0.01}], "particle_contact": {"friction": 0.2}})";
  EXPECT_NO_THROW((void)pliant::parseScene(radius, "radius.json", ""));
}

// Issue 12 item 7: an error the model builder finds in an attachment names the file and the
// attachment's JSON path, not only "attachment 1".
TEST(SceneFileBadInput, AttachmentBuilderErrorNamesFileAndJsonPath) {
  const std::string message = badFileError("attachment_target_overflow.json");
  EXPECT_THAT(message, HasSubstr("attachment_target_overflow.json: /attachments/1: "));
  EXPECT_THAT(message, HasSubstr("target"));
}

// ---------------------------------------------------------------------------------------------
// Rigid bodies and joints (src/io/scene_bodies.cpp, tests/data/scenes/bodies.json)

TEST(SceneFileBodies, EveryFieldOfBodiesAndJoints) {
  using pliant::BodyMotion;
  using pliant::BodyShapeKind;
  using pliant::JointDrive;
  using pliant::JointKind;
  using pliant::kWorldBody;
  const pliant::Scene scene = pliant::loadSceneFile(scenePath("bodies.json"));
  const pliant::Model& model = *scene.model;
  EXPECT_EQ(model.particleCount(), 0u);  // bodies alone need no object
  ASSERT_EQ(model.bodyCount(), 8u);
  const auto& bodies = model.bodies;
  const std::vector<std::string> names = {"ball",      "plank",     "body_2", "tetra",
                                          "hull_cube", "mesh_cube", "floor",  "lift"};
  for (std::size_t b = 0; b < names.size(); ++b) EXPECT_EQ(bodies[b].name, names[b]);
  // Shapes and sizes.
  EXPECT_EQ(bodies[0].shape.kind, BodyShapeKind::Sphere);
  EXPECT_DOUBLE_EQ(bodies[0].shape.radius, 0.1);
  EXPECT_EQ(bodies[1].shape.kind, BodyShapeKind::Box);
  EXPECT_EQ(bodies[1].shape.halfExtents, Vec3(0.5, 0.05, 0.1));
  EXPECT_EQ(bodies[2].shape.kind, BodyShapeKind::Capsule);
  EXPECT_DOUBLE_EQ(bodies[2].shape.halfHeight, 0.2);
  EXPECT_EQ(bodies[3].shape.kind, BodyShapeKind::ConvexHull);
  ASSERT_TRUE(bodies[3].shape.hull);
  EXPECT_EQ(bodies[3].shape.hull->vertices.size(), 4u);  // the inner point is not on the hull
  ASSERT_TRUE(bodies[4].shape.hull);
  EXPECT_EQ(bodies[4].shape.hull->vertices.size(), 8u);  // cube.obj's corners, scaled by 0.1
  EXPECT_NEAR(bodies[4].mass, 1000.0 * 1e-3, 1e-9);
  EXPECT_EQ(bodies[5].shape.kind, BodyShapeKind::Mesh);
  ASSERT_TRUE(bodies[5].shape.grid);
  // Mass from the density, or given (then the inertia scales with it).
  EXPECT_NEAR(bodies[0].mass, 500.0 * 4.0 / 3.0 * M_PI * 1e-3, 1e-9);
  EXPECT_NEAR(bodies[1].mass, 3.0, 1e-12);
  EXPECT_NEAR(bodies[1].inertia.maxCoeff(), 3.0 / 3.0 * (0.5 * 0.5 + 0.1 * 0.1), 1e-9);
  EXPECT_NEAR(bodies[5].mass, 1000.0 * 0.2 * 0.1 * 0.2, 1e-9);  // sdf_cube.obj is a unit cube, scaled
  // Pose: the shape frame's position and rotation.
  const pliant::ColliderPose plank = bodies[1].shapePose(bodies[1].initialPosition, bodies[1].initialRotation);
  EXPECT_NEAR((plank.position - Vec3(1, 2, 0)).norm(), 0.0, 1e-12);
  EXPECT_NEAR(plank.rotation.angularDistance(pliant::Quat(Eigen::AngleAxisd(0.5, Vec3::UnitZ()))), 0.0, 1e-9);
  // Motion, velocities, material.
  EXPECT_EQ(bodies[0].motion, BodyMotion::Dynamic);
  EXPECT_EQ(bodies[0].initialVelocity, Vec3(1, 0, 0));
  EXPECT_EQ(bodies[0].initialAngularVelocity, Vec3(0, 0, 2));
  EXPECT_DOUBLE_EQ(bodies[0].material.staticFriction, 0.6);
  EXPECT_DOUBLE_EQ(bodies[0].material.dynamicFriction, 0.4);
  EXPECT_DOUBLE_EQ(bodies[0].material.restitution, 0.5);
  EXPECT_DOUBLE_EQ(bodies[2].material.staticFriction, 0.3);
  EXPECT_DOUBLE_EQ(bodies[2].material.dynamicFriction, 0.3);
  EXPECT_EQ(bodies[6].motion, BodyMotion::Static);
  EXPECT_EQ(bodies[6].inverseMass, 0.0);
  EXPECT_EQ(bodies[7].motion, BodyMotion::Kinematic);
  // The kinematic body's shape frame moves along its path (offset to its position) and spins.
  const pliant::ColliderPose start = pliant::bodyPose(model, 7, 0.0);
  const pliant::ColliderPose later = pliant::bodyPose(model, 7, 1.0);
  const pliant::ColliderPose shapeLater = bodies[7].shapePose(later.position, later.rotation);
  EXPECT_NEAR((bodies[7].shapePose(start.position, start.rotation).position - Vec3(0, 0, 3)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((shapeLater.position - Vec3(0, 1, 3)).norm(), 0.0, 1e-12);
  EXPECT_NEAR(shapeLater.rotation.angularDistance(pliant::Quat(Eigen::AngleAxisd(1.0, Vec3::UnitY()))), 0.0, 1e-9);

  ASSERT_EQ(model.joints.size(), 6u);
  const auto& joints = model.joints;
  EXPECT_EQ(joints[0].kind, JointKind::Spherical);
  EXPECT_EQ(joints[0].bodies[0], kWorldBody);
  EXPECT_EQ(joints[0].bodies[1], 0u);
  EXPECT_DOUBLE_EQ(joints[0].swingLimit, 1.0);
  EXPECT_DOUBLE_EQ(joints[0].lower, -0.5);
  EXPECT_DOUBLE_EQ(joints[0].upper, 0.5);
  EXPECT_EQ(joints[1].kind, JointKind::Hinge);
  EXPECT_EQ(joints[1].bodies[0], 0u);
  EXPECT_EQ(joints[1].bodies[1], 1u);
  EXPECT_DOUBLE_EQ(joints[1].params.compliance, 1e-6);
  EXPECT_DOUBLE_EQ(joints[1].params.damping, 0.1);
  EXPECT_EQ(joints[1].drive, JointDrive::Speed);
  EXPECT_DOUBLE_EQ(joints[1].driveTarget, 0.5);
  EXPECT_DOUBLE_EQ(joints[1].driveParams.compliance, 1e-4);
  EXPECT_DOUBLE_EQ(joints[1].driveParams.damping, 0.01);
  EXPECT_EQ(joints[2].kind, JointKind::Prismatic);
  EXPECT_DOUBLE_EQ(joints[2].lower, -0.1);
  EXPECT_DOUBLE_EQ(joints[2].upper, 0.2);
  EXPECT_EQ(joints[3].kind, JointKind::Fixed);
  EXPECT_EQ(joints[4].kind, JointKind::Distance);
  EXPECT_DOUBLE_EQ(joints[4].restLength, 0.9);
  EXPECT_DOUBLE_EQ(joints[4].params.compliance, 1e-3);
  EXPECT_EQ(joints[5].drive, JointDrive::Angle);
  // The hinge's world anchor is where both bodies hold it at time 0.
  const Vec3 onA = bodies[0].initialPosition + bodies[0].initialRotation * joints[1].localAnchor[0];
  const Vec3 onB = bodies[1].initialPosition + bodies[1].initialRotation * joints[1].localAnchor[1];
  EXPECT_NEAR((onA - Vec3(0.5, 2, 0)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((onB - Vec3(0.5, 2, 0)).norm(), 0.0, 1e-12);

  using Kind = pliant::Probe::Kind;
  ASSERT_EQ(scene.probes.size(), 7u);
  EXPECT_EQ(scene.probes[0].kind, Kind::Body);
  EXPECT_EQ(scene.probes[0].body, 0);
  EXPECT_EQ(scene.probes[1].body, 1);
  EXPECT_EQ(scene.probes[2].kind, Kind::BodyMomentum);
  EXPECT_EQ(scene.probes[2].body, -1);
  EXPECT_EQ(scene.probes[3].body, 0);
  EXPECT_EQ(scene.probes[4].kind, Kind::BodyEnergy);
  EXPECT_EQ(scene.probes[5].kind, Kind::JointForce);
  EXPECT_EQ(scene.probes[5].joint, 0u);
  EXPECT_EQ(scene.probes[6].joint, 5u);

  pliant::Solver solver(scene.model, scene.settings);
  pliant::State state = pliant::State::fromModel(model);
  EXPECT_TRUE(solver.run(state, scene.frames).ok());
}

TEST(SceneFileBodies, BadBodiesAndJointsNameTheFieldAndWhatWasExpected) {
  const std::vector<std::pair<const char*, std::vector<const char*>>> cases = {
      {"body_unknown_type.json", {"/bodies/0/type: ", "cylinder", "sphere, box, capsule, convex_hull or mesh"}},
      {"body_density_and_mass.json", {"/bodies/0: ", "either \"density\" or \"mass\""}},
      {"body_negative_radius.json", {"/bodies/0/radius: ", "greater than 0"}},
      {"body_static_velocity.json", {"/bodies/0/velocity: ", "static body has no initial velocity"}},
      {"body_dynamic_path.json", {"/bodies/0/path: ", "only a kinematic body"}},
      {"body_duplicate_name.json", {"/bodies/1/name: ", "duplicate body name 'link'"}},
      {"body_hull_flat.json", {"/bodies/0/points: "}},
      {"body_mesh_missing.json", {"/bodies/0/file: ", "no_such_mesh.obj"}},
      {"joint_unknown_body.json", {"/joints/0/body_b: ", "unknown body 'lnk'", "\"world\" or one of the bodies: link"}},
      {"joint_same_body.json", {"/joints/0/body_b: ", "two different bodies"}},
      {"joint_limits_reversed.json", {"/joints/0/upper: ", "expected upper >= lower"}},
      {"joint_limit_on_fixed.json", {"/joints/0: ", "unknown field 'lower'"}},
      {"joint_drive_mode.json", {"/joints/0/drive/mode: ", "'torque'", "angle or speed"}},
      {"joint_zero_axis.json", {"/joints/0/axis: ", "must not be zero"}},
      {"joint_swing_limit.json", {"/joints/0/swing_limit: ", "at most 3.14"}},
      {"probe_unknown_joint.json", {"/probes/0/joint: ", "unknown joint 'pn'", "pin"}},
  };
  for (const auto& [file, parts] : cases) {
    SCOPED_TRACE(file);
    const std::string message = badFileError(file);
    for (const char* part : parts) EXPECT_THAT(message, HasSubstr(part));
  }
}

TEST(SceneFileBodies, ObjectsAreRequiredOnlyWithoutBodies) {
  const std::string message =
      errorOf([] { (void)pliant::parseScene(R"({"bodies": [], "objects": []})", "inline", ""); });
  EXPECT_THAT(message, HasSubstr("inline: /objects: expected an array of at least 1 element"));
  const pliant::Scene scene = pliant::parseScene(
      R"({"bodies": [{"type": "sphere", "radius": 0.5}], "probes": [{"name": "e", "type": "body_energy"}]})", "inline",
      "");
  EXPECT_EQ(scene.model->bodyCount(), 1u);
  EXPECT_EQ(scene.model->bodies[0].name, "body_0");
  const std::string noBodies = errorOf([] {
    (void)pliant::parseScene(R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]], "mass": 1}],
                                        "probes": [{"name": "e", "type": "body_energy"}]})",
                             "inline", "");
  });
  EXPECT_THAT(noBodies, HasSubstr("/probes/0: the scene has no bodies to probe"));
}

// The memory estimate counts bodies and joints: a scene of many bodies over a small budget is refused
// before anything is built, naming the body that asks most and what it counts.
TEST(SceneFileBodies, TheMemoryEstimateCountsBodies) {
  pliant::SceneLoadOptions options;
  options.maxMemoryBytes = 4096;
  const std::string message = errorOf([&] {
    (void)pliant::parseScene(
        R"({"bodies": [{"type": "sphere", "radius": 0.5}, {"type": "box", "half_extents": [1, 1, 1]}],
            "joints": [{"type": "fixed", "body_a": 0, "body_b": 1, "anchor": [0, 0, 0]}]})",
        "inline", "", options);
  });
  EXPECT_THAT(message, HasSubstr("inline: /bodies/0"));
  EXPECT_THAT(message, HasSubstr("an estimated 65.0 KiB of memory (this part 32.0 KiB: 1 rigid bodies)"));
  options.maxMemoryBytes = 1 << 20;
  EXPECT_EQ(pliant::parseScene(R"({"bodies": [{"type": "sphere", "radius": 0.5}]})", "inline", "", options)
                .model->bodyCount(),
            1u);
}

TEST(SceneFileBodies, HingeChainIsTenBoxesOnTenHinges) {
  const pliant::Scene scene = pliant::makeBuiltinScene("hinge-chain");
  const pliant::Model& model = *scene.model;
  ASSERT_EQ(model.bodyCount(), 10u);
  ASSERT_EQ(model.joints.size(), 10u);
  EXPECT_EQ(model.particleCount(), 0u);
  for (std::size_t b = 0; b < 10; ++b) {
    EXPECT_NEAR(model.bodies[b].mass, 0.5, 1e-12);
    EXPECT_EQ(model.joints[b].kind, pliant::JointKind::Hinge);
    EXPECT_EQ(model.joints[b].bodies[1], b);
  }
  EXPECT_EQ(model.joints[0].bodies[0], pliant::kWorldBody);
  EXPECT_EQ(scene.probes.front().kind, pliant::Probe::Kind::JointForce);
}

// An attachment naming a body holds each selected particle at the body's material point where the
// particle starts (issue 17), in the body frame; the rope-box built-in uses one.
TEST(SceneFileBodies, AttachmentToABodyIsStoredInTheBodyFrame) {
  const pliant::Scene scene = pliant::parseScene(
      R"({"objects": [{"type": "particles", "name": "p", "positions": [[1, 2, 3], [0, 0, 0]], "mass": 1}],
          "bodies": [{"name": "box", "type": "box", "half_extents": [0.5, 0.5, 0.5], "position": [1, 1, 3],
                      "rotation": {"axis": [0, 0, 1], "angle": 1.5707963267948966}}],
          "attachments": [{"object": "p", "select": {"index": 0}, "body": "box", "compliance": 1e-6,
                           "rest_distance": 0.1}]})",
      "inline", "");
  const pliant::Model& m = *scene.model;
  ASSERT_EQ(m.bodyAttachments.size(), 1u);
  EXPECT_TRUE(m.attachments.empty());
  const pliant::BodyAttachment& a = m.bodyAttachments[0];
  EXPECT_EQ(a.particle, 0u);
  EXPECT_EQ(a.body, 0u);
  EXPECT_DOUBLE_EQ(a.params.compliance, 1e-6);
  EXPECT_DOUBLE_EQ(a.restDistance, 0.1);
  // World (1, 2, 3) is 1 m above the centre; the body frame is turned by 90 degrees about z.
  EXPECT_NEAR((m.bodies[0].initialPosition + m.bodies[0].initialRotation * a.localPoint - Vec3(1, 2, 3)).norm(), 0.0,
              1e-12);
  EXPECT_EQ(pliant::makeBuiltinScene("rope-box").model->bodyAttachments.size(), 1u);
  EXPECT_GT(pliant::makeBuiltinScene("cloth-over-body").model->bodyCount(), 0u);
}

TEST(SceneFileBodies, AttachmentToAnUnknownBodyOrWithATargetIsRefused) {
  const std::string unknown = errorOf([] {
    (void)pliant::parseScene(
        R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]], "mass": 1}],
            "bodies": [{"name": "box", "type": "box", "half_extents": [0.5, 0.5, 0.5]}],
            "attachments": [{"object": "p", "select": {"index": 0}, "body": "crate"}]})",
        "inline", "");
  });
  EXPECT_THAT(unknown, HasSubstr("/attachments/0/body"));
  EXPECT_THAT(unknown, HasSubstr("unknown body 'crate'"));
  const std::string both = errorOf([] {
    (void)pliant::parseScene(
        R"({"objects": [{"type": "particles", "name": "p", "positions": [[0, 0, 0]], "mass": 1}],
            "bodies": [{"name": "box", "type": "box", "half_extents": [0.5, 0.5, 0.5]}],
            "attachments": [{"object": "p", "select": {"index": 0}, "body": "box", "target": [0, 1, 0]}]})",
        "inline", "");
  });
  EXPECT_THAT(both, HasSubstr("/attachments/0"));
  EXPECT_THAT(both, HasSubstr("target"));
}

TEST(SceneFileBadInput, EveryFileUnderBadFails) {
  // Guards the data folder: each file there must be rejected with a pliant::Error naming it.
  int files = 0;
  for (const char* name : {"syntax_error.json",
                           "nan.json",
                           "infinity.json",
                           "missing_field.json",
                           "unknown_field.json",
                           "wrong_type.json",
                           "negative_mass.json",
                           "stiffness_above_one.json",
                           "negative_compliance.json",
                           "pin_index.json",
                           "probe_index.json",
                           "particle_reference.json",
                           "unknown_object.json",
                           "duplicate_name.json",
                           "unknown_type.json",
                           "empty_objects.json",
                           "empty_box.json",
                           "frames_and_duration.json",
                           "small_steps_iterations.json",
                           "time_step_too_large.json",
                           "probe_family.json",
                           "top_level_array.json",
                           "mesh_missing.json",
                           "mesh_empty.json",
                           "mesh_index.json",
                           "mesh_inverted_tet.json",
                           "particle_contact_without_radius.json",
                           "particle_radius_above_links.json",
                           "attachment_target_overflow.json"}) {
    SCOPED_TRACE(name);
    (void)badFileError(name);
    ++files;
  }
  EXPECT_EQ(files, 29);
}

}  // namespace
