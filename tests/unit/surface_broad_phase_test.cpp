// Unit tests of the surface contact broad phase's pair rules (src/core/collision/surface_contacts.cpp):
// a vertex never meets a triangle it is a corner of or joined to by an edge, nor an edge one it
// shares an end with or is joined to, whatever the vertex's valence (the rule's filter per vertex
// has 64 bits: a vertex of 20 neighbours sets many of them and leans on the exact search behind).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

// A flat fan of `spokes` triangles around a centre vertex (valence `spokes`), radius 0.1 m in the
// plane y = 0, and a separate triangle 4 mm above its centre (the thickness is 5 mm): no gravity,
// nothing moves, so the contacts are those of the rest layout.
struct FanUnderTriangle {
  ModelPtr model;
  ParticleIndex centre = 0;
  std::vector<ParticleIndex> fan;  // the fan's particles (centre first)
  std::array<ParticleIndex, 3> above{};
};

FanUnderTriangle fanUnderTriangle(int spokes) {
  FanUnderTriangle f;
  ModelBuilder b;
  f.centre = b.addParticle(Vec3::Zero(), 0.01);
  f.fan.push_back(f.centre);
  for (int k = 0; k < spokes; ++k) {
    const double angle = 2.0 * std::numbers::pi * k / spokes;
    f.fan.push_back(b.addParticle(Vec3(0.1 * std::cos(angle), 0.0, 0.1 * std::sin(angle)), 0.01));
  }
  std::vector<std::array<ParticleIndex, 3>> triangles;
  for (int k = 0; k < spokes; ++k) triangles.push_back({f.centre, f.fan[1 + k], f.fan[1 + (k + 1) % spokes]});
  f.above = {b.addParticle(Vec3(-0.03, 0.004, -0.03), 0.01), b.addParticle(Vec3(0.03, 0.004, -0.03), 0.01),
             b.addParticle(Vec3(0.0, 0.004, 0.04), 0.01)};
  triangles.push_back(f.above);
  b.addCollisionTriangles(triangles);
  b.model().surfaceThickness = 0.005;
  f.model = b.build();
  return f;
}

bool inFan(const FanUnderTriangle& f, ParticleIndex p) { return p < f.fan.size(); }

TEST(SurfaceBroadPhase, CrowdedVertexMeetsOnlyWhatItIsNotJoinedTo) {
  // A centre of 8 neighbours, and one of 20.
  for (const int spokes : {8, 20}) {
    SCOPED_TRACE(std::to_string(spokes) + " spokes");
    const FanUnderTriangle f = fanUnderTriangle(spokes);
    SolverSettings settings;
    settings.gravity = Vec3::Zero();
    Solver solver(f.model, settings);
    State state = State::fromModel(*f.model);
    ASSERT_TRUE(solver.step(state).ok());
    bool centreUnderTriangle = false;
    int centreEdgePairs = 0;
    for (const SurfaceContact& c : solver.lastSurfaceContacts()) {
      // Every contact is between the fan and the triangle above, never within the fan.
      if (c.kind == SurfaceContact::Kind::VertexTriangle) {
        EXPECT_NE(inFan(f, c.particles[0]), inFan(f, c.particles[1])) << "vertex " << c.particles[0];
        centreUnderTriangle = centreUnderTriangle || c.particles[0] == f.centre;
      } else {
        EXPECT_NE(inFan(f, c.particles[0]), inFan(f, c.particles[2]))
            << "edges " << c.particles[0] << "-" << c.particles[1] << ", " << c.particles[2] << "-" << c.particles[3];
        for (int k = 0; k < 4; ++k) centreEdgePairs += c.particles[k] == f.centre;
      }
    }
    // The centre, 4 mm below the triangle, is held by it; the spokes crossed by the triangle's
    // edges (each ends at the centre) are held by those edges.
    EXPECT_TRUE(centreUnderTriangle);
    EXPECT_GT(centreEdgePairs, 0);
  }
}

// The broad phase's candidates last while every particle stays in the box it was given, drawn in a
// frame that follows the surface when it moves as a whole. A cloth lying at rest on the ground is
// not falling: drawn in a frame that fell with gravity, its particles would leave their boxes
// (1 mm of room here) within a step or two and the search would run again and again. Drawn in a
// frame that stays, they never leave, and one run serves every later step. A second, smaller cloth
// lies on the first, so the candidates kept are real pairs in reach.
TEST(SurfaceBroadPhase, ClothRestingOnTheGroundKeepsItsCandidates) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 12;
  def.sizeX = def.sizeY = 0.2;
  def.origin = Vec3(-0.1, 0.0, -0.1);  // lying in the plane y = 0 (axes x and z)
  def.totalMass = 0.05;
  def.stretch.compliance = 1e-8;
  def.selfCollision = true;
  addClothGrid(b, def);
  ClothGridDef top = def;
  top.name = "top";
  top.nodesX = top.nodesY = 6;
  top.sizeX = top.sizeY = 0.1;
  top.origin = Vec3(-0.043, 0.0021, -0.047);  // on the first, off its grid
  top.totalMass = 0.01;
  addClothGrid(b, top);
  b.model().surfaceThickness = 0.002;
  ContactMaterial ground;
  ground.staticFriction = 0.8;
  ground.dynamicFriction = 0.6;
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.0, 1.0, 0.0), ground));
  Solver solver(b.build(), SolverSettings::smallSteps(10));
  State state = State::fromModel(solver.model());
  for (int step = 0; step < 10; ++step) ASSERT_TRUE(solver.step(state).ok());  // settles on the plane
  int runs = 0;
  double fastest = 0.0;
  for (int step = 0; step < 60; ++step) {
    ASSERT_TRUE(solver.step(state).ok());
    runs += solver.lastSurfaceBroadPhaseRuns();
    for (const Vec3& v : state.velocity) fastest = std::max(fastest, v.norm());
  }
  EXPECT_LT(fastest, 0.05);  // m/s: at rest on the plane (gravity pulls 0.16 m/s in a step)
  // A run or two while the top cloth settles; a frame falling with gravity made 66 in these steps.
  EXPECT_LE(runs, 3);
  EXPECT_GT(solver.lastSurfaceCandidateCount(), 0u);   // there is a search to save: pairs in reach
  EXPECT_GT(solver.lastSurfaceContacts().size(), 0u);  // the top cloth rests on the bottom one
}

