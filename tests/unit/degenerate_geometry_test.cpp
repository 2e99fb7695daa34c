// Unit tests of the families' projectors on degenerate geometry (src/constraints/*.cpp): zero-length
// edges, coincident particles, collinear bending stencils, flat, inverted and collapsed tets, and a
// closed mesh collapsed to a point. A projection with no defined direction must be skipped, never
// turned into NaN; every step must be accepted and leave finite positions, velocities and multipliers.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "constraints/families.h"
#include "pliant/builders.h"
#include "pliant/diagnostics.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "solve_plan.h"

namespace pliant {
namespace {

bool allFinite(const State& s) {
  for (std::size_t i = 0; i < s.position.size(); ++i)
    if (!s.position[i].allFinite() || !s.velocity[i].allFinite()) return false;
  for (double l : s.lambda)
    if (!std::isfinite(l)) return false;
  return true;
}

// The solver settings every degenerate case is stepped with: XPBD hard, XPBD soft with damping,
// PBD, and small steps.
struct Variant {
  const char* name;
  SolverSettings settings;
  ConstraintParameters params;
};
std::vector<Variant> variants() {
  std::vector<Variant> out;
  SolverSettings xpbd;
  xpbd.iterations = 4;
  out.push_back({"xpbd-hard", xpbd, ConstraintParameters{}});
  out.push_back({"xpbd-soft-damped", xpbd, ConstraintParameters{1e-4, 10.0, 1.0}});
  SolverSettings pbd;
  pbd.mode = SolverMode::Pbd;
  pbd.iterations = 4;
  out.push_back({"pbd", pbd, ConstraintParameters{0.0, 0.0, 0.7}});
  out.push_back({"small-steps", SolverSettings::smallSteps(8), ConstraintParameters{}});
  return out;
}

// Builds the model with `make(builder, params)` for every variant and steps it: every step must be
// accepted with finite values. Returns the final states, one per variant.
template <class Make>
std::vector<State> stepAllVariants(Make&& make, int steps, const Vec3& gravity = Vec3(0.0, -9.81, 0.0)) {
  std::vector<State> finals;
  for (Variant v : variants()) {
    ModelBuilder builder;
    make(builder, v.params);
    const ModelPtr model = builder.build();
    v.settings.gravity = gravity;
    Solver solver(model, v.settings);
    State state = State::fromModel(*model);
    for (int s = 0; s < steps; ++s) {
      const StepResult r = solver.step(state);
      EXPECT_TRUE(r.ok()) << v.name << " step " << s << ": " << r.message;
      EXPECT_TRUE(allFinite(state)) << v.name << " step " << s;
      if (!r.ok() || !allFinite(state)) break;
    }
    finals.push_back(std::move(state));
  }
  return finals;
}

TEST(DegenerateGeometry, ZeroLengthEdgeIsSkipped) {
  const auto finals = stepAllVariants(
      [](ModelBuilder& b, const ConstraintParameters& p) {
        b.addParticle(Vec3(0, 1, 0), 1.0);
        b.addParticle(Vec3(0, 1, 0), 2.0);
        b.addDistance(0, 1, p, 0.5);  // coincident particles, nonzero rest length
        b.addDistance(0, 1, p, 0.0);  // coincident particles, zero rest length
        b.addMaxDistance(0, 1, p, 0.0);
      },
      30);
  // Both fall together: nothing pushed them apart along an undefined direction.
  for (const State& s : finals) EXPECT_EQ(s.position[0], s.position[1]);
}

TEST(DegenerateGeometry, CoincidentParticlesInAChainAndAtAnAttachmentStayFinite) {
  stepAllVariants(
      [](ModelBuilder& b, const ConstraintParameters& p) {
        // addChain refuses start == end, so build the collapsed chain by hand:
        // six particles at one point, every link of zero rest length.
        ParticleIndex previous = b.addParticle(Vec3(0, 0, 0), 1.0);
        for (int i = 1; i < 6; ++i) {
          const ParticleIndex next = b.addParticle(Vec3(0, 0, 0), 1.0);
          b.addDistance(previous, next, p, 0.0);
          previous = next;
        }
        const ParticleIndex q = b.addParticle(Vec3(1, 1, 1), 1.0);
        b.addAttachment(q, Vec3(1, 1, 1), p, 0.0);  // particle exactly at its target
        b.addAttachment(q, Vec3(1, 1, 1), p, 0.2);  // ... and at a nonzero rest distance
      },
      30);
}

TEST(DegenerateGeometry, CollinearAndCoincidentDihedralStencilsStayFinite) {
  stepAllVariants(
      [](ModelBuilder& b, const ConstraintParameters& p) {
        // Wing x2 on the edge line.
        b.addParticle(Vec3(0, 0, 0), 1.0);
        b.addParticle(Vec3(1, 0, 0), 1.0);
        b.addParticle(Vec3(0.5, 0, 0), 1.0);
        b.addParticle(Vec3(0.5, -1, 0), 1.0);
        b.addDihedralBending(0, 1, 2, 3, p, 0.5);
        // All four points collinear.
        for (double x : {0.0, 1.0, 2.0, 3.0}) b.addParticle(Vec3(x, 2, 0), 1.0);
        b.addDihedralBending(4, 5, 6, 7, p, 1.0);
        // Zero-length hinge edge.
        for (const Vec3& v : {Vec3(0, 4, 0), Vec3(0, 4, 0), Vec3(0.5, 5, 0), Vec3(0.5, 3, 0.2)}) b.addParticle(v, 1.0);
        b.addDihedralBending(8, 9, 10, 11, p, 0.0);
        // Nearly collinear wing (1e-7 edge lengths off the line): steep but defined.
        for (const Vec3& v : {Vec3(0, 6, 0), Vec3(1, 6, 0), Vec3(0.5, 6 + 1e-7, 0), Vec3(0.5, 5, 0)})
          b.addParticle(v, 1.0);
        b.addDihedralBending(12, 13, 14, 15, p, 0.3);
      },
      30);
}

// Isometric weights cannot be built from a degenerate stencil (the builder refuses it), so these
// models are assembled by hand: weights from a good rest shape, positions that have degenerated.
TEST(DegenerateGeometry, CollinearAndCollapsedIsometricStencilsStayFinite) {
  for (Variant v : variants()) {
    Model model;
    auto add = [&](const Vec3& x) {
      model.initialPosition.push_back(x);
      model.initialVelocity.push_back(Vec3::Zero());
      model.mass.push_back(1.0);
      model.inverseMass.push_back(1.0);
    };
    IsometricBendingConstraint c;
    ASSERT_TRUE(detail::isometricBendingWeights(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.4, 0.8, 0), Vec3(0.6, -0.9, 0),
                                                c.weights));
    c.params = v.params;
    // Stencil 0: all four collinear (non-uniformly spaced, so K x != 0).
    for (double x : {0.0, 1.0, 0.3, 2.5}) add(Vec3(x, 0, 0));
    c.particles[0] = 0;
    c.particles[1] = 1;
    c.particles[2] = 2;
    c.particles[3] = 3;
    model.isometricBendings.push_back(c);
    // Stencil 1: all four coincident (K x = 0: nothing to correct).
    for (int k = 0; k < 4; ++k) add(Vec3(5, 5, 5));
    c.particles[0] = 4;
    c.particles[1] = 5;
    c.particles[2] = 6;
    c.particles[3] = 7;
    model.isometricBendings.push_back(c);
    // Stencil 2: the hinge edge collapsed, wings apart.
    for (const Vec3& x : {Vec3(0, 3, 0), Vec3(0, 3, 0), Vec3(0, 4, 0), Vec3(0, 2, 1)}) add(x);
    c.particles[0] = 8;
    c.particles[1] = 9;
    c.particles[2] = 10;
    c.particles[3] = 11;
    model.isometricBendings.push_back(c);
    detail::fillLambdaOffsets(model);
    model.validate();
    const ModelPtr built = std::make_shared<const Model>(std::move(model));
    Solver solver(built, v.settings);
    State state = State::fromModel(*built);
    for (int s = 0; s < 30; ++s) {
      const StepResult r = solver.step(state);
      ASSERT_TRUE(r.ok()) << v.name << " step " << s << ": " << r.message;
      ASSERT_TRUE(allFinite(state)) << v.name << " step " << s;
    }
  }
}

// Rest volume 1/6 (a unit right tet); the initial positions given by `shape`.
ModelPtr singleTet(const std::array<Vec3, 4>& shape, const ConstraintParameters& params) {
  ModelBuilder b;
  for (const Vec3& v : {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)}) b.addParticle(v, 1.0);
  b.addTetVolume(0, 1, 2, 3, params);
  for (int k = 0; k < 4; ++k) b.model().initialPosition[k] = shape[k];
  return b.build();
}

