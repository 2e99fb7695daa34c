// Scenario tests of surface contact (issue 4, item 5: cloth self-collision and cloth-cloth
// collision), measured by the number of intersecting triangle pairs (pliant/geometry.h), the
// contact-quality measure docs/validation.md's contact cases (V13) ask to keep within tolerance:
// - a cloth that crumples onto itself on the ground shows zero intersecting pairs in every frame,
//   and the same scene without self-collision does intersect (so the check can fail);
// - two cloths falling onto a sphere and onto each other never intersect;
// - continuous collision: a vertex (and an edge) fast enough to cross a triangle (an edge) within
//   one substep is stopped on the side it came from, where without surface contact it passes;
//   so is a triangle (an edge) that turns through a vertex (an edge) within one substep, which a
//   signed distance interpolated linearly between the planes at the substep's ends misses;
// - the broad phase's normal cones (skipping patches that cannot touch themselves) skip neither
//   two flat sheets lying parallel (not one patch) nor a sheet whose flap folds through it within
//   the substep (the cone must hold at the prediction too).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "pliant/geometry.h"
#include "pliant/io/scenes.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

struct RunStats {
  std::size_t maxIntersections = 0;
  int framesWithIntersections = 0;
  std::size_t maxSurfaceContacts = 0;
};

// Steps `scene` for `frames` frames, counting intersecting triangle pairs after every frame.
RunStats runCounting(const Scene& scene, int frames) {
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  RunStats stats;
  EXPECT_EQ(countIntersectingTrianglePairs(state.position, scene.topology.triangles), 0u);
  for (int f = 0; f < frames; ++f) {
    const StepResult r = solver.step(state);
    EXPECT_TRUE(r.ok()) << r.message;
    if (!r.ok()) break;
    const std::size_t pairs = countIntersectingTrianglePairs(state.position, scene.topology.triangles);
    stats.maxIntersections = std::max(stats.maxIntersections, pairs);
    stats.framesWithIntersections += pairs > 0;
    stats.maxSurfaceContacts = std::max(stats.maxSurfaceContacts, solver.lastSurfaceContacts().size());
  }
  return stats;
}

// A copy of a built scene model with surface contact off (a built model is immutable).
ModelPtr withoutSelfCollision(const Model& model) {
  auto copy = std::make_shared<Model>(model);
  copy->selfCollision = false;
  return copy;
}

// The fold: the cloth starts to buckle at about frame 45 and lies crumpled on the ground by 90.
constexpr int kFoldFrames = 100;

TEST(SelfCollisionScenario, ClothCrumpledOntoItselfOnTheGroundNeverIntersects) {
  const Scene scene = makeBuiltinScene("cloth-fold");
  ASSERT_TRUE(scene.model->selfCollision);
  const RunStats stats = runCounting(scene, kFoldFrames);
  EXPECT_EQ(stats.maxIntersections, 0u);
  EXPECT_EQ(stats.framesWithIntersections, 0);
  EXPECT_GT(stats.maxSurfaceContacts, 100u);  // the cloth did fold onto itself
}

TEST(SelfCollisionScenario, WithoutSelfCollisionTheSameFoldIntersects) {
  Scene scene = makeBuiltinScene("cloth-fold");
  scene.model = withoutSelfCollision(*scene.model);
  const RunStats stats = runCounting(scene, kFoldFrames);
  EXPECT_GT(stats.maxIntersections, 20u);
  EXPECT_GT(stats.framesWithIntersections, 0);
  EXPECT_EQ(stats.maxSurfaceContacts, 0u);
}

TEST(SelfCollisionScenario, TwoClothsNeverIntersectEachOtherOrThemselves) {
  const Scene scene = makeBuiltinScene("two-cloths");
  // The lower cloth lands on the sphere at about frame 12, the upper one on it at about 20.
  const RunStats stats = runCounting(scene, 60);
  EXPECT_EQ(stats.maxIntersections, 0u);
  EXPECT_GT(stats.maxSurfaceContacts, 100u);
  Scene without = makeBuiltinScene("two-cloths");
  without.model = withoutSelfCollision(*without.model);
  EXPECT_GT(runCounting(without, 60).maxIntersections, 20u);
}

