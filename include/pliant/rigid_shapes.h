// Rigid body geometry: the shapes of bodies, their mass properties, and the narrow phase (contact
// manifolds between two posed shapes, signed distance to a point, bounding boxes).
//
// Shapes follow the conventions of colliders.h, in the shape's own frame (the solid is where the
// signed distance is negative):
//   Sphere      centred at the origin, `radius`
//   Box         centred at the origin, half sizes `halfExtents` along the frame's axes
//   Capsule     the segment from (0, -halfHeight, 0) to (0, +halfHeight, 0) swept by `radius`
//   ConvexHull  the convex polytope `hull` (buildConvexHull)
//   Mesh        a closed triangle mesh through its signed distance grid (`grid`: its vertices,
//               triangles and sampled signed distances)
//   Plane       the half-space y <= 0 (static bodies only, from colliders)
// A pose (ColliderPose: position m + unit quaternion) takes the shape frame to the world.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pliant/colliders.h"
#include "pliant/math.h"
#include "pliant/signed_distance_grid.h"

namespace pliant {

enum class BodyShapeKind : std::uint8_t {
  Sphere,
  Box,
  Capsule,
  ConvexHull,
  Mesh,
  Plane /* static only, from colliders */
};
const char* bodyShapeKindName(BodyShapeKind kind);

// A convex polytope (immutable once built, shared by every body that uses it). Built by
// buildConvexHull; its faces are the hull's planar facets with coplanar triangles merged.
struct ConvexHull {
  std::vector<Vec3> vertices;                           // m, shape frame; only points on the hull
  std::vector<std::array<std::uint32_t, 3>> triangles;  // outward, counter-clockwise seen from outside
  // The merged faces: face f is the plane faceNormals[f] . x = faceOffsets[f] (unit outward normal,
  // offset in m); its boundary polygon, counter-clockwise seen from outside, is
  // faceVertices[faceStart[f] .. faceStart[f + 1]) (indices into vertices).
  std::vector<Vec3> faceNormals;
  std::vector<double> faceOffsets;          // m
  std::vector<std::uint32_t> faceStart;     // faces + 1 entries
  std::vector<std::uint32_t> faceVertices;  // vertex indices of the face polygons
  std::vector<std::uint32_t> triangleFace;  // the merged face of each triangle
  // Edges between two merged faces (each once, lower vertex index first): their directions are
  // the edge axes of the separating axis test.
  std::vector<std::array<std::uint32_t, 2>> edges;
  // The two faces of each edge: edgeFaces[e][0] has the edge as edges[e][0] -> edges[e][1] on its
  // counter-clockwise boundary, edgeFaces[e][1] the other way (their normals span the edge's arc of
  // the Gauss map).
  std::vector<std::array<std::uint32_t, 2>> edgeFaces;
  int maxFaceVertices = 0;  // the largest face polygon (sizes the narrow phase's fixed scratch)
};

// The convex hull of `points` (m) by quickhull (Barber, Dobkin & Huhdanpaa 1996, "The quickhull
// algorithm for convex hulls", ACM TOMS 22(4)), with a tolerance relative to the points' extent:
// duplicates and points within it of a face are dropped, nearly coplanar triangles merged into one
// face. Throws pliant::Error naming `source` when there are fewer than 4 points, a non-finite
// point, or no 4 points that are not coplanar (within the tolerance).
ConvexHull buildConvexHull(const std::vector<Vec3>& points, const std::string& source);

struct BodyShape {  // geometry in the shape frame, same conventions as colliders.h
  BodyShapeKind kind = BodyShapeKind::Sphere;
  double radius = 0.0;                             // m, Sphere, Capsule
  double halfHeight = 0.0;                         // m, Capsule: axis from (0,-h,0) to (0,h,0)
  Vec3 halfExtents = Vec3::Zero();                 // m, Box
  std::shared_ptr<const ConvexHull> hull;          // ConvexHull
  std::shared_ptr<const SignedDistanceGrid> grid;  // Mesh: its vertices/triangles and signed distances
};
// The shape of a collider (Plane/Sphere/Box/Capsule/Mesh), in the collider's frame.
BodyShape shapeFromCollider(const Collider& collider);

struct MassProperties {
  double mass = 0.0;                 // kg
  Vec3 centreOfMass = Vec3::Zero();  // m, shape frame
  Mat3 inertia = Mat3::Zero();       // kg m^2, about the centre of mass, shape-frame axes
};
// Mass properties of a solid of uniform density (kg/m^3, finite and > 0): analytic for the sphere,
// box and capsule, exact polyhedral integration for hulls and meshes. Throws pliant::Error for a
// Plane (it has no finite mass), a bad density or a bad shape (say, a missing hull).
MassProperties massProperties(const BodyShape& shape, double density);
// Exact mass properties of the solid bounded by a closed, consistently outward-oriented triangle
// mesh (m) of uniform density (kg/m^3), by the divergence theorem over signed tetrahedra (Tonon
// 2004, "Explicit exact formulas for the 3-D tetrahedron inertia tensor in terms of its vertex
// coordinates", J. Math. Stat. 1(1)). Throws pliant::Error naming `source` for an empty mesh, a
// bad index or non-finite vertex, an open, non-manifold or inconsistently oriented mesh, or a
// zero or negative enclosed volume.
MassProperties massProperties(const std::vector<Vec3>& vertices,
                              const std::vector<std::array<std::uint32_t, 3>>& triangles, double density,
                              const std::string& source);
// Principal frame: inertia = R diag(principal) R^T, R a proper rotation (det +1), principal ascending.
struct PrincipalInertia {
  Vec3 moments;   // kg m^2, ascending
  Quat rotation;  // principal frame -> shape frame
};
PrincipalInertia principalInertia(const Mat3& inertia);

// Contact between two shapes posed in the world. normal: unit, world, pointing from A to B.
// separation: signed distance along normal between the two points (negative = penetration).
struct ShapeContactPoint {
  Vec3 pointA;        // m, world, on A's surface
  Vec3 pointB;        // m, world, on B's surface
  Vec3 normal;        // unit, world, from A to B
  double separation;  // m, (pointB - pointA) . normal; negative when they overlap
};
inline constexpr int kMaxManifoldPoints = 4;
struct ContactManifold {
  int count = 0;
  std::array<ShapeContactPoint, kMaxManifoldPoints> points;
};
// Fills `out` with the points where the shapes are closer than `margin` (m) (count 0 when farther).
// Every pair of kinds is supported (Plane only as one side; Mesh through its signed distance grid).
// Allocation-free; never throws (a pair of two Planes gives no contact). Swapping A and B swaps
// pointA and pointB and negates the normals, exactly. Each point carries its own normal (they differ
// where a manifold mixes features, e.g. a capsule's end points on a box's edge and face). Exact for
// the analytic kinds and hulls; a Mesh is as accurate as its grid (about a cell), and its contacts
// are at sampled points only (its vertices, the other shape's vertices / face centres / axis
// points), so two meshes see each other's vertices but not edge crossings. Preconditions (asserts,
// not errors): a ConvexHull shape has a hull, a Mesh shape a grid.
void collideShapes(const BodyShape& a, const ColliderPose& poseA, const BodyShape& b, const ColliderPose& poseB,
                   double margin, ContactManifold& out);
// Signed distance (m) from the shape's surface to x (negative inside) and the outward unit normal
// (as colliderDistance).
double shapeDistance(const BodyShape& shape, const ColliderPose& pose, const Vec3& x, Vec3& normal);
// World-space bounding box of the posed shape (for the broad phase), enlarged by `margin` (m). A
// Plane's box is unbounded (infinite) along the directions it extends.
void shapeBounds(const BodyShape& shape, const ColliderPose& pose, double margin, Vec3& lower, Vec3& upper);

}  // namespace pliant
