// The surface broad phase's normal cones found four triangles at a time (surface_contacts.cpp,
// leafNormals4) against one at a time: the same patches skipped, the same candidates and the same
// contacts, to the bit, on a crumpled cloth where some leaves' cones are narrow and others are not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "collision/surface_contacts.h"
#include "pliant/builders.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(SurfaceConeLanes, FourAtATimeSkipsWhatOneAtATimeSkips) {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = cloth.nodesY = 33;
  cloth.sizeX = cloth.sizeY = 0.5;
  cloth.selfCollision = true;
  const GeneratedObject object = addClothGrid(b, cloth);
  b.model().surfaceThickness = 0.004;
  const ModelPtr model = b.build();
  // A cloth folded over on itself along a wavy line (flat parts whose cones are narrow, a crease
  // whose cones are not, layers within the thickness), moving a little within the substep; one
  // triangle collapsed to a line (no normal) and one corner not finite.
  std::mt19937 random(3);
  std::uniform_real_distribution<double> jitter(-1e-4, 1e-4);
  State state = State::fromModel(*model);
  for (ParticleIndex p = object.firstParticle; p < object.firstParticle + object.particleCount; ++p) {
    const Vec3 rest = model->initialPosition[p];
    const double fold = 0.25 + 0.03 * std::sin(12.0 * rest.z());
    Vec3 x = rest;
    if (rest.x() > fold) x = Vec3(2.0 * fold - rest.x(), rest.y() + 0.003 + 0.02 * (rest.x() - fold), rest.z());
    state.previousPosition[p] = x;
    state.position[p] = x + Vec3(jitter(random), jitter(random) - 2e-4, jitter(random));
  }
  const ParticleIndex corner = object.firstParticle + 40;
  state.position[corner + 1] = state.position[corner];
  state.previousPosition[corner + 1] = state.previousPosition[corner];
  state.position[object.firstParticle + 500].x() = std::numeric_limits<double>::quiet_NaN();
  const SolverSettings settings = SolverSettings::smallSteps(10);
  const double h = settings.timeStep / settings.substeps;

  std::vector<std::size_t> skipped, candidates;
  std::vector<std::vector<SurfaceContact>> contacts;
  for (bool lanes : {false, true}) {
    detail::SurfaceContacts surface;
    surface.prepare(*model);
    surface.setConeLanes(lanes);
    surface.collide(*model, settings, state, h, 0, 0.0, 1);
    skipped.push_back(surface.skippedTriangles());
    candidates.push_back(surface.candidateCount());
    contacts.push_back(surface.contacts());
  }
  EXPECT_GT(skipped[0], 0u);
  EXPECT_LT(skipped[0], model->collisionTriangles.size());  // the crease is searched
  EXPECT_GT(candidates[0], 0u);
  EXPECT_GT(contacts[0].size(), 0u);
  EXPECT_EQ(skipped[0], skipped[1]);
  EXPECT_EQ(candidates[0], candidates[1]);
  ASSERT_EQ(contacts[0].size(), contacts[1].size());
  for (std::size_t k = 0; k < contacts[0].size(); ++k) {
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(contacts[0][k].particles[i], contacts[1][k].particles[i]);
      EXPECT_TRUE(sameBits(contacts[0][k].weights[i], contacts[1][k].weights[i]));
    }
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(sameBits(contacts[0][k].normal[i], contacts[1][k].normal[i]));
  }
}

}  // namespace
}  // namespace pliant
