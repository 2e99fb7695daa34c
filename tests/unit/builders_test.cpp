// Unit tests of the generators in src/core/builders.cpp: counts of particles and constraints against
// closed-form mesh combinatorics, masses, rest values, and the orientation of generated surfaces.
#include "pliant/builders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

#include "constraints/families.h"
#include "pliant/error.h"
#include "pliant/model.h"

namespace pliant {
namespace {

using Edge = std::pair<ParticleIndex, ParticleIndex>;
Edge edge(ParticleIndex a, ParticleIndex b) { return {std::min(a, b), std::max(a, b)}; }

std::set<Edge> triangleEdges(const std::vector<std::array<ParticleIndex, 3>>& triangles) {
  std::set<Edge> edges;
  for (const auto& t : triangles)
    for (int k = 0; k < 3; ++k) edges.insert(edge(t[k], t[(k + 1) % 3]));
  return edges;
}

std::set<Edge> distanceEdges(const Model& m) {
  std::set<Edge> edges;
  for (const DistanceConstraint& d : m.distances) edges.insert(edge(d.particles[0], d.particles[1]));
  return edges;
}

double totalMass(const Model& m) { return std::accumulate(m.mass.begin(), m.mass.end(), 0.0); }

Vec3 normal(const Model& m, const std::array<ParticleIndex, 3>& t) {
  const auto& x = m.initialPosition;
  return (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]);
}

// Divergence theorem: V = sum over outward triangles of a.(b x c)/6.
double enclosedVolume(const Model& m, const std::vector<std::array<ParticleIndex, 3>>& triangles) {
  const auto& x = m.initialPosition;
  double six = 0.0;
  for (const auto& t : triangles) six += x[t[0]].dot(x[t[1]].cross(x[t[2]]));
  return six / 6.0;
}

TEST(Builders, ClothGridCountsFollowTheGrid) {
  for (const auto& [nx, ny] : {std::pair{2, 2}, std::pair{5, 3}, std::pair{7, 7}}) {
    for (BendingModel bending : {BendingModel::None, BendingModel::Dihedral, BendingModel::Isometric}) {
      ModelBuilder b;
      b.addParticle(Vec3(9, 9, 9), 1.0);  // the cloth must not assume it starts at particle 0
      ClothGridDef def;
      def.nodesX = nx;
      def.nodesY = ny;
      def.sizeX = 2.0;
      def.sizeY = 1.5;
      def.origin = Vec3(-1.0, 0.5, 0.0);
      def.totalMass = 3.0;
      def.bending = bending;
      const GeneratedObject cloth = addClothGrid(b, def);
      const ModelPtr m = b.build();
      const std::size_t quads = static_cast<std::size_t>((nx - 1) * (ny - 1));
      // Unique edges: rows, columns and one diagonal per quad. Boundary edges: the perimeter.
      const std::size_t edges = static_cast<std::size_t>((nx - 1) * ny + nx * (ny - 1)) + quads;
      const std::size_t boundary = static_cast<std::size_t>(2 * (nx - 1) + 2 * (ny - 1));
      SCOPED_TRACE(testing::Message() << nx << " x " << ny << ", bending " << static_cast<int>(bending));
      EXPECT_EQ(cloth.firstParticle, 1u);
      EXPECT_EQ(cloth.particleCount, static_cast<std::uint32_t>(nx * ny));
      EXPECT_EQ(m->particleCount(), 1u + static_cast<std::size_t>(nx * ny));
      EXPECT_EQ(cloth.triangles.size(), 2 * quads);
      EXPECT_EQ(m->distances.size(), edges);
      EXPECT_EQ(distanceEdges(*m), triangleEdges(cloth.triangles));  // each triangle edge exactly once
      EXPECT_EQ(m->dihedralBendings.size(), bending == BendingModel::Dihedral ? edges - boundary : 0u);
      EXPECT_EQ(m->isometricBendings.size(), bending == BendingModel::Isometric ? edges - boundary : 0u);
      EXPECT_NEAR(totalMass(*m) - 1.0, 3.0, 1e-12);
      // Node (i, j) sits at origin + (i sizeX/(nx-1), 0, j sizeY/(ny-1)); default plane is XZ.
      const Vec3 last = m->initialPosition[cloth.firstParticle + cloth.particleCount - 1];
      EXPECT_NEAR((last - Vec3(1.0, 0.5, 1.5)).norm(), 0.0, 1e-14);
      // Rest lengths are the geometric lengths; all triangles face +Y (axisY x axisX).
      for (const DistanceConstraint& d : m->distances)
        EXPECT_NEAR(d.restLength, (m->initialPosition[d.particles[0]] - m->initialPosition[d.particles[1]]).norm(),
                    1e-15);
      const double area = 2.0 * 1.5 / static_cast<double>(2 * quads);
      for (const auto& t : cloth.triangles) {
        const Vec3 n = normal(*m, t);
        EXPECT_NEAR(n.y(), 2.0 * area, 1e-12);
        EXPECT_NEAR(n.x(), 0.0, 1e-15);
        EXPECT_NEAR(n.z(), 0.0, 1e-15);
      }
      // A flat cloth is at its bending rest state.
      for (const DihedralBendingConstraint& c : m->dihedralBendings) EXPECT_EQ(c.restAngle, 0.0);
      for (std::uint32_t i = 0; i < m->isometricBendings.size(); ++i) {
        std::vector<ParticleIndex> particles;
        std::vector<Vec3> gradient;
        const double C = detail::familyKernels(ConstraintFamily::IsometricBending)
                             .evaluate(*m, m->initialPosition.data(), nullptr, i, particles, gradient);
        EXPECT_LT(C, 1e-12);
      }
      ASSERT_EQ(m->objects.size(), 1u);
      EXPECT_EQ(m->objects[0].particles.size(), cloth.particleCount);
    }
  }
}

TEST(Builders, BendingConstraintsSitOnInteriorEdgesWithWingsOnEachSide) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = 4;
  def.nodesY = 3;
  def.bending = BendingModel::Dihedral;
  const GeneratedObject cloth = addClothGrid(b, def);
  const ModelPtr m = b.build();
  std::set<std::array<ParticleIndex, 3>> triangles;
  for (auto t : cloth.triangles) {
    std::sort(t.begin(), t.end());
    triangles.insert(t);
  }
  std::set<Edge> seen;
  for (const DihedralBendingConstraint& c : m->dihedralBendings) {
    const ParticleIndex* p = c.particles;
    std::array<ParticleIndex, 3> a = {p[0], p[1], p[2]}, bb = {p[0], p[1], p[3]};
    std::sort(a.begin(), a.end());
    std::sort(bb.begin(), bb.end());
    EXPECT_TRUE(triangles.count(a) && triangles.count(bb)) << "stencil is not two mesh triangles";
    EXPECT_NE(p[2], p[3]);
    EXPECT_TRUE(seen.insert(edge(p[0], p[1])).second) << "edge bent twice";
  }
}

