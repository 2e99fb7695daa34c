// Unit tests of the constraint families' evaluators (src/constraints/*.cpp): every analytic
// gradient against central finite differences of C, the invariances the gradients must have, and
// the values of C on configurations whose answer is known in closed form.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "constraints/families.h"
#include "pliant/builders.h"
#include "pliant/model.h"

namespace pliant {
namespace {

struct Evaluation {
  double value = 0.0;
  std::vector<ParticleIndex> particles;
  std::vector<Vec3> gradient;
};

Evaluation evaluate(const Model& model, const std::vector<Vec3>& x, const std::vector<Vec3>& targets,
                    ConstraintRef ref) {
  Evaluation e;
  e.value =
      detail::familyKernels(ref.family).evaluate(model, x.data(), targets.data(), ref.index, e.particles, e.gradient);
  return e;
}

double gradientNorm(const Evaluation& e) {
  double sum = 0.0;
  for (const Vec3& g : e.gradient) sum += g.squaredNorm();
  return std::sqrt(sum);
}

// Compares the analytic gradient with central differences dC/dx ~ (C(x+s) - C(x-s)) / 2s, to a
// relative 1e-6 of the gradient's norm (truncation O(s^2) and round-off O(eps/s) are far below).
void expectGradientMatchesFiniteDifferences(const Model& model, std::vector<Vec3> x, const std::vector<Vec3>& targets,
                                            ConstraintRef ref, double step = 1e-6) {
  const Evaluation e = evaluate(model, x, targets, ref);
  ASSERT_EQ(e.particles.size(), e.gradient.size());
  const double scale = gradientNorm(e);
  ASSERT_GT(scale, 0.0) << familyName(ref.family) << ": zero gradient at a non-degenerate configuration";
  for (std::size_t k = 0; k < e.particles.size(); ++k) {
    const ParticleIndex p = e.particles[k];
    for (int d = 0; d < 3; ++d) {
      const double saved = x[p][d];
      x[p][d] = saved + step;
      const double plus = evaluate(model, x, targets, ref).value;
      x[p][d] = saved - step;
      const double minus = evaluate(model, x, targets, ref).value;
      x[p][d] = saved;
      const double difference = (plus - minus) / (2.0 * step);
      EXPECT_NEAR(e.gradient[k][d], difference, 1e-6 * scale)
          << familyName(ref.family) << " constraint " << ref.index << ", particle " << p << ", coordinate " << d;
    }
  }
}

// Internal constraints depend only on relative positions and are unchanged by rotations, so
// sum_i gradC_i = 0 (they conserve linear momentum, V8) and sum_i x_i x gradC_i = 0 (angular).
void expectInvariances(const Model& model, const std::vector<Vec3>& x, const std::vector<Vec3>& targets,
                       ConstraintRef ref) {
  const Evaluation e = evaluate(model, x, targets, ref);
  Vec3 sum = Vec3::Zero();
  Vec3 torque = Vec3::Zero();
  double scale = 0.0;
  for (std::size_t k = 0; k < e.particles.size(); ++k) {
    sum += e.gradient[k];
    torque += x[e.particles[k]].cross(e.gradient[k]);
    scale += e.gradient[k].norm() * (1.0 + x[e.particles[k]].norm());
  }
  EXPECT_LT(sum.norm(), 1e-12 * scale) << familyName(ref.family) << ": sum of gradients is not zero";
  EXPECT_LT(torque.norm(), 1e-12 * scale) << familyName(ref.family) << ": gradients exert a torque";
}

class RandomPoints {
 public:
  explicit RandomPoints(std::uint64_t seed) : engine_(seed) {}
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine_); }
  Vec3 point(double extent = 1.0) {
    return Vec3(uniform(-extent, extent), uniform(-extent, extent), uniform(-extent, extent));
  }
  std::vector<Vec3> points(std::size_t count, double extent = 1.0) {
    std::vector<Vec3> out(count);
    for (Vec3& p : out) p = point(extent);
    return out;
  }

 private:
  std::mt19937_64 engine_;
};

constexpr std::size_t kParticles = 10;
constexpr int kTrials = 25;
const ConstraintParameters kHard{};

// A builder with kParticles particles at random positions; constraints below use scattered indices
// so that a wrong particle mapping in an evaluator shows up.
ModelBuilder randomBuilder(RandomPoints& random) {
  ModelBuilder builder;
  for (std::size_t i = 0; i < kParticles; ++i) builder.addParticle(random.point(), 1.0);
  return builder;
}

