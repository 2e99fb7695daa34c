// The shape matching family (src/core/constraints/shape_matching.cpp, Mueller et al. 2005): one
// projection's exact effect (goals reached with compliance 0, the fraction 1/(1 + alpha~ M) with
// compliance, PBD's k and k'), momentum (V8), the linear mode on affine deformations, degenerate
// and inverted clusters, the builder's checks, the cluster generator, energy and model bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "constraints/families.h"
#include "pliant/io/model_bytes.h"
#include "pliant/io/scenes.h"
#include "pliant/pliant.h"
#include "pliant/reference/reference_solver.h"

namespace pliant {
namespace {

using detail::familyKernels;

// Points of a non-degenerate cloud: a 2 x 2 x 2 cube of edge 0.3 m plus two inside it.
std::vector<Vec3> cloud() {
  std::vector<Vec3> points;
  for (int k = 0; k < 8; ++k) points.emplace_back(0.3 * (k & 1), 0.3 * ((k >> 1) & 1), 0.3 * ((k >> 2) & 1));
  points.emplace_back(0.1, 0.2, 0.05);
  points.emplace_back(0.25, 0.05, 0.2);
  return points;
}

struct Cluster {
  ModelPtr model;
  std::vector<ParticleIndex> particles;
};

// One cluster over `points` with masses 1, 2, 3, ... kg (or all 1 kg).
Cluster makeCluster(const std::vector<Vec3>& points, const ShapeMatchingSettings& settings, bool equalMasses = false) {
  ModelBuilder b;
  Cluster c;
  for (std::size_t i = 0; i < points.size(); ++i)
    c.particles.push_back(b.addParticle(points[i], equalMasses ? 1.0 : 1.0 + static_cast<double>(i)));
  b.addShapeMatchingCluster(c.particles, settings);
  c.model = b.build();
  return c;
}

ShapeMatchingSettings rigid(double compliance = 0.0) {
  ShapeMatchingSettings s;
  s.mode = ShapeMatchingMode::Rigid;
  s.params.compliance = compliance;
  return s;
}

ShapeMatchingSettings linear(double beta, bool preserveVolume, double compliance = 0.0) {
  ShapeMatchingSettings s;
  s.mode = ShapeMatchingMode::Linear;
  s.beta = beta;
  s.preserveVolume = preserveVolume;
  s.params.compliance = compliance;
  return s;
}

// Rest positions moved by noise of `amount` m, rotated and shifted.
std::vector<Vec3> deformed(const std::vector<Vec3>& rest, double amount, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-amount, amount);
  const Mat3 rotation = Eigen::AngleAxisd(0.7, Vec3(1.0, 2.0, -0.5).normalized()).toRotationMatrix();
  std::vector<Vec3> out;
  for (const Vec3& p : rest)
    out.push_back(rotation * p + Vec3(0.4, -1.0, 2.0) + Vec3(noise(rng), noise(rng), noise(rng)));
  return out;
}

double clusterValue(const Model& model, const std::vector<Vec3>& x, std::uint32_t cluster = 0) {
  std::vector<ParticleIndex> particles;
  std::vector<Vec3> gradient;
  return familyKernels(ConstraintFamily::ShapeMatching)
      .evaluate(model, x.data(), nullptr, cluster, particles, gradient);
}

// Projects every cluster once at positions x (substep h, the given mode), lambda starting at 0.
void projectOnce(const Model& model, std::vector<Vec3>& x, double h, SolverMode mode = SolverMode::Xpbd,
                 double stiffnessExponent = 1.0) {
  std::vector<double> lambda(model.shapeMatchings.size(), 0.0);
  std::vector<Vec3> scratch(x.size());
  const std::vector<Vec3> previous = x;
  detail::SolveContext ctx;
  ctx.mode = mode;
  ctx.h = h;
  ctx.invH = 1.0 / h;
  ctx.invH2 = 1.0 / (h * h);
  ctx.stiffnessExponent = stiffnessExponent;
  ctx.x = x.data();
  ctx.xPrev = previous.data();
  ctx.w = model.inverseMass.data();
  ctx.lambda = lambda.data();
  ctx.multipliersFresh = true;
  ctx.scratch = &scratch;
  familyKernels(ConstraintFamily::ShapeMatching)
      .project(model, ctx, 0, static_cast<std::uint32_t>(model.shapeMatchings.size()));
}

double maxPairDistanceError(const std::vector<Vec3>& a, const std::vector<Vec3>& b) {
  double e = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j)
      e = std::max(e, std::abs((a[i] - a[j]).norm() - (b[i] - b[j]).norm()));
  return e;
}