TEST(Builders, TetBoxFillsTheBoxWithPositiveTetsAndAnOutwardSurface) {
  const int cx = 3, cy = 2, cz = 1;
  const Vec3 size(1.2, 0.5, 0.4);
  const Vec3 origin(0.3, -1.0, 2.0);
  const double density = 800.0;
  ModelBuilder b;
  TetBoxDef def;
  def.cellsX = cx;
  def.cellsY = cy;
  def.cellsZ = cz;
  def.size = size;
  def.origin = origin;
  def.density = density;
  const GeneratedObject box = addTetBox(b, def);
  const ModelPtr m = b.build();
  const int nx = cx + 1, ny = cy + 1, nz = cz + 1;
  const double volume = size.x() * size.y() * size.z();
  EXPECT_EQ(m->particleCount(), static_cast<std::size_t>(nx * ny * nz));
  EXPECT_EQ(m->tetVolumes.size(), static_cast<std::size_t>(6 * cx * cy * cz));
  EXPECT_EQ(box.tets.size(), m->tetVolumes.size());
  // Kuhn split: each tet holds a sixth of its cell, positively oriented.
  const double cell = volume / (cx * cy * cz);
  double sum = 0.0;
  for (const TetVolumeConstraint& t : m->tetVolumes) {
    EXPECT_NEAR(t.restVolume, cell / 6.0, 1e-15);
    sum += t.restVolume;
  }
  EXPECT_NEAR(sum, volume, 1e-14);
  EXPECT_NEAR(totalMass(*m), density * volume, 1e-10);
  // Node (i, j, k) is at origin + (i, j, k) * cell size.
  const Vec3 corner = m->initialPosition[static_cast<std::size_t>((1 * ny + 2) * nx + 3)];
  EXPECT_NEAR((corner - (origin + Vec3(size.x(), size.y(), size.z() / cz))).norm(), 0.0, 1e-14);
  // Every tet edge is a distance constraint: axis edges, one diagonal per face square (matching
  // across cells) and one body diagonal per cell.
  const int axisEdges = cx * ny * nz + nx * cy * nz + nx * ny * cz;
  const int faceDiagonals = cx * cy * nz + cx * ny * cz + nx * cy * cz;
  EXPECT_EQ(m->distances.size(), static_cast<std::size_t>(axisEdges + faceDiagonals + cx * cy * cz));
  // Surface: two triangles per boundary face square, all facing out of the box.
  const int squares = 2 * (cx * cy + cy * cz + cx * cz);
  EXPECT_EQ(box.triangles.size(), static_cast<std::size_t>(2 * squares));
  const Vec3 centre = origin + 0.5 * size;
  for (const auto& t : box.triangles) {
    const Vec3 centroid = (m->initialPosition[t[0]] + m->initialPosition[t[1]] + m->initialPosition[t[2]]) / 3.0;
    EXPECT_GT(normal(*m, t).dot(centroid - centre), 0.0);
  }
  EXPECT_NEAR(enclosedVolume(*m, box.triangles), volume, 1e-13);
}