double triangleArea(const Vec3& a, const Vec3& b, const Vec3& c) { return 0.5 * (b - a).cross(c - a).norm(); }

// Eight corners of an axis-aligned cube and its twelve triangles, counter-clockwise seen from outside.
std::vector<Vec3> cubeCorners(const Vec3& origin, double side) {
  std::vector<Vec3> corners;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) corners.push_back(origin + side * Vec3(i, j, k));
  return corners;
}
std::vector<std::array<ParticleIndex, 3>> cubeTriangles(ParticleIndex first) {
  // Corner index i + 2j + 4k.
  const std::array<std::array<ParticleIndex, 3>, 12> local = {{
      {0, 2, 1},
      {1, 2, 3},  // z = 0, normal -z
      {4, 5, 6},
      {5, 7, 6},  // z = 1, normal +z
      {0, 1, 4},
      {1, 5, 4},  // y = 0, normal -y
      {2, 6, 3},
      {3, 6, 7},  // y = 1, normal +y
      {0, 4, 2},
      {2, 4, 6},  // x = 0, normal -x
      {1, 3, 5},
      {3, 7, 5},  // x = 1, normal +x
  }};
  std::vector<std::array<ParticleIndex, 3>> out;
  for (const auto& t : local) out.push_back({first + t[0], first + t[1], first + t[2]});
  return out;
}

// ---- Finite-difference gradient checks, one per family --------------------------------------

TEST(ConstraintGradients, AttachmentMatchesFiniteDifferences) {
  RandomPoints random(1);
  ModelBuilder builder = randomBuilder(random);
  builder.addAttachment(6, Vec3(0.1, 0.2, 0.3), kHard, 0.25);
  const ModelPtr model = builder.build();
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::vector<Vec3> x = random.points(kParticles);
    const std::vector<Vec3> targets = {random.point()};
    if ((x[6] - targets[0]).norm() < 0.1) continue;
    const Evaluation e = evaluate(*model, x, targets, {ConstraintFamily::Attachment, 0});
    ASSERT_EQ(e.particles, std::vector<ParticleIndex>{6});
    EXPECT_NEAR(e.value, (x[6] - targets[0]).norm() - 0.25, 1e-15);
    expectGradientMatchesFiniteDifferences(*model, x, targets, {ConstraintFamily::Attachment, 0});
  }
}

TEST(ConstraintGradients, DistanceMatchesFiniteDifferencesAndIsInvariant) {
  RandomPoints random(2);
  ModelBuilder builder = randomBuilder(random);
  builder.addDistance(7, 2, kHard, 0.6);
  const ModelPtr model = builder.build();
  const ConstraintRef ref{ConstraintFamily::Distance, 0};
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::vector<Vec3> x = random.points(kParticles);
    if ((x[7] - x[2]).norm() < 0.1) continue;
    const Evaluation e = evaluate(*model, x, {}, ref);
    ASSERT_EQ(e.particles, (std::vector<ParticleIndex>{7, 2}));
    EXPECT_NEAR(e.value, (x[7] - x[2]).norm() - 0.6, 1e-15);
    expectGradientMatchesFiniteDifferences(*model, x, {}, ref);
    expectInvariances(*model, x, {}, ref);
  }
}

TEST(ConstraintGradients, MaxDistanceMatchesFiniteDifferencesAndIsInvariant) {
  RandomPoints random(3);
  ModelBuilder builder = randomBuilder(random);
  builder.addMaxDistance(1, 8, kHard, 0.4);
  const ModelPtr model = builder.build();
  const ConstraintRef ref{ConstraintFamily::MaxDistance, 0};
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::vector<Vec3> x = random.points(kParticles);
    if ((x[1] - x[8]).norm() < 0.1) continue;
    const Evaluation e = evaluate(*model, x, {}, ref);
    ASSERT_EQ(e.particles, (std::vector<ParticleIndex>{1, 8}));
    // Unilateral: C = L_max - |x_a - x_b| >= 0 while slack.
    EXPECT_NEAR(e.value, 0.4 - (x[1] - x[8]).norm(), 1e-15);
    expectGradientMatchesFiniteDifferences(*model, x, {}, ref);
    expectInvariances(*model, x, {}, ref);
  }
}

