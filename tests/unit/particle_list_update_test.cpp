// The particle-pair candidate list's local update (detail::ParticleContacts,
// particle_contacts.cpp): when a few particles leave the skin, only they are listed again and
// their pairs searched again. The list then differs from a rebuild's, but the contacts made from
// it must be exactly a rebuild's, in the same order, substep after substep: checked on two thick
// crossed cloths draping over a sphere (pairs in every substep) and on particles thrown through a
// resting cloth (a few fast movers: the updates' own case), each state fed to a contact stage
// that updates and one that always rebuilds.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "collision/particle_contacts.h"
#include "determinism/crossed_cloths.h"
#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

bool sameContacts(const std::vector<Contact>& a, const std::vector<Contact>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].particle != b[k].particle || a[k].other != b[k].other ||
        std::memcmp(&a[k].allowance, &b[k].allowance, sizeof(double)) != 0 ||
        std::memcmp(&a[k].normalVelocity, &b[k].normalVelocity, sizeof(double)) != 0)
      return false;
  return true;
}

struct Totals {
  std::uint64_t substeps = 0, contacts = 0;
};

// Steps `model` and, at the end of every substep, finds the pairs of that state with both stages
// (`team` threads each); expects the same contacts every time.
Totals compareStages(const ModelPtr& model, const SolverSettings& settings, int steps, int team,
                     detail::ParticleContacts& updating, detail::ParticleContacts& rebuilding) {
  updating.prepare(*model);
  rebuilding.prepare(*model);
  rebuilding.setLocalUpdates(false);
  Solver solver(model, settings);
  Totals totals;
  const double h = settings.timeStep / settings.substeps;
  solver.setSubstepObserver([&](const State& state) {
    updating.collide(*model, settings, state, h, team);
    rebuilding.collide(*model, settings, state, h, team);
    ++totals.substeps;
    totals.contacts += rebuilding.contacts().size();
    EXPECT_TRUE(sameContacts(updating.contacts(), rebuilding.contacts()))
        << "substep " << totals.substeps << ": " << updating.contacts().size() << " against "
        << rebuilding.contacts().size() << " contacts";
  });
  State state = State::fromModel(*model);
  for (int i = 0; i < steps; ++i) EXPECT_TRUE(solver.step(state).ok());
  return totals;
}

TEST(ParticleListUpdate, ContactsAreThoseOfARebuildInEverySubstep) {
  // Two thick crossed cloths (radius just under half the spacing) dropped onto a sphere: they
  // drape over it, their parts sliding against each other.
  ModelBuilder b;
  addCrossedCloths(b, 24, 0.25, 0.27, 0.02, false);
  b.addCollider(Collider::sphere(Vec3(0.0, 0.0, 0.0), 0.2, {0.3, 0.2, 0.0}));
  const ModelPtr model = b.build();
  for (int team : {1, 2}) {
    SCOPED_TRACE(team);
    detail::ParticleContacts updating, rebuilding;
    const Totals totals = compareStages(model, SolverSettings::smallSteps(8), 60, team, updating, rebuilding);
    EXPECT_GT(totals.contacts, 100 * totals.substeps);  // pairs in every substep
    EXPECT_GT(updating.listUpdates(), 10u);
    EXPECT_LT(updating.listRebuilds(), rebuilding.listRebuilds());
  }
}

TEST(ParticleListUpdate, FastParticlesThroughARestingClothAreFoundAlike) {
  // A cloth resting on a plane, and three heavy particles thrown across and into it: each leaves
  // the skin in nearly every substep while the rest stays, and meets the cloth's particles.
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = cloth.nodesY = 24;
  cloth.sizeX = cloth.sizeY = 0.5;
  cloth.origin = Vec3(-0.25, 0.011, -0.25);
  const GeneratedObject c = addClothGrid(b, cloth);
  b.setParticleRadius(c.firstParticle, c.particleCount, 0.01);
  for (int k = 0; k < 3; ++k) {
    const ParticleIndex p = b.addParticle(Vec3(-0.3, 0.05 + 0.02 * k, -0.1 + 0.1 * k), 0.5, Vec3(3.0, -1.0, 0.2 * k));
    b.setParticleRadius(p, 0.015);
  }
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.0, 1.0, 0.0), {0.6, 0.5, 0.0}));
  const ModelPtr model = b.build();
  detail::ParticleContacts updating, rebuilding;
  const Totals totals = compareStages(model, SolverSettings::smallSteps(8), 30, 1, updating, rebuilding);
  EXPECT_GT(totals.contacts, 0u);
  EXPECT_GT(updating.listUpdates(), 20u);
  EXPECT_LT(updating.listRebuilds(), rebuilding.listRebuilds());
}

}  // namespace
}  // namespace pliant