Vec3 linearMomentum(const Model& m, const std::vector<Vec3>& dx) {
  Vec3 p = Vec3::Zero();
  for (std::size_t i = 0; i < dx.size(); ++i) p += m.mass[i] * dx[i];
  return p;
}

Vec3 angularMomentum(const Model& m, const std::vector<Vec3>& x, const std::vector<Vec3>& dx) {
  Vec3 l = Vec3::Zero();
  for (std::size_t i = 0; i < dx.size(); ++i) l += m.mass[i] * x[i].cross(dx[i]);
  return l;
}

// Rigid mode, compliance 0: one projection puts every particle on its goal, a rotated and shifted
// copy of the rest shape (Mueller's update with alpha = 1): C becomes 0, rest distances come back.
TEST(ShapeMatching, RigidProjectionReachesARotatedCopyOfTheRestShape) {
  const std::vector<Vec3> rest = cloud();
  const Cluster c = makeCluster(rest, rigid());
  std::vector<Vec3> x = deformed(rest, 0.05);
  const double before = clusterValue(*c.model, x);
  projectOnce(*c.model, x, 1.0 / 240.0);
  const double after = clusterValue(*c.model, x);
  std::printf("rigid projection: C %.3g m -> %.3g m, rest distances within %.3g m\n", before, after,
              maxPairDistanceError(x, rest));
  EXPECT_GT(before, 1e-2);
  EXPECT_LT(after, 1e-14);
  EXPECT_LT(maxPairDistanceError(x, rest), 1e-14);
}

// An inverted (mirrored) pose: the polar decomposition's rotation is proper (det R = +1), so the
// goals are the rest shape turned, never mirrored, and a rest tet keeps its handedness.
TEST(ShapeMatching, RigidGoalsAreNeverAReflection) {
  const std::vector<Vec3> rest = cloud();
  const Cluster c = makeCluster(rest, rigid());
  std::vector<Vec3> x = rest;
  for (Vec3& p : x) p.z() = -p.z();  // mirrored through z = 0
  projectOnce(*c.model, x, 1.0 / 240.0);
  EXPECT_LT(maxPairDistanceError(x, rest), 1e-12);
  const double restVolume = detail::signedTetVolume(rest[0], rest[1], rest[2], rest[4]);
  const double volume = detail::signedTetVolume(x[0], x[1], x[2], x[4]);
  EXPECT_NEAR(volume, restVolume, 1e-12);
}

// With compliance alpha every particle goes the fraction 1/(1 + alpha~ M) of the way to its goal
// (alpha~ = alpha/h^2, M the cluster's mass) and the best rotation does not change, so C is
// multiplied by alpha~ M / (1 + alpha~ M) exactly (the XPBD step of docs/validation.md).
TEST(ShapeMatching, CompliantProjectionMovesTheXpbdFraction) {
  const std::vector<Vec3> rest = cloud();
  const double alpha = 1e-4, h = 1.0 / 240.0;
  const Cluster c = makeCluster(rest, rigid(alpha));
  std::vector<Vec3> x = deformed(rest, 0.05);
  const double before = clusterValue(*c.model, x);
  projectOnce(*c.model, x, h);
  const double M = c.model->shapeMatchings[0].totalWeight;
  const double alphaTildeM = alpha / (h * h) * M;
  EXPECT_NEAR(clusterValue(*c.model, x) / before, alphaTildeM / (1.0 + alphaTildeM), 1e-12);
}

// PBD mode (V4, V5): stiffness k moves the fraction k of the way (Mueller's alpha); with
// iteration-independent stiffness, n projections leave (1 - k) C_0 for every n.
TEST(ShapeMatching, PbdStiffnessAndIterationIndependentStiffness) {
  const std::vector<Vec3> rest = cloud();
  ShapeMatchingSettings s = rigid();
  s.params.stiffness = 0.3;
  const Cluster c = makeCluster(rest, s);
  std::vector<Vec3> x = deformed(rest, 0.05);
  const double c0 = clusterValue(*c.model, x);
  projectOnce(*c.model, x, 1.0 / 60.0, SolverMode::Pbd);
  EXPECT_NEAR(clusterValue(*c.model, x) / c0, 0.7, 1e-12);
  for (int n : {1, 3, 10}) {
    std::vector<Vec3> y = deformed(rest, 0.05);
    for (int k = 0; k < n; ++k) projectOnce(*c.model, y, 1.0 / 60.0, SolverMode::Pbd, 1.0 / n);
    EXPECT_NEAR(clusterValue(*c.model, y) / c0, 0.7, 1e-12) << n << " iterations";
  }
}