TEST(ConstraintGradients, DihedralBendingMatchesFiniteDifferencesAndIsInvariant) {
  RandomPoints random(4);
  ModelBuilder builder = randomBuilder(random);
  builder.addDihedralBending(3, 9, 0, 5, kHard, 0.3);
  const ModelPtr model = builder.build();
  const ConstraintRef ref{ConstraintFamily::DihedralBending, 0};
  int checked = 0;
  for (int trial = 0; trial < 4 * kTrials && checked < kTrials; ++trial) {
    const std::vector<Vec3> x = random.points(kParticles);
    // Keep away from degenerate wings (no plane) and from the +-pi wrap of C = theta - rest.
    if (triangleArea(x[3], x[9], x[0]) < 0.1 || triangleArea(x[9], x[3], x[5]) < 0.1) continue;
    const Evaluation e = evaluate(*model, x, {}, ref);
    if (std::abs(e.value) > 2.5) continue;
    ASSERT_EQ(e.particles, (std::vector<ParticleIndex>{3, 9, 0, 5}));
    expectGradientMatchesFiniteDifferences(*model, x, {}, ref);
    expectInvariances(*model, x, {}, ref);
    ++checked;
  }
  EXPECT_EQ(checked, kTrials);
}

TEST(ConstraintGradients, IsometricBendingMatchesFiniteDifferencesAndIsInvariant) {
  RandomPoints random(5);
  ModelBuilder builder;
  // A flat, well-shaped rest stencil; the other particles are bystanders.
  for (std::size_t i = 0; i < kParticles; ++i) builder.addParticle(random.point(), 1.0);
  builder.model().initialPosition[4] = Vec3(0.0, 0.0, 0.0);
  builder.model().initialPosition[1] = Vec3(1.0, 0.0, 0.0);
  builder.model().initialPosition[8] = Vec3(0.4, 0.9, 0.0);
  builder.model().initialPosition[6] = Vec3(0.7, -0.8, 0.0);
  builder.addIsometricBending(4, 1, 8, 6, kHard);
  const ModelPtr model = builder.build();
  const ConstraintRef ref{ConstraintFamily::IsometricBending, 0};
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::vector<Vec3> x = random.points(kParticles);
    const Evaluation e = evaluate(*model, x, {}, ref);
    if (e.value < 0.05) continue;  // C = |k| is not differentiable at k = 0
    ASSERT_EQ(e.particles, (std::vector<ParticleIndex>{4, 1, 8, 6}));
    expectGradientMatchesFiniteDifferences(*model, x, {}, ref);
    expectInvariances(*model, x, {}, ref);
  }
}

TEST(ConstraintGradients, TetVolumeMatchesFiniteDifferencesAndIsInvariant) {
  RandomPoints random(6);
  ModelBuilder builder = randomBuilder(random);
  builder.addTetVolume(2, 7, 4, 0, kHard);
  const ModelPtr model = builder.build();
  const ConstraintRef ref{ConstraintFamily::TetVolume, 0};
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::vector<Vec3> x = random.points(kParticles);
    const Evaluation e = evaluate(*model, x, {}, ref);
    ASSERT_EQ(e.particles, (std::vector<ParticleIndex>{2, 7, 4, 0}));
    EXPECT_NEAR(e.value + model->tetVolumes[0].restVolume, (x[7] - x[2]).dot((x[4] - x[2]).cross(x[0] - x[2])) / 6.0,
                1e-15);
    expectGradientMatchesFiniteDifferences(*model, x, {}, ref);
    expectInvariances(*model, x, {}, ref);
  }
}

TEST(ConstraintGradients, GlobalVolumeMatchesFiniteDifferencesAndIsInvariant) {
  RandomPoints random(7);
  ModelBuilder builder;
  builder.addParticle(Vec3(5, 5, 5), 1.0);  // bystanders before and after the mesh
  builder.addParticle(Vec3(-5, 5, 5), 1.0);
  for (const Vec3& c : cubeCorners(Vec3(-0.5, -0.5, -0.5), 1.0)) builder.addParticle(c, 1.0);
  builder.addParticle(Vec3(5, -5, 5), 1.0);
  builder.addGlobalVolume(cubeTriangles(2), 1.3, kHard);
  const ModelPtr model = builder.build();
  const ConstraintRef ref{ConstraintFamily::GlobalVolume, 0};
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<Vec3> x = model->initialPosition;
    for (Vec3& p : x) p += random.point(0.3);
    const Evaluation e = evaluate(*model, x, {}, ref);
    ASSERT_EQ(e.particles.size(), 8u);
    for (std::size_t k = 0; k < 8; ++k) EXPECT_EQ(e.particles[k], 2 + k);
    expectGradientMatchesFiniteDifferences(*model, x, {}, ref);
    expectInvariances(*model, x, {}, ref);
  }
}

