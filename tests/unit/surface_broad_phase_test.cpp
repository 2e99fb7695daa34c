// Unit tests of the surface contact broad phase's pair rules (src/core/collision/surface_contacts.cpp):
// a vertex never meets a triangle it is a corner of or joined to by an edge, nor an edge one it
// shares an end with or is joined to, whatever the vertex's valence (the rule's filter per vertex
// has 64 bits: a vertex of 20 neighbours sets many of them and leans on the exact search behind).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>
#include <vector>

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

}  // namespace
}  // namespace pliant