// V8: the correction sum_i m_i dx_i is zero and so is its moment sum_i m_i x_i x dx_i, in both
// modes, for equal and unequal masses: the goals' transform T is R, A_pq A_qq^-1 (scaled or not) or
// a blend of them, and T A_pq^T is symmetric for each (shape_matching.cpp). Tolerances are round-off
// of the positions (dx is a difference of positions about 2.5 m from the origin).
TEST(ShapeMatching, ProjectionConservesLinearAndAngularMomentum) {
  const std::vector<Vec3> rest = cloud();
  struct Row {
    const char* name;
    ShapeMatchingSettings settings;
  };
  const Row rows[] = {{"rigid", rigid(1e-5)},
                      {"rigid, hard", rigid(0.0)},
                      {"linear beta 1", linear(1.0, false, 1e-5)},
                      {"linear beta 0.5, volume", linear(0.5, true, 1e-5)},
                      {"linear beta 0.5, volume, hard", linear(0.5, true, 0.0)}};
  for (const Row& row : rows)
    for (bool equal : {true, false}) {
      SCOPED_TRACE(std::string(row.name) + (equal ? ", equal masses" : ", unequal masses"));
      const Cluster c = makeCluster(rest, row.settings, equal);
      std::vector<Vec3> x = deformed(rest, 0.08);
      const std::vector<Vec3> start = x;
      projectOnce(*c.model, x, 1.0 / 120.0);
      std::vector<Vec3> dx(x.size());
      double moved = 0.0, linearScale = 0.0, angularScale = 0.0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        dx[i] = x[i] - start[i];
        moved += c.model->mass[i] * dx[i].norm();
        linearScale += c.model->mass[i] * start[i].norm();
        angularScale += c.model->mass[i] * start[i].squaredNorm();
      }
      ASSERT_GT(moved, 1e-3);
      EXPECT_LT(linearMomentum(*c.model, dx).norm(), 1e-15 * linearScale);
      EXPECT_LT(angularMomentum(*c.model, start, dx).norm(), 1e-15 * angularScale);
    }
}

// Linear mode, beta = 1: an affine deformation x = F x0 + t is its own goal (C = 0, nothing moves)
// when det F = 1, or for any F without volume preservation; with it, a stretch is scaled back to
// det = 1, and the rigid mode pulls the stretch out entirely.
TEST(ShapeMatching, LinearModeReproducesAffineDeformations) {
  const std::vector<Vec3> rest = cloud();
  Mat3 shear = Mat3::Identity();
  shear(0, 1) = 0.4;
  shear(2, 0) = -0.3;  // det 1
  const Mat3 rotation = Eigen::AngleAxisd(1.1, Vec3(0.2, 1.0, 0.3).normalized()).toRotationMatrix();
  const Mat3 stretch = Vec3(1.3, 0.9, 1.1).asDiagonal();
  const auto map = [&](const Mat3& F) {
    std::vector<Vec3> x;
    for (const Vec3& p : rest) x.push_back(F * p + Vec3(1.0, 2.0, 3.0));
    return x;
  };
  const Cluster volume = makeCluster(rest, linear(1.0, true));
  const Cluster free = makeCluster(rest, linear(1.0, false));
  const double size = 0.3;
  for (const Mat3& F : {Mat3(rotation * shear), Mat3(shear * rotation)}) {
    EXPECT_LT(clusterValue(*volume.model, map(F)), 1e-13 * size);
    std::vector<Vec3> x = map(F);
    projectOnce(*volume.model, x, 1.0 / 60.0);
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_LT((x[i] - map(F)[i]).norm(), 1e-13);
  }
  const Mat3 F = rotation * stretch * shear;
  EXPECT_LT(clusterValue(*free.model, map(F)), 1e-13 * size);
  EXPECT_GT(clusterValue(*volume.model, map(F)), 1e-3);
  EXPECT_GT(clusterValue(*makeCluster(rest, rigid()).model, map(F)), 1e-3);
  // Volume preservation: after a hard projection the cluster is the stretch scaled to det 1.
  std::vector<Vec3> x = map(F);
  projectOnce(*volume.model, x, 1.0 / 60.0);
  const double scale = std::cbrt(F.determinant());
  const std::vector<Vec3> expected = map(F / scale);
  double error = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) error = std::max(error, (x[i] - expected[i]).norm());
  // The projection keeps the centre of mass: compare shapes about it.
  Vec3 cx = Vec3::Zero(), ce = Vec3::Zero();
  double M = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    cx += volume.model->mass[i] * x[i];
    ce += volume.model->mass[i] * expected[i];
    M += volume.model->mass[i];
  }
  error = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) error = std::max(error, ((x[i] - cx / M) - (expected[i] - ce / M)).norm());
  EXPECT_LT(error, 1e-13);
}