TEST(ConstraintGradients, GenericPassesTheRightPositionsAndReturnsTheUserGradient) {
  RandomPoints random(8);
  ModelBuilder builder = randomBuilder(random);
  // C = (x1 - x0).(x2 - x0)/2 + |x2 - x1|: nonlinear, translation and rotation invariant.
  auto function = [](std::span<const Vec3> x, std::span<Vec3> g) {
    const Vec3 a = x[1] - x[0];
    const Vec3 b = x[2] - x[0];
    const Vec3 c = x[2] - x[1];
    const double length = c.norm();
    g[0] = -0.5 * (a + b);
    g[1] = 0.5 * b - c / length;
    g[2] = 0.5 * a + c / length;
    return 0.5 * a.dot(b) + length;
  };
  const std::array<ParticleIndex, 3> particles = {5, 2, 7};
  builder.addGeneric(function, particles, false, kHard);
  const ModelPtr model = builder.build();
  const ConstraintRef ref{ConstraintFamily::Generic, 0};
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::vector<Vec3> x = random.points(kParticles);
    if ((x[2] - x[7]).norm() < 0.1) continue;
    const Evaluation e = evaluate(*model, x, {}, ref);
    ASSERT_EQ(e.particles, (std::vector<ParticleIndex>{5, 2, 7}));
    EXPECT_NEAR(e.value, 0.5 * (x[2] - x[5]).dot(x[7] - x[5]) + (x[7] - x[2]).norm(), 1e-14);
    expectGradientMatchesFiniteDifferences(*model, x, {}, ref);
    expectInvariances(*model, x, {}, ref);
  }
}

// ---- Known values ---------------------------------------------------------------------------

// Stencil: edge x0-x1 along +x, wing x2 in the xy plane above it; wing x3 starts flat at (0.5,-1,0)
// and is rotated about the edge by `fold` towards -z.
std::array<Vec3, 4> foldedStencil(double fold) {
  return {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 1, 0), Vec3(0.5, -std::cos(fold), -std::sin(fold))};
}

TEST(DihedralAngle, FlatIsZeroAndAFoldGivesItsSignedAngle) {
  const auto flat = foldedStencil(0.0);
  EXPECT_EQ(detail::dihedralAngle(flat[0], flat[1], flat[2], flat[3]), 0.0);
  // theta = atan2((nA x nB).e, nA.nB) with nA = +z and nB = (0,-1,0) after a 90-degree fold:
  // nA x nB = +x = e, so theta = +pi/2. Folding the other way gives -pi/2.
  const auto down = foldedStencil(std::numbers::pi / 2);
  EXPECT_NEAR(detail::dihedralAngle(down[0], down[1], down[2], down[3]), std::numbers::pi / 2, 1e-15);
  const auto up = foldedStencil(-std::numbers::pi / 2);
  EXPECT_NEAR(detail::dihedralAngle(up[0], up[1], up[2], up[3]), -std::numbers::pi / 2, 1e-15);
  // The magnitude is the fold angle all the way to (not through) pi, with a consistent sign.
  for (double fold : {1e-6, 0.1, 0.7, 1.5, 2.5, 3.1}) {
    const auto s = foldedStencil(fold);
    EXPECT_NEAR(detail::dihedralAngle(s[0], s[1], s[2], s[3]), fold, 1e-14) << "fold " << fold;
    const auto m = foldedStencil(-fold);
    EXPECT_NEAR(detail::dihedralAngle(m[0], m[1], m[2], m[3]), -fold, 1e-14) << "fold " << -fold;
  }
  // Independent of the wings' position along the edge and of the wing lengths.
  EXPECT_NEAR(detail::dihedralAngle(Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(-1, 3, 0), Vec3(2.5, 0, -0.2)),
              std::numbers::pi / 2, 1e-15);
}

