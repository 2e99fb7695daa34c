// The neo-Hookean tet family (src/core/constraints/neo_hookean.cpp, docs/validation.md V15):
// rest stability, the coupled against the sequential solve, inverted and flat tets, the energy
// the diagnostics report, and the builder's checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "pliant/io/model_bytes.h"
#include "pliant/io/scenes.h"
#include "pliant/pliant.h"

namespace pliant {
namespace {

NeoHookeanMaterial material(double E, double nu, bool coupled = true) {
  NeoHookeanMaterial m;
  m.youngsModulus = E;
  m.poissonRatio = nu;
  m.coupled = coupled;
  return m;
}

ModelPtr box(const NeoHookeanMaterial& m, int cellsX = 2, double density = 1000.0) {
  ModelBuilder b;
  TetBoxDef def;
  def.cellsX = cellsX;
  def.cellsY = 1;
  def.cellsZ = 1;
  def.size = Vec3(0.2 * cellsX, 0.2, 0.2);
  def.density = density;
  def.neoHookean = m;
  addTetBox(b, def);
  return b.build();
}

SolverSettings settings(int substeps, int iterations, const Vec3& gravity = Vec3::Zero()) {
  SolverSettings s;
  s.timeStep = 1.0 / 60.0;
  s.substeps = substeps;
  s.iterations = iterations;
  s.gravity = gravity;
  return s;
}

double maxDrift(const Model& model, const State& state) {
  double d = 0.0;
  for (std::size_t i = 0; i < model.particleCount(); ++i)
    d = std::max(d, (state.position[i] - model.initialPosition[i]).norm());
  return d;
}

double drift(bool coupled, int iterations = 1) {
  const ModelPtr m = box(material(1e6, 0.3, coupled));
  Solver solver(m, settings(5, iterations));
  State s = State::fromModel(*m);
  for (int i = 0; i < 60; ++i) EXPECT_TRUE(solver.step(s).ok());
  return maxDrift(*m, s);
}

// V15: an undeformed mesh without gravity stays at rest. The rest shape is an equilibrium of the
// two constraints together, not of either alone (C_D = sqrt 3, C_H = 1 - gamma there): the coupled
// solve balances them in one step; the sequential one overshoots with each and moves the vertices.
TEST(NeoHookean, CoupledSolveKeepsTheRestShapeSequentialDoesNot) {
  const double coupled = drift(true);
  const double sequential = drift(false);
  std::printf("rest drift after 1 s: coupled %.3g m, sequential %.3g m\n", coupled, sequential);
  EXPECT_LT(coupled, 1e-9);
  EXPECT_GT(sequential, 1e3 * coupled);
}

// Later Gauss-Seidel passes of a substep skip the tets (neo_hookean.cpp says why): with them, 20
// passes drove this block centimetres away from rest.
TEST(NeoHookean, ManyIterationsKeepTheRestShape) { EXPECT_LT(drift(true, 20), 1e-9); }

// Convergence of one step from a deformed shape: the residual |C + alpha~ lambda| of the XPBD
// equations at the end of a step of 1, 4 and 16 substeps, coupled against sequential (the test
// behind the choice of the coupled solve as the default).
double residualAfter(bool coupled, int substeps) {
  const ModelPtr m = box(material(1e5, 0.45, coupled));
  Solver solver(m, settings(substeps, 1));
  State s = State::fromModel(*m);
  // Stretch along x by 20 % and squash y by 10 %: a deviatoric and a volumetric strain.
  for (Vec3& x : s.position) x = Vec3(1.2 * x.x(), 0.9 * x.y(), x.z());
  EXPECT_TRUE(solver.step(s).ok());
  return computeResidual(*m, s, solver.settings()).relative;
}

TEST(NeoHookean, CoupledSolveConvergesFasterThanSequential) {
  for (int substeps : {1, 4, 16}) {
    const double coupled = residualAfter(true, substeps);
    const double sequential = residualAfter(false, substeps);
    std::printf("relative residual, %d substeps: coupled %.3g, sequential %.3g\n", substeps, coupled, sequential);
    EXPECT_LT(coupled, sequential) << substeps << " substeps";
  }
}

ModelPtr singleTet(const std::array<Vec3, 4>& rest, const NeoHookeanMaterial& m) {
  ModelBuilder b;
  for (const Vec3& x : rest) b.addParticle(x, 0.1);
  b.addNeoHookeanTet(0, 1, 2, 3, m);
  return b.build();
}

double signedVolume(const State& s) {
  return (s.position[1] - s.position[0]).dot((s.position[2] - s.position[0]).cross(s.position[3] - s.position[0])) /
         6.0;
}

// Inverted (vertex 3 pushed through the opposite face) and flat (vertex 3 in that face's plane)
// tets recover their rest volume and orientation: C_H's gradient does not vanish at det F <= 0.
TEST(NeoHookean, InvertedAndFlatTetsRecover) {
  const std::array<Vec3, 4> rest = {Vec3(0, 0, 0), Vec3(0.1, 0, 0), Vec3(0, 0.1, 0), Vec3(0, 0, 0.1)};
  const double restVolume = 0.1 * 0.1 * 0.1 / 6.0;
  for (double z3 : {-0.05, 0.0}) {
    NeoHookeanMaterial m = material(1e4, 0.3);
    m.damping = 0.05;
    const ModelPtr model = singleTet(rest, m);
    Solver solver(model, settings(10, 2));
    State s = State::fromModel(*model);
    s.position[3].z() = z3;
    // A flat tet also lies flat in x and y: the worst case, no deviatoric hint about which side.
    if (z3 == 0.0) s.position[3] = Vec3(0.03, 0.03, 0.0);
    for (int i = 0; i < 120; ++i) ASSERT_TRUE(solver.step(s).ok()) << z3;
    EXPECT_NEAR(signedVolume(s), restVolume, 1e-3 * restVolume) << "vertex 3 at z = " << z3;
    for (const Vec3& v : s.velocity) EXPECT_LT(v.norm(), 0.1) << z3;  // no blow-up
  }
}

// The energy probes report V (mu/2 (tr F^T F - 3) + lambda/2 ((det F - gamma)^2 - (1 - gamma)^2)),
// zero at rest, with lambda = Lame's lambda + mu.
TEST(NeoHookean, EnergyDiagnosticsGiveTheNeoHookeanEnergy) {
  const std::array<Vec3, 4> rest = {Vec3(0, 0, 0), Vec3(0.1, 0, 0), Vec3(0, 0.1, 0), Vec3(0, 0, 0.1)};
  const NeoHookeanMaterial m = material(2e5, 0.35);
  const ModelPtr model = singleTet(rest, m);
  State s = State::fromModel(*model);
  const SolverSettings set = settings(1, 1);
  EXPECT_NEAR(computeEnergy(*model, s, set).elasticFromPositions, 0.0, 1e-15);
  // F = diag(1.1, 0.95, 1.02) applied about vertex 0.
  const Vec3 stretch(1.1, 0.95, 1.02);
  for (Vec3& x : s.position) x = x.cwiseProduct(stretch);
  const double V = 0.1 * 0.1 * 0.1 / 6.0;
  const double mu = m.lameMu(), lambda = m.lameLambda() + mu, gamma = 1.0 + mu / lambda;
  const double J = stretch.prod();
  const double expected = V * (0.5 * mu * (stretch.squaredNorm() - 3.0) +
                               0.5 * lambda * ((J - gamma) * (J - gamma) - (1.0 - gamma) * (1.0 - gamma)));
  EXPECT_NEAR(computeEnergy(*model, s, set).elasticFromPositions, expected, 1e-12 * std::abs(expected));
  // A step of small substeps from that shape reports nearly the same energy from its forces
  // (lambda / h^2) as from its positions (equal when converged, C = -alpha~ lambda).
  Solver solver(model, settings(200, 1));
  State moving = s;  // at rest in the stretched shape
  ASSERT_TRUE(solver.step(moving).ok());
  const EnergyReport e = computeEnergy(*model, moving, solver.settings());
  EXPECT_NEAR(e.elastic, e.elasticFromPositions, 1e-2 * std::abs(e.elasticFromPositions));
}

TEST(NeoHookean, LameParametersGiveBackEAndNu) {
  const NeoHookeanMaterial m = NeoHookeanMaterial::fromLame(3.0e4, 7.0e4);
  EXPECT_NEAR(m.lameMu(), 3.0e4, 1e-9);
  EXPECT_NEAR(m.lameLambda(), 7.0e4, 1e-9);
}

TEST(NeoHookean, BuilderRefusesBadMaterialsAndTets) {
  ModelBuilder b;
  b.addParticle(Vec3(0, 0, 0), 1.0);
  b.addParticle(Vec3(1, 0, 0), 1.0);
  b.addParticle(Vec3(0, 1, 0), 1.0);
  b.addParticle(Vec3(0, 0, 1), 1.0);
  b.addParticle(Vec3(1, 1, 0), 1.0);
  auto message = [&](ParticleIndex p3, const NeoHookeanMaterial& m) {
    try {
      b.addNeoHookeanTet(0, 1, 2, p3, m);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(3, material(-1.0, 0.3)).find("Young's modulus"), std::string::npos);
  EXPECT_NE(message(3, material(1e5, 0.5)).find("Poisson's ratio must be in (-1, 0.5)"), std::string::npos);
  EXPECT_NE(message(4, material(1e5, 0.3)).find("degenerate"), std::string::npos);
  NeoHookeanMaterial damped = material(1e5, 0.3);
  damped.damping = -1.0;
  EXPECT_NE(message(3, damped).find("damping"), std::string::npos);
  // Either orientation is a valid rest shape.
  EXPECT_EQ(b.addNeoHookeanTet(0, 2, 1, 3, material(1e5, 0.3)), 0u);
  EXPECT_EQ(b.build()->constraintCount(ConstraintFamily::NeoHookean), 2u);
}

std::string sceneError(const std::string& material) {
  try {
    (void)parseScene(R"({"objects": [{"type": "softbody", "name": "b", "density": 1000,
        "box": {"cells": [2, 1, 1], "size": [0.4, 0.2, 0.2]}, "neo_hookean": )" +
                         material + "}]}",
                     "inline.json", "");
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// Scene files: "neo_hookean" on a soft body, either E and nu or Lame's parameters, errors naming
// the JSON pointer and the range.
TEST(NeoHookean, SceneFileMaterial) {
  const Scene scene = parseScene(R"({"objects": [{"type": "softbody", "name": "b", "density": 1000,
      "box": {"cells": [2, 1, 1], "size": [0.4, 0.2, 0.2]},
      "neo_hookean": {"youngs_modulus": 2e5, "poisson_ratio": 0.45, "damping": 0.01}}]})",
                                 "inline.json", "");
  EXPECT_EQ(scene.model->neoHookeans.size(), 12u);
  EXPECT_EQ(scene.model->tetVolumes.size(), 0u);
  EXPECT_EQ(scene.model->distances.size(), 0u);
  const NeoHookeanConstraint& c = scene.model->neoHookeans[0];
  const double mu = 2e5 / 2.9;
  EXPECT_NEAR(c.deviatoric.compliance, 1.0 / (mu * c.restVolume), 1e-9 * c.deviatoric.compliance);
  EXPECT_NEAR(c.deviatoric.damping * c.deviatoric.compliance, 0.01, 1e-15);
  EXPECT_EQ(sceneError(R"({"lame_mu": 1e5, "lame_lambda": 2e5})"), "");
  EXPECT_NE(sceneError(R"({"youngs_modulus": 1e5, "poisson_ratio": 0.5})")
                .find("/objects/0/neo_hookean/poisson_ratio: expected a number > -1 and < 0.5"),
            std::string::npos);
  EXPECT_NE(sceneError(R"({"youngs_modulus": 0, "poisson_ratio": 0.3})").find("/objects/0/neo_hookean/youngs_modulus"),
            std::string::npos);
  EXPECT_NE(sceneError(R"({"youngs_modulus": 1e5, "lame_mu": 1e5})").find("/objects/0/neo_hookean: expected either"),
            std::string::npos);
  EXPECT_NE(sceneError(R"({"youngs_modulus": 1e5, "poisson_ratio": 0.3, "nu": 1})").find("/objects/0/neo_hookean"),
            std::string::npos);
}

// Model bytes keep the neo-Hookean tets bit for bit.
TEST(NeoHookean, ModelBytesRoundTrip) {
  const ModelPtr m = box(material(1e5, 0.3));
  const std::string bytes = io::encodeModel(*m);
  const Model decoded = io::decodeModel(bytes, "test");
  ASSERT_EQ(decoded.neoHookeans.size(), m->neoHookeans.size());
  EXPECT_EQ(io::encodeModel(decoded), bytes);
}

}  // namespace
}  // namespace pliant
