// The surface broad phase's local update (src/core/collision/surface_contacts.cpp, updateCandidates):
// when a few particles leave their boxes, only the pairs of their triangles and edges are searched
// again. Checked on a cloth folded over itself whose particles are moved by script (no solver):
// every substep most creep, now and then one or two jump out of their boxes, and sometimes a
// quarter of them do (a run over every triangle). The contacts must be those of a broad phase that
// runs over every triangle whenever a particle leaves its box, in the same order and to the bit,
// and the candidates must hold every pair whose substep boxes overlap (the broad phase's
// guarantee). Patches are not skipped here (a test hook), so that both ways test the same pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "collision/surface_contacts.h"
#include "pliant/builders.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "support/scripted_fold.h"

namespace pliant {
namespace {

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

using testing::foldedCloth;
using testing::moveByScript;

void expectSameContacts(const std::vector<SurfaceContact>& a, const std::vector<SurfaceContact>& b, int k) {
  ASSERT_EQ(a.size(), b.size()) << "substep " << k;
  for (std::size_t c = 0; c < a.size(); ++c) {
    ASSERT_EQ(a[c].kind, b[c].kind) << "substep " << k << " contact " << c;
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(a[c].particles[i], b[c].particles[i]) << "substep " << k << " contact " << c;
      ASSERT_TRUE(sameBits(a[c].weights[i], b[c].weights[i])) << "substep " << k << " contact " << c;
    }
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(sameBits(a[c].normal[i], b[c].normal[i])) << "substep " << k;
  }
}

TEST(SurfaceLocalUpdate, MakesTheContactsOfARunOverEveryTriangle) {
  State state;
  const ModelPtr model = foldedCloth(24, state);
  const SolverSettings settings = SolverSettings::smallSteps(10);
  const double h = settings.timeStep / settings.substeps;
  detail::SurfaceContacts local, full;
  for (detail::SurfaceContacts* surface : {&local, &full}) {
    surface->prepare(*model);
    surface->setPatchSkipping(false);
  }
  full.setLocalUpdates(false);
  std::mt19937 random(7);
  int localRuns = 0, localUpdates = 0, fullRuns = 0;
  std::size_t contacts = 0;
  for (int k = 0; k < 60; ++k) {
    if (k > 0) moveByScript(*model, h, state, 24, k, random);
    const int substep = k % settings.substeps;
    local.collide(*model, settings, state, h, substep, k * h, 1);
    full.collide(*model, settings, state, h, substep, k * h, 1);
    ASSERT_TRUE(local.overflow().empty() && full.overflow().empty());
    expectSameContacts(local.contacts(), full.contacts(), k);
    contacts += local.contacts().size();
    if (substep == settings.substeps - 1) {
      localRuns += local.broadPhaseRuns();
      localUpdates += local.broadPhaseUpdates();
      fullRuns += full.broadPhaseRuns();
    }
  }
  EXPECT_GT(contacts, 0u);      // the layers touch
  EXPECT_GT(localUpdates, 10);  // the jumps of one or two particles were updates
  EXPECT_GE(localRuns, 6);      // and those of a quarter of them runs
  EXPECT_EQ(full.broadPhaseUpdates(), 0);
  EXPECT_GT(fullRuns, localRuns + 10);
}

TEST(SurfaceLocalUpdate, KeepsEveryPairWhoseSubstepBoxesOverlap) {
  State state;
  const ModelPtr model = foldedCloth(24, state);
  const SolverSettings settings = SolverSettings::smallSteps(10);
  const double h = settings.timeStep / settings.substeps;
  const double reach = model->surfaceThickness + std::min(settings.contactMargin, 0.25 * model->surfaceThickness);
  // The mesh: its edges, and which particles they join.
  std::set<std::pair<ParticleIndex, ParticleIndex>> joined;
  std::vector<std::array<ParticleIndex, 2>> edges;
  for (const CollisionTriangle& t : model->collisionTriangles)
    for (int k = 0; k < 3; ++k) {
      const ParticleIndex a = std::min(t.particles[k], t.particles[(k + 1) % 3]);
      const ParticleIndex b = std::max(t.particles[k], t.particles[(k + 1) % 3]);
      if (joined.insert({a, b}).second) edges.push_back({a, b});
    }
  auto near = [&](ParticleIndex a, ParticleIndex b) {
    return a == b || joined.count({std::min(a, b), std::max(a, b)}) > 0;
  };
  auto overlaps = [](const detail::Aabb& a, const detail::Aabb& b) { return a.overlaps(b); };
  detail::SurfaceContacts surface;
  surface.prepare(*model);
  surface.setPatchSkipping(false);
  std::mt19937 random(11);
  int updates = 0;
  std::size_t checkedPairs = 0;
  std::vector<detail::Aabb> box(model->particleCount());
  for (int k = 0; k < 40; ++k) {
    if (k > 0) moveByScript(*model, h, state, 24, k, random);
    const int substep = k % settings.substeps;
    surface.collide(*model, settings, state, h, substep, k * h, 1);
    ASSERT_TRUE(surface.overflow().empty());
    if (substep == settings.substeps - 1) updates += surface.broadPhaseUpdates();
    // Each particle's substep box: its path from x^n to the prediction, padded by half the reach.
    for (std::size_t p = 0; p < box.size(); ++p) {
      box[p] = detail::Aabb();
      box[p].add(state.previousPosition[p]);
      box[p].add(state.position[p]);
      box[p].inflate(0.5 * reach);
    }
    for (std::uint32_t t = 0; t < model->collisionTriangles.size(); ++t) {
      const auto& corners = model->collisionTriangles[t].particles;
      detail::Aabb triangleBox = box[corners[0]];
      triangleBox.add(box[corners[1]]);
      triangleBox.add(box[corners[2]]);
      for (ParticleIndex p = 0; p < model->particleCount(); ++p) {
        if (!overlaps(box[p], triangleBox)) continue;
        if (near(p, corners[0]) || near(p, corners[1]) || near(p, corners[2])) continue;
        ++checkedPairs;
        ASSERT_TRUE(surface.vertexTriangleCandidate(p, t)) << "substep " << k << ": vertex " << p << ", triangle " << t;
      }
    }
    for (std::size_t a = 0; a < edges.size(); ++a) {
      detail::Aabb edgeA = box[edges[a][0]];
      edgeA.add(box[edges[a][1]]);
      for (std::size_t b = a + 1; b < edges.size(); ++b) {
        const auto& ea = edges[a];
        const auto& eb = edges[b];
        detail::Aabb edgeB = box[eb[0]];
        edgeB.add(box[eb[1]]);
        if (!overlaps(edgeA, edgeB)) continue;
        if (near(ea[0], eb[0]) || near(ea[0], eb[1]) || near(ea[1], eb[0]) || near(ea[1], eb[1])) continue;
        ++checkedPairs;
        ASSERT_TRUE(surface.edgeEdgeCandidate(ea[0], ea[1], eb[0], eb[1]))
            << "substep " << k << ": edges " << ea[0] << "-" << ea[1] << ", " << eb[0] << "-" << eb[1];
      }
    }
  }
  EXPECT_GT(updates, 5);
  EXPECT_GT(checkedPairs, 1000u);
}

}  // namespace
}  // namespace pliant