// A fixed floor triangle at y = 0 and a small triangle above it moving down at `speed` (m/s):
// with one substep of 1/60 s, 30 m/s crosses the floor's plane within one substep.
struct Tunnel {
  ModelPtr model;
  SolverSettings settings;
};

Tunnel fallingTriangle(const std::array<Vec3, 3>& floor, const std::array<Vec3, 3>& falling, double speed,
                       bool surfaceContact) {
  ModelBuilder b;
  std::array<ParticleIndex, 3> fixed{}, moving{};
  for (int k = 0; k < 3; ++k) fixed[k] = b.addParticle(floor[k], 0.0);
  for (int k = 0; k < 3; ++k) moving[k] = b.addParticle(falling[k], 0.01, Vec3(0.0, -speed, 0.0));
  const std::array<std::array<ParticleIndex, 3>, 2> triangles = {{fixed, moving}};
  b.addCollisionTriangles(triangles, surfaceContact);
  b.model().surfaceThickness = 0.002;
  Tunnel t{b.build(), SolverSettings()};
  t.settings.gravity = Vec3::Zero();
  return t;
}

double lowest(const State& state) {
  return std::min({state.position[3].y(), state.position[4].y(), state.position[5].y()});
}

TEST(SelfCollisionScenario, FastVertexDoesNotTunnelThroughATriangleInOneSubstep) {
  // From y = 0.1 the prediction lands 0.4 m below the floor: the vertex is never within the
  // thickness of the floor at a substep's start or end, only on the way.
  const std::array<Vec3, 3> floor = {Vec3(-1.0, 0.0, -1.0), Vec3(1.0, 0.0, -1.0), Vec3(0.0, 0.0, 1.5)};
  const std::array<Vec3, 3> falling = {Vec3(0.0, 0.1, 0.0), Vec3(0.05, 0.12, 0.0), Vec3(0.0, 0.12, 0.05)};
  for (const bool on : {false, true}) {
    SCOPED_TRACE(on ? "with surface contact" : "without");
    const Tunnel t = fallingTriangle(floor, falling, 30.0, on);
    Solver solver(t.model, t.settings);
    State state = State::fromModel(*t.model);
    ASSERT_TRUE(solver.step(state).ok());
    if (!on) {
      EXPECT_LT(lowest(state), -0.3);  // passed straight through
      continue;
    }
    // Held on the side it came from, at the thickness, and at rest there (no bounce).
    EXPECT_NEAR(state.position[3].y(), t.model->surfaceThickness, 1e-12);
    EXPECT_GE(lowest(state), t.model->surfaceThickness - 1e-12);
    EXPECT_NEAR(state.velocity[3].y(), 0.0, 1e-9);
    ASSERT_GT(solver.lastSurfaceContacts().size(), 0u);
    EXPECT_EQ(solver.lastSurfaceContacts().front().kind, SurfaceContact::Kind::VertexTriangle);
    ASSERT_TRUE(solver.run(state, 10).ok());
    EXPECT_GE(lowest(state), t.model->surfaceThickness - 1e-9);
  }
}

