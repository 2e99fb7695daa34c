// Determinism with surface contact (cloth self-collision and cloth-cloth collision): the built-in
// self-collision scenes give bit-identical states when run twice and with thread counts 1 and 2; a
// copied state continues identically in a fresh solver, although the solver keeps surface candidate
// pairs across steps (surface_contacts.cpp: the contacts made from them depend on the positions
// only); and a cloth large enough for the threaded per-particle loops is identical for 1 and 2
// threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collision/surface_contacts.h"
#include "determinism/crossed_cloths.h"
#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/io/scenes.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "support/scripted_fold.h"

namespace pliant {
namespace {

std::vector<std::uint64_t> hashes(const Scene& scene, int frames) {
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  std::vector<std::uint64_t> out;
  for (int f = 0; f < frames; ++f) {
    const StepResult r = solver.step(state);
    EXPECT_TRUE(r.ok()) << r.message;
    out.push_back(state.hash());
  }
  return out;
}

class SelfCollisionDeterminism : public ::testing::TestWithParam<std::string> {};

TEST_P(SelfCollisionDeterminism, TwoRunsAndThreadCountsOneAndTwoAreBitIdentical) {
  const Scene scene = makeBuiltinScene(GetParam());
  ASSERT_TRUE(scene.model->selfCollision);
  const int saved = threadCount();
  setThreadCount(1);
  const std::vector<std::uint64_t> first = hashes(scene, 55);
  const std::vector<std::uint64_t> second = hashes(scene, 55);
  setThreadCount(2);
  const std::vector<std::uint64_t> twoThreads = hashes(scene, 55);
  setThreadCount(saved);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first, twoThreads);
  EXPECT_NE(first.front(), first.back());
}

TEST_P(SelfCollisionDeterminism, CopiedStateContinuesIdenticallyInAFreshSolver) {
  const Scene scene = makeBuiltinScene(GetParam());
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  ASSERT_TRUE(solver.run(state, 45).ok());
  State copy = state;
  Solver fresh(scene.model, scene.settings);
  std::size_t contacts = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(solver.step(state).ok());
    ASSERT_TRUE(fresh.step(copy).ok());
    ASSERT_EQ(copy.hash(), state.hash()) << "step " << 46 + i;
    contacts = std::max(contacts, solver.lastSurfaceContacts().size());
  }
  EXPECT_GT(contacts, 0u);  // surface contacts were acting while the two were compared
}

INSTANTIATE_TEST_SUITE_P(BuiltinScenes, SelfCollisionDeterminism, ::testing::Values("cloth-fold", "two-cloths"),
                         [](const auto& param) {
                           std::string name = param.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// Two crossed self-colliding cloths (crossed_cloths.h) of nodes x nodes at heights lower and upper
// (m), 4 mm thick, without particle contacts, over a plane.
ModelPtr crossedSelfCollidingCloths(int nodes, double lower, double upper) {
  ModelBuilder b;
  addCrossedCloths(b, nodes, lower, upper, 0.002, true);
  b.model().particleCollisions = false;
  b.model().surfaceThickness = 0.004;
  b.model().surfaceContactMaterial = {0.3, 0.3, 0.0};
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.0, 1.0, 0.0), {0.3, 0.2, 0.0}));
  return b.build();
}

TEST(SelfCollisionDeterminismLarge, ThreadedParticleLoopsDoNotChangeTheResult) {
  // Above 16384 particles the per-particle loops run on threads; the surface contact stages read
  // what they wrote, and the broad phase splits its queries over threads; the hash must be the
  // same for any thread count. Two cloths, one lying on a plane and one falling onto it, crossed.
  const ModelPtr model = crossedSelfCollidingCloths(93, 0.002, 0.012);
  ASSERT_GT(model->particleCount(), 16384u);
  const int saved = threadCount();
  std::vector<std::uint64_t> result;
  // The collider contacts, found by the threads in shares of the particles, in (particle, collider)
  // order whatever the split.
  std::vector<std::vector<std::pair<ParticleIndex, std::int32_t>>> colliderContacts;
  for (int threads : {1, 2}) {
    setThreadCount(threads);
    SolverSettings s = SolverSettings::smallSteps(4);
    Solver solver(model, s);
    State state = State::fromModel(*model);
    EXPECT_TRUE(solver.run(state, 4).ok());
    EXPECT_GT(solver.lastSurfaceContacts().size(), 1000u);
    result.push_back(state.hash());
    colliderContacts.emplace_back();
    for (const Contact& c : solver.lastColliderContacts()) colliderContacts.back().emplace_back(c.particle, c.collider);
  }
  setThreadCount(saved);
  EXPECT_EQ(result[0], result[1]);
  EXPECT_GT(colliderContacts[0].size(), 1000u);
  EXPECT_TRUE(std::is_sorted(colliderContacts[1].begin(), colliderContacts[1].end()));
  EXPECT_EQ(colliderContacts[0], colliderContacts[1]);
}