TEST(DihedralAngle, ConstraintValueIsTheAngleMinusRestWrappedIntoPlusMinusPi) {
  ModelBuilder builder;
  const auto flat = foldedStencil(0.0);
  for (const Vec3& p : flat) builder.addParticle(p, 1.0);
  builder.addDihedralBending(0, 1, 2, 3, kHard);       // rest = current = 0
  builder.addDihedralBending(0, 1, 2, 3, kHard, 3.0);  // rest near +pi
  const ModelPtr model = builder.build();
  EXPECT_EQ(model->dihedralBendings[0].restAngle, 0.0);
  const auto folded = foldedStencil(-3.0);  // theta = -3.0
  const std::vector<Vec3> x(folded.begin(), folded.end());
  EXPECT_NEAR(evaluate(*model, x, {}, {ConstraintFamily::DihedralBending, 0}).value, -3.0, 1e-14);
  // -3 - 3 = -6 wraps to 2 pi - 6: the short way round through +-pi.
  EXPECT_NEAR(evaluate(*model, x, {}, {ConstraintFamily::DihedralBending, 1}).value, 2.0 * std::numbers::pi - 6.0,
              1e-14);
}

TEST(IsometricBending, WeightsVanishOnEveryFlatStencilAndMeasureAFold) {
  RandomPoints random(11);
  int checked = 0;
  for (int trial = 0; trial < 200 && checked < 50; ++trial) {
    // A random planar stencil in a random plane: edge x0-x1, wings on opposite sides.
    const Vec3 u = random.point().normalized();
    const Vec3 v = u.cross(random.point()).normalized();
    const Vec3 origin = random.point(3.0);
    auto inPlane = [&](double a, double b) { return Vec3(origin + a * u + b * v); };
    const double length = random.uniform(0.2, 2.0);
    const Vec3 x0 = inPlane(0.0, 0.0);
    const Vec3 x1 = inPlane(length, 0.0);
    const Vec3 x2 = inPlane(random.uniform(-1, 2), random.uniform(0.1, 1.5));
    const Vec3 x3 = inPlane(random.uniform(-1, 2), -random.uniform(0.1, 1.5));
    double K[4];
    if (!detail::isometricBendingWeights(x0, x1, x2, x3, K)) continue;
    ++checked;
    const double scale = std::abs(K[0]) * x0.norm() + std::abs(K[1]) * x1.norm() + std::abs(K[2]) * x2.norm() +
                         std::abs(K[3]) * x3.norm();
    EXPECT_NEAR(K[0] + K[1] + K[2] + K[3], 0.0, 1e-12 * (std::abs(K[0]) + std::abs(K[1])));
    EXPECT_LT((K[0] * x0 + K[1] * x1 + K[2] * x2 + K[3] * x3).norm(), 1e-12 * scale);
    // Any affine image of a flat stencil is flat too, and K x is linear: still zero.
    Mat3 A = Mat3::Identity();
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) A(r, c) += random.uniform(-0.3, 0.3);
    const Vec3 b = random.point(5.0);
    const Vec3 k = K[0] * (A * x0 + b) + K[1] * (A * x1 + b) + K[2] * (A * x2 + b) + K[3] * (A * x3 + b);
    EXPECT_LT(k.norm(), 1e-11 * scale);
  }
  EXPECT_EQ(checked, 50);

  // Bergou et al. 2006: for an isometric fold by theta about the shared edge,
  // |K x| = sqrt(3/(A0+A1)) |e| 2 sin(theta/2) -- positive once bent, whatever the direction.
  const Vec3 x0(0, 0, 0), x1(1.2, 0, 0), x2(0.3, 0.8, 0), x3(0.9, -0.7, 0);
  ModelBuilder builder;
  for (const Vec3& p : {x0, x1, x2, x3}) builder.addParticle(p, 1.0);
  builder.addIsometricBending(0, 1, 2, 3, kHard);
  const ModelPtr model = builder.build();
  const double areas = triangleArea(x0, x1, x2) + triangleArea(x0, x1, x3);
  const ConstraintRef ref{ConstraintFamily::IsometricBending, 0};
  EXPECT_LT(evaluate(*model, model->initialPosition, {}, ref).value, 1e-14);  // round-off only
  for (double fold : {1e-3, 0.2, -0.2, 1.0, 2.5}) {
    std::vector<Vec3> x = model->initialPosition;
    x[3] = Vec3(x3.x(), x3.y() * std::cos(fold), x3.y() * std::sin(fold));
    const double expected = std::sqrt(3.0 / areas) * 1.2 * 2.0 * std::sin(std::abs(fold) / 2.0);
    const double C = evaluate(*model, x, {}, ref).value;
    EXPECT_GT(C, 0.0);
    EXPECT_NEAR(C, expected, 1e-12 * expected) << "fold " << fold;
  }
}