// A flat cluster (a cloth patch) in linear mode: an in-plane affine map, turned out of its plane,
// is reproduced exactly (A_qq's pseudo-inverse in the plane, R across it), and volume
// preservation keeps the area (det A scaled with exponent 1/rank = 1/2).
TEST(ShapeMatching, FlatLinearClusterReproducesInPlaneMapsAndKeepsArea) {
  std::vector<Vec3> rest;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i) rest.emplace_back(0.1 * i, 0.0, 0.1 * j);
  const Cluster free = makeCluster(rest, linear(1.0, false));
  const Cluster area = makeCluster(rest, linear(1.0, true));
  EXPECT_EQ(free.model->shapeMatchings[0].restRank, 2);
  Mat3 inPlane = Mat3::Identity();
  inPlane(0, 2) = 0.5;  // shear x by z, det 1: area kept
  inPlane(0, 0) = 1.2;  // and stretch x: area x 1.2
  const Mat3 rotation = Eigen::AngleAxisd(0.9, Vec3(1.0, 0.3, 0.2).normalized()).toRotationMatrix();
  std::vector<Vec3> x;
  for (const Vec3& p : rest) x.push_back(rotation * inPlane * p);
  EXPECT_LT(clusterValue(*free.model, x), 1e-13);
  projectOnce(*area.model, x, 1.0 / 60.0);
  // Area of the quad spanned by the cluster's corners 0, 3, 8 (rest 0.3 x 0.2).
  const double restArea = (rest[3] - rest[0]).cross(rest[8] - rest[0]).norm();
  EXPECT_NEAR((x[3] - x[0]).cross(x[8] - x[0]).norm(), restArea, 1e-13);
}

// Degenerate clusters stay finite and keep their shape: flat, collinear, and all at one point,
// deformed out of their plane or line, in rigid and linear mode, stepped under gravity.
TEST(ShapeMatching, DegenerateClustersStayFinite) {
  const std::vector<std::vector<Vec3>> shapes = {
      {{0, 0, 0}, {0.2, 0, 0}, {0, 0, 0.2}, {0.2, 0, 0.2}},  // flat
      {{0, 0, 0}, {0.1, 0, 0}, {0.3, 0, 0}},                 // collinear
      {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}},                     // one point
  };
  for (const auto& shape : shapes)
    for (const ShapeMatchingSettings& s : {rigid(), rigid(1e-4), linear(0.7, true), linear(1.0, true, 1e-4)}) {
      SCOPED_TRACE(std::to_string(shape.size()) + " particles, mode " + std::to_string(static_cast<int>(s.mode)));
      const Cluster c = makeCluster(shape, s);
      std::vector<Vec3> x = deformed(shape, 0.05, 3);
      projectOnce(*c.model, x, 1.0 / 240.0);
      for (const Vec3& p : x) EXPECT_TRUE(p.allFinite());
      if (s.mode == ShapeMatchingMode::Rigid && s.params.compliance == 0.0) {
        EXPECT_LT(maxPairDistanceError(x, shape), 1e-12);
      }
      State state = State::fromModel(*c.model);
      state.position = deformed(shape, 0.05, 5);
      Solver solver(c.model, SolverSettings::smallSteps(4));
      for (int i = 0; i < 30; ++i) ASSERT_TRUE(solver.step(state).ok());
      for (const Vec3& p : state.position) EXPECT_TRUE(p.allFinite());
    }
}

