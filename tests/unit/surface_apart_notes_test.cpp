// The surface narrow phase's notes of candidates known to be apart (surface_contacts.cpp,
// collide): a candidate that made nothing is dropped after the box test while its particles have
// not moved (summed) by the room its note measured, so the contacts must be those of a narrow
// phase that tests every candidate, in the same order and to the bit. A folded cloth moved by
// script (tests/support/scripted_fold.h) slowly enough that the notes are made: its top layer
// sinks onto the bottom one (pairs noted apart come within reach and make contacts), two particles
// jump towards each other, one vertex is not finite for a substep.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "collision/surface_contacts.h"
#include "pliant/builders.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "support/scripted_fold.h"

namespace pliant {
namespace {

bool sameBits(const double* a, const double* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(double)) == 0; }

// Substep k of the script: the top layer sinks straight down by 0.04 mm (3 mm between the layers:
// it comes within the other one's reach in the run), so that the distance of a top vertex to a
// bottom triangle falls by exactly the vertex's travel (the notes' bound is then tight: a note
// that counts a particle's motion short drops a candidate that makes a contact); at k % 9 == 4
// every particle of the bottom layer creeps by up to 0.01 mm along each axis; at k == 40 two
// particles five rows apart jump to 4 mm from each other; at k == 60 a vertex is not finite (and
// at 61 back). The kinematic corner follows its path.
void moveSlowly(const Model& model, double h, State& state, int n, int k, std::mt19937& random) {
  std::uniform_real_distribution<double> creep(-1e-5, 1e-5);
  state.previousPosition = state.position;
  for (std::size_t p = 0; p < state.position.size(); ++p) {
    if (state.position[p].y() > model.initialPosition[p].y() + 1e-3) state.position[p].y() -= 4e-5;
    else if (k % 9 == 4) state.position[p] += Vec3(creep(random), creep(random), creep(random));
  }
  if (k == 40) {
    const std::size_t p = 3 * static_cast<std::size_t>(n) + 5, q = p + 5 * static_cast<std::size_t>(n);
    const Vec3 towards = (state.position[q] - state.position[p]).normalized();
    const double apart = (state.position[q] - state.position[p]).norm();
    state.position[p] += 0.5 * (apart - 0.004) * towards;
    state.position[q] -= 0.5 * (apart - 0.004) * towards;
  }
  if (k == 60) state.position[500].x() = std::numeric_limits<double>::quiet_NaN();
  if (k == 61) state.position[500] = state.previousPosition[501];
  for (const KinematicParticle& kinematic : model.kinematicParticles) {
    state.previousPosition[kinematic.particle] = kinematic.path(k * h);
    state.position[kinematic.particle] = kinematic.path((k + 1) * h);
  }
}

TEST(SurfaceApartNotes, DroppedCandidatesWouldHaveMadeNothing) {
  constexpr int kNodes = 32;
  constexpr int kSubsteps = 100;
  State start;
  const ModelPtr model = testing::foldedCloth(kNodes, start);
  const SolverSettings settings = SolverSettings::smallSteps(kSubsteps);
  const double h = settings.timeStep / settings.substeps;
  std::vector<std::vector<SurfaceContact>> contacts[2];
  std::uint64_t dropped[2] = {0, 0};
  for (bool notes : {false, true}) {
    State state = start;
    detail::SurfaceContacts surface;
    surface.prepare(*model);
    surface.setApartNotes(notes);
    std::mt19937 random(11);
    for (int k = 0; k < kSubsteps; ++k) {
      if (k > 0) moveSlowly(*model, h, state, kNodes, k, random);
      surface.collide(*model, settings, state, h, k, k * h, 1);
      ASSERT_TRUE(surface.overflow().empty());
      contacts[notes ? 1 : 0].push_back(surface.contacts());
    }
    dropped[notes ? 1 : 0] = surface.apartDropped();
  }
  EXPECT_EQ(dropped[0], 0u);
  EXPECT_GT(dropped[1], 20000u);  // the notes were made, and dropped candidates
  // The sinking layer made contacts that the first substeps did not have.
  EXPECT_GT(contacts[0].back().size(), contacts[0].front().size() + 100);
  for (std::size_t k = 0; k < contacts[0].size(); ++k) {
    const std::vector<SurfaceContact>& all = contacts[0][k];
    const std::vector<SurfaceContact>& noted = contacts[1][k];
    ASSERT_EQ(all.size(), noted.size()) << "substep " << k;
    for (std::size_t c = 0; c < all.size(); ++c) {
      const SurfaceContact &a = all[c], &b = noted[c];
      ASSERT_TRUE(a.kind == b.kind && std::equal(a.particles, a.particles + 4, b.particles) &&
                  sameBits(a.weights, b.weights, 4) && sameBits(a.normal.data(), b.normal.data(), 3) &&
                  sameBits(&a.allowance, &b.allowance, 1) && sameBits(&a.normalVelocity, &b.normalVelocity, 1))
          << "substep " << k << " contact " << c;
    }
  }
}

// A vertex over a triangle's face, along a normal that is no axis (so that the box test passes
// while the vertex is farther than the notes' meeting distance), comes down slowly, then fast: the
// note made while it was slow must end in the first fast substep, whose prediction comes within
// the reach. Or it comes down slowly all the way: the note must end before the vertex comes
// within the reach. The bound is tight here (the triangle stays, the vertex moves straight at
// it): a note that leaves out a substep's own motion, or counts the moves of the substeps' starts
// short, drops the candidate where it makes a contact.
TEST(SurfaceApartNotes, ANoteEndsWithTheSubstepThatComesWithinReach) {
  const Vec3 normal = Vec3(1.0, 1.0, 1.0).normalized();
  const Vec3 u = Vec3(1.0, -1.0, 0.0).normalized(), w = normal.cross(u);
  ModelBuilder b;
  const ParticleIndex a0 = b.addParticle(-0.02 * u - 0.02 * w, 0.01);
  const ParticleIndex a1 = b.addParticle(0.04 * u - 0.02 * w, 0.01);
  const ParticleIndex a2 = b.addParticle(-0.02 * u + 0.04 * w, 0.01);
  const Vec3 tip = 0.0061 * normal;  // 6.1 mm over the face; the reach is 5 mm
  const ParticleIndex b0 = b.addParticle(tip, 0.01);
  const ParticleIndex b1 = b.addParticle(tip + 0.03 * normal + 0.01 * u, 0.01);
  const ParticleIndex b2 = b.addParticle(tip + 0.03 * normal + 0.01 * w, 0.01);
  const std::array<ParticleIndex, 3> triangles[2] = {{a0, a1, a2}, {b0, b1, b2}};
  b.addCollisionTriangles(triangles);
  b.model().surfaceThickness = 0.004;
  const ModelPtr model = b.build();
  const SolverSettings settings = SolverSettings::smallSteps(10);
  ASSERT_EQ(settings.contactMargin, 0.005);  // the reach: 4 mm + min(5 mm, 1 mm)
  const double h = settings.timeStep / settings.substeps;
  for (const bool fastEnd : {true, false}) {
    SCOPED_TRACE(fastEnd ? "slowly, then fast" : "slowly");
    std::vector<std::size_t> counts[2];
    std::uint64_t dropped = 0;
    const int substeps = fastEnd ? 34 : 80;
    for (bool notes : {false, true}) {
      State state = State::fromModel(*model);
      detail::SurfaceContacts surface;
      surface.prepare(*model);
      surface.setApartNotes(notes);
      for (int k = 0; k < substeps; ++k) {
        // 0.02 mm a substep (for 30 substeps, to 5.5 mm, then 0.6 mm).
        state.previousPosition = state.position;
        if (k > 0)
          for (ParticleIndex p : {b0, b1, b2}) state.position[p] -= (fastEnd && k > 30 ? 6e-4 : 2e-5) * normal;
        surface.collide(*model, settings, state, h, k % settings.substeps, k * h, 1);
        ASSERT_TRUE(surface.overflow().empty());
        counts[notes ? 1 : 0].push_back(surface.contacts().size());
      }
      if (notes) dropped = surface.apartDropped();
    }
    EXPECT_GT(dropped, 20u);
    if (fastEnd) {
      EXPECT_EQ(counts[0][30], 0u);
      EXPECT_GT(counts[0][31], 0u);
    } else {
      EXPECT_GT(counts[0].back(), 0u);  // 4.5 mm over the face at the end
    }
    EXPECT_EQ(counts[0], counts[1]);
  }
}

}  // namespace
}  // namespace pliant
