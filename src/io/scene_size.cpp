// The memory estimate of a scene (scene_size.h) and the memory budget (pliant/io/scenes.h).
#include "scene_size.h"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "pliant/error.h"
#include "pliant/io/scenes.h"
#include "pliant/solver.h"

namespace pliant {

namespace scenefile {

SceneSize& SceneSize::operator+=(const SceneSize& o) {
  particles += o.particles;
  distances += o.distances;
  bendings += o.bendings;
  tets += o.tets;
  triangles += o.triangles;
  collisionParticles += o.collisionParticles;
  collisionEdges += o.collisionEdges;
  collisionTriangles += o.collisionTriangles;
  contactParticles += o.contactParticles;
  gridNodes += o.gridNodes;
  clusterMembers += o.clusterMembers;
  other += o.other;
  bodies += o.bodies;
  joints += o.joints;
  return *this;
}

double estimateBytes(const SceneSize& s) {
  // Bytes per item at the peak of a run, from the arrays each fills (about 1.3 times the peak
  // resident memory of `pliant run` measured on a 700 x 700 bending cloth: 0.58 GiB, estimated
  // 0.75 GiB):
  // - a particle: the Model's arrays (position, velocity, mass, inverse mass, radius, object), held
  //   twice while the builder's model is copied into the shared one; the State (4 vectors), the
  //   solver's backup of it and the run's final copy; the text of a frame and of final_state.csv.
  constexpr double kParticle = 480.0;
  // - a distance constraint: the struct and its parameters twice (builder, model), its multiplier
  //   and backup, its place in the solve plan, the edge lists it was made from, and the pairs it
  //   excludes from particle contacts.
  constexpr double kDistance = 100.0;
  // - a bending stencil: as above for four particles, plus the map of directed edges it is found
  //   from (two nodes per interior edge).
  constexpr double kBending = 256.0;
  // - a tetrahedron: its volume constraint as above, the mesh's and topology's copies of it, the
  //   colouring's and the boundary search's scratch, the contact exclusions of its six edges.
  constexpr double kTet = 256.0;
  constexpr double kTriangle = 48.0;  // topology, volume triangles
  // - surface contact per collision particle, edge and triangle: the broad phase's boxes (region,
  //   vertex, substep), hierarchies, slots and neighbour lists.
  constexpr double kCollisionParticle = 192.0;
  constexpr double kCollisionEdge = 192.0;
  constexpr double kCollisionTriangle = 192.0;
  constexpr double kCandidate = 8.0 * 3.0;  // a candidate pair in the per-thread list, the merge and the result
  constexpr double kSurfaceContact = 136.0;
  // A particle contact (72) and its slot in the candidate list (8; as many slots as the contacts'
  // bound), and the list's positions per particle (24, over the 32 contacts of the bound).
  constexpr double kParticleContact = 72.0 + 8.0 + 1.0;
  constexpr double kGridNode = 8.0;  // a signed distance
  constexpr double kOther = 128.0;
  // - a rigid body: RigidBody with its name and shape (about 300 bytes, twice), its State arrays
  //   (about 200 bytes, three copies), and above all its drawn surface (a tessellated sphere or
  //   capsule: about 500 vertices and 1000 triangles, 24 KiB) in the frame writers and the viewer.
  constexpr double kBody = 32768.0;
  // - a joint: Joint (about 350 bytes, twice) and its State multipliers and impulses.
  constexpr double kJoint = 1024.0;
  // - a shape matching member: its index, rest offset and weight twice (builder, model), the
  //   generator's cell and block lists; a cluster's own struct is shared by many members.
  constexpr double kClusterMember = 160.0;
  const double candidates = static_cast<double>(surfaceCandidateBound(s.collisionParticles, s.collisionEdges));
  const double surfaceContacts = static_cast<double>(surfaceContactBound(s.collisionParticles));
  const double particleContacts = static_cast<double>(particleContactBound(s.contactParticles));
  return kParticle * static_cast<double>(s.particles) + kDistance * static_cast<double>(s.distances) +
         kBending * static_cast<double>(s.bendings) + kTet * static_cast<double>(s.tets) +
         kTriangle * static_cast<double>(s.triangles) + kCollisionParticle * static_cast<double>(s.collisionParticles) +
         kCollisionEdge * static_cast<double>(s.collisionEdges) +
         kCollisionTriangle * static_cast<double>(s.collisionTriangles) + kCandidate * candidates +
         kSurfaceContact * surfaceContacts + kParticleContact * particleContacts +
         kGridNode * static_cast<double>(s.gridNodes) + kOther * static_cast<double>(s.other) +
         kBody * static_cast<double>(s.bodies) + kJoint * static_cast<double>(s.joints) +
         kClusterMember * static_cast<double>(s.clusterMembers);
}

std::string formatBytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 5) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

std::string describeSize(const SceneSize& s) {
  std::string out;
  const auto item = [&](std::uint64_t count, const char* what) {
    if (count == 0) return;
    out += (out.empty() ? "" : ", ") + std::to_string(count) + " " + what;
  };
  item(s.particles, "particles");
  item(s.distances, "distance constraints");
  item(s.bendings, "bending constraints");
  item(s.tets, "tetrahedra");
  item(s.triangles, "triangles");
  item(s.collisionTriangles, "self-colliding triangles");
  item(s.contactParticles, "particles with a contact radius");
  item(s.gridNodes, "signed distance grid nodes");
  item(s.clusterMembers, "shape matching cluster members");
  item(s.other, "other constraints");
  item(s.bodies, "rigid bodies");
  item(s.joints, "joints");
  return out.empty() ? "nothing" : out;
}

}  // namespace scenefile

std::uint64_t defaultMemoryBudget() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0) return std::uint64_t{8} << 30;  // unknown: 8 GiB
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize) / 2;
}

std::uint64_t parseMemorySize(const std::string& text) {
  const auto bad = [&] {
    throw Error("memory size '" + text +
                "': expected a number of bytes with an optional unit K, M, G or T (powers of 1024), e.g. 512M or 4G");
  };
  std::size_t end = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    bad();
  }
  std::string unit = text.substr(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB") unit.resize(unit.size() - 2);
  else if (unit.size() >= 2 && unit.back() == 'B') unit.pop_back();
  double scale = 1.0;
  if (unit == "K") scale = 1024.0;
  else if (unit == "M") scale = 1024.0 * 1024.0;
  else if (unit == "G") scale = 1024.0 * 1024.0 * 1024.0;
  else if (unit == "T") scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  else if (!unit.empty() && unit != "B") bad();
  const double bytes = value * scale;
  if (!std::isfinite(bytes) || !(bytes >= 1.0) || bytes > 1.8e19) bad();
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace pliant
