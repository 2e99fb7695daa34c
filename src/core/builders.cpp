#include "pliant/builders.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <unordered_map>

#include "constraints/families.h"
#include "pliant/error.h"
#include "pliant/geometry.h"

namespace pliant {

namespace {

using Triangle = std::array<ParticleIndex, 3>;

// Solve order for a family's constraints: greedy colouring (a constraint takes the smallest colour
// none of its particles has yet), then colour by colour, each colour in the given (memory) order.
// Consecutive constraints of one colour share no particle, so their projections do not wait on
// each other and the CPU overlaps them; it is still Gauss-Seidel, in another fixed order, chosen
// once at build time. Colours past 63 share one last group (correct, only less independent).
template <std::size_t N>
void sortByColour(std::vector<std::array<ParticleIndex, N>>& constraints) {
  std::unordered_map<ParticleIndex, std::uint64_t> used;
  std::vector<std::pair<int, std::size_t>> order(constraints.size());
  for (std::size_t c = 0; c < constraints.size(); ++c) {
    std::uint64_t taken = 0;
    for (ParticleIndex p : constraints[c]) taken |= used[p];
    int colour = taken == ~0ull ? 63 : std::countr_one(taken);
    for (ParticleIndex p : constraints[c]) used[p] |= 1ull << colour;
    order[c] = {colour, c};
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::array<ParticleIndex, N>> sorted;
  sorted.reserve(constraints.size());
  for (const auto& entry : order) sorted.push_back(constraints[entry.second]);
  constraints.swap(sorted);
}

// Unique undirected edges of a triangle list in solve order (sorted, then by colour).
std::vector<std::array<ParticleIndex, 2>> uniqueEdges(const std::vector<Triangle>& triangles) {
  std::vector<std::array<ParticleIndex, 2>> edges;
  edges.reserve(triangles.size() * 3);
  for (const Triangle& t : triangles)
    for (int k = 0; k < 3; ++k) {
      const ParticleIndex a = t[k];
      const ParticleIndex b = t[(k + 1) % 3];
      edges.push_back({std::min(a, b), std::max(a, b)});
    }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  sortByColour(edges);
  return edges;
}

void requirePositive(double value, const std::string& where) {
  if (!std::isfinite(value) || !(value > 0.0)) throw Error(where + " must be a finite number > 0");
}

}  // namespace

std::size_t addBendingConstraints(ModelBuilder& builder, const std::vector<Triangle>& triangles, BendingModel model,
                                  const ConstraintParameters& params) {
  if (model == BendingModel::None) return 0;
  // Directed edge (a -> b) of a triangle, with that triangle's third vertex.
  std::map<std::pair<ParticleIndex, ParticleIndex>, ParticleIndex> opposite;
  for (const Triangle& t : triangles)
    for (int k = 0; k < 3; ++k) opposite[{t[k], t[(k + 1) % 3]}] = t[(k + 2) % 3];
  // Isometric bending (Bergou et al. 2006) holds the rest state flat: C = |k|, k = sum K_i x_i, is
  // zero only where the stencil is flat. A stencil curved at rest (a sleeve from an OBJ file) gets
  // dihedral bending about its own signed rest angle instead, so it stays at rest.
  std::vector<std::array<ParticleIndex, 4>> stencils;
  std::vector<std::array<ParticleIndex, 4>> curved;
  std::map<std::array<ParticleIndex, 4>, ConstraintParameters> curvedParams;
  for (const auto& [edge, p2] : opposite) {
    const auto [p0, p1] = edge;
    if (p0 > p1) continue;  // each interior edge once, from the triangle where it runs p0 -> p1
    const auto other = opposite.find({p1, p0});
    if (other == opposite.end()) continue;
    const std::array<ParticleIndex, 4> stencil = {p0, p1, p2, other->second};
    if (model == BendingModel::Isometric) {
      const Vec3 x[4] = {builder.position(p0), builder.position(p1), builder.position(p2),
                         builder.position(other->second)};
      double weights[4];
      if (!detail::isometricBendingWeights(x[0], x[1], x[2], x[3], weights)) continue;
      // With cotangent weights, |K_2| d_2 = |K_3| d_3 = s |e| =: c (cot a + cot b = |e| / d for a
      // wing of height d over the edge e), and turning one wing about the hinge of a flat stencil
      // by dtheta moves it d dtheta along the normal, so |k| = c |dtheta| to first order: c is the
      // stencil's scale of |k| per radian. |k(rest)| / c is then the rest dihedral angle to first
      // order, free of units and of the mesh size. k is summed over positions relative to x_0
      // (sum K_i = 0) so that a flat cloth far from the origin still reads as flat.
      const Vec3 e = x[1] - x[0];
      const double d2 = e.cross(x[2] - x[0]).norm() / e.norm();  // m, wing heights over the hinge
      const double d3 = e.cross(x[3] - x[0]).norm() / e.norm();
      const double c = 0.5 * (std::abs(weights[2]) * d2 + std::abs(weights[3]) * d3);
      const Vec3 k = weights[1] * e + weights[2] * (x[2] - x[0]) + weights[3] * (x[3] - x[0]);
      // Flat: a rest angle below ~1e-8 rad, far above round-off for any cloth size in use; the
      // isometric pull of such a stencil toward flat moves it less than 1e-8 of its width.
      constexpr double kFlatAngle = 1e-8;  // rad
      if (!(k.norm() > kFlatAngle * c)) {
        stencils.push_back(stencil);
        continue;
      }
      // Same stiffness per hinge: the isometric energy |k|^2 / (2 alpha) of a flat stencil is
      // c^2 dtheta^2 / (2 alpha), so the dihedral energy dtheta^2 / (2 alpha') matches it with
      // alpha' = alpha / c^2; the damping beta (J s / [C]^2) scales the other way, beta' = beta c^2,
      // keeping alpha' beta' = alpha beta. PBD stiffness is a fraction per projection, kept.
      ConstraintParameters converted = params;
      converted.compliance = params.compliance / (c * c);
      converted.damping = params.damping * (c * c);
      curvedParams[stencil] = converted;
      curved.push_back(stencil);
      continue;
    }
    stencils.push_back(stencil);
  }
  sortByColour(stencils);
  sortByColour(curved);
  std::size_t added = 0;
  for (const auto& p : stencils) {
    if (model == BendingModel::Dihedral) builder.addDihedralBending(p[0], p[1], p[2], p[3], params);
    else builder.addIsometricBending(p[0], p[1], p[2], p[3], params);
    ++added;
  }
  for (const auto& p : curved) {
    builder.addDihedralBending(p[0], p[1], p[2], p[3], curvedParams.at(p));  // rest angle: the stencil's own
    ++added;
  }
  return added;
}

GeneratedObject addClothGrid(ModelBuilder& builder, const ClothGridDef& def) {
  const std::string where = "cloth '" + def.name + "'";
  if (def.nodesX < 2 || def.nodesY < 2) throw Error(where + ": nodesX and nodesY must be >= 2");
  requirePositive(def.sizeX, where + ": sizeX");
  requirePositive(def.sizeY, where + ": sizeY");
  requirePositive(def.totalMass, where + ": totalMass");
  GeneratedObject out;
  out.firstParticle = static_cast<ParticleIndex>(builder.particleCount());
  const std::uint32_t count = static_cast<std::uint32_t>(def.nodesX) * static_cast<std::uint32_t>(def.nodesY);
  out.particleCount = count;
  const double mass = def.totalMass / count;
  for (int j = 0; j < def.nodesY; ++j)
    for (int i = 0; i < def.nodesX; ++i) {
      const double u = def.sizeX * i / (def.nodesX - 1);
      const double v = def.sizeY * j / (def.nodesY - 1);
      builder.addParticle(def.origin + u * def.axisX + v * def.axisY, mass);
    }
  auto node = [&](int i, int j) { return out.firstParticle + static_cast<ParticleIndex>(j * def.nodesX + i); };
  for (int j = 0; j + 1 < def.nodesY; ++j)
    for (int i = 0; i + 1 < def.nodesX; ++i) {
      const ParticleIndex p00 = node(i, j), p10 = node(i + 1, j), p01 = node(i, j + 1), p11 = node(i + 1, j + 1);
      if ((i + j) % 2 == 0) {
        out.triangles.push_back({p00, p01, p11});
        out.triangles.push_back({p00, p11, p10});
      } else {
        out.triangles.push_back({p00, p01, p10});
        out.triangles.push_back({p10, p01, p11});
      }
    }
  for (const auto& e : uniqueEdges(out.triangles)) builder.addDistance(e[0], e[1], def.stretch);
  addBendingConstraints(builder, out.triangles, def.bending, def.bendingParams);
  std::vector<ParticleIndex> members(count);
  for (std::uint32_t k = 0; k < count; ++k) members[k] = out.firstParticle + k;
  if (def.selfCollision) builder.addCollisionTriangles(out.triangles);
  out.object = builder.addObject(def.name, std::move(members), def.dampingFactor);
  return out;
}

GeneratedObject addChain(ModelBuilder& builder, const ChainDef& def) {
  const std::string where = "chain '" + def.name + "'";
  if (def.particles < 2) throw Error(where + ": needs at least 2 particles");
  requirePositive(def.particleMass, where + ": particleMass");
  if (!((def.end - def.start).norm() > 0.0)) throw Error(where + ": start and end must be different points");
  GeneratedObject out;
  out.firstParticle = static_cast<ParticleIndex>(builder.particleCount());
  out.particleCount = static_cast<std::uint32_t>(def.particles);
  std::vector<ParticleIndex> members;
  for (int k = 0; k < def.particles; ++k) {
    const double s = static_cast<double>(k) / (def.particles - 1);
    members.push_back(builder.addParticle(def.start + s * (def.end - def.start), def.particleMass));
  }
  if (def.fixStart) builder.fixParticle(members.front());
  for (int k = 0; k + 1 < def.particles; ++k) builder.addDistance(members[k], members[k + 1], def.stretch);
  out.object = builder.addObject(def.name, std::move(members), def.dampingFactor);
  return out;
}

GeneratedObject addTetMesh(ModelBuilder& builder, const std::vector<Vec3>& vertices,
                           const std::vector<std::array<std::uint32_t, 4>>& tets, const TetMeshDef& def) {
  const std::string where = "soft body '" + def.name + "'";
  if (vertices.empty() || tets.empty()) throw Error(where + ": needs vertices and tetrahedra");
  requirePositive(def.density, where + ": density");
  GeneratedObject out;
  out.firstParticle = static_cast<ParticleIndex>(builder.particleCount());
  out.particleCount = static_cast<std::uint32_t>(vertices.size());
  std::vector<double> lumped(vertices.size(), 0.0);
  for (std::size_t t = 0; t < tets.size(); ++t) {
    const auto& tet = tets[t];
    for (std::uint32_t v : tet)
      if (v >= vertices.size()) throw Error(where + ": tet " + std::to_string(t) + " vertex index out of range");
    const double volume =
        detail::signedTetVolume(vertices[tet[0]], vertices[tet[1]], vertices[tet[2]], vertices[tet[3]]);
    if (!(volume > 0.0))
      throw Error(where + ": tet " + std::to_string(t) + " is inverted or flat (volume " + std::to_string(volume) +
                  " m^3)");
    for (std::uint32_t v : tet) lumped[v] += def.density * volume / 4.0;
  }
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    // A vertex used by no tet (e.g. a mid-edge node of a quadratic tet) has no mass and stays put.
    builder.addParticle(vertices[v], lumped[v]);
  }
  for (const auto& tet : tets) {
    std::array<ParticleIndex, 4> global{};
    for (int k = 0; k < 4; ++k) global[k] = out.firstParticle + tet[k];
    out.tets.push_back(global);
  }
  // Volume constraints in colour order (out.tets keeps the mesh's order, for drawing).
  std::vector<std::array<ParticleIndex, 4>> solveOrder = out.tets;
  sortByColour(solveOrder);
  for (const auto& t : solveOrder) {
    if (def.neoHookean) builder.addNeoHookeanTet(t[0], t[1], t[2], t[3], *def.neoHookean);
    else builder.addTetVolume(t[0], t[1], t[2], t[3], def.volume);
  }
  out.triangles = boundaryTriangles(out.tets);
  if (def.addEdges && !def.neoHookean) {
    std::vector<std::array<ParticleIndex, 2>> edges;
    for (const auto& t : out.tets)
      for (int a = 0; a < 4; ++a)
        for (int b = a + 1; b < 4; ++b) edges.push_back({std::min(t[a], t[b]), std::max(t[a], t[b])});
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    sortByColour(edges);
    for (const auto& e : edges) builder.addDistance(e[0], e[1], def.edges);
  }
  std::vector<ParticleIndex> members(out.particleCount);
  for (std::uint32_t p = 0; p < out.particleCount; ++p) members[p] = out.firstParticle + p;
  out.object = builder.addObject(def.name, std::move(members), def.dampingFactor);
  return out;
}

GeneratedObject addTetBox(ModelBuilder& builder, const TetBoxDef& def) {
  const std::string where = "tet box '" + def.name + "'";
  if (def.cellsX < 1 || def.cellsY < 1 || def.cellsZ < 1) throw Error(where + ": cells must be >= 1 in each direction");
  for (int k = 0; k < 3; ++k) requirePositive(def.size[k], where + ": size");
  const int nx = def.cellsX + 1, ny = def.cellsY + 1, nz = def.cellsZ + 1;
  const Vec3 cell(def.size.x() / def.cellsX, def.size.y() / def.cellsY, def.size.z() / def.cellsZ);
  std::vector<Vec3> positions;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) positions.push_back(def.origin + Vec3(i * cell.x(), j * cell.y(), k * cell.z()));
  auto node = [&](int i, int j, int k) { return static_cast<std::uint32_t>((k * ny + j) * nx + i); };
  // Kuhn (Freudenthal) split: six tets around the cell diagonal, one per axis order. Every cell
  // uses the same diagonal direction, so neighbouring cells' face triangulations match.
  static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  std::vector<std::array<std::uint32_t, 4>> tets;
  for (int k = 0; k < def.cellsZ; ++k)
    for (int j = 0; j < def.cellsY; ++j)
      for (int i = 0; i < def.cellsX; ++i)
        for (const auto& order : orders) {
          int c[3] = {i, j, k};
          std::array<std::uint32_t, 4> tet{};
          tet[0] = node(c[0], c[1], c[2]);
          for (int s = 0; s < 3; ++s) {
            ++c[order[s]];
            tet[s + 1] = node(c[0], c[1], c[2]);
          }
          if (detail::signedTetVolume(positions[tet[0]], positions[tet[1]], positions[tet[2]], positions[tet[3]]) < 0.0)
            std::swap(tet[2], tet[3]);
          tets.push_back(tet);
        }
  TetMeshDef mesh;
  mesh.name = def.name;
  mesh.density = def.density;
  mesh.volume = def.volume;
  mesh.edges = def.edges;
  mesh.addEdges = def.addEdges;
  mesh.dampingFactor = def.dampingFactor;
  mesh.neoHookean = def.neoHookean;
  return addTetMesh(builder, positions, tets, mesh);
}