TEST(SelfCollisionScenario, FastEdgeDoesNotTunnelThroughAnEdgeInOneSubstep) {
  // Two slivers crossing like an X: no vertex of either is over the other, so only edge-edge
  // contact can hold the falling one.
  const std::array<Vec3, 3> floor = {Vec3(-1.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.5, 0.0, 0.04)};
  const std::array<Vec3, 3> falling = {Vec3(0.0, 0.1, -1.0), Vec3(0.0, 0.1, 1.0), Vec3(0.04, 0.1, 0.5)};
  for (const bool on : {false, true}) {
    SCOPED_TRACE(on ? "with surface contact" : "without");
    const Tunnel t = fallingTriangle(floor, falling, 30.0, on);
    Solver solver(t.model, t.settings);
    State state = State::fromModel(*t.model);
    ASSERT_TRUE(solver.step(state).ok());
    if (!on) {
      EXPECT_LT(lowest(state), -0.3);
      continue;
    }
    ASSERT_GT(solver.lastSurfaceContacts().size(), 0u);
    for (const SurfaceContact& c : solver.lastSurfaceContacts()) EXPECT_EQ(c.kind, SurfaceContact::Kind::EdgeEdge);
    // The long edge's midpoint, where it crosses the floor's long edge, is held at least the
    // thickness above it (the other edge pairs, solved after, tilt the sliver and may lift it more).
    const double middle = 0.5 * (state.position[3].y() + state.position[4].y());
    EXPECT_GE(middle, t.model->surfaceThickness - 1e-9);
    EXPECT_LT(middle, 0.1);
    EXPECT_EQ(
        countIntersectingTrianglePairs(state.position, std::vector<std::array<ParticleIndex, 3>>{{0, 1, 2}, {3, 4, 5}}),
        0u);
    ASSERT_TRUE(solver.run(state, 10).ok());
    EXPECT_EQ(
        countIntersectingTrianglePairs(state.position, std::vector<std::array<ParticleIndex, 3>>{{0, 1, 2}, {3, 4, 5}}),
        0u);
  }
}

// Rotation by `degrees` about the axis through `pivot` along x.
Vec3 turnedAboutX(const Vec3& point, const Vec3& pivot, double degrees) {
  const double angle = degrees * std::acos(-1.0) / 180.0;
  const Vec3 r = point - pivot;
  return pivot + Vec3(r.x(), std::cos(angle) * r.y() - std::sin(angle) * r.z(),
                      std::sin(angle) * r.y() + std::cos(angle) * r.z());
}

// Two triangles, the first fixed, the second with its first two corners fixed and its third
// moving at constant velocity from `from` to `to` in one step of one substep (no gravity).
Tunnel turningTriangle(const std::array<Vec3, 3>& still, const Vec3& hinge0, const Vec3& hinge1, const Vec3& from,
                       const Vec3& to, bool surfaceContact) {
  ModelBuilder b;
  std::array<ParticleIndex, 3> fixed{}, turning{};
  for (int k = 0; k < 3; ++k) fixed[k] = b.addParticle(still[k], 0.0);
  turning[0] = b.addParticle(hinge0, 0.0);
  turning[1] = b.addParticle(hinge1, 0.0);
  const SolverSettings settings;
  turning[2] = b.addParticle(from, 0.01, (to - from) / settings.timeStep);
  const std::array<std::array<ParticleIndex, 3>, 2> triangles = {{fixed, turning}};
  b.addCollisionTriangles(triangles, surfaceContact);
  b.model().surfaceThickness = 0.002;
  Tunnel t{b.build(), settings};
  t.settings.gravity = Vec3::Zero();
  return t;
}