TEST(ShapeMatching, BuilderChecksItsInput) {
  ModelBuilder b;
  const ParticleIndex p0 = b.addParticle(Vec3::Zero(), 1.0);
  const ParticleIndex p1 = b.addParticle(Vec3::UnitX(), 1.0);
  const auto error = [&](std::vector<ParticleIndex> particles, ShapeMatchingSettings s) {
    try {
      b.addShapeMatchingCluster(particles, s);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error({p0}, rigid()).find("at least 2"), std::string::npos);
  EXPECT_NE(error({p0, p0}, rigid()).find("listed twice"), std::string::npos);
  EXPECT_NE(error({p0, 7}, rigid()).find("out of range"), std::string::npos);
  EXPECT_NE(error({p0, p1}, linear(1.5, true)).find("beta"), std::string::npos);
  EXPECT_NE(error({p0, p1}, rigid(-1.0)).find("compliance"), std::string::npos);
  EXPECT_TRUE(error({p0, p1}, rigid()).empty());
  // A fixed particle of mass 0 weighs as the mean of the others in the fit, and stays put.
  const ParticleIndex pinned = b.addParticle(Vec3::UnitY(), 0.0);
  b.addShapeMatchingCluster(std::vector<ParticleIndex>{p0, p1, pinned}, rigid());
  const ModelPtr m = b.build();
  const ShapeMatchingConstraint& last = m->shapeMatchings.back();
  EXPECT_DOUBLE_EQ(m->shapeMatchingWeights[last.firstMember + 2], 1.0);
  EXPECT_DOUBLE_EQ(last.totalWeight, 3.0);
  std::vector<Vec3> x = {Vec3(0.1, 0.0, 0.0), Vec3(1.0, 0.3, 0.0), Vec3::UnitY()};
  projectOnce(*m, x, 1.0 / 60.0);
  EXPECT_EQ(x[2], Vec3::UnitY());
  for (const Vec3& p : x) EXPECT_TRUE(p.allFinite());
}

TEST(ShapeMatching, ModelValidationNamesTheBadCluster) {
  ModelBuilder b;
  std::vector<ParticleIndex> particles;
  for (const Vec3& p : cloud()) particles.push_back(b.addParticle(p, 1.0));
  b.addShapeMatchingCluster(particles, rigid());
  b.model().shapeMatchings[0].beta = 2.0;
  try {
    (void)b.build();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shape matching cluster 0"), std::string::npos) << e.what();
  }
  b.model().shapeMatchings[0].beta = 0.0;
  b.model().shapeMatchingWeights[3] = -1.0;
  EXPECT_THROW((void)b.build(), Error);
  b.model().shapeMatchingWeights[3] = 1.0;
  b.model().shapeMatchings[0].memberCount = 100;
  EXPECT_THROW((void)b.build(), Error);
}

// The generator: one cluster for the whole object, or overlapping 2 x 2 x 2-cell blocks.
TEST(ShapeMatching, ClusterGeneratorCoversTheObject) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = 9;
  def.nodesY = 5;
  def.sizeX = 0.8;
  def.sizeY = 0.4;  // 0.1 m between nodes
  const GeneratedObject cloth = addClothGrid(b, def);
  std::vector<ParticleIndex> particles;
  for (std::uint32_t i = 0; i < cloth.particleCount; ++i) particles.push_back(cloth.firstParticle + i);
  std::uint32_t count = 0;
  EXPECT_EQ(addShapeMatchingClusters(b, particles, 0.0, rigid(), &count), 0u);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(b.model().shapeMatchings[0].memberCount, cloth.particleCount);
  // Cells of 0.25 m: 4 x 1 x 2 cells (x: 0..0.8, z: 0..0.4), blocks 3 x 1 x 1 (two cells each way).
  const std::uint32_t first = addShapeMatchingClusters(b, particles, 0.25, rigid(), &count);
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(count, 3u);
  std::vector<int> memberships(b.particleCount(), 0);
  const Model& m = b.model();
  for (std::uint32_t c = first; c < first + count; ++c)
    for (std::uint32_t k = 0; k < m.shapeMatchings[c].memberCount; ++k)
      ++memberships[m.shapeMatchingParticles[m.shapeMatchings[c].firstMember + k]];
  for (ParticleIndex p : particles) {
    EXPECT_GE(memberships[p], 1);
    EXPECT_LE(memberships[p], 8);
  }
  EXPECT_NO_THROW((void)b.build());
  EXPECT_THROW(addShapeMatchingClusters(b, particles, std::nan(""), rigid(), &count), Error);
  EXPECT_THROW(addShapeMatchingClusters(b, particles, 1e-12, rigid(), &count), Error);  // 8e11 cells
}