GeneratedObject addClothMesh(ModelBuilder& builder, const std::vector<Vec3>& vertices,
                             const std::vector<std::array<std::uint32_t, 3>>& triangles, const ClothMeshDef& def) {
  const std::string where = "cloth '" + def.name + "'";
  if (vertices.empty() || triangles.empty()) throw Error(where + ": needs vertices and triangles");
  requirePositive(def.totalMass, where + ": totalMass");
  std::vector<double> area(vertices.size(), 0.0);
  double totalArea = 0.0;
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const auto& tri = triangles[t];
    for (std::uint32_t v : tri)
      if (v >= vertices.size()) throw Error(where + ": triangle " + std::to_string(t) + " vertex index out of range");
    const double a = 0.5 * (vertices[tri[1]] - vertices[tri[0]]).cross(vertices[tri[2]] - vertices[tri[0]]).norm();
    for (std::uint32_t v : tri) area[v] += a / 3.0;
    totalArea += a;
  }
  if (!(totalArea > 0.0)) throw Error(where + ": mesh has zero area");
  GeneratedObject out;
  out.firstParticle = static_cast<ParticleIndex>(builder.particleCount());
  out.particleCount = static_cast<std::uint32_t>(vertices.size());
  // A vertex used by no triangle gets no mass, so it stays where it is instead of falling alone.
  for (std::size_t v = 0; v < vertices.size(); ++v)
    builder.addParticle(vertices[v], def.totalMass * area[v] / totalArea);
  for (const auto& tri : triangles)
    out.triangles.push_back({out.firstParticle + tri[0], out.firstParticle + tri[1], out.firstParticle + tri[2]});
  for (const auto& e : uniqueEdges(out.triangles))
    if (e[0] != e[1]) builder.addDistance(e[0], e[1], def.stretch);
  addBendingConstraints(builder, out.triangles, def.bending, def.bendingParams);
  std::vector<ParticleIndex> members(out.particleCount);
  for (std::uint32_t p = 0; p < out.particleCount; ++p) members[p] = out.firstParticle + p;
  if (def.selfCollision) builder.addCollisionTriangles(out.triangles);
  out.object = builder.addObject(def.name, std::move(members), def.dampingFactor);
  return out;
}

