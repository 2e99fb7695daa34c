// Scratch of the surface contact stages (self_collision.cpp): the topology of the collision
// triangles, the broad phase's boxes and grids, and the candidate pairs of the current step.
// Private to the library; solver.cpp includes it only so the Solver can own one.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "collision/box_grid.h"
#include "collision/box_tree.h"
#include "pliant/solver.h"

namespace pliant {

struct Solver::SurfaceScratch {
  std::vector<ParticleIndex> particles;              // vertices of collision triangles, ascending
  std::vector<std::int32_t> kinematicPath;           // per particle slot: index in kinematicParticles or -1
  std::vector<std::array<ParticleIndex, 3>> triangles;
  std::vector<std::array<std::uint32_t, 3>> triangleSlots;  // corners as slots in `particles`
  std::vector<std::array<ParticleIndex, 2>> edges;          // unique, (lower, higher), ascending
  std::vector<std::array<std::uint32_t, 2>> edgeSlots;
  // Mesh neighbours of each particle slot (slots joined by an edge), sorted: slot i's are
  // neighbours[neighbourStart[i] .. neighbourStart[i + 1]).
  std::vector<std::uint32_t> neighbourStart;
  std::vector<std::uint32_t> neighbours;
  // Broad phase: where each particle stays during the step, and the boxes compared.
  std::vector<detail::Aabb> region;        // per particle slot
  std::vector<detail::Aabb> vertexBoxes;   // region padded by half the reach
  std::vector<detail::Aabb> triangleBoxes;
  std::vector<detail::Aabb> edgeBoxes;
  // Narrow phase: boxes of each particle's path in this substep (x^n to the prediction), padded
  // by half the reach, and their unions per triangle and edge: a cheap first test per candidate.
  std::vector<detail::Aabb> substepVertex;
  std::vector<detail::Aabb> substepTriangle;
  std::vector<detail::Aabb> substepEdge;
  detail::BoxTree triangleTree;  // built on the rest layout, refitted by each broad phase run
  detail::BoxTree edgeTree;
  struct VertexTriangle {
    std::uint32_t vertex = 0;    // slot
    std::uint32_t triangle = 0;  // index in triangles
  };
  std::vector<VertexTriangle> vertexTriangle;            // candidates, sorted by (vertex, triangle)
  std::vector<std::array<std::uint32_t, 2>> edgeEdge;   // candidates (a < b), sorted
  bool built = false;  // whether the candidates above were found (for the current settings)
  // Per-thread candidate lists of a parallel broad phase, each sorted as it is filled, merged
  // after (through the scratch lists).
  std::vector<std::vector<VertexTriangle>> threadVertexTriangle;
  std::vector<std::vector<std::array<std::uint32_t, 2>>> threadEdgeEdge;
  std::vector<VertexTriangle> mergeVertexTriangle;
  std::vector<std::array<std::uint32_t, 2>> mergeEdgeEdge;
};

}  // namespace pliant
