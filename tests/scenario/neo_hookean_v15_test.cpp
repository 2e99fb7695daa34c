// Scenario tests for docs/validation.md V15, stable neo-Hookean tets (Macklin & Mueller 2021),
// against continuum mechanics of the same energy
//   psi(F) = mu/2 (tr F^T F - 3) + lambda/2 (det F - gamma)^2,  gamma = 1 + mu/lambda,
// with lambda = Lame's lambda + mu (V15). A box of Kuhn tets loaded on its faces by consistent
// nodal forces of a uniform dead traction has the homogeneous deformation as its exact discrete
// equilibrium (every tet has the same F), so these tests measure the solver, not the mesh; the
// cantilever measures the mesh against beam theory. Static equilibria are reached by quasi-static
// steps: each step is XPBD's implicit step from rest (velocities zeroed after it), repeated until
// the shape stops changing; the settings are stated in each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "pliant/pliant.h"
#include "scenario/scenario_util.h"

namespace pliant {
namespace {

using scenario::relativeError;

// Pa. Soft, so that the substeps resolve the block's fastest vibration (h omega << 1) and the
// quasi-static equilibrium is converged; the closed forms scale with E and do not care.
constexpr double kYoungsModulus = 1.0e3;

struct Block {
  ModelPtr model;
  GeneratedObject object;
  Vec3 size;
};

Block makeBlock(const NeoHookeanMaterial& m, int cells, double edge) {
  ModelBuilder b;
  TetBoxDef def;
  def.cellsX = def.cellsY = def.cellsZ = cells;
  def.size = Vec3::Constant(edge);
  def.density = 1000.0;
  def.neoHookean = m;
  Block block;
  block.object = addTetBox(b, def);
  block.model = b.build();
  block.size = def.size;
  return block;
}

// Nodal forces of a dead traction t (Pa, per unit reference area, constant direction) on the
// box faces whose outward normal is +-axis: each boundary triangle gives a third of t A to each corner.
void addFaceTraction(const Block& block, int axis, double traction, std::vector<Vec3>& force) {
  const Model& m = *block.model;
  for (const auto& tri : block.object.triangles) {
    const Vec3& a = m.initialPosition[tri[0]];
    const Vec3& b = m.initialPosition[tri[1]];
    const Vec3& c = m.initialPosition[tri[2]];
    const Vec3 n = 0.5 * (b - a).cross(c - a);  // outward, |n| = area
    if (std::abs(n[axis]) < 0.999 * n.norm()) continue;
    const double sign = n[axis] > 0.0 ? 1.0 : -1.0;
    for (ParticleIndex p : tri) force[p][axis] += sign * traction * n.norm() / 3.0;
  }
}

// Mean stretch along each axis: the distance between the mean positions of the two faces normal
// to it, over the rest distance. Volume ratio: the sum of the tets' volumes over the rest volume.
struct Measured {
  Vec3 stretch;
  double volumeRatio = 0.0;
};
Measured measure(const Block& block, const State& s) {
  const Model& m = *block.model;
  Measured out;
  for (int axis = 0; axis < 3; ++axis) {
    Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
    int nlo = 0, nhi = 0;
    for (std::size_t i = 0; i < m.particleCount(); ++i) {
      const double x0 = m.initialPosition[i][axis];
      if (x0 < 1e-9) lo += s.position[i], ++nlo;
      if (x0 > block.size[axis] - 1e-9) hi += s.position[i], ++nhi;
    }
    out.stretch[axis] = (hi / nhi - lo / nlo).norm() / block.size[axis];  // any rotation
  }
  double volume = 0.0;
  for (const auto& t : block.object.tets) {
    const Vec3 &x0 = s.position[t[0]], &x1 = s.position[t[1]], &x2 = s.position[t[2]], &x3 = s.position[t[3]];
    volume += (x1 - x0).dot((x2 - x0).cross(x3 - x0)) / 6.0;
  }
  out.volumeRatio = volume / block.size.prod();
  return out;
}

// Quasi-static relaxation: `steps` steps of 1/60 s from rest (velocities zeroed after each) in
// `substeps` substeps of one pass, under the state's external forces.
void relax(const Block& block, State& s, int steps, int substeps) {
  SolverSettings set;
  set.timeStep = 1.0 / 60.0;
  set.substeps = substeps;
  set.iterations = 1;
  set.gravity = Vec3::Zero();
  Solver solver(block.model, set);
  // The load rises linearly over the first half of the steps (a sudden large load throws the
  // block far in one step), then stays.
  const std::vector<Vec3> load = s.externalForce;
  for (int i = 0; i < steps; ++i) {
    const double ramp = std::min(1.0, 2.0 * (i + 1) / steps);
    for (std::size_t p = 0; p < load.size(); ++p) s.externalForce[p] = ramp * load[p];
    ASSERT_TRUE(solver.step(s).ok());
    for (Vec3& v : s.velocity) v.setZero();
  }
}

// Closed form of uniaxial dead-load tension with free lateral faces: F = diag(s, t, t), lateral
// stress 0: mu t + lambda (J - gamma) s t = 0, so t^2 = (gamma - mu / (lambda s)) / s and
// J = s t^2 = gamma - mu / (lambda s); the axial nominal stress is P = mu (s - t^2 / s).
struct Uniaxial {
  double lateral, volumeRatio, nominalStress;
};
Uniaxial uniaxial(const NeoHookeanMaterial& m, double s) {
  const double mu = m.lameMu(), lambda = m.lameLambda() + mu, gamma = 1.0 + mu / lambda;
  const double t2 = (gamma - mu / (lambda * s)) / s;
  return {std::sqrt(t2), s * t2, mu * (s - t2 / s)};
}

// V15: a block pulled by a uniform dead traction on two opposite faces, lateral faces free,
// reaches the closed-form stretch, lateral contraction and volume ratio for several Poisson
// ratios, at small (0.01 %, 1 %) and large (50 %) stretch. 2 x 2 x 2 cells, 48 tets; 300 quasi-static
// steps of 20 substeps (E = 1 kPa, 1000 kg/m^3). Tolerance 1e-3 relative on each stretch and on
// the volume ratio (measured: at most 4e-4 at 50 % stretch, 1e-5 at 1 %); at 1e-4 strain the
// block gives back E and nu to 1e-3 (V15).
TEST(V15_NeoHookean, UniaxialStretchMatchesClosedForm) {
  for (double nu : {0.0, 0.3, 0.45, 0.499}) {
    for (double s : {1.0001, 1.01, 1.5}) {
      NeoHookeanMaterial m;
      m.youngsModulus = kYoungsModulus;
      m.poissonRatio = nu;
      const Block block = makeBlock(m, 2, 0.1);
      const Uniaxial expected = uniaxial(m, s);
      State state = State::fromModel(*block.model);
      addFaceTraction(block, 0, expected.nominalStress, state.externalForce);
      relax(block, state, 300, 20);
      const Measured got = measure(block, state);
      std::printf("nu %.2f stretch %.2f: stretch %.6f lateral %.6f (expected %.6f) J %.6f (expected %.6f)\n", nu, s,
                  got.stretch.x(), got.stretch.y(), expected.lateral, got.volumeRatio, expected.volumeRatio);
      EXPECT_LT(relativeError(got.stretch.x(), s), 1e-3) << nu << " " << s;
      EXPECT_LT(relativeError(got.stretch.y(), expected.lateral), 1e-3) << nu << " " << s;
      EXPECT_LT(relativeError(got.stretch.z(), expected.lateral), 1e-3) << nu << " " << s;
      EXPECT_LT(relativeError(got.volumeRatio, expected.volumeRatio), 1e-3) << nu << " " << s;
      if (s == 1.0001) {
        // Small strain (1e-4): the axial stress over the axial strain is E, the lateral strain
        // over the axial strain is -nu, to 1e-3 (V15).
        const double measuredNu = -(got.stretch.y() - 1.0) / (got.stretch.x() - 1.0);
        const double measuredE = expected.nominalStress / (got.stretch.x() - 1.0);
        std::printf("  small strain: E %.6g (expected %.6g), nu %.6f\n", measuredE, kYoungsModulus, measuredNu);
        EXPECT_LT(relativeError(measuredE, kYoungsModulus), 1e-3) << "nu " << nu;
        EXPECT_NEAR(measuredNu, nu, 1e-3) << "nu " << nu;
      }
    }
  }
}

// V15: hydrostatic compression by a uniform dead pressure p on all six faces: F = s I with
// p = -(mu s + lambda s^2 (s^3 - gamma)). At small strain J - 1 = -p / K, K = Lame's lambda + 2/3 mu.
// Same block and settings as the uniaxial test; tolerance 1e-3 relative on each stretch and J.
TEST(V15_NeoHookean, HydrostaticCompressionMatchesClosedForm) {
  for (double nu : {0.3, 0.49}) {
    // Near incompressible, 10 % compression needs a pressure near 0.3 K ~ 5 E, whose bulk wave
    // these substeps do not resolve (it throws the block apart); 0.1 % is tested there. At
    // nu = 0.499 even 0.1 % fails with 20 substeps: pressure loads on nearly incompressible
    // material need substeps that resolve sqrt(K / rho) / cell size.
    for (double s : nu < 0.45 ? std::vector<double>{0.999, 0.9} : std::vector<double>{0.999}) {
      NeoHookeanMaterial m;
      m.youngsModulus = kYoungsModulus;
      m.poissonRatio = nu;
      const double mu = m.lameMu(), lambda = m.lameLambda() + mu, gamma = 1.0 + mu / lambda;
      const double pressure = -(mu * s + lambda * s * s * (s * s * s - gamma));
      const Block block = makeBlock(m, 2, 0.1);
      State state = State::fromModel(*block.model);
      for (int axis = 0; axis < 3; ++axis) addFaceTraction(block, axis, -pressure, state.externalForce);
      relax(block, state, 300, 20);
      const Measured got = measure(block, state);
      std::printf("nu %.2f compression %.3f: stretch %.6f %.6f %.6f J %.6f (expected %.6f)\n", nu, s, got.stretch.x(),
                  got.stretch.y(), got.stretch.z(), got.volumeRatio, s * s * s);
      for (int axis = 0; axis < 3; ++axis) EXPECT_LT(relativeError(got.stretch[axis], s), 1e-3) << nu << " " << s;
      EXPECT_LT(relativeError(got.volumeRatio, s * s * s), 1e-3) << nu << " " << s;
      if (s == 0.999) {
        const double bulk = m.lameLambda() + 2.0 / 3.0 * mu;
        EXPECT_LT(relativeError(1.0 - got.volumeRatio, pressure / bulk), 5e-3) << nu;
      }
    }
  }
}

// A cantilever of length 1 m and square section 0.1 m (rho 1000 kg/m^3, E 74 MPa, nu 0) clamped
// at x = 0 and bent by its own weight: Euler-Bernoulli gives the tip deflection q L^4 / (8 E I),
// q = rho g A, here 2 % of the length (geometric nonlinearity ~1e-4). Kuhn tets with n cells
// through the thickness (10 n x n x n cells); 400 substeps of one pass per 1/60 s frame, velocity
// damping 30/s, 36 frames (settled to 1e-5). Returns the tip deflection over beam theory's.
double cantileverRatio(int n, double nu) {
  const double L = 1.0, H = 0.1, rho = 1000.0, E = 7.4e7;
  ModelBuilder b;
  TetBoxDef def;
  def.cellsX = 10 * n;
  def.cellsY = def.cellsZ = n;
  def.size = Vec3(L, H, H);
  def.density = rho;
  NeoHookeanMaterial m;
  m.youngsModulus = E;
  m.poissonRatio = nu;
  def.neoHookean = m;
  addTetBox(b, def);
  for (ParticleIndex p = 0; p < b.particleCount(); ++p)
    if (b.position(p).x() < 1e-9) b.fixParticle(p);
  const ModelPtr model = b.build();
  SolverSettings set;
  set.timeStep = 1.0 / 60.0;
  set.substeps = 400;
  set.iterations = 1;
  set.velocityDamping = 30.0;
  Solver solver(model, set);
  State s = State::fromModel(*model);
  for (int frame = 0; frame < 36; ++frame) EXPECT_TRUE(solver.step(s).ok());
  double sum = 0.0;
  int count = 0;
  for (std::size_t p = 0; p < model->particleCount(); ++p)
    if (model->initialPosition[p].x() > L - 1e-9) {
      sum += model->initialPosition[p].y() - s.position[p].y();
      ++count;
    }
  const double q = rho * scenario::kG * H * H, I = H * H * H * H / 12.0;
  return sum / count / (q * L * L * L * L / (8.0 * E * I));
}

// V15: the tip deflection approaches beam theory from below as the mesh is refined (linear tets
// are too stiff in bending; docs/validation.md has the table to 4 cells through the thickness).
// Measured: 0.247 with 1 cell, 0.557 with 2 (0.555 with 800 substeps); tolerance 0.01 on each.
TEST(V15_NeoHookean, CantileverApproachesBeamTheoryWithRefinement) {
  const double coarse = cantileverRatio(1, 0.0);
  const double fine = cantileverRatio(2, 0.0);
  std::printf("cantilever tip / Euler-Bernoulli: 1 cell %.4f, 2 cells %.4f\n", coarse, fine);
  EXPECT_NEAR(coarse, 0.247, 0.01);
  EXPECT_NEAR(fine, 0.557, 0.01);
  EXPECT_LT(1.0 - fine, 0.6 * (1.0 - coarse));
}

}  // namespace
}  // namespace pliant
