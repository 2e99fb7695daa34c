// Unit tests of the limits of issue 12 (items 1, 5, 8): the scene loader checks every field before
// building and refuses scenes over the memory budget naming the field; surface thickness and
// gravity are bounded; the solver's divergence bound is relative to the model and a distance
// constraint torn far past its rest length refuses the step, naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/io/scenes.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

using ::testing::HasSubstr;

template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

Scene parseWithBudget(const std::string& text, std::uint64_t bytes) {
  SceneLoadOptions options;
  options.maxMemoryBytes = bytes;
  return parseScene(text, "limits.json", "", options);
}

std::string cloth(int nodes, const std::string& extra = "") {
  return R"({"objects": [{"type": "cloth", "name": "c", "grid": {"nodes": [)" + std::to_string(nodes) + ", " +
         std::to_string(nodes) + R"(], "size": [1, 1]}, "mass": 1, "bending": {"model": "isometric"}}])" + extra + "}";
}

TEST(SceneLimits, AScenePastTheBudgetIsRefusedNamingItsSizeFieldAndTheEstimate) {
  // 100 x 100 nodes: about 16 MiB by the estimate (1.6 KiB per particle of a bending cloth).
  const std::string error = errorOf([&] { (void)parseWithBudget(cloth(100), 1 << 20); });
  EXPECT_THAT(error, HasSubstr("limits.json: /objects/0/grid/nodes: the scene needs an estimated "));
  EXPECT_THAT(error, HasSubstr("10000 particles"));
  EXPECT_THAT(error, HasSubstr("above the memory budget of 1.0 MiB"));
  const Scene scene = parseWithBudget(cloth(100), 64u << 20);
  EXPECT_EQ(scene.model->particleCount(), 10000u);
}

TEST(SceneLimits, EveryFieldIsCheckedBeforeTheEstimateAndTheBuild) {
  // A 4096 x 4096 cloth (16.8 million particles) with a type error in the last field: the type
  // error is what is reported, whatever the budget, before anything is built.
  for (std::uint64_t budget : {std::uint64_t{1} << 20, std::uint64_t{0}}) {
    const std::string error =
        errorOf([&] { (void)parseWithBudget(cloth(4096, R"(, "frames": 10, "probe_every": 3)"), budget); });
    EXPECT_THAT(error, HasSubstr("limits.json: /probe_every: expected a string")) << error;
  }
  // A bad particle reference in a constraint after a large object: also before building.
  const std::string error = errorOf([&] {
    (void)parseWithBudget(
        cloth(4096, R"(, "constraints": [{"type": "distance", "particles": [["c", 0], ["c", 16777216]]}])"), 1 << 20);
  });
  EXPECT_THAT(error, HasSubstr("/constraints/0/particles/1/1: expected an integer from 0 to 16777215")) << error;
}

TEST(SceneLimits, MoreParticlesOrConstraintsThanAModelIndexesAreRefused) {
  const std::string error = errorOf([&] {
    (void)parseWithBudget(
        R"({"objects": [{"type": "softbody", "name": "b", "box": {"cells": [1000, 1000, 1000], "size": [1, 1, 1]},
            "density": 1000}]})",
        0);
  });
  EXPECT_THAT(error, HasSubstr("limits.json: /objects/0/box/cells: the scene would have "));
  EXPECT_THAT(error, HasSubstr("more than the 4294967295 particles or constraints a model indexes"));
}

TEST(SceneLimits, MemorySizesReadAsTheCommandLineGivesThem) {
  EXPECT_EQ(parseMemorySize("512M"), std::uint64_t{512} << 20);
  EXPECT_EQ(parseMemorySize("4G"), std::uint64_t{4} << 30);
  EXPECT_EQ(parseMemorySize("4GiB"), std::uint64_t{4} << 30);
  EXPECT_EQ(parseMemorySize("1.5k"), std::uint64_t{1536});
  EXPECT_EQ(parseMemorySize("1000000"), std::uint64_t{1000000});
  for (const char* bad : {"", "G", "4X", "-1G", "0", "nan", "1e30T"})
    EXPECT_THAT(errorOf([&] { (void)parseMemorySize(bad); }), HasSubstr("expected a number of bytes")) << bad;
  EXPECT_GT(defaultMemoryBudget(), std::uint64_t{0});
}

