// Geometric queries: whether triangles of a surface pass through each other, used to measure contact
// quality (self-collision, pliant/model.h Model::selfCollision, must keep this count at zero), and
// the boundary surface of a tet mesh.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pliant/constraints.h"
#include "pliant/math.h"

namespace pliant {

// Whether the closed triangles (a0, a1, a2) and (b0, b1, b2) share at least one point. Decided by
// the signs of orientation determinants (signed tet volumes): the triangles intersect iff an edge of
// one meets the other triangle, or, when coplanar, iff an edge of one crosses an edge of the other
// or one holds a vertex of the other. Touching counts as intersecting. A point within 1e-12 times
// the largest coordinate of a triangle's plane counts as on it, so that coordinates rounded off a
// plane (a flat mesh laid out in a tilted plane) do not make flat neighbours cross; an edge with one
// end on a plane in that sense and the other off it meets the plane where its signed distance
// crosses zero (or at that end), and whether that point lies over the triangle decides (a flat
// cloth a rounding off its plane had neighbours side by side counted as crossing when its nearly
// parallel edges were judged as lines); otherwise the answer is exact up to the rounding of the
// determinants. A zero-area triangle is treated as the segment it is.
bool trianglesIntersect(const Vec3& a0, const Vec3& a1, const Vec3& a2, const Vec3& b0, const Vec3& b1, const Vec3& b2);

// The number of pairs of `triangles` (indices into `positions`, m) that intersect, by
// trianglesIntersect. Pairs that share a vertex are skipped: neighbours in a mesh touch by
// construction. Uses a grid of triangle bounding boxes, so it costs about O(triangles).
std::size_t countIntersectingTrianglePairs(std::span<const Vec3> positions,
                                           std::span<const std::array<ParticleIndex, 3>> triangles);

// The boundary triangles of a tet mesh (faces used by exactly one tet), oriented outward, in tet
// order. The tets must be positive, (x1-x0).((x2-x0)x(x3-x0)) > 0, as the tet readers leave them
// (pliant/io/mesh_io.h).
std::vector<std::array<std::uint32_t, 3>> boundaryTriangles(const std::vector<std::array<std::uint32_t, 4>>& tets);

}  // namespace pliant
