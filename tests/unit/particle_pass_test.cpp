// The prediction pass (src/particle_pass.cpp): its AVX2 loop gives the scalar loop's bits in every
// mode (fused velocity update or not, damping, external forces, stored velocities or not), with
// immovable particles anywhere and ranges that start and end inside a group of four.
#include "particle_pass.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace pliant::detail {
namespace {

struct Particles {
  std::vector<Vec3> x, xPrev, v, force;
  std::vector<double> w;
};

Particles randomParticles(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto vec = [&] { return Vec3(u(rng), u(rng), u(rng)); };
  Particles p;
  for (std::size_t i = 0; i < n; ++i) {
    p.x.push_back(vec());
    p.xPrev.push_back(p.x.back() + 0.01 * vec());
    p.v.push_back(vec());
    p.force.push_back(i % 3 == 0 ? Vec3::Zero() : vec());
    // Immovable particles at scattered places, so some groups of four take the scalar path.
    p.w.push_back(i % 11 == 5 || i == 0 ? 0.0 : 0.5 + 0.5 * u(rng));
  }
  return p;
}

// A pass over p's arrays with substep h; the caller sets the mode.
PredictionPass passOver(Particles& p, double h) {
  PredictionPass pass;
  pass.x = p.x.data();
  pass.xPrev = p.xPrev.data();
  pass.v = p.v.data();
  pass.w = p.w.data();
  pass.force = p.force.data();
  pass.h = h;
  pass.invH = 1.0 / h;
  return pass;
}

bool sameBits(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Vec3)) == 0;
}

TEST(PredictionPass, SimdLoopGivesTheScalarBits) {
  const std::size_t n = 103;
  int checked = 0;
  for (bool update : {false, true})
    for (bool store : {false, true})
      for (bool forces : {false, true})
        for (double damping : {1.0, 0.97}) {
          for (auto [begin, end] : {std::pair<std::int64_t, std::int64_t>{0, 103}, {3, 98}, {5, 6}}) {
            SCOPED_TRACE(::testing::Message() << "update " << update << " store " << store << " forces " << forces
                                              << " damping " << damping << " range " << begin << ".." << end);
            Particles scalar = randomParticles(n, 7);
            Particles simd = scalar;
            auto over = [&](Particles& p) {
              PredictionPass pass = passOver(p, 1.0 / 600.0);
              pass.dampingFactor = damping;
              pass.gravity = Vec3(0.1, -9.81, -0.0);
              pass.forces = forces;
              pass.updateVelocities = update;
              pass.storeVelocities = store;
              return pass;
            };
            predictParticles(over(scalar), begin, end, 1);
            predictParticles(over(simd), begin, end, 4);
            EXPECT_TRUE(sameBits(scalar.x, simd.x));
            EXPECT_TRUE(sameBits(scalar.xPrev, simd.xPrev));
            EXPECT_TRUE(sameBits(scalar.v, simd.v));
            ++checked;
          }
        }
  EXPECT_EQ(checked, 48);
}

TEST(PredictionPass, MovesFreeParticlesAndOnlyRecordsImmovableOnes) {
  // One substep from rest under gravity and a force: v = h (g + w f), x += h v, xPrev = x.
  Particles p;
  p.x = {Vec3(0, 1, 0), Vec3(1, 1, 0), Vec3(2, 1, 0), Vec3(3, 1, 0), Vec3(4, 1, 0)};
  p.xPrev = p.x;
  p.v.assign(5, Vec3::Zero());
  p.force.assign(5, Vec3(2.0, 0.0, 0.0));
  p.w = {1.0, 0.0, 0.5, 1.0, 1.0};
  const Particles start = p;
  PredictionPass pass = passOver(p, 0.01);
  pass.gravity = Vec3(0.0, -10.0, 0.0);
  pass.forces = true;
  predictParticles(pass, 0, 5);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(p.xPrev[i], start.x[i]);
    if (p.w[i] == 0.0) {
      EXPECT_EQ(p.x[i], start.x[i]);
      EXPECT_EQ(p.v[i], Vec3::Zero());
      continue;
    }
    const Vec3 velocity = 0.01 * Vec3(2.0 * p.w[i], -10.0, 0.0);
    EXPECT_NEAR((p.v[i] - velocity).norm(), 0.0, 1e-15);
    EXPECT_NEAR((p.x[i] - (start.x[i] + 0.01 * velocity)).norm(), 0.0, 1e-15);
  }
}

}  // namespace
}  // namespace pliant::detail