// Energy probes: C^2 / (2 alpha) with C the mass-weighted RMS distance to the goals.
TEST(ShapeMatching, EnergyFromPositionsIsTheWeightedSquaredDistanceToTheGoals) {
  const std::vector<Vec3> rest = cloud();
  const double alpha = 1e-3;
  const Cluster c = makeCluster(rest, rigid(alpha));
  State state = State::fromModel(*c.model);
  state.position = deformed(rest, 0.04);
  std::vector<Vec3> goals = state.position;
  projectOnce(*makeCluster(rest, rigid()).model, goals, 1.0);  // compliance 0: onto the goals
  double sum = 0.0, M = 0.0;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    sum += c.model->mass[i] * (state.position[i] - goals[i]).squaredNorm();
    M += c.model->mass[i];
  }
  const EnergyReport e = computeEnergy(*c.model, state, SolverSettings{});
  EXPECT_NEAR(e.elasticFromPositions, sum / (2.0 * alpha * M), 1e-12 * e.elasticFromPositions);
}

// The reference implicit solver (src/reference) takes the family through its evaluator: one step
// from a deformed pose converges (Newton on eqs. 8-9 of Macklin et al. 2016 with this gradient, in
// one iteration), and XPBD's substep lands on the same positions (to the bit here: a projection
// keeps the best rotation, so the problem is linear along the correction and XPBD's first
// projection solves it).
TEST(ShapeMatching, ReferenceSolverConvergesAndXpbdApproachesIt) {
  const std::vector<Vec3> rest = cloud();
  const Cluster c = makeCluster(rest, rigid(1e-6));
  State state = State::fromModel(*c.model);
  state.position = deformed(rest, 0.03);
  state.previousPosition = state.position;
  ReferenceSettings settings;
  settings.timeStep = 1.0 / 240.0;
  settings.gravity = Vec3::Zero();
  const ReferenceStep reference = solveReferenceStep(*c.model, state, settings);
  EXPECT_TRUE(reference.converged) << reference.message;
  SolverSettings xpbd = SolverSettings::smallSteps(1);
  xpbd.timeStep = settings.timeStep;
  xpbd.iterations = 50;
  xpbd.gravity = Vec3::Zero();
  Solver solver(c.model, xpbd);
  State stepped = state;
  ASSERT_TRUE(solver.step(stepped).ok());
  const ReferenceDistance d = distanceToReference(stepped, reference);
  double moved = 0.0;
  double apart = 0.0;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    moved = std::max(moved, (stepped.position[i] - state.position[i]).norm());
    apart = std::max(apart, (stepped.position[i] - reference.position[i]).norm());
  }
  EXPECT_EQ(apart, d.maxPosition);
  std::printf(
      "reference: %d Newton iterations, residual %.3g m; XPBD (50 iterations) within %.3g m of it; "
      "particles moved up to %.3g m\n",
      reference.iterations, reference.residualNorm, d.maxPosition, moved);
  EXPECT_GT(moved, 1e-3);
  EXPECT_LT(d.maxPosition, 1e-12);
}

TEST(ShapeMatching, ModelBytesRoundTrip) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 6;
  def.stretch.compliance = 1e-6;
  const GeneratedObject cloth = addClothGrid(b, def);
  std::vector<ParticleIndex> particles;
  for (std::uint32_t i = 0; i < cloth.particleCount; ++i) particles.push_back(cloth.firstParticle + i);
  addShapeMatchingClusters(b, particles, 0.3, linear(0.4, true, 1e-5), nullptr);
  b.fixParticle(cloth.firstParticle);
  const ModelPtr m = b.build();
  const Model decoded = io::decodeModel(io::encodeModel(*m), "test");
  ASSERT_EQ(decoded.shapeMatchings.size(), m->shapeMatchings.size());
  EXPECT_EQ(io::encodeModel(decoded), io::encodeModel(*m));
  const auto run = [](const ModelPtr& model) {
    Solver solver(model, SolverSettings::smallSteps(4));
    State s = State::fromModel(*model);
    for (int i = 0; i < 20; ++i) EXPECT_TRUE(solver.step(s).ok());
    return s.hash();
  };
  EXPECT_EQ(run(std::make_shared<const Model>(decoded)), run(m));
}