TEST(SceneLimits, SurfaceThicknessAboveTheMeanEdgeIsRefusedNamingTheField) {
  const std::string scene = R"({"objects": [{"type": "cloth", "name": "c", "grid": {"nodes": [11, 11], "size": [1, 1]},
      "mass": 1, "self_collision": true}], "surface_contact": {"thickness": THICKNESS}})";
  const auto with = [&](const std::string& thickness) {
    std::string text = scene;
    text.replace(text.find("THICKNESS"), 9, thickness);
    return text;
  };
  // Edges of 0.1 m and diagonals of 0.141 m: a mean of about 0.114 m.
  const std::string error = errorOf([&] { (void)parseWithBudget(with("1000"), 0); });
  EXPECT_THAT(error, HasSubstr("limits.json: /surface_contact/thickness: is 1000 m, above the mean edge length"));
  EXPECT_NO_THROW((void)parseWithBudget(with("0.05"), 0));
  // The model refuses it too, for models built without a scene file.
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 11;
  def.selfCollision = true;
  (void)addClothGrid(b, def);
  b.model().surfaceThickness = 0.5;
  EXPECT_THAT(errorOf([&] { (void)b.build(); }), HasSubstr("surfaceThickness 0.5 m is above the mean edge length"));
  b.model().surfaceThickness = 0.05;
  EXPECT_NO_THROW((void)b.build());
}

TEST(SceneLimits, AParticleRadiusAboveTheLinksIsRefusedByTheModel) {
  // Models built without a scene file: with particle contact on, a radius above the object's mean
  // link (0.1 m edges and 0.141 m diagonals of an 11 x 11 grid over 1 m: 0.114 m) is refused,
  // naming the object and the particle; a particle cloud (no links) is left to the step's bound.
  ModelBuilder b;
  ClothGridDef def;
  def.name = "sheet";
  def.nodesX = def.nodesY = 11;
  const GeneratedObject cloth = addClothGrid(b, def);
  b.model().particleCollisions = true;
  b.setParticleRadius(cloth.firstParticle, cloth.particleCount, 0.05);
  EXPECT_NEAR(particleRadiusLimit(b.model(), cloth.object), (220 * 0.1 + 100 * std::sqrt(0.02)) / 320, 1e-12);
  EXPECT_NO_THROW((void)b.build());
  b.setParticleRadius(cloth.firstParticle + 7, 0.2);
  EXPECT_THAT(
      errorOf([&] { (void)b.build(); }),
      HasSubstr("object 'sheet': particle radius 0.200000 m (particle 7) is above the mean length of its links"));
  b.model().particleCollisions = false;
  EXPECT_NO_THROW((void)b.build());
  b.model().particleCollisions = true;
  const ParticleIndex lone = b.addParticle(Vec3(5, 0, 0), 1.0);
  b.setParticleRadius(cloth.firstParticle + 7, 0.05);
  b.setParticleRadius(lone, 3.0);
  (void)b.addObject("grain", {lone});
  EXPECT_NO_THROW((void)b.build());
}

TEST(SceneLimits, GravityPastAPhysicalMagnitudeIsRefused) {
  const std::string error = errorOf([&] {
    (void)parseWithBudget(R"({"solver": {"gravity": [0, -1e308, 0]}, "objects": [{"type": "rope", "name": "r",
        "start": [0, 0, 0], "end": [1, 0, 0], "particles": 3, "mass": 1}]})",
                          0);
  });
  EXPECT_THAT(error, HasSubstr("limits.json: /solver/gravity: magnitude "));
  EXPECT_THAT(error, HasSubstr("above 1e6 m/s^2"));
  SolverSettings s;
  s.gravity = Vec3(0.0, -2e6, 0.0);
  EXPECT_THAT(errorOf([&] { s.validate(); }), HasSubstr("gravity of 2e6 m/s^2 is above"));
}