TEST(TetVolume, UnitRightTetHasVolumeOneSixthAndOrientationGivesTheSign) {
  const Vec3 o(0, 0, 0), ex(1, 0, 0), ey(0, 1, 0), ez(0, 0, 1);
  EXPECT_NEAR(detail::signedTetVolume(o, ex, ey, ez), 1.0 / 6.0, 1e-16);
  EXPECT_NEAR(detail::signedTetVolume(o, ex, ez, ey), -1.0 / 6.0, 1e-16);
  // Translation and scaling: a tet of edge 2 far from the origin holds 8/6.
  const Vec3 t(10.0, -20.0, 30.0);
  EXPECT_NEAR(detail::signedTetVolume(t, t + 2 * ex, t + 2 * ey, t + 2 * ez), 8.0 / 6.0, 1e-13);

  ModelBuilder builder;
  for (const Vec3& p : {o, ex, ey, ez}) builder.addParticle(p, 1.0);
  builder.addTetVolume(0, 1, 2, 3, kHard);
  const ModelPtr model = builder.build();
  EXPECT_NEAR(model->tetVolumes[0].restVolume, 1.0 / 6.0, 1e-16);
  EXPECT_EQ(evaluate(*model, model->initialPosition, {}, {ConstraintFamily::TetVolume, 0}).value, 0.0);
}

TEST(GlobalVolume, ClosedTetrahedronAndCubeMeshesAreExact) {
  ModelBuilder builder;
  const Vec3 shift(3.0, -7.0, 11.0);  // the divergence-theorem sum must not depend on the origin
  for (const Vec3& p : {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)})
    builder.addParticle(p + shift, 1.0);
  const std::vector<std::array<ParticleIndex, 3>> tet = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  builder.addGlobalVolume(tet, 1.0, kHard);
  const ParticleIndex first = static_cast<ParticleIndex>(builder.particleCount());
  for (const Vec3& c : cubeCorners(Vec3(-1.0, 2.0, 0.5), 0.7)) builder.addParticle(c, 1.0);
  builder.addGlobalVolume(cubeTriangles(first), 2.0, kHard);
  const ModelPtr model = builder.build();
  EXPECT_NEAR(model->globalVolumes[0].restVolume, 1.0 / 6.0, 1e-14);
  EXPECT_NEAR(model->globalVolumes[1].restVolume, 0.7 * 0.7 * 0.7, 1e-14);
  // C = V - pressure V0: zero for pressure 1, -V0 for pressure 2 at rest.
  EXPECT_NEAR(evaluate(*model, model->initialPosition, {}, {ConstraintFamily::GlobalVolume, 0}).value, 0.0, 1e-14);
  EXPECT_NEAR(evaluate(*model, model->initialPosition, {}, {ConstraintFamily::GlobalVolume, 1}).value, -0.7 * 0.7 * 0.7,
              1e-14);
}

TEST(GlobalVolume, BalloonEnclosesAPolyhedralSphere) {
  // An inscribed polyhedron encloses a little less than 4/3 pi r^3, converging as it refines.
  const double radius = 0.5;
  const double sphere = 4.0 / 3.0 * std::numbers::pi * radius * radius * radius;
  double previous = 0.0;
  for (const auto& [rings, tolerance] : {std::pair{12, 0.03}, std::pair{24, 0.01}}) {
    ModelBuilder builder;
    BalloonDef def;
    def.radius = radius;
    def.centre = Vec3(1.0, 2.0, -3.0);
    def.rings = rings;
    def.segments = 2 * rings;
    addBalloon(builder, def);
    const ModelPtr model = builder.build();
    const double volume = model->globalVolumes[0].restVolume;
    EXPECT_LT(volume, sphere) << rings << " rings";
    EXPECT_GT(volume, (1.0 - tolerance) * sphere) << rings << " rings";
    EXPECT_GT(volume, previous);
    previous = volume;
  }
}

}  // namespace
}  // namespace pliant