std::string sceneError(const std::string& block,
                       const std::string& positions = "[[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0]]") {
  try {
    (void)parseScene(R"({"objects": [{"type": "particles", "name": "p", "mass": 0.1, "positions": )" + positions +
                         R"(, "shape_matching": )" + block + "}]}",
                     "inline.json", "");
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// Scene files: "shape_matching" on any object; errors name the JSON pointer.
TEST(ShapeMatching, SceneFileBlock) {
  const Scene scene = loadSceneFile(std::string(PLIANT_TEST_DATA_DIR) + "/scenes/shape_matching.json");
  const Model& m = *scene.model;
  ASSERT_GE(m.shapeMatchings.size(), 2u);
  const ShapeMatchingConstraint& cloth = m.shapeMatchings.front();
  EXPECT_EQ(cloth.mode, ShapeMatchingMode::Linear);
  EXPECT_EQ(cloth.beta, 0.4);
  EXPECT_TRUE(cloth.preserveVolume);
  EXPECT_EQ(cloth.restRank, 2);  // a flat cloth
  EXPECT_EQ(cloth.params.compliance, 1e-4);
  EXPECT_EQ(cloth.params.damping, 0.5);
  const ShapeMatchingConstraint& cloud = m.shapeMatchings.back();
  EXPECT_EQ(cloud.mode, ShapeMatchingMode::Rigid);
  EXPECT_EQ(cloud.memberCount, 5u);
  // The cloth's clusters are its object's constraints (constraint_force probes index them).
  EXPECT_EQ(scene.objects[0].constraintBegin[static_cast<int>(ConstraintFamily::ShapeMatching)], 0u);
  EXPECT_EQ(scene.objects[0].constraintEnd[static_cast<int>(ConstraintFamily::ShapeMatching)],
            m.shapeMatchings.size() - 1);
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(m);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(solver.step(state).ok());

  EXPECT_EQ(sceneError(R"({"mode": "linear", "beta": 1, "preserve_volume": false, "cluster_size": 0.05})"), "");
  EXPECT_NE(
      sceneError(R"({"mode": "quadratic"})").find(R"(/objects/0/shape_matching/mode: expected "rigid" or "linear")"),
      std::string::npos);
  EXPECT_NE(sceneError(R"({"beta": 0.5})").find(R"(/objects/0/shape_matching/beta: "beta" needs "mode": "linear")"),
            std::string::npos);
  EXPECT_NE(sceneError(R"({"mode": "linear", "beta": 2})").find("/objects/0/shape_matching/beta"), std::string::npos);
  EXPECT_NE(sceneError(R"({"cluster_size": -1})").find("/objects/0/shape_matching/cluster_size"), std::string::npos);
  EXPECT_NE(sceneError(R"({"compliance": -1})").find("/objects/0/shape_matching/compliance"), std::string::npos);
  EXPECT_NE(sceneError(R"({"size": 1})").find("/objects/0/shape_matching: unknown field 'size'"), std::string::npos);
  EXPECT_NE(
      sceneError("{}", "[[0, 0, 0]]").find("/objects/0/shape_matching: shape matching cluster 0: needs at least 2"),
      std::string::npos);
}

// The bad scene files of this family fail with the field named.
TEST(ShapeMatching, BadSceneFiles) {
  for (const auto& [file, expected] :
       {std::pair<std::string, std::string>{"shape_matching_mode.json", "/objects/0/shape_matching/mode: expected"},
        {"shape_matching_beta_rigid.json", "/objects/0/shape_matching/beta: \"beta\" needs"}}) {
    const std::string path = std::string(PLIANT_TEST_DATA_DIR) + "/scenes/bad/" + file;
    std::string message;
    try {
      (void)loadSceneFile(path);
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_EQ(message.rfind(path + ": " + expected, 0), 0u) << message;
  }
}

}  // namespace
}  // namespace pliant