double tetVolume(const State& s) {
  return detail::signedTetVolume(s.position[0], s.position[1], s.position[2], s.position[3]);
}

TEST(DegenerateGeometry, FlatAndInvertedTetsRecoverTheirRestVolume) {
  const std::array<Vec3, 4> flat = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0.3, 0.3, 0)};
  const std::array<Vec3, 4> inverted = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, -1)};
  const std::array<Vec3, 4> slightlyInverted = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0.2, 0.2, -1e-3)};
  for (const auto& shape : {flat, inverted, slightlyInverted}) {
    for (Variant v : variants()) {
      if (v.settings.mode == SolverMode::Pbd) v.params.stiffness = 1.0;
      v.params.compliance = 0.0;
      v.settings.gravity = Vec3::Zero();
      v.settings.iterations = v.settings.substeps > 1 ? 1 : 10;
      const ModelPtr model = singleTet(shape, v.params);
      ASSERT_LE(detail::signedTetVolume(shape[0], shape[1], shape[2], shape[3]), 0.0);
      Solver solver(model, v.settings);
      State state = State::fromModel(*model);
      for (int s = 0; s < 20; ++s) {
        const StepResult r = solver.step(state);
        ASSERT_TRUE(r.ok()) << v.name << ": " << r.message;
        ASSERT_TRUE(allFinite(state)) << v.name;
      }
      // The hard constraint is nonlinear (cubic in x), so a finite number of projections leaves a
      // small residual; the volume must be positive and back near its rest value.
      EXPECT_GT(tetVolume(state), 0.0) << v.name;
      EXPECT_NEAR(tetVolume(state), 1.0 / 6.0, 1e-6) << v.name;
    }
  }
}

