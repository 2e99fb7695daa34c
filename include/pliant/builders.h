// Generators shared by tests, benchmarks, the CLI and examples: one place builds each kind of
// object. Each adds particles and constraints to a ModelBuilder and returns what it made.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pliant/constraints.h"
#include "pliant/model.h"

namespace pliant {

enum class BendingModel : std::uint8_t { None, Dihedral, Isometric };

// What a generator made: particle range [firstParticle, firstParticle + particleCount) and the
// surface triangles (global particle indices, counter-clockwise seen from the front/outside).
struct GeneratedObject {
  ParticleIndex firstParticle = 0;
  std::uint32_t particleCount = 0;
  std::vector<std::array<ParticleIndex, 3>> triangles;
  std::vector<std::array<ParticleIndex, 4>> tets;
  std::uint32_t object = 0;  // index in Model::objects
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
