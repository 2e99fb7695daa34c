// Soft bodies from a closed surface (issue 18): the surface is embedded in a grid of cubes split
// into tets, the tets simulate, the surface follows them as a skin (Müller, Teschner & Gross 2004,
// "Physically-Based Simulation of Objects Represented by Surface Meshes", CGI: voxelise, split the
// voxels into tets, carry the surface by barycentric coordinates).
//
// The idea, step by step:
//  1. The surface must be closed, manifold and consistently oriented: every undirected edge is used
//     by exactly two triangles, once in each direction. Its volume (divergence theorem) must be > 0
//     after turning an inside-out surface outward.
//  2. A grid of cubes of side h covers the surface's bounding box with equal margins.
//  3. A cube is kept when its centre is inside: a ray from the centre towards +x crosses the
//     surface, and the crossings counted with the sign of the triangle's normal x component give
//     the winding number (1 inside, 0 outside). One ray per grid column serves all its cubes. A ray
//     through an edge or a vertex is counted once: every edge's side test is computed from one
//     fixed direction of the edge (so the two triangles sharing it see exactly opposite values),
//     and a point exactly on an edge belongs to the triangle on one fixed side of it ("top-left"
//     rule of rasterisers; Woop et al. 2013, "Watertight Ray/Triangle Intersection", JCGT 2(1)).
//  4. A cube is also kept when the surface passes through it: every triangle is sampled at
//     spacing h / 4 and every vertex's cube is kept, so each surface vertex lies in a kept tet.
//  5. Each kept cube becomes the six Kuhn tets of addTetBox (same diagonal everywhere, so faces
//     shared by neighbouring cubes are split the same way and the mesh is conforming).
//  6. Each surface vertex gets, among its cube's six tets, the one whose smallest barycentric
//     weight is largest (the one that holds it; weights in [0, 1] up to round-off).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "pliant/builders.h"
#include "pliant/error.h"

namespace pliant {

namespace {

using Triangle = std::array<std::uint32_t, 3>;

std::string edgeName(std::uint32_t a, std::uint32_t b) {
  return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

// Step 1: closed, manifold, consistently oriented.
void checkClosedSurface(const std::vector<Vec3>& vertices, const std::vector<Triangle>& triangles) {
  if (vertices.empty() || triangles.empty()) throw Error("the surface needs vertices and triangles");
  for (std::size_t v = 0; v < vertices.size(); ++v)
    if (!vertices[v].allFinite()) throw Error("surface vertex " + std::to_string(v) + " is not finite");
  // (smaller vertex, larger vertex, +1 when the triangle runs it from smaller to larger, triangle)
  std::vector<std::tuple<std::uint32_t, std::uint32_t, int, std::size_t>> edges;
  edges.reserve(3 * triangles.size());
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const Triangle& tri = triangles[t];
    for (std::uint32_t v : tri)
      if (v >= vertices.size()) throw Error("surface triangle " + std::to_string(t) + ": vertex index out of range");
    if (tri[0] == tri[1] || tri[1] == tri[2] || tri[2] == tri[0])
      throw Error("surface triangle " + std::to_string(t) + " repeats a vertex");
    for (int k = 0; k < 3; ++k) {
      const std::uint32_t a = tri[k], b = tri[(k + 1) % 3];
      edges.emplace_back(std::min(a, b), std::max(a, b), a < b ? 1 : -1, t);
    }
  }
  std::sort(edges.begin(), edges.end());
  for (std::size_t i = 0; i < edges.size();) {
    std::size_t j = i;
    int direction = 0;
    while (j < edges.size() && std::get<0>(edges[j]) == std::get<0>(edges[i]) &&
           std::get<1>(edges[j]) == std::get<1>(edges[i]))
      direction += std::get<2>(edges[j++]);
    const std::string edge = edgeName(std::get<0>(edges[i]), std::get<1>(edges[i]));
    if (j - i == 1)
      throw Error("the surface is open: edge " + edge + " belongs to triangle " +
                  std::to_string(std::get<3>(edges[i])) +
                  " only; expected a closed surface (every edge in two triangles)");
    if (j - i > 2)
      throw Error("the surface is not manifold: edge " + edge + " belongs to " + std::to_string(j - i) +
                  " triangles; expected two");
    if (direction != 0)
      throw Error("the surface is not consistently oriented: triangles " + std::to_string(std::get<3>(edges[i])) +
                  " and " + std::to_string(std::get<3>(edges[i + 1])) + " run edge " + edge +
                  " the same way; expected opposite ways");
    i = j;
  }
}

// Signed side of (y, z) from the projected edge p -> q: > 0 on its left. Computed from the edge's
// lower-indexed end, so the two triangles sharing an edge get exactly opposite values.
double edgeSide(const Vec3& p, std::uint32_t ip, const Vec3& q, std::uint32_t iq, double y, double z) {
  if (ip > iq) return -edgeSide(q, iq, p, ip, y, z);
  return (q.y() - p.y()) * (z - p.z()) - (q.z() - p.z()) * (y - p.y());
}

// Whether a point exactly on an edge running `dy, dz` (counter-clockwise order) belongs to the
// triangle: true for exactly one of the two directions of any non-zero edge.
bool ownsEdge(double dy, double dz) { return dz > 0.0 || (dz == 0.0 && dy < 0.0); }

}  // namespace

void SurfaceSkin::pose(std::span<const Vec3> x, std::span<Vec3> out) const {
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const auto& t = tets[i];
    const auto& w = weights[i];
    out[i] = w[0] * x[t[0]] + w[1] * x[t[1]] + w[2] * x[t[2]] + w[3] * x[t[3]];
  }
}