// A particle of a resting cloth that leaves its box makes a local update of the broad phase (its
// pairs only), not a run over every triangle (surface_contacts.cpp, updateCandidates): here one
// particle of a 17 x 17 cloth lying on the ground (one in 256 or fewer may) is kicked 1.5 mm up in a
// substep, out of the 1 mm of room its box gives it.
TEST(SurfaceBroadPhase, AParticleKickedOutOfItsBoxIsUpdatedLocally) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 17;
  def.sizeX = def.sizeY = 0.2;
  def.origin = Vec3(-0.1, 0.0, -0.1);  // lying in the plane y = 0
  def.totalMass = 0.05;
  def.stretch.compliance = 1e-8;
  def.selfCollision = true;
  const GeneratedObject cloth = addClothGrid(b, def);
  b.model().surfaceThickness = 0.002;
  ContactMaterial ground;
  ground.staticFriction = 0.8;
  ground.dynamicFriction = 0.6;
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.0, 1.0, 0.0), ground));
  const SolverSettings settings = SolverSettings::smallSteps(10);
  Solver solver(b.build(), settings);
  State state = State::fromModel(solver.model());
  for (int step = 0; step < 10; ++step) ASSERT_TRUE(solver.step(state).ok());  // settles on the plane
  ASSERT_TRUE(solver.step(state).ok());
  EXPECT_EQ(solver.lastSurfaceBroadPhaseRuns(), 0);
  EXPECT_EQ(solver.lastSurfaceBroadPhaseUpdates(), 0);
  const double h = settings.timeStep / settings.substeps;
  const ParticleIndex middle = cloth.firstParticle + 8 * 17 + 8;
  state.velocity[middle] = Vec3(0.0, 0.0015 / h, 0.0);
  ASSERT_TRUE(solver.step(state).ok());
  EXPECT_EQ(solver.lastSurfaceBroadPhaseRuns(), 0);
  EXPECT_GE(solver.lastSurfaceBroadPhaseUpdates(), 1);
}

// The narrow phase's near list (surface_contacts.cpp, collide): while the surface rests, each
// substep box-tests only the candidates whose boxes came within a small gap of each other when the
// list was drawn, as long as no particle's box has moved by half of that gap since. Here a small
// triangle hovers at rest 0.5 mm beyond the reach above a fixed one (no gravity), so its pairs
// are candidates but not on the list. Then it is given a speed that carries it 1.5 mm closer in
// one substep, within its broad-phase box (2.5 mm of room), so the broad phase does not run again:
// only the near list's drift check sees that the list no longer holds, and the contact is made in
// that substep.
TEST(SurfaceBroadPhase, NearListIsDrawnAgainWhenAParticleMovesTowardsAPairLeftOff) {
  ModelBuilder b;
  const double thickness = 0.005;
  SolverSettings settings = SolverSettings::smallSteps(1);
  settings.gravity = Vec3::Zero();
  const double reach = thickness + std::min(settings.contactMargin, 0.25 * thickness);  // surfaceReach
  const double height = reach + 0.0005;
  std::array<ParticleIndex, 3> below{}, above{};
  const std::array<Vec3, 3> belowAt = {Vec3(-0.05, 0.0, -0.05), Vec3(0.05, 0.0, -0.05), Vec3(0.0, 0.0, 0.06)};
  const std::array<Vec3, 3> aboveAt = {Vec3(-0.01, height, -0.01), Vec3(0.01, height, -0.01), Vec3(0.0, height, 0.01)};
  for (int k = 0; k < 3; ++k) {
    below[k] = b.addParticle(belowAt[k], 0.01);
    b.fixParticle(below[k]);
    above[k] = b.addParticle(aboveAt[k], 0.01);
  }
  const std::vector<std::array<ParticleIndex, 3>> triangles = {below, above};
  b.addCollisionTriangles(triangles);
  b.model().surfaceThickness = thickness;
  Solver solver(b.build(), settings);
  State state = State::fromModel(solver.model());
  // At rest: the candidates are found once, the near list drawn, and nothing touches.
  for (int step = 0; step < 4; ++step) {
    ASSERT_TRUE(solver.step(state).ok());
    EXPECT_TRUE(solver.lastSurfaceContacts().empty()) << "step " << step;
  }
  EXPECT_GT(solver.lastSurfaceCandidateCount(), 0u);
  EXPECT_EQ(solver.lastSurfaceBroadPhaseRuns(), 0);
  // 1.5 mm down in the next substep: it ends 1 mm within the reach of the fixed triangle.
  const double h = settings.timeStep / settings.substeps;
  for (ParticleIndex p : above) state.velocity[p] = Vec3(0.0, -0.0015 / h, 0.0);
  ASSERT_TRUE(solver.step(state).ok());
  EXPECT_EQ(solver.lastSurfaceBroadPhaseRuns(), 0);  // the candidates held: the near list decided
  EXPECT_FALSE(solver.lastSurfaceContacts().empty());
  for (ParticleIndex p : above) EXPECT_GT(state.position[p].y(), thickness - 1e-9);
}

}  // namespace
}  // namespace pliant