// Whether, on the straight paths from `from` to `to` (sampled 20000 times), the vertex
// from[0] passes through the triangle (from[1], from[2], from[3]), or (`edges`) the edge
// (from[0], from[1]) across the edge (from[2], from[3]): the four points coplanar with the
// vertex inside the triangle (the edges crossing), independently of the solver's own test.
bool passesThrough(const std::array<Vec3, 4>& from, const std::array<Vec3, 4>& to, bool edges) {
  auto at = [&](double t) {
    std::array<Vec3, 4> x;
    for (int k = 0; k < 4; ++k) x[k] = from[k] + t * (to[k] - from[k]);
    return x;
  };
  auto coplanarity = [&](const std::array<Vec3, 4>& x) {
    return edges ? (x[0] - x[2]).dot((x[1] - x[0]).cross(x[3] - x[2]))
                 : (x[0] - x[1]).dot((x[2] - x[1]).cross(x[3] - x[1]));
  };
  const int samples = 20000;
  for (int i = 0; i < samples; ++i) {
    const double f0 = coplanarity(at(double(i) / samples)), f1 = coplanarity(at(double(i + 1) / samples));
    if ((f0 > 0.0) == (f1 > 0.0)) continue;
    const std::array<Vec3, 4> x = at((i + f0 / (f0 - f1)) / samples);
    if (!edges) {
      // Inside: on the same side of each edge as the normal says.
      const Vec3 n = (x[2] - x[1]).cross(x[3] - x[1]);
      bool inside = true;
      for (int k = 0; k < 3; ++k)
        inside = inside && (x[1 + (k + 1) % 3] - x[1 + k]).cross(x[0] - x[1 + k]).dot(n) >= 0.0;
      if (inside) return true;
      continue;
    }
    // Crossing: each edge's ends on opposite sides of the other edge's line, in the common plane.
    const Vec3 n = (x[1] - x[0]).cross(x[3] - x[2]);
    auto opposite = [&](const Vec3& p, const Vec3& q, const Vec3& r, const Vec3& s2) {
      return (q - p).cross(r - p).dot(n) * (q - p).cross(s2 - p).dot(n) <= 0.0;
    };
    if (opposite(x[0], x[1], x[2], x[3]) && opposite(x[2], x[3], x[0], x[1])) return true;
  }
  return false;
}

std::array<Vec3, 4> points(const State& state, const std::array<ParticleIndex, 4>& particles, bool start) {
  std::array<Vec3, 4> x;
  for (int k = 0; k < 4; ++k) x[k] = (start ? state.previousPosition : state.position)[particles[k]];
  return x;
}

TEST(SelfCollisionScenario, TriangleTurningThroughAVertexInOneSubstepIsStopped) {
  // A flap hinged on the x axis turns by 150 degrees in one substep (its free corner on the chord
  // of that arc, at about 11 m/s) through the tip of a fixed sliver, at 34 degrees and 1.8 cm from
  // the hinge. The vertex is on the same side of the flap's plane at the substep's start and end
  // as judged along the normal at the start (the normal turns by 150 degrees); the four points are
  // coplanar, with the vertex over the flap, at t = 0.38 of the substep.
  const Vec3 tip(0.05, 0.015, 0.01);
  const std::array<Vec3, 3> sliver = {tip, Vec3(0.3, 0.015, 0.01), Vec3(0.3, 0.018, 0.012)};
  const Vec3 from(0.05, 0.1, 0.0);
  const Vec3 to = turnedAboutX(from, Vec3::Zero(), 150.0);
  const std::array<ParticleIndex, 4> pair = {0, 3, 4, 5};  // the tip and the flap
  for (const bool on : {false, true}) {
    SCOPED_TRACE(on ? "with surface contact" : "without");
    const Tunnel t = turningTriangle(sliver, Vec3::Zero(), Vec3(0.1, 0.0, 0.0), from, to, on);
    Solver solver(t.model, t.settings);
    State state = State::fromModel(*t.model);
    const State start = state;
    ASSERT_TRUE(solver.step(state).ok());
    // On the way from the start to where the step left it, did the flap pass through the tip?
    const bool through = passesThrough(points(start, pair, false), points(state, pair, false), false);
    if (!on) {
      EXPECT_NEAR((state.position[5] - to).norm(), 0.0, 1e-12);  // swept through the tip
      EXPECT_TRUE(through);
      continue;
    }
    ASSERT_GT(solver.lastSurfaceContacts().size(), 0u);
    EXPECT_FALSE(through);
    // The tip ends on the side of the flap's plane it started on. (The contact holds the
    // thickness along the normal at the time of the meeting; the flap's final plane has turned
    // from it, so the gap there may be less. The linearised contact swings the flap back the
    // other way round its hinge.)
    const Vec3 n = (state.position[4] - state.position[3]).cross(state.position[5] - state.position[3]).normalized();
    EXPECT_GT(n.dot(tip - state.position[3]), 0.0);
  }
}