std::uint64_t embeddingGridCells(const Vec3& extent, double cellSize) {
  double cells = 1.0;
  for (int d = 0; d < 3; ++d) cells *= std::floor(std::max(extent[d], 0.0) / cellSize) + 1.0;
  return cells < 1.8e19 ? static_cast<std::uint64_t>(cells) : std::numeric_limits<std::uint64_t>::max();
}

SurfaceEmbedding embedSurface(const std::vector<Vec3>& vertices, const std::vector<Triangle>& inputTriangles,
                              double cellSize, std::uint64_t maxCells) {
  if (!std::isfinite(cellSize) || !(cellSize > 0.0)) throw Error("cell size must be a finite number > 0 m");
  checkClosedSurface(vertices, inputTriangles);
  SurfaceEmbedding out;
  out.triangles = inputTriangles;
  Vec3 lo = vertices.front(), hi = vertices.front();
  for (const Vec3& v : vertices) {
    lo = lo.cwiseMin(v);
    hi = hi.cwiseMax(v);
  }
  // Volume by the divergence theorem, about the box centre to keep round-off small.
  const Vec3 centre = 0.5 * (lo + hi);
  double sixVolume = 0.0;
  for (const Triangle& t : out.triangles)
    sixVolume += (vertices[t[0]] - centre).dot((vertices[t[1]] - centre).cross(vertices[t[2]] - centre));
  if (sixVolume < 0.0) {
    for (Triangle& t : out.triangles) std::swap(t[1], t[2]);
    sixVolume = -sixVolume;
  }
  out.surfaceVolume = sixVolume / 6.0;
  const double scale = (hi - lo).maxCoeff();
  if (!(out.surfaceVolume > 1e-12 * scale * scale * scale))
    throw Error("the surface encloses no volume (" + std::to_string(out.surfaceVolume) + " m^3)");

  // Step 2: the grid, centred on the box, one cube more than fits so there is a margin each side.
  const std::uint64_t cellCount = embeddingGridCells(hi - lo, cellSize);
  if (cellCount > maxCells)
    throw Error("cell size " + std::to_string(cellSize) + " m gives " + std::to_string(cellCount) +
                " grid cells over the surface, more than " + std::to_string(maxCells) +
                "; expected a larger cell size");
  const double h = cellSize;
  std::array<int, 3> n{};
  for (int d = 0; d < 3; ++d) n[d] = static_cast<int>(std::floor((hi[d] - lo[d]) / h)) + 1;
  out.cells = n;
  const Vec3 origin = centre - 0.5 * h * Vec3(n[0], n[1], n[2]);
  const auto cellIndex = [&](int i, int j, int k) { return (static_cast<std::size_t>(k) * n[1] + j) * n[0] + i; };
  const auto cellOf = [&](const Vec3& p) {
    std::array<int, 3> c{};
    for (int d = 0; d < 3; ++d) c[d] = std::clamp(static_cast<int>(std::floor((p[d] - origin[d]) / h)), 0, n[d] - 1);
    return c;
  };
  std::vector<char> kept(static_cast<std::size_t>(cellCount), 0);

  // Step 3: winding number of every cube centre, one +x ray per (j, k) column.
  struct Crossing {
    std::size_t column;
    double x;
    int sign;
    bool operator<(const Crossing& o) const { return std::tie(column, x, sign) < std::tie(o.column, o.x, o.sign); }
  };
  std::vector<Crossing> crossings;
  for (const Triangle& t : out.triangles) {
    const Vec3 &a = vertices[t[0]], &b = vertices[t[1]], &c = vertices[t[2]];
    const Vec3 normal = (b - a).cross(c - a);
    if (normal.x() == 0.0) continue;  // edge-on to the rays: its neighbours count the crossing
    const double orientation = normal.x() > 0.0 ? 1.0 : -1.0;
    const Vec3 tmin = a.cwiseMin(b).cwiseMin(c), tmax = a.cwiseMax(b).cwiseMax(c);
    // The columns whose ray may pass through the triangle's box, one more each side: the division
    // rounds, and a centre that lies exactly on the box must still be tested (the exact side tests
    // below decide).
    const int j0 = std::max(0, static_cast<int>(std::floor((tmin.y() - origin.y()) / h - 0.5)) - 1);
    const int j1 = std::min(n[1] - 1, static_cast<int>(std::floor((tmax.y() - origin.y()) / h - 0.5)) + 1);
    const int k0 = std::max(0, static_cast<int>(std::floor((tmin.z() - origin.z()) / h - 0.5)) - 1);
    const int k1 = std::min(n[2] - 1, static_cast<int>(std::floor((tmax.z() - origin.z()) / h - 0.5)) + 1);
    const Vec3* corner[3] = {&a, &b, &c};
    for (int k = k0; k <= k1; ++k)
      for (int j = j0; j <= j1; ++j) {
        const double y = origin.y() + (j + 0.5) * h, z = origin.z() + (k + 0.5) * h;
        bool inside = true;
        for (int e = 0; e < 3 && inside; ++e) {
          const int f = (e + 1) % 3;
          const double side = orientation * edgeSide(*corner[e], t[e], *corner[f], t[f], y, z);
          const Vec3 d = orientation * (*corner[f] - *corner[e]);
          inside = side > 0.0 || (side == 0.0 && ownsEdge(d.y(), d.z()));
        }
        if (!inside) continue;
        const double x = a.x() - (normal.y() * (y - a.y()) + normal.z() * (z - a.z())) / normal.x();
        crossings.push_back({static_cast<std::size_t>(k) * n[1] + j, x, normal.x() > 0.0 ? 1 : -1});
      }
  }
  std::sort(crossings.begin(), crossings.end());
  for (std::size_t first = 0; first < crossings.size();) {
    std::size_t last = first;
    while (last < crossings.size() && crossings[last].column == crossings[first].column) ++last;
    const std::size_t column = crossings[first].column;
    const int j = static_cast<int>(column % n[1]), k = static_cast<int>(column / n[1]);
    // Walk the cubes from +x to -x, adding each crossing once the centre is behind it.
    int winding = 0;
    std::size_t next = last;
    for (int i = n[0] - 1; i >= 0; --i) {
      const double x = origin.x() + (i + 0.5) * h;
      while (next > first && crossings[next - 1].x > x) winding += crossings[--next].sign;
      if (winding > 0) kept[cellIndex(i, j, k)] = 1;
    }
    first = last;
  }

  // Step 4: the cubes the surface passes through, and every vertex's.
  for (const Vec3& v : vertices) {
    const auto c = cellOf(v);
    kept[cellIndex(c[0], c[1], c[2])] = 1;
  }
  for (const Triangle& t : out.triangles) {
    const Vec3 &a = vertices[t[0]], &b = vertices[t[1]], &c = vertices[t[2]];
    const double longest = std::max({(b - a).norm(), (c - b).norm(), (a - c).norm()});
    const int steps = std::max(1, static_cast<int>(std::ceil(4.0 * longest / h)));
    for (int i = 0; i <= steps; ++i)
      for (int j = 0; i + j <= steps; ++j) {
        const auto cell =
            cellOf(a + (static_cast<double>(i) / steps) * (b - a) + (static_cast<double>(j) / steps) * (c - a));
        kept[cellIndex(cell[0], cell[1], cell[2])] = 1;
      }
  }

  // Step 5: nodes of the kept cubes in grid order, then six tets per kept cube.
  const std::array<std::size_t, 3> m = {static_cast<std::size_t>(n[0]) + 1, static_cast<std::size_t>(n[1]) + 1,
                                        static_cast<std::size_t>(n[2]) + 1};
  const auto nodeIndex = [&](int i, int j, int k) { return (static_cast<std::size_t>(k) * m[1] + j) * m[0] + i; };
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> node(m[0] * m[1] * m[2], kNone);
  std::size_t keptCount = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        if (!kept[cellIndex(i, j, k)]) continue;
        ++keptCount;
        for (int corner = 0; corner < 8; ++corner)
          node[nodeIndex(i + (corner & 1), j + ((corner >> 1) & 1), k + (corner >> 2))] = 0;
      }
  for (int k = 0; k <= n[2]; ++k)
    for (int j = 0; j <= n[1]; ++j)
      for (int i = 0; i <= n[0]; ++i) {
        std::uint32_t& id = node[nodeIndex(i, j, k)];
        if (id == kNone) continue;
        id = static_cast<std::uint32_t>(out.nodes.size());
        out.nodes.push_back(origin + h * Vec3(i, j, k));
      }
  out.keptVolume = static_cast<double>(keptCount) * h * h * h;
  // Kuhn split, as addTetBox: one tet per order of the axes, from the cube's low corner.
  static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  std::vector<std::uint32_t> firstTet(kept.size(), kNone);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        if (!kept[cellIndex(i, j, k)]) continue;
        firstTet[cellIndex(i, j, k)] = static_cast<std::uint32_t>(out.tets.size());
        for (const auto& order : orders) {
          int c[3] = {i, j, k};
          std::array<std::uint32_t, 4> tet{};
          tet[0] = node[nodeIndex(c[0], c[1], c[2])];
          for (int s = 0; s < 3; ++s) {
            ++c[order[s]];
            tet[s + 1] = node[nodeIndex(c[0], c[1], c[2])];
          }
          const Vec3& x0 = out.nodes[tet[0]];
          if ((out.nodes[tet[1]] - x0).dot((out.nodes[tet[2]] - x0).cross(out.nodes[tet[3]] - x0)) < 0.0)
            std::swap(tet[2], tet[3]);
          out.tets.push_back(tet);
        }
      }

  // Step 6: each vertex's tet and barycentric weights.
  out.skinTets.resize(vertices.size());
  out.skinWeights.resize(vertices.size());
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    const auto c = cellOf(vertices[v]);
    const std::uint32_t first = firstTet[cellIndex(c[0], c[1], c[2])];
    double best = -std::numeric_limits<double>::infinity();
    for (std::uint32_t t = first; t < first + 6; ++t) {
      const auto& tet = out.tets[t];
      const Vec3& x0 = out.nodes[tet[0]];
      Eigen::Matrix3d edges;
      edges << out.nodes[tet[1]] - x0, out.nodes[tet[2]] - x0, out.nodes[tet[3]] - x0;
      const Vec3 l = edges.inverse() * (vertices[v] - x0);
      const std::array<double, 4> w = {1.0 - (l[0] + l[1] + l[2]), l[0], l[1], l[2]};
      const double smallest = *std::min_element(w.begin(), w.end());
      if (smallest > best) {
        best = smallest;
        out.skinTets[v] = tet;
        out.skinWeights[v] = w;
      }
    }
  }
  return out;
}

