// Closed triangle meshes for the rigid shape tests: a box, an icosphere, a capsule, all outward.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <utility>
#include <vector>

#include "pliant/colliders.h"
#include "pliant/math.h"

namespace pliant::test {

struct TriangleMesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> triangles;
};

// Turns every triangle of a mesh that is star-shaped about the origin outward.
inline void orientOutward(TriangleMesh& mesh) {
  for (auto& t : mesh.triangles) {
    const Vec3& a = mesh.vertices[t[0]];
    const Vec3& b = mesh.vertices[t[1]];
    const Vec3& c = mesh.vertices[t[2]];
    if ((b - a).cross(c - a).dot(a + b + c) < 0.0) std::swap(t[1], t[2]);
  }
}

inline TriangleMesh boxMesh(const Vec3& halfExtents) {
  TriangleMesh mesh;
  for (int i = 0; i < 8; ++i)
    mesh.vertices.push_back(Vec3((i & 1) ? halfExtents.x() : -halfExtents.x(),
                                 (i & 2) ? halfExtents.y() : -halfExtents.y(),
                                 (i & 4) ? halfExtents.z() : -halfExtents.z()));
  // Two triangles per face (vertex bit k is the coordinate k's sign).
  const std::uint32_t quads[6][4] = {{0, 2, 6, 4}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                     {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 5, 7, 6}};
  for (const auto& q : quads) {
    mesh.triangles.push_back({q[0], q[1], q[2]});
    mesh.triangles.push_back({q[0], q[2], q[3]});
  }
  orientOutward(mesh);
  return mesh;
}

// An icosahedron subdivided `levels` times, its vertices on the sphere of `radius`.
inline TriangleMesh icosphere(double radius, int levels) {
  TriangleMesh mesh;
  const double g = (1.0 + std::sqrt(5.0)) / 2.0;
  const double corners[12][3] = {{-1, g, 0},  {1, g, 0},  {-1, -g, 0}, {1, -g, 0}, {0, -1, g},  {0, 1, g},
                                 {0, -1, -g}, {0, 1, -g}, {g, 0, -1},  {g, 0, 1},  {-g, 0, -1}, {-g, 0, 1}};
  for (const auto& c : corners) mesh.vertices.push_back(Vec3(c[0], c[1], c[2]).normalized() * radius);
  mesh.triangles = {{0, 11, 5},  {0, 5, 1},  {0, 1, 7},  {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                    {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
                    {3, 8, 9},   {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
  for (int level = 0; level < levels; ++level) {
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> midpoints;
    auto midpoint = [&](std::uint32_t a, std::uint32_t b) {
      const auto key = std::minmax(a, b);
      const auto found = midpoints.find(key);
      if (found != midpoints.end()) return found->second;
      const auto index = static_cast<std::uint32_t>(mesh.vertices.size());
      mesh.vertices.push_back((mesh.vertices[a] + mesh.vertices[b]).normalized() * radius);
      midpoints.emplace(key, index);
      return index;
    };
    std::vector<std::array<std::uint32_t, 3>> finer;
    for (const auto& t : mesh.triangles) {
      const std::uint32_t ab = midpoint(t[0], t[1]), bc = midpoint(t[1], t[2]), ca = midpoint(t[2], t[0]);
      finer.push_back({t[0], ab, ca});
      finer.push_back({t[1], bc, ab});
      finer.push_back({t[2], ca, bc});
      finer.push_back({ab, bc, ca});
    }
    mesh.triangles = std::move(finer);
  }
  orientOutward(mesh);
  return mesh;
}

// A capsule around the y axis (axis from -halfHeight to +halfHeight): `segments` around, `rings`
// per hemispherical cap.
inline TriangleMesh capsuleMesh(double radius, double halfHeight, int segments, int rings) {
  TriangleMesh mesh;
  mesh.vertices.push_back(Vec3(0, halfHeight + radius, 0));  // top pole
  // Rings from the top cap (ring 1 near the pole) to the bottom cap; the two equators repeat the
  // angle at y = +h and y = -h.
  std::vector<std::pair<double, double>> ringAngle;  // (polar angle, y offset)
  for (int i = 1; i <= rings; ++i) ringAngle.push_back({0.5 * std::numbers::pi * i / rings, halfHeight});
  for (int i = 0; i < rings; ++i)
    ringAngle.push_back({0.5 * std::numbers::pi * (1.0 + double(i) / rings), -halfHeight});
  for (const auto& [theta, y] : ringAngle)
    for (int j = 0; j < segments; ++j) {
      const double phi = 2.0 * std::numbers::pi * j / segments;
      mesh.vertices.push_back(Vec3(radius * std::sin(theta) * std::cos(phi), y + radius * std::cos(theta),
                                   radius * std::sin(theta) * std::sin(phi)));
    }
  const auto bottom = static_cast<std::uint32_t>(mesh.vertices.size());
  mesh.vertices.push_back(Vec3(0, -halfHeight - radius, 0));
  const auto ringCount = static_cast<std::uint32_t>(ringAngle.size());
  const auto n = static_cast<std::uint32_t>(segments);
  auto at = [&](std::uint32_t ring, std::uint32_t j) { return 1 + ring * n + j % n; };
  for (std::uint32_t j = 0; j < n; ++j) {
    mesh.triangles.push_back({0, at(0, j), at(0, j + 1)});
    mesh.triangles.push_back({bottom, at(ringCount - 1, j + 1), at(ringCount - 1, j)});
    for (std::uint32_t r = 0; r + 1 < ringCount; ++r) {
      mesh.triangles.push_back({at(r, j), at(r + 1, j), at(r + 1, j + 1)});
      mesh.triangles.push_back({at(r, j), at(r + 1, j + 1), at(r, j + 1)});
    }
  }
  orientOutward(mesh);
  return mesh;
}

inline TriangleMesh transformed(TriangleMesh mesh, const Quat& rotation, const Vec3& translation) {
  for (Vec3& v : mesh.vertices) v = rotation * v + translation;
  return mesh;
}

}  // namespace pliant::test
