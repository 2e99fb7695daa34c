// The collider contacts' screen four particles at a time (collider_contacts.cpp, screenQuad) against
// the one at a time: the same contacts, to the bit, on the cases where a lane could differ (a lane
// that left out a pair the one-at-a-time screen lists would lose its contact).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "collision/collider_contacts.h"
#include "pliant/colliders.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(ColliderScreen, FourAtATimeFindsTheContactsOfOneAtATime) {
  // Particles around a ground plane and a sphere: far, within the margin, inside, exactly at the
  // margin, crossing in one substep, fixed, with and without radius, and non-finite positions;
  // a count that leaves a tail after the groups of four.
  const double margin = SolverSettings{}.contactMargin;
  const double h = 1.0 / 600.0;
  const Vec3 centre(0.3, 0.5, -0.2);
  const double sphereRadius = 0.4;
  std::mt19937 random(7);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<Vec3> start, end;
  std::vector<double> inverseMass, radius;
  auto add = [&](const Vec3& from, const Vec3& to, double w, double r) {
    start.push_back(from);
    end.push_back(to);
    inverseMass.push_back(w);
    radius.push_back(r);
  };
  for (int k = 0; k < 400; ++k) {
    const Vec3 x(unit(random), 0.02 * (unit(random) + 1.0), unit(random));  // near the plane
    add(x, x + Vec3(0.0, 0.01 * unit(random), 0.0), 1.0, 0.005 * (k % 3));
    const Vec3 dir = Vec3(unit(random), unit(random), unit(random)).normalized();
    const Vec3 onSphere = centre + (sphereRadius + 0.01 * unit(random)) * dir;  // near the sphere
    add(onSphere + 0.02 * dir, onSphere, k % 7 == 0 ? 0.0 : 1.0, 0.004);
  }
  // Exactly at the margin above the plane, still, so the bound on the path decides nothing.
  add(Vec3(0.1, margin, 0.0), Vec3(0.1, margin, 0.0), 1.0, 0.0);
  add(Vec3(0.2, margin, 0.0), Vec3(0.2, std::nextafter(margin, 0.0), 0.0), 1.0, 0.0);
  // Fast: from above the plane through it in one substep, and through the sphere.
  add(Vec3(0.0, 0.5, 0.0), Vec3(0.0, -0.5, 0.0), 1.0, 0.01);
  add(centre + Vec3(1.0, 0.0, 0.0), centre - Vec3(1.0, 0.0, 0.0), 1.0, 0.0);
  // Non-finite positions.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  add(Vec3(0.0, 0.1, 0.0), Vec3(nan, 0.0, 0.0), 1.0, 0.0);
  add(Vec3(0.0, 0.1, 0.0), Vec3(0.0, std::numeric_limits<double>::infinity(), 0.0), 1.0, 0.0);
  add(Vec3(nan, 0.1, 0.0), Vec3(0.0, 0.001, 0.0), 1.0, 0.0);
  add(Vec3(0.0, 0.002, 0.0), Vec3(0.0, 0.001, 0.0), 1.0, 0.0);  // a tail after the groups of four
  add(Vec3(0.1, 0.002, 0.0), Vec3(0.1, 0.001, 0.0), 1.0, 0.0);
  ASSERT_NE(start.size() % 4, 0u);

  auto model = std::make_shared<Model>();
  model->inverseMass = inverseMass;
  model->initialPosition = start;
  model->particleRadius = radius;
  model->colliders.push_back(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.5, 0.4, 0.2}));
  model->colliders.push_back(Collider::sphere(centre, sphereRadius, {0.3, 0.2, 0.0}));
  State state;
  state.previousPosition = start;
  state.position = end;
  state.velocity.assign(start.size(), Vec3(0.0, -1.0, 0.0));
  SolverSettings settings;

  std::vector<std::vector<Contact>> found;
  for (bool lanes : {false, true}) {
    detail::ColliderContacts contacts;
    contacts.prepare(*model);
    contacts.setScreenLanes(lanes);
    contacts.updatePoses(*model, 0.0, h);
    contacts.collide(*model, settings, state, h);
    found.push_back(contacts.contacts());
  }
  ASSERT_GT(found[0].size(), 200u);
  ASSERT_EQ(found[0].size(), found[1].size());
  for (std::size_t k = 0; k < found[0].size(); ++k) {
    const Contact &a = found[0][k], &b = found[1][k];
    EXPECT_EQ(a.particle, b.particle) << k;
    EXPECT_EQ(a.collider, b.collider) << k;
    EXPECT_TRUE(sameBits(a.allowance, b.allowance)) << k;
    EXPECT_TRUE(sameBits(a.normalVelocity, b.normalVelocity)) << k;
  }
}

}  // namespace
}  // namespace pliant
