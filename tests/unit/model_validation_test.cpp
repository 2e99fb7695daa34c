// Unit tests of parameter validation at the API edge (src/core/model.cpp, SolverSettings::validate in
// src/core/solver.cpp, the generators in src/core/builders.cpp): every bad argument throws pliant::Error
// whose message names the entry and the field, and a refused add* leaves the builder unchanged.
#include <gtest/gtest.h>

#include <array>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "solve_plan.h"

namespace pliant {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Runs `action`, which must throw pliant::Error with every string of `parts` in its message.
template <class Action>
void expectError(Action&& action, std::initializer_list<const char*> parts) {
  try {
    action();
    ADD_FAILURE() << "no pliant::Error thrown";
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const char* part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << "message \"" << message << "\" lacks \"" << part << "\"";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a different exception: " << e.what();
  }
}

// A builder with three particles; parameter checks are made against it.
ModelBuilder threeParticles() {
  ModelBuilder b;
  b.addParticle(Vec3(0, 0, 0), 1.0);
  b.addParticle(Vec3(1, 0, 0), 1.0);
  b.addParticle(Vec3(0, 1, 0), 1.0);
  return b;
}

ConstraintParameters withCompliance(double v) { return {v, 0.0, 1.0}; }
ConstraintParameters withDamping(double v) { return {0.0, v, 1.0}; }
ConstraintParameters withStiffness(double v) { return {0.0, 0.0, v}; }

TEST(ModelValidation, ParticleMassPositionAndVelocity) {
  ModelBuilder b = threeParticles();
  expectError([&] { b.addParticle(Vec3::Zero(), -1.0); }, {"particle 3", "mass"});
  expectError([&] { b.addParticle(Vec3::Zero(), kNaN); }, {"particle 3", "mass"});
  expectError([&] { b.addParticle(Vec3(kNaN, 0, 0), 1.0); }, {"particle 3 position"});
  expectError([&] { b.addParticle(Vec3(0, kInf, 0), 1.0); }, {"particle 3 position"});
  expectError([&] { b.addParticle(Vec3::Zero(), 1.0, Vec3(0, 0, -kInf)); }, {"particle 3 velocity"});
  EXPECT_EQ(b.particleCount(), 3u);
  // Zero and infinite masses are legal and mean fixed; the fixed particle keeps no velocity.
  const ParticleIndex zero = b.addParticle(Vec3::Zero(), 0.0, Vec3(1, 0, 0));
  const ParticleIndex infinite = b.addParticle(Vec3::Zero(), kInf);
  const ModelPtr m = b.build();
  EXPECT_EQ(m->inverseMass[zero], 0.0);
  EXPECT_EQ(m->inverseMass[infinite], 0.0);
  EXPECT_EQ(m->mass[infinite], 0.0);
  EXPECT_EQ(State::fromModel(*m).velocity[zero], Vec3::Zero());
}

TEST(ModelValidation, ConstraintParametersNameTheField) {
  ModelBuilder b = threeParticles();
  for (double bad : {-1e-9, kNaN, kInf})
    expectError([&] { b.addDistance(0, 1, withCompliance(bad)); }, {"distance constraint 0", "compliance"});
  for (double bad : {-1.0, kNaN, kInf})
    expectError([&] { b.addDistance(0, 1, withDamping(bad)); }, {"distance constraint 0", "damping"});
  for (double bad : {1.0 + 1e-12, -0.1, kNaN})
    expectError([&] { b.addDistance(0, 1, withStiffness(bad)); }, {"distance constraint 0", "stiffness"});
  EXPECT_TRUE(b.model().distances.empty());
  // Every family checks its parameters the same way.
  const ConstraintParameters bad = withCompliance(-1.0);
  expectError([&] { b.addMaxDistance(0, 1, bad); }, {"max-distance constraint 0", "compliance"});
  expectError([&] { b.addAttachment(0, Vec3::Zero(), bad); }, {"attachment 0", "compliance"});
  expectError([&] { b.addDihedralBending(0, 1, 2, 2, bad); }, {"dihedral bending constraint 0", "compliance"});
  b.addParticle(Vec3(0.5, -1, 0), 1.0);
  expectError([&] { b.addIsometricBending(0, 1, 2, 3, bad); }, {"isometric bending constraint 0", "compliance"});
  expectError([&] { b.addTetVolume(0, 1, 2, 3, withStiffness(2.0)); }, {"tet volume constraint 0", "stiffness"});
  const std::vector<std::array<ParticleIndex, 3>> tris = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  expectError([&] { b.addGlobalVolume(tris, 1.0, withDamping(-2.0)); }, {"global volume constraint 0", "damping"});
  const std::array<ParticleIndex, 1> one = {0};
  auto f = [](std::span<const Vec3>, std::span<Vec3>) { return 0.0; };
  expectError([&] { b.addGeneric(f, one, false, bad); }, {"generic constraint 0", "compliance"});
  // Boundary values are accepted.
  EXPECT_NO_THROW(b.addDistance(0, 1, ConstraintParameters{0.0, 0.0, 0.0}));
  EXPECT_NO_THROW(b.addDistance(0, 1, ConstraintParameters{1e9, 1e9, 1.0}));
}

TEST(ModelValidation, ParticleIndicesOutOfRange) {
  ModelBuilder b = threeParticles();
  const ConstraintParameters p;
  expectError([&] { b.addDistance(0, 3, p); }, {"distance constraint 0", "particle index 3", "out of range"});
  expectError([&] { b.addMaxDistance(7, 0, p); }, {"max-distance constraint 0", "particle index 7"});
  expectError([&] { b.addAttachment(3, Vec3::Zero(), p); }, {"attachment 0", "particle index 3"});
  expectError([&] { b.addDihedralBending(0, 1, 2, 9, p); }, {"dihedral bending constraint 0", "particle index 9"});
  expectError([&] { b.addIsometricBending(0, 1, 2, 5, p); }, {"isometric bending constraint 0", "particle index 5"});
  expectError([&] { b.addTetVolume(0, 1, 2, 3, p); }, {"tet volume constraint 0", "particle index 3"});
  const std::vector<std::array<ParticleIndex, 3>> tris = {{0, 1, 2}, {0, 2, 4}};
  expectError([&] { b.addGlobalVolume(tris, 1.0, p); }, {"global volume constraint 0", "particle index 4"});
  const std::array<ParticleIndex, 2> particles = {1, 3};
  auto f = [](std::span<const Vec3>, std::span<Vec3>) { return 0.0; };
  expectError([&] { b.addGeneric(f, particles, false, p); }, {"generic constraint 0", "particle index 3"});
  expectError([&] { b.fixParticle(3); }, {"fixParticle", "particle index 3"});
  expectError([&] { b.addKinematic(3, [](double) { return Vec3::Zero(); }); }, {"addKinematic", "particle index 3"});
  expectError([&] { b.addObject("rope", {0, 1, 3}); }, {"object 'rope'", "particle index 3"});
  expectError([&] { (void)b.position(3); }, {"particle index 3"});
  // Nothing was added by the failed calls.
  const ModelPtr m = b.build();
  EXPECT_EQ(m->totalConstraintCount(), 0u);
  EXPECT_TRUE(m->volumeTriangles.empty());
  EXPECT_TRUE(m->volumeVertices.empty());
  EXPECT_TRUE(m->genericParticles.empty());
  EXPECT_TRUE(m->kinematicParticles.empty());
  EXPECT_TRUE(m->objects.empty());
}

TEST(ModelValidation, FamilySpecificFields) {
  ModelBuilder b = threeParticles();
  const ConstraintParameters p;
  expectError([&] { b.addDistance(0, 1, p, kNaN); }, {"distance constraint 0", "rest length"});
  expectError([&] { b.addDistance(0, 1, p, kInf); }, {"distance constraint 0", "rest length"});
  expectError([&] { b.addMaxDistance(0, 1, p, kInf); }, {"max-distance constraint 0", "maximum length"});
  expectError([&] { b.addAttachment(0, Vec3(kNaN, 0, 0), p); }, {"attachment 0 target"});
  expectError([&] { b.addAttachment(0, Vec3::Zero(), p, -0.5); }, {"attachment 0", "rest distance"});
  expectError([&] { b.addMovingAttachment(0, PathFunction{}, p); }, {"target path"});
  expectError([&] { b.addDihedralBending(0, 1, 2, 2, p, kInf); }, {"dihedral bending constraint 0", "rest angle"});
  // A wing on the edge line has no bending weights.
  const ParticleIndex onLine = b.addParticle(Vec3(0.5, 0, 0), 1.0);
  expectError([&] { b.addIsometricBending(0, 1, 2, onLine, p); }, {"isometric bending constraint 0", "degenerate"});
  expectError([&] { b.addGlobalVolume({}, 1.0, p); }, {"global volume constraint 0", "triangle"});
  const std::vector<std::array<ParticleIndex, 3>> tris = {{0, 1, 2}};
  expectError([&] { b.addGlobalVolume(tris, -1.0, p); }, {"global volume constraint 0", "pressure"});
  expectError([&] { b.addGlobalVolume(tris, kNaN, p); }, {"global volume constraint 0", "pressure"});
  expectError([&] { b.addGenericFunction(GenericConstraintFunction{}); }, {"function is empty"});
  const std::array<ParticleIndex, 1> one = {0};
  expectError([&] { b.addGeneric(5u, one, false, p); }, {"generic constraint 0", "function 5"});
  const std::uint32_t f = b.addGenericFunction([](std::span<const Vec3>, std::span<Vec3>) { return 0.0; });
  expectError([&] { b.addGeneric(f, std::span<const ParticleIndex>{}, false, p); },
              {"generic constraint 0", "at least one particle"});
  expectError([&] { b.addKinematic(0, PathFunction{}); }, {"addKinematic", "path"});
  expectError([&] { b.addObject("cloth", {0}, 1.5); }, {"object 'cloth'", "damping factor"});
  expectError([&] { b.addObject("cloth", {0}, kNaN); }, {"object 'cloth'", "damping factor"});
  EXPECT_EQ(b.build()->totalConstraintCount(), 0u);
}

TEST(ModelValidation, GeneratorsRejectBadDefinitions) {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = 1;
  expectError([&] { addClothGrid(b, cloth); }, {"cloth 'cloth'", "nodesX"});
  cloth.nodesX = 4;
  cloth.sizeY = -1.0;
  expectError([&] { addClothGrid(b, cloth); }, {"sizeY"});
  cloth.sizeY = 1.0;
  cloth.totalMass = kNaN;
  expectError([&] { addClothGrid(b, cloth); }, {"totalMass"});
  ChainDef chain;
  chain.particles = 1;
  expectError([&] { addChain(b, chain); }, {"chain 'chain'", "at least 2 particles"});
  chain.particles = 3;
  chain.particleMass = 0.0;
  expectError([&] { addChain(b, chain); }, {"particleMass"});
  TetBoxDef box;
  box.cellsY = 0;
  expectError([&] { addTetBox(b, box); }, {"tet box 'beam'", "cells"});
  box.cellsY = 1;
  box.size = Vec3(1.0, 0.0, 1.0);
  expectError([&] { addTetBox(b, box); }, {"size"});
  box.size = Vec3(1, 1, 1);
  box.density = -5.0;
  expectError([&] { addTetBox(b, box); }, {"density"});
  BalloonDef balloon;
  balloon.rings = 1;
  expectError([&] { addBalloon(b, balloon); }, {"balloon 'balloon'", "rings"});
  balloon.rings = 4;
  balloon.radius = 0.0;
  expectError([&] { addBalloon(b, balloon); }, {"radius"});
  EXPECT_EQ(b.particleCount(), 0u);
  b.addParticle(Vec3::Zero(), 0.0);
  b.addParticle(Vec3(1, 0, 0), 1.0);
  expectError([&] { addTethers(b, {0}, 0, 2, ConstraintParameters{}, 0.99); }, {"slack"});
  expectError([&] { addTethers(b, {0}, 0, 2, ConstraintParameters{}, kNaN); }, {"slack"});
}

TEST(ModelValidation, HandAssembledModelsAreCheckedByValidateAndTheSolver) {
  ModelBuilder b = threeParticles();
  b.addDistance(0, 1, ConstraintParameters{});
  // A copy of a built model, edited by hand (a built model itself is immutable).
  const auto m = std::make_shared<Model>(*b.build());
  m->distances[0].params.compliance = -1.0;
  expectError([&] { m->validate(); }, {"distance constraint 0", "compliance"});
  expectError([&] { (void)Solver(m, SolverSettings{}); }, {"distance constraint 0", "compliance"});
  m->distances[0].params.compliance = 0.0;
  m->mass.push_back(1.0);
  expectError([&] { m->validate(); }, {"particle arrays"});
  m->mass.pop_back();
  // A family added after build() without updating the offsets is caught by the solver.
  m->distances.push_back(m->distances[0]);
  expectError([&] { (void)Solver(m, SolverSettings{}); }, {"offsets"});
  detail::fillLambdaOffsets(*m);
  EXPECT_NO_THROW((void)Solver(m, SolverSettings{}));
  m->distances[1].particles[1] = 42;
  expectError([&] { m->validate(); }, {"distance constraint 1", "particle index 42"});
}

TEST(ModelValidation, SolverSettingsNameTheField) {
  auto settingsWith = [](auto edit) {
    SolverSettings s;
    edit(s);
    return s;
  };
  for (double bad : {0.0, -1.0 / 60.0, kNaN, kInf})
    expectError([&] { settingsWith([&](SolverSettings& s) { s.timeStep = bad; }).validate(); }, {"timeStep"});
  for (int bad : {0, -3})
    expectError([&] { settingsWith([&](SolverSettings& s) { s.substeps = bad; }).validate(); }, {"substeps"});
  for (int bad : {0, -1})
    expectError([&] { settingsWith([&](SolverSettings& s) { s.iterations = bad; }).validate(); }, {"iterations"});
  expectError([&] { settingsWith([](SolverSettings& s) { s.gravity.y() = kNaN; }).validate(); }, {"gravity"});
  expectError([&] { settingsWith([](SolverSettings& s) { s.velocityDamping = -0.1; }).validate(); },
              {"velocityDamping"});
  for (double bad : {0.0, -1.0, kNaN})
    expectError([&] { settingsWith([&](SolverSettings& s) { s.maxDisplacementPerStep = bad; }).validate(); },
                {"maxDisplacementPerStep"});
  EXPECT_NO_THROW(settingsWith([](SolverSettings& s) { s.maxDisplacementPerStep = kInf; }).validate());
  for (double bad : {-1.0, kNaN, kInf})
    expectError([&] { settingsWith([&](SolverSettings& s) { s.bodyStackMassScaling = bad; }).validate(); },
                {"bodyStackMassScaling"});
  EXPECT_NO_THROW(settingsWith([](SolverSettings& s) { s.bodyStackMassScaling = 2.0; }).validate());
  EXPECT_NO_THROW(SolverSettings::smallSteps(20).validate());

  // The solver refuses bad settings at construction and in setSettings, keeping the old ones.
  const ModelPtr m = threeParticles().build();
  expectError([&] { (void)Solver(m, settingsWith([](SolverSettings& s) { s.substeps = 0; })); }, {"substeps"});
  Solver solver(m, SolverSettings{});
  expectError([&] { solver.setSettings(settingsWith([](SolverSettings& s) { s.timeStep = kNaN; })); }, {"timeStep"});
  EXPECT_EQ(solver.settings().timeStep, 1.0 / 60.0);
}

}  // namespace
}  // namespace pliant