// Two free particles 0.1 m apart joined by a rigid distance constraint of rest length `rest`.
ModelPtr pair(double rest, const Vec3& velocity = Vec3::Zero()) {
  ModelBuilder b;
  const ParticleIndex p0 = b.addParticle(Vec3(0.0, 0.0, 0.0), 1.0);
  const ParticleIndex p1 = b.addParticle(Vec3(0.1, 0.0, 0.0), 1.0, velocity);
  b.addDistance(p0, p1, {}, rest);
  return b.build();
}

TEST(DivergenceBound, AMoveFarPastTheModelsSizeIsRefusedNamingTheConstraint) {
  // A rest length of 1 km snaps the 0.1 m model 500 m apart in one step: under the old fixed
  // 1000 m bound, far past the relative one (10 x (0.1 m + g dt^2)).
  SolverSettings settings;
  settings.gravity = Vec3::Zero();
  Solver solver(pair(1000.0), settings);
  State state = State::fromModel(solver.model());
  const State before = state;
  const StepResult r = solver.step(state);
  EXPECT_EQ(r.status, StepStatus::ExcessiveDisplacement);
  EXPECT_TRUE(r.hasConstraint);
  EXPECT_EQ(r.constraint.family, ConstraintFamily::Distance);
  EXPECT_THAT(r.message, HasSubstr("solver.divergence_factor 10 x (model extent 0.1 m"));
  EXPECT_EQ(state.hash(), before.hash());
  // With the relative bound off, the step goes through as before.
  settings.divergenceFactor = std::numeric_limits<double>::infinity();
  Solver off(pair(1000.0), settings);
  State free = State::fromModel(off.model());
  EXPECT_TRUE(off.step(free).ok());
  EXPECT_NEAR((free.position[1] - free.position[0]).norm(), 1000.0, 1e-6);
}

TEST(DivergenceBound, FastButOrdinaryMotionIsNotRefused) {
  // 300 m/s across a 0.1 m model: 5 m in a step, far beyond 10 x the model's size, but what the
  // speed explains; the constraint keeps its length.
  SolverSettings settings;
  Solver solver(pair(0.1, Vec3(0.0, 300.0, 0.0)), settings);
  State state = State::fromModel(solver.model());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(solver.step(state).ok()) << i;
}

TEST(DivergenceBound, ADistanceConstraintTornFarPastItsRestLengthRefusesTheStep) {
  // A nearly free spring (compliance 10 m/N) of 0.1 m whose end leaves at 1 km/s: 16.7 m after a
  // step, more than 101 x its rest length, each particle within the move its speed explains.
  ModelBuilder b;
  const ParticleIndex p0 = b.addParticle(Vec3(0.0, 0.0, 0.0), 0.0);
  const ParticleIndex p1 = b.addParticle(Vec3(0.1, 0.0, 0.0), 1.0, Vec3(1000.0, 0.0, 0.0));
  ConstraintParameters soft;
  soft.compliance = 10.0;
  b.addDistance(p0, p1, soft);
  SolverSettings settings;
  settings.gravity = Vec3::Zero();
  Solver solver(b.build(), settings);
  State state = State::fromModel(solver.model());
  const StepResult r = solver.step(state);
  EXPECT_EQ(r.status, StepStatus::ExcessiveStrain);
  EXPECT_TRUE(r.hasConstraint);
  EXPECT_EQ(r.constraint.index, 0u);
  EXPECT_THAT(r.message, HasSubstr("distance constraint 0 (particles 0 and 1) stretched to "));
  EXPECT_THAT(r.message, HasSubstr("the bound is solver.max_strain = 100"));
  settings.maxStrain = 1000.0;
  solver.setSettings(settings);
  EXPECT_TRUE(solver.step(state).ok());
}

}  // namespace
}  // namespace pliant