// Without local updates' candidates the narrow phase's contacts stay in its threads' lists, chunk
// by chunk, and are projected there (surface_contacts.cpp); lastSurfaceContacts joins them when
// first read after a step. Two crossed cloths (4,608 particles, enough for the narrow phase to
// split) falling onto a plane: the contacts read after each step, their multipliers and friction
// to the bit, are those of one thread, and two threads reading at once both get them (under
// ThreadSanitizer: without a data race).
TEST(SelfCollisionDeterminismLarge, SurfaceContactsKeptPerThreadReadAsOneList) {
  const ModelPtr model = crossedSelfCollidingCloths(48, 0.004, 0.0075);
  const int saved = threadCount();
  // Per step: each contact's particles, multiplier and friction.
  using Values = std::vector<std::array<double, 8>>;
  auto values = [](const std::vector<SurfaceContact>& contacts) {
    Values out;
    for (const SurfaceContact& c : contacts)
      out.push_back({static_cast<double>(c.particles[0]), static_cast<double>(c.particles[1]),
                     static_cast<double>(c.particles[2]), static_cast<double>(c.particles[3]), c.lambda, c.friction.x(),
                     c.friction.y(), c.friction.z()});
    return out;
  };
  std::vector<std::vector<Values>> steps;
  for (int threads : {1, 2}) {
    setThreadCount(threads);
    Solver solver(model, SolverSettings::smallSteps(4));
    State state = State::fromModel(*model);
    steps.emplace_back();
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(solver.step(state).ok());
      steps.back().push_back(values(solver.lastSurfaceContacts()));
    }
    if (threads == 2) {
      ASSERT_TRUE(solver.step(state).ok());
      Values read[2];
      auto reader = [&](int k) { read[k] = values(solver.lastSurfaceContacts()); };
      std::thread first(reader, 0), second(reader, 1);
      first.join();
      second.join();
      EXPECT_GT(read[0].size(), 1000u);
      EXPECT_EQ(read[0], values(solver.lastSurfaceContacts()));
      EXPECT_EQ(read[1], read[0]);
    }
  }
  setThreadCount(saved);
  for (std::size_t i = 0; i < steps[0].size(); ++i) {
    EXPECT_GT(steps[0][i].size(), 1000u) << "step " << i;
    EXPECT_TRUE(std::equal(steps[0][i].begin(), steps[0][i].end(), steps[1][i].begin(), steps[1][i].end(),
                           [](const auto& x, const auto& y) { return std::memcmp(&x, &y, sizeof(x)) == 0; }))
        << "step " << i;
  }
}

// The surface broad phase's local updates (surface_contacts.cpp) run on the calling thread, its
// runs over every triangle and the narrow phase on the team: a folded 48 x 48 cloth (2,304
// particles, enough for both to split) moved by script, with particles jumping out of their boxes,
// gets the same contacts in the same order, to the bit, from teams of 1, 2 and 3 threads (patches
// are not skipped, a test hook: the jumps turn triangles over, and every cone that no longer holds
// would send the broad phase to a run instead).
TEST(SelfCollisionDeterminismLarge, LocalUpdatesGiveTheSameContactsOnAnyTeam) {
  State start;
  const ModelPtr model = testing::foldedCloth(48, start);
  const SolverSettings settings = SolverSettings::smallSteps(10);
  const double h = settings.timeStep / settings.substeps;
  std::vector<std::vector<SurfaceContact>> first;
  int updates = 0;
  for (int team : {1, 2, 3}) {
    SCOPED_TRACE("team " + std::to_string(team));
    State state = start;
    detail::SurfaceContacts surface;
    surface.prepare(*model);
    surface.setPatchSkipping(false);  // the jumps turn triangles over: skipped patches would run again
    std::mt19937 random(5);
    for (int k = 0; k < 40; ++k) {
      if (k > 0) testing::moveByScript(*model, h, state, 48, k, random);
      const int substep = k % settings.substeps;
      surface.collide(*model, settings, state, h, substep, k * h, team);
      ASSERT_TRUE(surface.overflow().empty());
      if (team == 1 && substep == settings.substeps - 1) updates += surface.broadPhaseUpdates();
      const std::vector<SurfaceContact>& contacts = surface.contacts();
      if (team == 1) {
        first.push_back(contacts);
        continue;
      }
      const std::vector<SurfaceContact>& expected = first[static_cast<std::size_t>(k)];
      ASSERT_EQ(contacts.size(), expected.size()) << "substep " << k;
      auto same = [](const double* a, const double* b, std::size_t n) {
        return std::memcmp(a, b, n * sizeof(double)) == 0;
      };
      for (std::size_t c = 0; c < contacts.size(); ++c) {
        const SurfaceContact &a = contacts[c], &b = expected[c];
        ASSERT_TRUE(a.kind == b.kind && std::equal(a.particles, a.particles + 4, b.particles) &&
                    same(a.weights, b.weights, 4) && same(a.normal.data(), b.normal.data(), 3) &&
                    same(&a.inverseMassSum, &b.inverseMassSum, 1) && same(&a.allowance, &b.allowance, 1) &&
                    same(&a.normalVelocity, &b.normalVelocity, 1))
            << "substep " << k << " contact " << c;
      }
    }
  }
  EXPECT_GT(updates, 5);
  std::size_t contacts = 0;
  for (const auto& list : first) contacts += list.size();
  EXPECT_GT(contacts, 1000u);
}

}  // namespace
}  // namespace pliant