TEST(DegenerateGeometry, CollapsedTetHasNoDirectionAndIsSkipped) {
  for (Variant v : variants()) {
    const Vec3 point(0.2, 0.3, 0.4);
    const ModelPtr model = singleTet({point, point, point, point}, v.params);
    v.settings.gravity = Vec3::Zero();
    Solver solver(model, v.settings);
    State state = State::fromModel(*model);
    for (int s = 0; s < 10; ++s) {
      const StepResult r = solver.step(state);
      ASSERT_TRUE(r.ok()) << v.name << ": " << r.message;
    }
    for (const Vec3& x : state.position) EXPECT_EQ(x, point) << v.name;
    EXPECT_EQ(tetVolume(state), 0.0);
  }
}

TEST(DegenerateGeometry, GlobalVolumeMeshCollapsedToAPointStaysFinite) {
  stepAllVariants(
      [](ModelBuilder& b, const ConstraintParameters& p) {
        BalloonDef def;
        def.rings = 4;
        def.segments = 6;
        def.stretch = p;
        def.volume = p;
        def.pressure = 1.5;
        const GeneratedObject balloon = addBalloon(b, def);  // rest volume from the sphere
        for (std::uint32_t k = 0; k < balloon.particleCount; ++k)
          b.model().initialPosition[balloon.firstParticle + k] = Vec3(0.1, 0.2, 0.3);
      },
      20);
}

TEST(DegenerateGeometry, FlatGlobalVolumeMeshInflatesWithoutNaN) {
  // A closed tetrahedral surface flattened into a plane: V = 0, gradient nonzero. Hard volume
  // constraint must push it back to its rest volume.
  SolverSettings settings;
  settings.iterations = 10;
  settings.gravity = Vec3::Zero();
  ModelBuilder b;
  for (const Vec3& v : {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)}) b.addParticle(v, 1.0);
  const std::vector<std::array<ParticleIndex, 3>> tris = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  b.addGlobalVolume(tris, 1.0, ConstraintParameters{});
  b.model().initialPosition[3] = Vec3(0.3, 0.3, 0.0);
  const ModelPtr model = b.build();
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  for (int s = 0; s < 20; ++s) ASSERT_TRUE(solver.step(state).ok());
  ASSERT_TRUE(allFinite(state));
  EXPECT_NEAR(detail::closedMeshVolume(*model, 0, state.position.data()), 1.0 / 6.0, 1e-6);
}

TEST(DegenerateGeometry, ClothCrumpledOntoALineStaysFinite) {
  // Every node of a bent cloth moved onto one line: all triangles degenerate at once.
  for (BendingModel bending : {BendingModel::Dihedral, BendingModel::Isometric}) {
    stepAllVariants(
        [bending](ModelBuilder& b, const ConstraintParameters& p) {
          ClothGridDef def;
          def.nodesX = 4;
          def.nodesY = 4;
          def.stretch = p;
          def.bending = bending;
          def.bendingParams = p;
          const GeneratedObject cloth = addClothGrid(b, def);
          for (std::uint32_t k = 0; k < cloth.particleCount; ++k)
            b.model().initialPosition[cloth.firstParticle + k] = Vec3(0.01 * (k % 3), 0.0, 0.0);
        },
        20);
  }
}

}  // namespace
}  // namespace pliant