TEST(Builders, TetMeshRejectsInvertedTets) {
  ModelBuilder b;
  const std::vector<Vec3> vertices = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
  EXPECT_THROW(addTetMesh(b, vertices, {{0, 2, 1, 3}}, TetMeshDef{}), Error);
  EXPECT_THROW(addTetMesh(b, vertices, {{0, 1, 2, 4}}, TetMeshDef{}), Error);
  const GeneratedObject tet = addTetMesh(b, vertices, {{0, 1, 2, 3}}, TetMeshDef{});
  const ModelPtr m = b.build();
  EXPECT_EQ(tet.triangles.size(), 4u);
  EXPECT_NEAR(enclosedVolume(*m, tet.triangles), 1.0 / 6.0, 1e-15);
  EXPECT_NEAR(totalMass(*m), 1000.0 / 6.0, 1e-10);
  EXPECT_EQ(m->distances.size(), 6u);
}

TEST(Builders, ChainIsEvenlySpacedWithAFixedStart) {
  for (bool fixStart : {true, false}) {
    ModelBuilder b;
    ChainDef def;
    def.particles = 7;
    def.start = Vec3(0, 2, 0);
    def.end = Vec3(3, 2, 4);  // length 5
    def.particleMass = 0.25;
    def.fixStart = fixStart;
    const GeneratedObject chain = addChain(b, def);
    const ModelPtr m = b.build();
    EXPECT_EQ(chain.particleCount, 7u);
    ASSERT_EQ(m->distances.size(), 6u);
    for (std::size_t k = 0; k < 6; ++k) {
      EXPECT_EQ(m->distances[k].particles[0], k);
      EXPECT_EQ(m->distances[k].particles[1], k + 1);
      EXPECT_NEAR(m->distances[k].restLength, 5.0 / 6.0, 1e-15);
    }
    EXPECT_NEAR((m->initialPosition[6] - def.end).norm(), 0.0, 1e-15);
    EXPECT_EQ(m->inverseMass[0], fixStart ? 0.0 : 4.0);
    for (std::size_t k = 1; k < 7; ++k) EXPECT_EQ(m->inverseMass[k], 4.0);
    EXPECT_NEAR(totalMass(*m), 7 * 0.25, 1e-15);  // a fixed particle keeps its mass
  }
}

