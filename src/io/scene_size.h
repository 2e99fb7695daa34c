// What a scene will build, counted from its fields before anything is built, and the memory that
// takes (issue 12: a scene too large for the machine is refused naming the field, instead of an
// allocation failure halfway through building it). Private to the I/O layer.
#pragma once

#include <cstdint>
#include <string>

namespace pliant::scenefile {

struct SceneSize {
  std::uint64_t particles = 0;
  std::uint64_t distances = 0;  // distance and max-distance constraints (edges, tethers)
  std::uint64_t bendings = 0;   // bending stencils (four particles)
  std::uint64_t tets = 0;
  std::uint64_t triangles = 0;  // drawn and volume triangles
  // Surface contact: the particles and edges of collision triangles (the broad phase's scratch).
  std::uint64_t collisionParticles = 0;
  std::uint64_t collisionEdges = 0;
  std::uint64_t collisionTriangles = 0;
  std::uint64_t contactParticles = 0;  // particles of radius > 0 (particle-particle contacts)
  std::uint64_t gridNodes = 0;         // signed distance grids of mesh colliders
  std::uint64_t clusterMembers = 0;    // shape matching: particles counted once per cluster they are in
  std::uint64_t other = 0;             // single constraints, attachments, kinematic particles
  std::uint64_t bodies = 0;            // rigid bodies
  std::uint64_t joints = 0;

  SceneSize& operator+=(const SceneSize& o);
};

// Bytes the built scene needs at its peak while building and running: the Model, the State and
// the solver's copy of it, the solve plan, the contacts' scratch at its bound, the run's output
// buffers. Per-item costs are the sizes of the arrays each item fills, rounded up (see the .cpp).
double estimateBytes(const SceneSize& size);
// "1.5 GiB", "320 MiB", ...
std::string formatBytes(double bytes);
// "16777216 particles, 50315265 distance, 50307073 bending constraints, ..." (what is non-zero).
std::string describeSize(const SceneSize& size);

}  // namespace pliant::scenefile
