// Signed distance grids: the geometry of a triangle-mesh collider (ColliderShape::Mesh).
//
// A closed, consistently oriented triangle mesh is turned once, at load time, into exact signed
// distances sampled at the nodes of a regular grid that covers the mesh bounds plus a padding band.
// The distance of a node is the exact Euclidean distance to the nearest triangle (found through a
// bounding-volume hierarchy); its sign comes from the angle-weighted pseudo-normal of the nearest
// feature (face, edge or vertex) of that triangle (Baerentzen & Aanaes 2005, "Signed distance
// computation using the angle weighted pseudonormal", IEEE TVCG 11(3)): the point is outside iff
// (p - c) . n >= 0, c the nearest point and n the pseudo-normal there. Between nodes the distance is
// interpolated trilinearly. The grid is immutable once built and shared by every copy of a Model.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pliant/math.h"

namespace pliant {

// How the grid is sized. With cellSize 0 the cell size is chosen so that the longest side of the
// padded box has maxCellsPerAxis cells.
struct SignedDistanceGridOptions {
  double cellSize = 0.0;     // m, edge of a cubic grid cell; 0: automatic (see maxCellsPerAxis)
  int maxCellsPerAxis = 64;  // cells along the longest padded side when cellSize is 0; in [1, 4096]
  // m, band around the mesh bounds that the grid covers; < 0: automatic, 10% of the longest side of
  // the mesh bounds. Always at least 2 cells, so that particles near the surface sample the grid.
  double padding = -1.0;
};

// Limit on the grid size: 2^24 nodes (128 MiB of distances). A larger grid is refused with an error.
inline constexpr std::uint64_t kMaxSignedDistanceGridNodes = std::uint64_t{1} << 24;

struct SignedDistanceGrid {
  // The source mesh in the collider's frame, outward oriented (kept so that viewers can draw it).
  std::vector<Vec3> vertices;                           // m
  std::vector<std::array<std::uint32_t, 3>> triangles;  // counter-clockwise seen from outside
  // The grid: node (i, j, k) is at origin + cellSize * (i, j, k); its distance is
  // distance[i + nodes[0] * (j + nodes[1] * k)].
  Vec3 origin = Vec3::Zero();    // m, collider frame
  double cellSize = 0.0;         // m
  std::array<int, 3> nodes{};    // node counts per axis, each >= 2
  std::vector<double> distance;  // m, signed (negative inside)
  bool flipped = false;          // the mesh was given inward-facing and has been turned outward

  // Builds the grid from a mesh in the collider's frame. Throws pliant::Error naming `source` (a
  // file name, or a word for an in-memory mesh) when the mesh is empty, has an out-of-range or
  // repeated vertex index, a non-finite vertex, only degenerate (zero-area) triangles, is not closed
  // (an edge used by one triangle), not manifold (an edge used by more than two) or inconsistently
  // oriented (an edge used twice in the same direction), encloses no volume, or when the options are
  // invalid or the grid would exceed kMaxSignedDistanceGridNodes. A closed mesh whose triangles all
  // face inward (negative enclosed volume) is flipped, not refused.
  static SignedDistanceGrid build(const std::vector<Vec3>& vertices,
                                  const std::vector<std::array<std::uint32_t, 3>>& triangles,
                                  const SignedDistanceGridOptions& options, const std::string& source);

  // Signed distance (m) at q (collider frame) and its unit gradient, the outward normal. Inside the
  // grid: trilinear interpolation and its gradient; where that gradient vanishes (a medial point),
  // central differences over one cell, then the frame's +y axis. Outside the grid: with c the
  // nearest point of the grid box, s = c - phi(c) n(c) estimates its nearest surface point and the
  // result is |q - s| with normal (q - s) / |q - s|: continuous at the box, positive (far points are
  // outside) and close to the true distance. A non-finite q gives NaN and +y. Allocation-free;
  // never throws.
  double sample(const Vec3& q, Vec3& gradient) const;
  double sample(const Vec3& q) const;

  Vec3 lower() const { return origin; }
  Vec3 upper() const { return origin + cellSize * Vec3(nodes[0] - 1, nodes[1] - 1, nodes[2] - 1); }
};

// Exact unsigned distance (m) from p to the mesh (every triangle tried; for tests and checks).
double bruteForceMeshDistance(const std::vector<Vec3>& vertices,
                              const std::vector<std::array<std::uint32_t, 3>>& triangles, const Vec3& p);

}  // namespace pliant