TEST(Builders, TethersConnectEveryFreeParticleToEveryAnchor) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = 5;
  def.nodesY = 4;
  const GeneratedObject cloth = addClothGrid(b, def);
  const ParticleIndex a0 = cloth.firstParticle;
  const ParticleIndex a1 = cloth.firstParticle + 4;
  b.fixParticle(a0);
  b.fixParticle(a1);
  const std::size_t added =
      addTethers(b, {a0, a1}, cloth.firstParticle, cloth.particleCount, ConstraintParameters{}, 1.1);
  const ModelPtr m = b.build();
  EXPECT_EQ(added, 2u * (20u - 2u));
  ASSERT_EQ(m->maxDistances.size(), added);
  for (const MaxDistanceConstraint& t : m->maxDistances) {
    EXPECT_TRUE(t.particles[0] == a0 || t.particles[0] == a1);
    EXPECT_NE(m->inverseMass[t.particles[1]], 0.0);
    const double rest = (m->initialPosition[t.particles[0]] - m->initialPosition[t.particles[1]]).norm();
    EXPECT_NEAR(t.maxLength, 1.1 * rest, 1e-15);
  }
}

TEST(Builders, BalloonIsAClosedOutwardSphereMesh) {
  ModelBuilder b;
  BalloonDef def;
  def.rings = 6;
  def.segments = 10;
  def.radius = 0.4;
  def.centre = Vec3(0.5, 1.0, -2.0);
  def.totalMass = 0.3;
  def.pressure = 1.2;
  const GeneratedObject balloon = addBalloon(b, def);
  const ModelPtr m = b.build();
  const std::size_t vertices = 2 + 5 * 10;
  const std::size_t triangles = 2 * 10 * 5;
  EXPECT_EQ(balloon.particleCount, vertices);
  EXPECT_EQ(balloon.triangles.size(), triangles);
  // Closed surface: every edge in two triangles, so E = 3F/2 and Euler V - E + F = 2.
  EXPECT_EQ(m->distances.size(), 3 * triangles / 2);
  EXPECT_EQ(static_cast<long>(vertices) - static_cast<long>(m->distances.size()) + static_cast<long>(triangles), 2);
  for (const Vec3& x : m->initialPosition) EXPECT_NEAR((x - def.centre).norm(), 0.4, 1e-15);
  for (const auto& t : balloon.triangles) {
    const Vec3 centroid = (m->initialPosition[t[0]] + m->initialPosition[t[1]] + m->initialPosition[t[2]]) / 3.0;
    EXPECT_GT(normal(*m, t).dot(centroid - def.centre), 0.0);
  }
  ASSERT_EQ(m->globalVolumes.size(), 1u);
  EXPECT_EQ(m->globalVolumes[0].vertexCount, vertices);
  EXPECT_EQ(m->globalVolumes[0].pressure, 1.2);
  EXPECT_NEAR(m->globalVolumes[0].restVolume, enclosedVolume(*m, balloon.triangles), 1e-14);
  EXPECT_GT(m->globalVolumes[0].restVolume, 0.0);
  EXPECT_NEAR(totalMass(*m), 0.3, 1e-15);
}

}  // namespace
}  // namespace pliant
