// Soft bodies from a closed surface (issue 18, src/core/embedded_surface.cpp): the embedding grid
// covers the surface, the skin weights reproduce it, the kept volume converges to the solid's, and
// surfaces that bound no solid are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "pliant/builders.h"
#include "pliant/error.h"

namespace pliant {
namespace {

struct Surface {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> triangles;
};

// A closed UV sphere, outward counter-clockwise.
Surface uvSphere(const Vec3& centre, double radius, int rings, int segments) {
  Surface s;
  s.vertices.push_back(centre + Vec3(0, radius, 0));
  for (int r = 1; r < rings; ++r) {
    const double theta = std::numbers::pi * r / rings;
    for (int k = 0; k < segments; ++k) {
      const double phi = 2.0 * std::numbers::pi * k / segments;
      s.vertices.push_back(
          centre + radius * Vec3(std::sin(theta) * std::cos(phi), std::cos(theta), std::sin(theta) * std::sin(phi)));
    }
  }
  s.vertices.push_back(centre - Vec3(0, radius, 0));
  const auto bottom = static_cast<std::uint32_t>(s.vertices.size() - 1);
  const auto ring = [&](int r, int k) { return static_cast<std::uint32_t>(1 + (r - 1) * segments + (k % segments)); };
  for (int k = 0; k < segments; ++k) {
    s.triangles.push_back({0, ring(1, k + 1), ring(1, k)});
    s.triangles.push_back({bottom, ring(rings - 1, k), ring(rings - 1, k + 1)});
    for (int r = 1; r + 1 < rings; ++r) {
      s.triangles.push_back({ring(r, k), ring(r, k + 1), ring(r + 1, k + 1)});
      s.triangles.push_back({ring(r, k), ring(r + 1, k + 1), ring(r + 1, k)});
    }
  }
  return s;
}

double meshVolume(const Surface& s) {
  double six = 0.0;
  for (const auto& t : s.triangles) six += s.vertices[t[0]].dot(s.vertices[t[1]].cross(s.vertices[t[2]]));
  return six / 6.0;
}

// An axis-aligned box surface [lo, hi], 12 triangles, outward.
Surface boxSurface(const Vec3& lo, const Vec3& hi) {
  Surface s;
  for (int k = 0; k < 8; ++k)
    s.vertices.push_back(Vec3(k & 1 ? hi.x() : lo.x(), k & 2 ? hi.y() : lo.y(), k & 4 ? hi.z() : lo.z()));
  s.triangles = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
                 {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};
  return s;
}

TEST(EmbeddedSurface, SkinWeightsReproduceEveryVertexAtRest) {
  const Surface sphere = uvSphere(Vec3(0.3, 1.2, -0.4), 0.5, 16, 24);
  ASSERT_GT(meshVolume(sphere), 0.0);
  for (double h : {0.3, 0.11, 0.05}) {
    const SurfaceEmbedding e = embedSurface(sphere.vertices, sphere.triangles, h);
    ASSERT_EQ(e.skinWeights.size(), sphere.vertices.size());
    for (std::size_t v = 0; v < sphere.vertices.size(); ++v) {
      const auto& w = e.skinWeights[v];
      double sum = 0.0;
      Vec3 x = Vec3::Zero();
      for (int k = 0; k < 4; ++k) {
        EXPECT_GE(w[k], -1e-12) << "h " << h << " vertex " << v;
        EXPECT_LE(w[k], 1.0 + 1e-12) << "h " << h << " vertex " << v;
        sum += w[k];
        x += w[k] * e.nodes[e.skinTets[v][k]];
      }
      EXPECT_NEAR(sum, 1.0, 1e-14);
      EXPECT_LT((x - sphere.vertices[v]).norm(), 1e-12) << "h " << h << " vertex " << v;
    }
    // Every tet positive, every node used.
    std::vector<int> used(e.nodes.size(), 0);
    for (const auto& t : e.tets) {
      const Vec3& x0 = e.nodes[t[0]];
      EXPECT_GT((e.nodes[t[1]] - x0).dot((e.nodes[t[2]] - x0).cross(e.nodes[t[3]] - x0)), 0.0);
      for (auto n : t) used[n] = 1;
    }
    EXPECT_EQ(std::count(used.begin(), used.end(), 0), 0);
    EXPECT_EQ(e.tets.size() % 6, 0u);
    EXPECT_NEAR(e.keptVolume, static_cast<double>(e.tets.size() / 6) * h * h * h, 1e-12);
  }
}

TEST(EmbeddedSurface, KeptVolumeApproachesTheSolidAsCellsShrink) {
  const Surface sphere = uvSphere(Vec3::Zero(), 0.5, 48, 96);
  const double volume = meshVolume(sphere);
  double previous = std::numeric_limits<double>::infinity();
  // Measured relative excess: 1.08, 0.47, 0.24, 0.11, 0.054 (about 4.4 h / m).
  for (double h : {0.2, 0.1, 0.05, 0.025, 0.0125}) {
    const SurfaceEmbedding e = embedSurface(sphere.vertices, sphere.triangles, h);
    EXPECT_NEAR(e.surfaceVolume, volume, 1e-12);
    // Every cube whose centre is inside the polyhedron's inscribed sphere is kept. At h = 0.0125 a
    // row of centres lies exactly in the equator's plane, 3e-17 m below the equator's vertices.
    std::size_t inside = 0;
    const double origin = -0.5 * h * e.cells[0];
    for (int k = 0; k < e.cells[2]; ++k)
      for (int j = 0; j < e.cells[1]; ++j)
        for (int i = 0; i < e.cells[0]; ++i)
          if (Vec3(origin + (i + 0.5) * h, origin + (j + 0.5) * h, origin + (k + 0.5) * h).norm() < 0.99 * 0.5)
            ++inside;
    std::size_t keptInside = 0;
    for (std::size_t t = 0; t < e.tets.size(); t += 6) {
      Vec3 centre = Vec3::Zero();
      for (std::size_t u = t; u < t + 6; ++u)
        for (auto q : e.tets[u]) centre += e.nodes[q] / 24.0;
      if (centre.norm() < 0.99 * 0.5) ++keptInside;
    }
    EXPECT_EQ(keptInside, inside) << "h " << h;
    const double error = (e.keptVolume - volume) / volume;
    // Kept cubes cover the solid (those the surface passes through included), a shell of about
    // one cube around it: the excess is about area * h, shrinking with h.
    EXPECT_GT(error, 0.0) << "h " << h;
    EXPECT_LT(error, 0.95 * previous) << "h " << h;
    EXPECT_LT(error, 3.0 * 4.0 * std::numbers::pi * 0.25 * h / volume) << "h " << h;
    previous = error;
  }
  EXPECT_LT(previous, 0.25);
}

TEST(EmbeddedSurface, BoxSurfaceKeepsItsCubes) {
  // A box of 4 x 3 x 2 cubes of side 0.25 whose faces lie between grid planes: the centres inside
  // are exactly its cubes, plus those the surface (on the cube faces) passes through.
  const Surface box = boxSurface(Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.75, 0.5));
  const SurfaceEmbedding e = embedSurface(box.vertices, box.triangles, 0.25);
  EXPECT_NEAR(e.surfaceVolume, 0.375, 1e-15);
  EXPECT_EQ(e.cells, (std::array<int, 3>{5, 4, 3}));
  // The grid (5 x 4 x 3 cubes, centred) puts the box's faces through cube middles: every cube is
  // passed through or inside.
  EXPECT_EQ(e.tets.size(), 6u * 5 * 4 * 3);
  // Inside-out input is turned outward.
  Surface flipped = box;
  for (auto& t : flipped.triangles) std::swap(t[1], t[2]);
  const SurfaceEmbedding f = embedSurface(flipped.vertices, flipped.triangles, 0.25);
  EXPECT_NEAR(f.surfaceVolume, 0.375, 1e-15);
  EXPECT_EQ(f.tets.size(), e.tets.size());
}

TEST(EmbeddedSurface, InsideTestFindsTheInteriorOfAThinShell) {
  // Two concentric spheres, the inner one inward: a hollow ball. Cubes at the centre are outside.
  Surface shell = uvSphere(Vec3::Zero(), 1.0, 24, 48);
  const Surface inner = uvSphere(Vec3::Zero(), 0.5, 24, 48);
  const auto offset = static_cast<std::uint32_t>(shell.vertices.size());
  shell.vertices.insert(shell.vertices.end(), inner.vertices.begin(), inner.vertices.end());
  for (const auto& t : inner.triangles) shell.triangles.push_back({t[0] + offset, t[2] + offset, t[1] + offset});
  const SurfaceEmbedding e = embedSurface(shell.vertices, shell.triangles, 0.1);
  const double solid = 4.0 / 3.0 * std::numbers::pi * (1.0 - 0.125);
  EXPECT_NEAR(e.surfaceVolume, solid, 0.02 * solid);
  EXPECT_GT(e.keptVolume, e.surfaceVolume);
  EXPECT_LT(e.keptVolume, 1.4 * e.surfaceVolume);
  for (const Vec3& x : e.nodes) EXPECT_GT(x.norm(), 0.5 - 0.1 * std::sqrt(3.0) - 1e-9);
}

TEST(EmbeddedSurface, RefusesSurfacesThatBoundNoSolid) {
  Surface open = uvSphere(Vec3::Zero(), 0.5, 8, 12);
  open.triangles.pop_back();
  try {
    embedSurface(open.vertices, open.triangles, 0.1);
    FAIL() << "an open surface was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the surface is open: edge"), std::string::npos) << e.what();
  }
  Surface nonManifold = boxSurface(Vec3::Zero(), Vec3::Ones());
  nonManifold.triangles.push_back({0, 2, 3});
  EXPECT_THROW(
      {
        try {
          embedSurface(nonManifold.vertices, nonManifold.triangles, 0.1);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("not manifold"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  Surface twisted = boxSurface(Vec3::Zero(), Vec3::Ones());
  std::swap(twisted.triangles[0][1], twisted.triangles[0][2]);
  EXPECT_THROW(embedSurface(twisted.vertices, twisted.triangles, 0.1), Error);
  // A closed surface of zero volume: a tetrahedron flattened into a plane.
  const Surface flat{{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0.2, 0.2, 0)},
                     {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}}};
  try {
    embedSurface(flat.vertices, flat.triangles, 0.1);
    FAIL() << "a flat surface was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("encloses no volume"), std::string::npos) << e.what();
  }
  const Surface box = boxSurface(Vec3::Zero(), Vec3::Ones());
  EXPECT_THROW(embedSurface(box.vertices, box.triangles, 0.0), Error);
  EXPECT_THROW(embedSurface(box.vertices, box.triangles, 1e-4, 1'000'000), Error);
}

TEST(EmbeddedSurface, BuilderMakesATetSoftBodyWithTheSolidsMassAndASkin) {
  const Surface sphere = uvSphere(Vec3::Zero(), 0.25, 12, 16);
  ModelBuilder builder;
  SoftBodyFromSurfaceDef def;
  def.name = "ball";
  def.cellSize = 0.1;
  def.density = 300.0;
  def.translation = Vec3(0.0, 1.0, 0.0);
  const GeneratedObject made = addSoftBodyFromSurface(builder, sphere.vertices, sphere.triangles, def);
  ASSERT_TRUE(made.skin);
  EXPECT_EQ(made.skin->vertexCount(), sphere.vertices.size());
  EXPECT_EQ(made.skin->triangles.size(), sphere.triangles.size());
  EXPECT_FALSE(made.tets.empty());
  double mass = 0.0;
  for (std::uint32_t p = 0; p < made.particleCount; ++p) mass += builder.model().mass[made.firstParticle + p];
  EXPECT_NEAR(mass, 300.0 * meshVolume(sphere), 1e-9 * mass);
  std::vector<Vec3> skin(made.skin->vertexCount());
  made.skin->pose(builder.model().initialPosition, skin);
  for (std::size_t v = 0; v < skin.size(); ++v)
    EXPECT_LT((skin[v] - (sphere.vertices[v] + def.translation)).norm(), 1e-12);
  SoftBodyFromSurfaceDef bad = def;
  bad.density = -1.0;
  EXPECT_THROW(addSoftBodyFromSurface(builder, sphere.vertices, sphere.triangles, bad), Error);
  Surface open = sphere;
  open.triangles.pop_back();
  try {
    addSoftBodyFromSurface(builder, open.vertices, open.triangles, def);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("soft body 'ball': the surface is open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pliant