TEST(SelfCollisionScenario, EdgeTurningThroughAnEdgeInOneSubstepIsStopped) {
  // A fixed triangle in the plane z = 0 with its long edge on the x axis; above it (z = 0.02), a
  // triangle hinged on a short edge parallel to x whose free corner turns by 120 degrees about
  // that edge in one substep, its long edge sweeping down across the x axis (at t = 0.36) and
  // ending through the fixed triangle. No vertex passes through a triangle: only the edge-edge
  // pairs can stop it, and at the substep's end edge a is on the same side of edge b as at the
  // start, judged along the edges' common normal (which turns by less than 90 degrees).
  const std::array<Vec3, 3> still = {Vec3(-0.1, 0.0, 0.0), Vec3(0.1, 0.0, 0.0), Vec3(0.0, 0.1, 0.0)};
  const Vec3 hinge(0.0, 0.03, 0.02);
  const Vec3 from = hinge + Vec3(0.0, -0.08, 0.0);
  const Vec3 to = turnedAboutX(from, hinge, 120.0);
  const std::vector<std::array<ParticleIndex, 3>> triangles = {{0, 1, 2}, {3, 4, 5}};
  const std::array<ParticleIndex, 4> pair = {3, 5, 0, 1};  // the turning long edge and the x axis
  for (const bool on : {false, true}) {
    SCOPED_TRACE(on ? "with surface contact" : "without");
    const Tunnel t = turningTriangle(still, hinge, hinge + Vec3(0.01, 0.0, 0.0), from, to, on);
    Solver solver(t.model, t.settings);
    State state = State::fromModel(*t.model);
    const State start = state;
    EXPECT_EQ(countIntersectingTrianglePairs(state.position, triangles), 0u);
    ASSERT_TRUE(solver.step(state).ok());
    const bool through = passesThrough(points(start, pair, false), points(state, pair, false), true);
    if (!on) {
      EXPECT_TRUE(through);
      EXPECT_EQ(countIntersectingTrianglePairs(state.position, triangles), 1u);  // went through
      continue;
    }
    ASSERT_GT(solver.lastSurfaceContacts().size(), 0u);
    for (const SurfaceContact& c : solver.lastSurfaceContacts()) EXPECT_EQ(c.kind, SurfaceContact::Kind::EdgeEdge);
    EXPECT_FALSE(through);
    EXPECT_EQ(countIntersectingTrianglePairs(state.position, triangles), 0u);
    // The turning corner stays on the side of the x axis it started on, seen from the hinge
    // (the sign of (axis - hinge) x (corner - hinge) along x, negative at the start).
    auto side = [&](const Vec3& corner) { return (Vec3::Zero() - hinge).cross(corner - hinge).x(); };
    ASSERT_LT(side(from), 0.0);
    EXPECT_LT(side(state.position[5]), 0.0);
  }
}

// An n x n grid of squares of side `spacing` (m) in the plane z = origin.z, counter-clockwise seen
// from +z (normals +z), its particles of `mass` kg moving at `velocity` m/s; appends its triangles.
void addSheet(ModelBuilder& b, int n, double spacing, const Vec3& origin, double mass, const Vec3& velocity,
              std::vector<std::array<ParticleIndex, 3>>& triangles) {
  std::vector<ParticleIndex> grid;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) grid.push_back(b.addParticle(origin + spacing * Vec3(i, j, 0.0), mass, velocity));
  auto at = [&](int i, int j) { return grid[static_cast<std::size_t>(j * (n + 1) + i)]; };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      triangles.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1)});
      triangles.push_back({at(i, j), at(i + 1, j + 1), at(i, j + 1)});
    }
}