GeneratedObject addSoftBodyFromSurface(ModelBuilder& builder, const SurfaceEmbedding& embedding,
                                       const SoftBodyFromSurfaceDef& def) {
  const std::string where = "soft body '" + def.name + "'";
  if (!std::isfinite(def.density) || !(def.density > 0.0)) throw Error(where + ": density must be a finite number > 0");
  if (embedding.tets.empty() || !(embedding.keptVolume > 0.0)) throw Error(where + ": the embedding has no tets");
  TetMeshDef mesh;
  mesh.name = def.name;
  // The tets cover a little more than the solid: scale their density so the mass is the solid's.
  mesh.density = def.density * embedding.surfaceVolume / embedding.keptVolume;
  mesh.volume = def.volume;
  mesh.edges = def.edges;
  mesh.addEdges = def.addEdges;
  mesh.dampingFactor = def.dampingFactor;
  mesh.neoHookean = def.neoHookean;
  GeneratedObject out = addTetMesh(builder, embedding.nodes, embedding.tets, mesh);
  auto skin = std::make_shared<SurfaceSkin>();
  skin->weights = embedding.skinWeights;
  skin->triangles = embedding.triangles;
  skin->tets.reserve(embedding.skinTets.size());
  for (const auto& t : embedding.skinTets)
    skin->tets.push_back(
        {out.firstParticle + t[0], out.firstParticle + t[1], out.firstParticle + t[2], out.firstParticle + t[3]});
  out.skin = std::move(skin);
  return out;
}

GeneratedObject addSoftBodyFromSurface(ModelBuilder& builder, const std::vector<Vec3>& vertices,
                                       const std::vector<Triangle>& triangles, const SoftBodyFromSurfaceDef& def) {
  std::vector<Vec3> posed(vertices.size());
  for (std::size_t v = 0; v < vertices.size(); ++v) posed[v] = def.rotation * vertices[v] + def.translation;
  SurfaceEmbedding embedding;
  try {
    embedding = embedSurface(posed, triangles, def.cellSize);
  } catch (const Error& e) {
    throw Error("soft body '" + def.name + "': " + e.what());
  }
  return addSoftBodyFromSurface(builder, embedding, def);
}

}  // namespace pliant