GeneratedObject addBalloon(ModelBuilder& builder, const BalloonDef& def) {
  const std::string where = "balloon '" + def.name + "'";
  requirePositive(def.radius, where + ": radius");
  requirePositive(def.totalMass, where + ": totalMass");
  if (def.rings < 2 || def.segments < 3) throw Error(where + ": needs rings >= 2 and segments >= 3");
  GeneratedObject out;
  out.firstParticle = static_cast<ParticleIndex>(builder.particleCount());
  const int count = 2 + (def.rings - 1) * def.segments;
  out.particleCount = static_cast<std::uint32_t>(count);
  const double mass = def.totalMass / count;
  const ParticleIndex top = builder.addParticle(def.centre + Vec3(0, def.radius, 0), mass);
  for (int r = 1; r < def.rings; ++r) {
    const double theta = std::numbers::pi * r / def.rings;
    for (int s = 0; s < def.segments; ++s) {
      const double phi = 2.0 * std::numbers::pi * s / def.segments;
      builder.addParticle(def.centre + def.radius * Vec3(std::sin(theta) * std::cos(phi), std::cos(theta),
                                                         std::sin(theta) * std::sin(phi)),
                          mass);
    }
  }
  const ParticleIndex bottom = builder.addParticle(def.centre - Vec3(0, def.radius, 0), mass);
  auto ring = [&](int r, int s) {
    return top + 1 + static_cast<ParticleIndex>((r - 1) * def.segments + (s % def.segments));
  };
  for (int s = 0; s < def.segments; ++s) {
    out.triangles.push_back({top, ring(1, s + 1), ring(1, s)});
    out.triangles.push_back({bottom, ring(def.rings - 1, s), ring(def.rings - 1, s + 1)});
    for (int r = 1; r + 1 < def.rings; ++r) {
      out.triangles.push_back({ring(r, s), ring(r, s + 1), ring(r + 1, s + 1)});
      out.triangles.push_back({ring(r, s), ring(r + 1, s + 1), ring(r + 1, s)});
    }
  }
  // Make the orientation outward whatever the handedness of the parametrisation above.
  double sixVolume = 0.0;
  for (const Triangle& t : out.triangles)
    sixVolume += (builder.position(t[0]) - def.centre)
                     .dot((builder.position(t[1]) - def.centre).cross(builder.position(t[2]) - def.centre));
  if (sixVolume < 0.0)
    for (Triangle& t : out.triangles) std::swap(t[1], t[2]);
  for (const auto& e : uniqueEdges(out.triangles)) builder.addDistance(e[0], e[1], def.stretch);
  builder.addGlobalVolume(out.triangles, def.pressure, def.volume);
  std::vector<ParticleIndex> members(out.particleCount);
  for (std::uint32_t p = 0; p < out.particleCount; ++p) members[p] = out.firstParticle + p;
  out.object = builder.addObject(def.name, std::move(members), def.dampingFactor);
  return out;
}