TEST(SelfCollisionScenario, TwoParallelFlatSheetsAreNotOnePatch) {
  // A free 6 x 6 sheet 1 cm above a fixed 10 x 10 one, both flat with the same normals, falling at
  // 3 m/s: 5 cm in the one substep. Their union's normals fit in a cone of zero opening, but it is
  // not a disk, so the pairs between the sheets must still be searched.
  for (const bool on : {false, true}) {
    SCOPED_TRACE(on ? "with surface contact" : "without");
    ModelBuilder b;
    std::vector<std::array<ParticleIndex, 3>> triangles;
    addSheet(b, 10, 0.01, Vec3::Zero(), 0.0, Vec3::Zero(), triangles);
    const auto firstFree = static_cast<ParticleIndex>(b.model().particleCount());
    addSheet(b, 6, 0.01, Vec3(0.0183, 0.0147, 0.01), 0.001, Vec3(0.0, 0.0, -3.0), triangles);
    b.addCollisionTriangles(triangles, on);
    b.model().surfaceThickness = 0.002;
    SolverSettings settings;
    settings.gravity = Vec3::Zero();
    Solver solver(b.build(), settings);
    State state = State::fromModel(solver.model());
    ASSERT_TRUE(solver.step(state).ok());
    double lowestFree = 1.0;
    for (std::size_t p = firstFree; p < state.position.size(); ++p)
      lowestFree = std::min(lowestFree, state.position[p].z());
    if (!on) {
      EXPECT_LT(lowestFree, -0.03);  // through the lower sheet
      continue;
    }
    EXPECT_GE(lowestFree, 0.002 - 1e-9);
    EXPECT_EQ(countIntersectingTrianglePairs(state.position, triangles), 0u);
  }
}

TEST(SelfCollisionScenario, FlapFoldingThroughItsOwnSheetInOneSubstepIsStopped) {
  // A fixed 4 x 4 sheet (2.5 cm squares, z = 0) with a flap hinged on its edge x = 0: the flap's
  // free corner moves on a line from above the left of the hinge (the flap 59 degrees up from the
  // sheet) to below the sheet at x = 12 cm, crossing the sheet at x = 6.4 cm, in one substep. At
  // the substep's start the sheet and flap fit in a cone of 30 degrees; at the prediction the flap
  // has turned over, so their pairs must be searched.
  for (const bool on : {false, true}) {
    SCOPED_TRACE(on ? "with surface contact" : "without");
    ModelBuilder b;
    std::vector<std::array<ParticleIndex, 3>> triangles;
    addSheet(b, 4, 0.025, Vec3::Zero(), 0.0, Vec3::Zero(), triangles);
    const SolverSettings defaults;
    const Vec3 from(-0.03, 0.0375, 0.05), to(0.12, 0.0375, -0.03);
    const ParticleIndex corner = b.addParticle(from, 0.01, (to - from) / defaults.timeStep);
    const ParticleIndex hingeA = 5, hingeB = 10;  // (0, 2.5 cm) and (0, 5 cm) of the 5 x 5 grid
    ASSERT_NEAR(b.model().initialPosition[hingeA].y(), 0.025, 1e-12);
    ASSERT_NEAR(b.model().initialPosition[hingeB].y(), 0.05, 1e-12);
    triangles.push_back({hingeA, hingeB, corner});  // +z normal when lying flat at x < 0
    b.addCollisionTriangles(triangles, on);
    b.model().surfaceThickness = 0.002;
    SolverSettings settings;
    settings.gravity = Vec3::Zero();
    Solver solver(b.build(), settings);
    State state = State::fromModel(solver.model());
    ASSERT_TRUE(solver.step(state).ok());
    if (!on) {
      EXPECT_NEAR((state.position[corner] - to).norm(), 0.0, 1e-12);  // through the sheet
      continue;
    }
    EXPECT_GT(state.position[corner].z(), 0.0);  // held above the sheet
    // Flat parts of the sheet were skipped, not the whole (as a cone at the start alone would).
    EXPECT_GT(solver.lastSurfaceSkippedTriangles(), 0u);
    EXPECT_LT(solver.lastSurfaceSkippedTriangles(), triangles.size());
  }
}

}  // namespace
}  // namespace pliant
