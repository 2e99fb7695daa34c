// Generators shared by tests, benchmarks, the CLI and examples: one place builds each kind of
// object. Each adds particles and constraints to a ModelBuilder and returns what it made.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pliant/constraints.h"
#include "pliant/model.h"

namespace pliant {

enum class BendingModel : std::uint8_t { None, Dihedral, Isometric };

// A surface carried by a tet mesh (a "skin", addSoftBodyFromSurface): each skin vertex follows the
// tet it lies in, x = sum_k w_k x_{tet_k} with its barycentric weights w at rest. Derived data: the
// simulation never reads it; the frame writers draw an object's skin instead of its tet boundary.
struct SurfaceSkin {
  std::vector<std::array<ParticleIndex, 4>> tets;       // per skin vertex: its tet's particles (global)
  std::vector<std::array<double, 4>> weights;           // per skin vertex: barycentric weights, sum 1
  std::vector<std::array<std::uint32_t, 3>> triangles;  // skin vertex indices, counter-clockwise outside
  std::size_t vertexCount() const { return weights.size(); }
  // The skin vertices (m) over particle positions (or velocities, m/s) `x` of the whole model,
  // into `out` (vertexCount() entries).
  void pose(std::span<const Vec3> x, std::span<Vec3> out) const;
};

// What a generator made: particle range [firstParticle, firstParticle + particleCount) and the
// surface triangles (global particle indices, counter-clockwise seen from the front/outside).
struct GeneratedObject {
  ParticleIndex firstParticle = 0;
  std::uint32_t particleCount = 0;
  std::vector<std::array<ParticleIndex, 3>> triangles;
  std::vector<std::array<ParticleIndex, 4>> tets;
  std::uint32_t object = 0;  // index in Model::objects
  // A surface drawn instead of the triangles above (addSoftBodyFromSurface), or null.
  std::shared_ptr<const SurfaceSkin> skin;
};

// A rectangular cloth of nodesX x nodesY particles spanning sizeX x sizeY (m), lying in the plane
// through `origin` spanned by `axisX` and `axisY` (unit vectors; default the horizontal XZ plane).
// The triangles' front normal is axisY x axisX (+Y by default). Each quad is split by one diagonal,
// alternating between neighbouring quads so the mesh has no preferred shear direction.
struct ClothGridDef {
  std::string name = "cloth";
  int nodesX = 32;
  int nodesY = 32;
  double sizeX = 1.0;                // m
  double sizeY = 1.0;                // m
  Vec3 origin = Vec3::Zero();        // m, position of node (0, 0)
  Vec3 axisX = Vec3(1.0, 0.0, 0.0);  // direction of increasing column
  Vec3 axisY = Vec3(0.0, 0.0, 1.0);  // direction of increasing row
  double totalMass = 1.0;            // kg, spread evenly over the nodes
  ConstraintParameters stretch;      // distance constraints on every triangle edge
  BendingModel bending = BendingModel::None;
  ConstraintParameters bendingParams;  // on every interior edge
  double dampingFactor = 0.0;          // momentum-conserving damping of the object, [0, 1]
  // Register the triangles for surface contact (self- and cloth-cloth collision) and turn
  // Model::selfCollision on; the thickness and friction are Model::surfaceThickness and
  // Model::surfaceContactMaterial.
  bool selfCollision = false;
};
// Particle of node (column i, row j) is firstParticle + j * nodesX + i.
GeneratedObject addClothGrid(ModelBuilder& builder, const ClothGridDef& def);

// Adds bending constraints on every interior edge of a triangle mesh (edges shared by exactly two
// triangles). Returns the number added. Isometric stencils with degenerate triangles are skipped.
// Isometric bending holds a stencil flat, so with BendingModel::Isometric only the stencils flat at
// rest get it; those curved at rest get dihedral bending about their own rest angle, with the
// compliance converted to the same stiffness per hinge (src/core/builders.cpp, docs/scene-format.md).
std::size_t addBendingConstraints(ModelBuilder& builder, const std::vector<std::array<ParticleIndex, 3>>& triangles,
                                  BendingModel model, const ConstraintParameters& params);

// A rope/chain of `particles` particles from `start` to `end` (m), distance constraints between
// neighbours; the first particle is fixed when `fixStart`.
struct ChainDef {
  std::string name = "chain";
  int particles = 10;
  Vec3 start = Vec3::Zero();
  Vec3 end = Vec3(1.0, 0.0, 0.0);
  double particleMass = 0.1;  // kg
  bool fixStart = true;
  ConstraintParameters stretch;
  double dampingFactor = 0.0;
};
GeneratedObject addChain(ModelBuilder& builder, const ChainDef& def);

// A box of cellsX x cellsY x cellsZ hexahedral cells, each split into 6 tetrahedra (consistent
// across faces), spanning `size` (m) from `origin`. Tet volume constraints on every tet and
// distance constraints on every tet edge; the surface triangles face outward.
struct TetBoxDef {
  std::string name = "beam";
  int cellsX = 8;
  int cellsY = 2;
  int cellsZ = 2;
  Vec3 origin = Vec3::Zero();
  Vec3 size = Vec3(2.0, 0.5, 0.5);
  double density = 1000.0;  // kg/m^3; particle masses are lumped from the tets
  ConstraintParameters volume;
  ConstraintParameters edges;
  bool addEdges = true;
  double dampingFactor = 0.0;
  // When set, every tet gets a neo-Hookean material instead (volume, edges and addEdges unused).
  std::optional<NeoHookeanMaterial> neoHookean;
};
// Node (i, j, k) is firstParticle + (k * (cellsY + 1) + j) * (cellsX + 1) + i.
GeneratedObject addTetBox(ModelBuilder& builder, const TetBoxDef& def);

// A soft body from a tetrahedral mesh (positively oriented tets, see io::TetMesh): particle masses
// lumped from density, a volume constraint per tet, distance constraints on every tet edge.
struct TetMeshDef {
  std::string name = "softbody";
  double density = 1000.0;  // kg/m^3
  ConstraintParameters volume;
  ConstraintParameters edges;
  bool addEdges = true;
  double dampingFactor = 0.0;
  // When set, every tet gets a neo-Hookean material instead (volume, edges and addEdges unused).
  std::optional<NeoHookeanMaterial> neoHookean;
};
GeneratedObject addTetMesh(ModelBuilder& builder, const std::vector<Vec3>& vertices,
                           const std::vector<std::array<std::uint32_t, 4>>& tets, const TetMeshDef& def);

// A closed triangle surface embedded in a regular grid of tets (Müller et al. 2004, "Physically
// Based Deformable Models" use the same idea; FEM "embedded meshes"): cubes of side cellSize over the
// surface's bounds are kept when their centre is inside the solid (ray crossings counted with the
// triangles' orientation: the winding number) or when the surface passes through them (sampled
// at spacing cellSize / 4, every vertex included), and each kept cube is split into the six Kuhn
// tets of addTetBox (shared nodes, conforming faces). Every surface vertex gets the kept tet that
// holds it and its barycentric weights (SurfaceSkin, local node indices here).
struct SurfaceEmbedding {
  std::vector<Vec3> nodes;                              // m, the kept cubes' corners
  std::vector<std::array<std::uint32_t, 4>> tets;       // positive, into nodes
  std::vector<std::array<std::uint32_t, 4>> skinTets;   // per surface vertex, into nodes
  std::vector<std::array<double, 4>> skinWeights;       // per surface vertex, sum 1
  std::vector<std::array<std::uint32_t, 3>> triangles;  // the surface, outward counter-clockwise
  double surfaceVolume = 0.0;                           // m^3, enclosed by the surface
  double keptVolume = 0.0;                              // m^3, of the kept cubes (>= about surfaceVolume)
  std::array<int, 3> cells{};                           // the grid's cubes along x, y, z
};
// Throws pliant::Error for a surface that is empty, open (an edge in one triangle), non-manifold
// (an edge in three or more), inconsistently oriented, of zero volume or with a non-finite
// coordinate, and for a cellSize that is not > 0 or gives more than maxCells grid cubes. An
// inside-out surface (negative volume) is turned outward.
SurfaceEmbedding embedSurface(const std::vector<Vec3>& vertices,
                              const std::vector<std::array<std::uint32_t, 3>>& triangles, double cellSize,
                              std::uint64_t maxCells = 50'000'000);
// Grid cubes embedSurface would lay over a box of extent `extent` (m): an upper bound of the kept
// ones, for a memory estimate before building.
std::uint64_t embeddingGridCells(const Vec3& extent, double cellSize);

// A soft body from a closed surface (issue 18): the surface's embedding tets simulate (as
// addTetMesh: volume and edge constraints or a neo-Hookean material; tet nodes collide as soft
// bodies do) and the surface is the object's skin (GeneratedObject::skin), which follows them.
// The total mass is density times the volume the surface encloses, lumped from the tets.
struct SoftBodyFromSurfaceDef {
  std::string name = "softbody";
  double cellSize = 0.05;           // m, side of the embedding grid's cubes
  double density = 1000.0;          // kg/m^3 of the solid the surface encloses
  Vec3 translation = Vec3::Zero();  // m, applied to the surface after `rotation`
  Eigen::Quaterniond rotation = Eigen::Quaterniond::Identity();
  ConstraintParameters volume;
  ConstraintParameters edges;
  bool addEdges = true;
  double dampingFactor = 0.0;
  // When set, every tet gets a neo-Hookean material instead (volume, edges and addEdges unused).
  std::optional<NeoHookeanMaterial> neoHookean;
};
GeneratedObject addSoftBodyFromSurface(ModelBuilder& builder, const std::vector<Vec3>& vertices,
                                       const std::vector<std::array<std::uint32_t, 3>>& triangles,
                                       const SoftBodyFromSurfaceDef& def);
// The same from an embedding already made (of the posed surface; def.translation and def.rotation
// unused, cellSize too).
GeneratedObject addSoftBodyFromSurface(ModelBuilder& builder, const SurfaceEmbedding& embedding,
                                       const SoftBodyFromSurfaceDef& def);

// A cloth from a triangle mesh: particle masses lumped from triangle areas (a third of each
// triangle to each corner), distance constraints on every edge, bending on interior edges.
struct ClothMeshDef {
  std::string name = "cloth";
  double totalMass = 1.0;  // kg
  ConstraintParameters stretch;
  BendingModel bending = BendingModel::None;
  ConstraintParameters bendingParams;
  double dampingFactor = 0.0;
  bool selfCollision = false;  // as ClothGridDef::selfCollision
};
GeneratedObject addClothMesh(ModelBuilder& builder, const std::vector<Vec3>& vertices,
                             const std::vector<std::array<std::uint32_t, 3>>& triangles, const ClothMeshDef& def);

// A closed sphere surface (UV sphere) with distance constraints on its edges, isometric-free, and
// a global volume constraint with the given pressure (a balloon).
struct BalloonDef {
  std::string name = "balloon";
  Vec3 centre = Vec3::Zero();
  double radius = 0.5;  // m
  int rings = 12;
  int segments = 24;
  double totalMass = 0.2;  // kg
  ConstraintParameters stretch;
  double pressure = 1.0;
  ConstraintParameters volume;
  double dampingFactor = 0.0;
};
GeneratedObject addBalloon(ModelBuilder& builder, const BalloonDef& def);

// Long-range attachments (tethers): for every particle of `particles` that is not fixed, a
// max-distance constraint to each of the given anchor particles with length equal to the current
// (rest) distance times `slack` (>= 1), added anchor by anchor.
std::size_t addTethers(ModelBuilder& builder, const std::vector<ParticleIndex>& anchors, ParticleIndex firstParticle,
                       std::uint32_t particleCount, const ConstraintParameters& params, double slack = 1.0);

// Shape matching clusters for any object (cloth, tet mesh, particle cloud): with cellSize <= 0 or
// infinite, one cluster of all `particles`; otherwise space is cut into cubic cells of edge
// cellSize (m) from the particles' bounding-box corner, and each block of 2 x 2 x 2 neighbouring
// cells (blocks one cell apart, so that they overlap by half, as Mueller et al. 2005 overlap their
// clusters) holding at least 2 particles is a cluster. Every particle is in at most 8 clusters, and
// in none only when it is alone in all its blocks (an outlier); the clusters come in block order
// and list their particles in the given order. Returns the index of the first cluster added
// (Model::shapeMatchings) and their count in `count` (may be null). NaN cell sizes and cells too
// small for the object's extent (over 1e9 along an axis) throw pliant::Error.
std::uint32_t addShapeMatchingClusters(ModelBuilder& builder, const std::vector<ParticleIndex>& particles,
                                       double cellSize, const ShapeMatchingSettings& settings, std::uint32_t* count);

}  // namespace pliant