std::size_t addTethers(ModelBuilder& builder, const std::vector<ParticleIndex>& anchors, ParticleIndex firstParticle,
                       std::uint32_t particleCount, const ConstraintParameters& params, double slack) {
  if (!(slack >= 1.0) || !std::isfinite(slack)) throw Error("tethers: slack must be a finite number >= 1");
  std::size_t added = 0;
  const Model& model = builder.model();
  // Anchor by anchor: the tethers of one anchor share only that anchor, which does not move when it
  // is pinned, so each anchor's tethers form one independent batch (the solve plan, src/core/solve_plan.h).
  for (ParticleIndex anchor : anchors) {
    for (std::uint32_t k = 0; k < particleCount; ++k) {
      const ParticleIndex p = firstParticle + k;
      if (model.inverseMass.at(p) == 0.0 || anchor == p) continue;
      const double length = (builder.position(anchor) - builder.position(p)).norm();
      builder.addMaxDistance(anchor, p, params, length * slack);
      ++added;
    }
  }
  return added;
}

std::uint32_t addShapeMatchingClusters(ModelBuilder& builder, const std::vector<ParticleIndex>& particles,
                                       double cellSize, const ShapeMatchingSettings& settings, std::uint32_t* count) {
  const auto first = static_cast<std::uint32_t>(builder.model().shapeMatchings.size());
  std::uint32_t added = 0;
  if (std::isnan(cellSize)) throw Error("shape matching clusters: cell size must be a number, got NaN");
  if (!(cellSize > 0.0) || std::isinf(cellSize)) {
    builder.addShapeMatchingCluster(particles, settings);
    added = 1;
  } else {
    Vec3 lower = Vec3::Constant(std::numeric_limits<double>::infinity());
    for (ParticleIndex p : particles) lower = lower.cwiseMin(builder.position(p));
    // Cell of each particle, and the number of cells along each axis.
    std::vector<std::array<std::int64_t, 3>> cells(particles.size());
    std::array<std::int64_t, 3> cellCount{1, 1, 1};
    for (std::size_t i = 0; i < particles.size(); ++i)
      for (int a = 0; a < 3; ++a) {
        const double cell = std::floor((builder.position(particles[i])[a] - lower[a]) / cellSize);
        if (!(cell < 1e9)) throw Error("shape matching clusters: cell size too small for the object's extent");
        cells[i][a] = static_cast<std::int64_t>(cell);
        cellCount[a] = std::max(cellCount[a], cells[i][a] + 1);
      }
    // Block b covers cells b and b + 1 on each axis, for b in [0, max(cellCount - 2, 0)].
    std::map<std::array<std::int64_t, 3>, std::vector<ParticleIndex>> blocks;
    for (std::size_t i = 0; i < particles.size(); ++i) {
      std::array<std::int64_t, 3> lo{}, hi{};
      for (int a = 0; a < 3; ++a) {
        const std::int64_t last = std::max<std::int64_t>(cellCount[a] - 2, 0);
        lo[a] = std::clamp<std::int64_t>(cells[i][a] - 1, 0, last);
        hi[a] = std::clamp<std::int64_t>(cells[i][a], 0, last);
      }
      for (std::int64_t x = lo[0]; x <= hi[0]; ++x)
        for (std::int64_t y = lo[1]; y <= hi[1]; ++y)
          for (std::int64_t z = lo[2]; z <= hi[2]; ++z) blocks[{x, y, z}].push_back(particles[i]);
    }
    for (const auto& [block, members] : blocks) {
      if (members.size() < 2) continue;
      builder.addShapeMatchingCluster(members, settings);
      ++added;
    }
  }
  if (count != nullptr) *count = added;
  return first;
}

}  // namespace pliant
