// The surface narrow phase's vertex-triangle candidates screened four at a time
// (surface_contacts.cpp, vertexTriangleMayMake4) against one at a time: the same contacts in the
// same order, to the bit. A folded cloth moved by script (tests/support/scripted_fold.h): layers
// 3 mm apart in a 4 mm thick cloth (vertices within the reach of the other layer's triangles, and
// beyond it but separated), particles jumping out of their boxes, one triangle collapsed to a line
// and one vertex not finite.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "collision/surface_contacts.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "support/scripted_fold.h"

namespace pliant {
namespace {

bool sameBits(const double* a, const double* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(double)) == 0; }

TEST(SurfaceVertexLanes, FourAtATimeMakesTheContactsOfOneAtATime) {
  State start;
  const ModelPtr model = testing::foldedCloth(32, start);
  const SolverSettings settings = SolverSettings::smallSteps(10);
  const double h = settings.timeStep / settings.substeps;
  std::vector<std::vector<SurfaceContact>> contacts[2];
  for (bool lanes : {false, true}) {
    State state = start;
    detail::SurfaceContacts surface;
    surface.prepare(*model);
    surface.setVertexLanes(lanes);
    std::mt19937 random(7);
    for (int k = 0; k < 30; ++k) {
      if (k > 0) testing::moveByScript(*model, h, state, 32, k, random);
      if (k == 12) {  // a collapsed triangle (two corners at one point) and a vertex not finite
        state.position[41] = state.position[40];
        state.position[700].y() = std::numeric_limits<double>::quiet_NaN();
      }
      if (k == 13) state.position[700] = state.previousPosition[699];
      surface.collide(*model, settings, state, h, k % settings.substeps, k * h, 1);
      ASSERT_TRUE(surface.overflow().empty());
      contacts[lanes ? 1 : 0].push_back(surface.contacts());
    }
  }
  std::size_t total = 0;
  for (std::size_t k = 0; k < contacts[0].size(); ++k) {
    const std::vector<SurfaceContact>& one = contacts[0][k];
    const std::vector<SurfaceContact>& four = contacts[1][k];
    ASSERT_EQ(one.size(), four.size()) << "substep " << k;
    total += one.size();
    for (std::size_t c = 0; c < one.size(); ++c) {
      const SurfaceContact &a = one[c], &b = four[c];
      ASSERT_TRUE(a.kind == b.kind && std::equal(a.particles, a.particles + 4, b.particles) &&
                  sameBits(a.weights, b.weights, 4) && sameBits(a.normal.data(), b.normal.data(), 3) &&
                  sameBits(&a.allowance, &b.allowance, 1) && sameBits(&a.normalVelocity, &b.normalVelocity, 1))
          << "substep " << k << " contact " << c;
    }
  }
  EXPECT_GT(total, 1000u);
}

}  // namespace
}  // namespace pliant
