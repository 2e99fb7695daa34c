// V19 (docs/validation.md): restitution passes along a row of particle contacts. A row of touching
// equal balls struck at one end with e = 1 sends the last ball off with the striker's speed and
// leaves the others at rest (Newton's cradle, the closed form of a sequence of elastic impacts of
// equal masses: each exchanges the two velocities). Before the velocity pass resolved the impacts
// in sequence (particle_contacts.cpp), the contacts that the striker's push created within the
// substep bounced with e = 0 and the row kept most of the momentum as a slow lump.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pliant/pliant.h"
#include "scenario_util.h"

namespace pliant {
namespace {

struct CradleResult {
  std::vector<double> speeds;  // m/s along the row, striker first
  double kinetic = 0.0;        // J
};

// `balls` touching balls of radius 5 cm and 1 kg in a row along x, and a striker a gap of 2 cm
// behind the first, moving at `speed` towards it. `reversed` numbers the particles from the far end
// (the contacts are then solved against the direction of the pulse).
CradleResult strike(int balls, double speed, double restitution, int substeps, bool reversed) {
  const double r = 0.05;
  ModelBuilder b;
  std::vector<Vec3> positions;
  positions.emplace_back(-2.0 * r - 0.02, 0.0, 0.0);  // the striker
  for (int k = 0; k < balls; ++k) positions.emplace_back(2.0 * r * k, 0.0, 0.0);
  std::vector<ParticleIndex> order(positions.size());  // the particle at each place along the row
  for (std::size_t k = 0; k < positions.size(); ++k) {
    const std::size_t at = reversed ? positions.size() - 1 - k : k;
    order[at] = b.addParticle(positions[at], 1.0);
  }
  for (ParticleIndex p : order) b.setParticleRadius(p, r);
  b.model().particleContactMaterial = {0.0, 0.0, restitution};
  const ModelPtr model = b.build();
  SolverSettings settings = SolverSettings::smallSteps(substeps);
  settings.gravity = Vec3::Zero();
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  state.velocity[order[0]] = Vec3(speed, 0.0, 0.0);
  // 0.5 s: the striker arrives after 20 ms; the last ball is then well clear of the row.
  EXPECT_TRUE(solver.run(state, 30).ok());
  CradleResult result;
  for (ParticleIndex p : order) result.speeds.push_back(state.velocity[p].x());
  result.kinetic = computeEnergy(*model, state, settings).kinetic;
  return result;
}

TEST(NewtonsCradle, TheLastBallLeavesWithTheStrikersSpeedAtTheBuiltInSubstepCounts) {
  const double v = 1.0;  // m/s
  for (int substeps : {10, 12, 15, 20})
    for (bool reversed : {false, true}) {
      const CradleResult r = strike(5, v, 1.0, substeps, reversed);
      const std::string where = "substeps " + std::to_string(substeps) + (reversed ? ", reversed" : "");
      // Within 1 % of the striker's speed: the impacts are exact exchanges; what is left is the
      // position solve's momentum in the substep of the impact, up to the 2 cm gap's rounding.
      EXPECT_NEAR(r.speeds.back(), v, 0.01 * v) << where;
      for (std::size_t k = 0; k + 1 < r.speeds.size(); ++k)
        EXPECT_NEAR(r.speeds[k], 0.0, 0.01 * v) << where << " ball " << k;
      EXPECT_NEAR(r.kinetic, 0.5 * v * v, 0.02 * 0.5 * v * v) << where;
    }
}

TEST(NewtonsCradle, MomentumIsConservedAndAPerfectlyInelasticRowMovesTogether) {
  // e = 0: no bounce anywhere; the momentum m v is kept, no ball ends faster than the one ahead of
  // it (no pair still approaching) and kinetic energy was lost.
  const CradleResult r = strike(4, 2.0, 0.0, 15, false);
  double momentum = 0.0;
  for (double s : r.speeds) momentum += s;
  EXPECT_NEAR(momentum, 2.0, 1e-9);
  for (std::size_t k = 0; k + 1 < r.speeds.size(); ++k) EXPECT_LE(r.speeds[k], r.speeds[k + 1] + 1e-6) << k;
  EXPECT_LT(r.kinetic, 0.5 * 2.0 * 2.0);
}

}  // namespace
}  // namespace pliant
