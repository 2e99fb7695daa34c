// Unit tests of src/core/collision/signed_distance_grid.cpp and the Mesh collider shape: the grid of a
// closed cube and of an icosphere against their analytic distances (at nodes, between nodes, far
// outside), normals away from edges, poses, inward meshes, and every refused input.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pliant/colliders.h"
#include "pliant/error.h"
#include "pliant/io/mesh_io.h"
#include "pliant/model.h"
#include "pliant/signed_distance_grid.h"

namespace pliant {
namespace {

std::string meshPath(const std::string& name) { return std::string(PLIANT_TEST_DATA_DIR) + "/meshes/" + name; }

// Exact signed distance to the box [-half, half]^3.
double boxDistance(const Vec3& q, double half) {
  const Vec3 d = q.cwiseAbs() - Vec3::Constant(half);
  return d.cwiseMax(0.0).norm() + std::min(d.maxCoeff(), 0.0);
}

SignedDistanceGrid gridOf(const std::string& file, double cellSize) {
  const io::TriangleMesh m = io::readObj(meshPath(file));
  SignedDistanceGridOptions options;
  options.cellSize = cellSize;
  return SignedDistanceGrid::build(m.vertices, m.triangles, options, file);
}

std::vector<Vec3> randomPoints(double extent, int count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-extent, extent);
  std::vector<Vec3> points;
  for (int i = 0; i < count; ++i) points.emplace_back(u(rng), u(rng), u(rng));
  return points;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no pliant::Error thrown";
  return {};
}

TEST(SignedDistanceGrid, CubeNodesHoldTheExactDistance) {
  const double h = 0.05;
  const SignedDistanceGrid g = gridOf("sdf_cube.obj", h);
  EXPECT_EQ(g.cellSize, h);
  EXPECT_FALSE(g.flipped);
  // The grid covers the mesh bounds plus the padding (here 2 cells: 10% of 1 m is less than that... equal).
  EXPECT_LE(g.lower().maxCoeff(), -0.5 - 2 * h + 1e-12);
  EXPECT_GE(g.upper().minCoeff(), 0.5 + 2 * h - 1e-12);
  ASSERT_EQ(g.distance.size(), static_cast<std::size_t>(g.nodes[0]) * g.nodes[1] * g.nodes[2]);
  double worst = 0.0;
  for (int k = 0; k < g.nodes[2]; ++k)
    for (int j = 0; j < g.nodes[1]; ++j)
      for (int i = 0; i < g.nodes[0]; ++i) {
        const Vec3 p = g.origin + h * Vec3(i, j, k);
        const double stored = g.distance[i + g.nodes[0] * (j + g.nodes[1] * k)];
        worst = std::max(worst, std::abs(stored - boxDistance(p, 0.5)));
      }
  EXPECT_LT(worst, 1e-12);
}

TEST(SignedDistanceGrid, CubeDistanceWithinACellEverywhereAndOutsideFarAway) {
  const double h = 0.05;
  const SignedDistanceGrid g = gridOf("sdf_cube.obj", h);
  int inside = 0, outside = 0, far = 0;
  std::vector<Vec3> points = randomPoints(0.7, 3000, 10);
  for (const Vec3& q : randomPoints(3.0, 2000, 11)) points.push_back(q);
  for (const Vec3& q : points) {
    const double exact = boxDistance(q, 0.5);
    const double phi = g.sample(q);
    const bool inGrid = (q.array() >= g.lower().array()).all() && (q.array() <= g.upper().array()).all();
    if (inGrid) {
      // Trilinear interpolation of a distance is exact where it is linear and off by under half a
      // cell across a kink (the medial planes inside, the rounded edges outside).
      EXPECT_NEAR(phi, exact, 0.5 * h) << q.transpose();
      (exact < 0.0 ? inside : outside) += 1;
    } else {
      // Beyond the grid: outside, and within a cell of the truth (the surface point estimated from
      // the box is off by the interpolation error; at most half a cell here).
      EXPECT_NEAR(phi, exact, 0.5 * h) << q.transpose();
      EXPECT_GT(phi, 0.0);
      ++far;
    }
  }
  EXPECT_GT(inside, 50);
  EXPECT_GT(outside, 50);
  EXPECT_GT(far, 1500);
  // Straight out along an axis the extrapolation is exact.
  EXPECT_NEAR(g.sample(Vec3(0.0, 100.0, 0.0)), 99.5, 1e-9);
  EXPECT_NEAR(g.sample(Vec3(0.0, 0.0, 0.0)), -0.5, 1e-12);
  Vec3 n;
  EXPECT_TRUE(std::isnan(g.sample(Vec3(std::nan(""), 0.0, 0.0), n)));
  EXPECT_EQ(n, Vec3::UnitY());
  EXPECT_NEAR(g.sample(Vec3(0.0, -1e300, 0.0)), 1e300, 1e288);
}

TEST(SignedDistanceGrid, CubeNormalsAreTheFaceNormalsAwayFromEdges) {
  const double h = 0.05;
  const SignedDistanceGrid g = gridOf("sdf_cube.obj", h);
  int checked = 0;
  for (const Vec3& q : randomPoints(0.65, 4000, 12)) {
    // Outside over a face, or inside nearer one face than any other, by more than two cells: the
    // distance is linear over the whole cell there, so its gradient is exact.
    const Vec3 a = q.cwiseAbs();
    int axis = 0;
    for (int k = 1; k < 3; ++k)
      if (a[k] > a[axis]) axis = k;
    double second = 0.0;
    for (int k = 0; k < 3; ++k)
      if (k != axis) second = std::max(second, a[k]);
    const bool overFace = a[axis] > 0.5 + 2 * h && second < 0.5 - 2 * h;
    const bool insideNearFace = a[axis] < 0.5 - 2 * h && a[axis] - second > 4 * h && a[axis] > 0.15;
    if (!overFace && !insideNearFace) continue;
    Vec3 expected = Vec3::Zero();
    expected[axis] = q[axis] < 0.0 ? -1.0 : 1.0;
    Vec3 n;
    g.sample(q, n);
    EXPECT_LT((n - expected).norm(), 1e-9) << q.transpose();
    ++checked;
  }
  EXPECT_GT(checked, 200);
}

TEST(SignedDistanceGrid, IcosphereMatchesTheSphereWithinFacetingAndACell) {
  const double radius = 0.5, h = 0.04;
  const SignedDistanceGrid g = gridOf("sdf_icosphere.obj", h);
  // The facets lie between the inscribed radius (distance of the nearest face plane) and the sphere.
  double inscribed = radius;
  for (const auto& t : g.triangles) {
    const Vec3 a = g.vertices[t[0]], b = g.vertices[t[1]], c = g.vertices[t[2]];
    inscribed = std::min(inscribed, std::abs((b - a).cross(c - a).normalized().dot(a)));
  }
  const double faceting = radius - inscribed;
  EXPECT_GT(faceting, 0.0);
  EXPECT_LT(faceting, 0.02);
  int checked = 0;
  for (const Vec3& q : randomPoints(1.2, 3000, 13)) {
    Vec3 n;
    const double phi = g.sample(q, n);
    const double sphere = q.norm() - radius;
    if (!(q.array().abs() < g.upper().array()).all()) {
      // Beyond the grid: outside, close to the sphere (the facet normal at the box, used to step
      // back to the surface, tilts from radial: a second-order error growing with the distance),
      // the normal nearly radial.
      EXPECT_NEAR(phi, sphere, faceting + h + 0.03 * sphere) << q.transpose();
      EXPECT_GT(n.dot(q.normalized()), 0.97) << q.transpose();
      continue;
    }
    EXPECT_NEAR(phi, sphere, faceting + h) << q.transpose();
    // Against the exact distance to the polyhedron, signed by the sphere where that is unambiguous.
    if (std::abs(sphere) > faceting + h) {
      const double exact = bruteForceMeshDistance(g.vertices, g.triangles, q);
      EXPECT_NEAR(phi, sphere < 0.0 ? -exact : exact, 0.5 * h) << q.transpose();
      ++checked;
    }
    // The normal points away from the centre wherever the centre is not the nearest kink.
    if (q.norm() > 0.3) {
      EXPECT_GT(n.dot(q.normalized()), 0.97) << q.transpose();
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(SignedDistanceGrid, DefaultSizeUsesMaxCellsPerAxisAndPadding) {
  const io::TriangleMesh m = io::readObj(meshPath("sdf_cube.obj"));
  SignedDistanceGridOptions options;  // 64 cells along the longest padded side, padding 10%
  const SignedDistanceGrid g = SignedDistanceGrid::build(m.vertices, m.triangles, options, "cube");
  EXPECT_NEAR(g.cellSize, 1.2 / 64, 1e-15);
  EXPECT_EQ(g.nodes[0], 65);
  EXPECT_EQ(g.nodes[1], 65);
  EXPECT_EQ(g.nodes[2], 65);
  EXPECT_NEAR(g.lower().x(), -0.6, 1e-12);
  EXPECT_NEAR(g.upper().z(), 0.6, 1e-12);
  options.maxCellsPerAxis = 8;
  options.padding = 0.0;  // raised to two cells
  const SignedDistanceGrid coarse = SignedDistanceGrid::build(m.vertices, m.triangles, options, "cube");
  EXPECT_NEAR(coarse.cellSize, 1.0 / 8, 1e-15);
  EXPECT_NEAR(coarse.upper().y(), 0.5 + 2 * coarse.cellSize, 1e-12);
}

TEST(SignedDistanceGrid, InwardFacingMeshIsFlipped) {
  const SignedDistanceGrid g = gridOf("sdf_inward_cube.obj", 0.1);
  EXPECT_TRUE(g.flipped);
  EXPECT_NEAR(g.sample(Vec3::Zero()), -0.5, 1e-12);
  EXPECT_NEAR(g.sample(Vec3(0.0, 0.8, 0.0)), 0.3, 1e-12);
  // The stored triangles face outward now: positive enclosed volume.
  double volume = 0.0;
  for (const auto& t : g.triangles) volume += g.vertices[t[0]].dot(g.vertices[t[1]].cross(g.vertices[t[2]])) / 6.0;
  EXPECT_NEAR(volume, 1.0, 1e-12);
}

TEST(MeshCollider, PoseMovesTheMeshLikeTheBoxCollider) {
  const Quat rotation(Eigen::AngleAxisd(0.6, Vec3(1.0, -2.0, 0.5).normalized()));
  const Vec3 position(0.3, 1.1, -0.4);
  SignedDistanceGridOptions options;
  options.cellSize = 0.05;
  const Collider mesh = io::readMeshCollider(meshPath("sdf_cube.obj"), position, rotation, options, {0.4, 0.3, 0.1});
  const Collider box = Collider::box(position, Vec3::Constant(0.5), rotation);
  EXPECT_EQ(mesh.shape, ColliderShape::Mesh);
  EXPECT_STREQ(colliderShapeName(mesh.shape), "mesh");
  EXPECT_EQ(mesh.material.staticFriction, 0.4);
  for (const Vec3& local : randomPoints(0.65, 500, 14)) {
    const Vec3 x = position + rotation * local;
    Vec3 nMesh, nBox;
    const double dMesh = colliderDistance(mesh, mesh.pose, x, nMesh);
    const double dBox = colliderDistance(box, box.pose, x, nBox);
    EXPECT_NEAR(dMesh, dBox, 0.5 * options.cellSize) << local.transpose();
    EXPECT_NEAR(nMesh.norm(), 1.0, 1e-12);
  }
  // Scale is applied to the OBJ coordinates before the grid is built.
  const Collider scaled =
      io::readMeshCollider(meshPath("sdf_cube.obj"), Vec3::Zero(), Quat::Identity(), options, {}, Vec3(2.0, 1.0, 1.0));
  Vec3 n;
  EXPECT_NEAR(colliderDistance(scaled, scaled.pose, Vec3(1.5, 0.0, 0.0), n), 0.5, 1e-12);
  EXPECT_NEAR(n.x(), 1.0, 1e-12);
  // Copies share the immutable grid.
  ModelBuilder b;
  b.addCollider(mesh);
  const ModelPtr model = b.build();
  const Model copy = *model;
  EXPECT_EQ(copy.colliders[0].grid.get(), mesh.grid.get());
}

TEST(MeshCollider, RefusedMeshesNameTheFileAndTheProblem) {
  SignedDistanceGridOptions options;
  options.cellSize = 0.1;
  auto load = [&](const std::string& name) {
    return errorOf([&] { (void)io::readMeshCollider(meshPath(name), Vec3::Zero(), Quat::Identity(), options); });
  };
  std::string e = load("bad/sdf_open_cube.obj");
  EXPECT_NE(e.find(meshPath("bad/sdf_open_cube.obj") + ": not closed: the edge between vertices"), std::string::npos)
      << e;
  EXPECT_NE(e.find("belongs to 1 triangle"), std::string::npos) << e;
  e = load("bad/sdf_nonmanifold.obj");
  EXPECT_NE(e.find("sdf_nonmanifold.obj: not manifold: the edge between vertices 1 and 2 belongs to 4 triangles"),
            std::string::npos)
      << e;
  e = load("bad/sdf_inconsistent_cube.obj");
  EXPECT_NE(e.find("sdf_inconsistent_cube.obj: inconsistent orientation: the edge between vertices"), std::string::npos)
      << e;
  e = load("bad/sdf_flat.obj");
  EXPECT_NE(e.find("sdf_flat.obj: every triangle is degenerate"), std::string::npos) << e;
  e = load("no_such_mesh.obj");
  EXPECT_NE(e.find("no_such_mesh.obj: cannot open"), std::string::npos) << e;

  const io::TriangleMesh cube = io::readObj(meshPath("sdf_cube.obj"));
  auto build = [&](const std::vector<Vec3>& v, const std::vector<std::array<std::uint32_t, 3>>& t,
                   const SignedDistanceGridOptions& o) {
    return errorOf([&] { (void)SignedDistanceGrid::build(v, t, o, "in-memory"); });
  };
  EXPECT_EQ(build({}, {}, options), "in-memory: the mesh is empty; expected a closed triangle mesh");
  EXPECT_NE(build(cube.vertices, {{0, 1, 9}}, options).find("triangle 1 uses vertex 10 of 8"), std::string::npos);
  EXPECT_NE(build(cube.vertices, {{0, 1, 1}}, options).find("triangle 1 repeats a vertex"), std::string::npos);
  std::vector<Vec3> nan = cube.vertices;
  nan[2].y() = std::nan("");
  EXPECT_NE(build(nan, cube.triangles, options).find("vertex 3 is not finite"), std::string::npos);
  SignedDistanceGridOptions bad = options;
  bad.cellSize = -0.1;
  EXPECT_NE(build(cube.vertices, cube.triangles, bad).find("in-memory: cell size must be a finite number > 0 m"),
            std::string::npos);
  bad.cellSize = std::numeric_limits<double>::infinity();
  EXPECT_NE(build(cube.vertices, cube.triangles, bad).find("cell size"), std::string::npos);
  bad.cellSize = 1e-4;  // 12,000 cells per axis
  e = build(cube.vertices, cube.triangles, bad);
  EXPECT_NE(e.find("more than the limit of 16777216"), std::string::npos) << e;
  EXPECT_NE(e.find("use a larger cell size"), std::string::npos) << e;
  bad = options;
  bad.cellSize = 0.0;
  bad.maxCellsPerAxis = 0;
  EXPECT_NE(build(cube.vertices, cube.triangles, bad).find("max cells per axis must be in [1, 4096]"),
            std::string::npos);
  // Two disjoint closed cubes are fine; one cube plus a stray triangle is not closed.
  std::vector<std::array<std::uint32_t, 3>> stray = cube.triangles;
  stray.push_back({0, 1, 2});
  EXPECT_NE(build(cube.vertices, stray, options).find("not manifold"), std::string::npos);

  // A Mesh collider without its grid is refused by the model.
  Collider empty;
  empty.shape = ColliderShape::Mesh;
  ModelBuilder b;
  EXPECT_NE(errorOf([&] { b.addCollider(empty); }).find("needs its signed distance grid"), std::string::npos);
  EXPECT_NE(errorOf([&] {
              (void)io::readMeshCollider(meshPath("sdf_cube.obj"), Vec3::Zero(), Quat::Identity(), options, {},
                                         Vec3(1.0, 0.0, 1.0));
            }).find("scale factors must be finite numbers > 0"),
            std::string::npos);
}

}  // namespace
}  // namespace pliant
