// Surface contact: cloth self-collision and cloth-cloth collision. Stages 3 (collide), 5 (project,
// between particle pairs and colliders) and 7 (velocity pass) of the step pipeline in solver.h.
//
// The idea (seed 004: collisions are constraints C >= 0; Bridson et al. 2002, "Robust treatment of
// collisions, contact and friction for cloth animation", for the two proximity kinds):
// - Two surfaces meet either where a vertex comes near a triangle or where an edge comes near an
//   edge; every other way of meeting passes through one of these first. For every vertex of a
//   collision triangle against every collision triangle it is not a corner of, and every edge
//   against every edge it shares no vertex with, the gap along the contact normal must stay at
//   least the thickness. Each such pair is one linear constraint over four particles,
//   C = n . (sum_k c_k x_k) - thickness >= 0 (the vertex minus its closest point on the triangle,
//   or the closest point of one edge minus that of the other), with n and c_k frozen when the
//   contact is made: a substep is short, so the geometry barely turns within it, and a frozen
//   linear constraint has exact gradients. The c_k sum to zero, so momentum is conserved.
// - Continuous collision. A pair is tested on the straight path of all four particles from x^n
//   (the start of the substep) to the prediction. The side is the one the pair was on at x^n: the
//   normal points from the triangle (edge b) to where the vertex (edge a) was, so a vertex predicted
//   beyond the triangle is pushed back to the side it came from, never through. When the path
//   crosses the plane (between the lines, for edges), the closest points are taken where it
//   crosses, so a fast vertex passing beside a triangle makes no contact and one passing through it
//   does. Only pairs whose closest points lie over the triangle (within the edges) count: the other
//   configurations are another pair's (a vertex near a triangle's edge is that edge's business).
// - Broad phase once per step, narrow phase per substep. At the first substep, each particle is
//   given a box that holds its path for the whole step as predicted from x^n, its velocity and
//   gravity (and its path, if kinematic), padded by half the thickness and a part of its travel for
//   the corrections the solver will make. Vertex and triangle boxes (edge and edge boxes) are
//   compared in box hierarchies (box_tree.h); pairs whose boxes come within the reach (below)
//   are the step's candidates, sorted. A pair left out is at least that far apart for as long as
//   each particle stays in its box, because boxes are convex. Each later substep checks that every
//   particle's x^n and prediction are still inside its box and runs the broad phase again (over the
//   rest of the step) if one is not, so skipping it is never a guess.
// - Friction and the velocity pass are those of the other contacts (friction.h), on the relative
//   motion sum_k c_k x_k, shared out by c_k w_k / sum_k c_k^2 w_k.
#include "collision/surface_contacts.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <new>
#include <string>

#include "collision/closest_on_triangle.h"
#include "collision/friction.h"
#include "step_check.h"

namespace pliant::detail {

namespace {

// Closest point to p on triangle (a, b, c), as barycentric weights (Ericson, "Real-time collision
// detection", sec. 5.1.5: by Voronoi region).
Vec3 closestBarycentric(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const TriangleClosest t = closestOnTriangle(p, a, b, c);
  switch (t.feature) {
    case kTriangleCorner0:
      return Vec3(1.0, 0.0, 0.0);
    case kTriangleCorner0 + 1:
      return Vec3(0.0, 1.0, 0.0);
    case kTriangleCorner0 + 2:
      return Vec3(0.0, 0.0, 1.0);
    case kTriangleEdge0:
      return Vec3(1.0 - t.v, t.v, 0.0);
    case kTriangleEdge0 + 1:
      return Vec3(0.0, 1.0 - t.v, t.v);
    case kTriangleEdge0 + 2:
      return Vec3(1.0 - t.v, 0.0, t.v);
    default:
      return Vec3(1.0 - t.v - t.w, t.v, t.w);
  }
}

Vec3 lerp(const Vec3& a, const Vec3& b, double t) { return a + t * (b - a); }

// Merges the first `count` lists, each sorted by `less` and holding distinct items, into `out`:
// the items sorted, in linear time per list. The lists' and `scratch`'s storage is recycled.
template <class T, class Less>
void mergeSorted(std::vector<std::vector<T>>& lists, int count, std::vector<T>& out, std::vector<T>& scratch,
                 Less less) {
  out.swap(lists[0]);
  lists[0].clear();
  for (int t = 1; t < count; ++t) {
    scratch.clear();
    std::merge(out.begin(), out.end(), lists[t].begin(), lists[t].end(), std::back_inserter(scratch), less);
    out.swap(scratch);
  }
}

// How near a pair must come to be made a contact (m): the thickness plus a margin, so that a pair
// pushed together by other constraints during the projection is still held. The margin is
// SolverSettings::contactMargin capped at a quarter of the thickness: the reach must stay below
// the distance between non-adjacent vertices and triangles of a flat mesh (about 0.7 of an edge),
// or every neighbour in the mesh becomes a pair to test in every substep.
double surfaceReach(const Model& model, const SolverSettings& settings) {
  return model.surfaceThickness + std::min(settings.contactMargin, 0.25 * model.surfaceThickness);
}

// Below this many surface particles the broad phase runs on one thread.
constexpr std::size_t kParallelQueries = 2048;

// Relative tolerance below which two edges count as parallel (sin of the angle between them).
constexpr double kParallel = 1.0e-6;

// Bound on the broad phase's candidates: at most this many per vertex (vertex-triangle pairs) and
// per edge (edge-edge pairs), summed over the mesh. A vertex of a folded cloth meets a few dozen
// triangles in a step; a thickness or a motion of the size of the whole cloth makes every pair a
// candidate, quadratic in the mesh, and is refused instead (issue 12).
constexpr std::size_t kMaxCandidatesPerQuery = 64;
// And at most this many contacts per collision particle in a substep: a vertex of a folded cloth
// touches a few triangles and edges.
constexpr std::size_t kMaxContactsPerParticle = 16;

}  // namespace

void SurfaceContacts::prepare(const Model& model) {
  contacts_.clear();
  broadPhaseRuns_ = 0;
  overflow_.clear();
  s_ = Scratch();
  active_ = model.selfCollision && !model.collisionTriangles.empty();
  if (!active_) return;
  Scratch& s = s_;
  for (const CollisionTriangle& t : model.collisionTriangles) {
    s.triangles.push_back({t.particles[0], t.particles[1], t.particles[2]});
    for (int k = 0; k < 3; ++k) {
      s.particles.push_back(t.particles[k]);
      const ParticleIndex a = t.particles[k], b = t.particles[(k + 1) % 3];
      s.edges.push_back({std::min(a, b), std::max(a, b)});
    }
  }
  std::sort(s.particles.begin(), s.particles.end());
  s.particles.erase(std::unique(s.particles.begin(), s.particles.end()), s.particles.end());
  std::sort(s.edges.begin(), s.edges.end());
  s.edges.erase(std::unique(s.edges.begin(), s.edges.end()), s.edges.end());
  auto slot = [&](ParticleIndex p) {
    return static_cast<std::uint32_t>(std::lower_bound(s.particles.begin(), s.particles.end(), p) -
                                      s.particles.begin());
  };
  for (const auto& t : s.triangles) s.triangleSlots.push_back({slot(t[0]), slot(t[1]), slot(t[2])});
  for (const auto& e : s.edges) s.edgeSlots.push_back({slot(e[0]), slot(e[1])});
  s.neighbourStart.assign(s.particles.size() + 1, 0);
  for (const auto& e : s.edgeSlots) {
    ++s.neighbourStart[e[0] + 1];
    ++s.neighbourStart[e[1] + 1];
  }
  for (std::size_t i = 0; i < s.particles.size(); ++i) s.neighbourStart[i + 1] += s.neighbourStart[i];
  s.neighbours.resize(s.neighbourStart.back());
  {
    std::vector<std::uint32_t> fill(s.neighbourStart.begin(), s.neighbourStart.end() - 1);
    // Edges ascending by (smaller, larger) slot: slot i first receives its smaller neighbours (from
    // edges ending at i) in ascending order, then its larger ones, so each list comes out sorted.
    for (const auto& e : s.edgeSlots) {
      s.neighbours[fill[e[0]]++] = e[1];
      s.neighbours[fill[e[1]]++] = e[0];
    }
  }
  s.kinematicPath.assign(s.particles.size(), -1);
  for (std::size_t k = 0; k < model.kinematicParticles.size(); ++k) {
    const ParticleIndex p = model.kinematicParticles[k].particle;
    if (std::binary_search(s.particles.begin(), s.particles.end(), p))
      s.kinematicPath[slot(p)] = static_cast<std::int32_t>(k);
  }
  // The hierarchies over triangles and edges, on the rest layout (see box_tree.h).
  std::vector<Vec3> centres;
  centres.reserve(std::max(s.triangles.size(), s.edges.size()));
  for (const auto& t : s.triangles)
    centres.push_back((model.initialPosition[t[0]] + model.initialPosition[t[1]] + model.initialPosition[t[2]]) / 3.0);
  s.triangleTree.build(centres);
  centres.clear();
  for (const auto& e : s.edges) centres.push_back(0.5 * (model.initialPosition[e[0]] + model.initialPosition[e[1]]));
  s.edgeTree.build(centres);
  s.region.resize(s.particles.size());
  s.vertexBoxes.resize(s.particles.size());
  s.triangleBoxes.resize(s.triangles.size());
  s.edgeBoxes.resize(s.edges.size());
  s.substepVertex.resize(s.particles.size());
  s.substepTriangle.resize(s.triangles.size());
  s.substepEdge.resize(s.edges.size());
  // A start for the candidate and contact arrays; they grow to what the scene needs and stay.
  s.vertexTriangle.reserve(4 * s.particles.size());
  s.edgeEdge.reserve(4 * s.edges.size());
  contacts_.reserve(s.particles.size());
}

bool SurfaceContacts::parallel() const { return active_ && s_.particles.size() >= kParallelQueries; }

void SurfaceContacts::findCandidates(const Model& model, const SolverSettings& settings, const State& state, double h,
                                     int remainingSubsteps, double time, int teamSize) {
  Scratch& s = s_;
  ++broadPhaseRuns_;
  const double reach = surfaceReach(model, settings);
  const double m = remainingSubsteps;
  const double span = m * h;  // s, the rest of the step
  // 1. Where each particle will be during the rest of the step: x^n, the prediction, and the
  //    end of the step as free flight predicts it, x^n + m h v + h^2 a m (m - 1) / 2 (symplectic
  //    Euler over m substeps with v already kicked once); a kinematic particle's path sampled at
  //    every substep end, which is exactly where it will be.
  for (std::size_t i = 0; i < s.particles.size(); ++i) {
    const ParticleIndex p = s.particles[i];
    const Vec3& start = state.previousPosition[p];
    Aabb box;
    box.add(start);
    box.add(state.position[p]);
    const double w = model.inverseMass[p];
    if (s.kinematicPath[i] >= 0) {
      const PathFunction& path = model.kinematicParticles[s.kinematicPath[i]].path;
      for (int k = 1; k <= remainingSubsteps; ++k) box.add(path(time + k * h));
    } else if (w > 0.0) {
      const Vec3 acceleration = settings.gravity + w * state.externalForce[p];
      box.add(start + span * state.velocity[p] + (0.5 * h * h * m * (m - 1.0)) * acceleration);
    }
    // Room for the corrections the constraints will make: half the thickness, and along each axis
    // a quarter of the travel along it plus a twentieth of the whole travel (a falling cloth is
    // deflected sideways far less than it falls). Less makes more runs, more more candidates.
    const Vec3 travel = box.max - box.min;
    box.inflate(Vec3((0.5 * model.surfaceThickness + 0.05 * travel.norm()) * Vec3::Ones() + 0.25 * travel));
    s.region[i] = box;
    s.vertexBoxes[i] = box;
    s.vertexBoxes[i].inflate(0.5 * reach);
  }
  for (std::size_t t = 0; t < s.triangles.size(); ++t) {
    Aabb box;
    for (std::uint32_t k : s.triangleSlots[t]) box.add(s.region[k]);
    box.inflate(0.5 * reach);
    s.triangleBoxes[t] = box;
  }
  for (std::size_t e = 0; e < s.edges.size(); ++e) {
    Aabb box = s.region[s.edgeSlots[e][0]];
    box.add(s.region[s.edgeSlots[e][1]]);
    box.inflate(0.5 * reach);
    s.edgeBoxes[e] = box;
  }
  s.triangleTree.refit(s.triangleBoxes);
  s.edgeTree.refit(s.edgeBoxes);
  const double* w = model.inverseMass.data();
  // Slots a and b are the same or joined by an edge of the mesh.
  auto near = [&](std::uint32_t a, std::uint32_t b) {
    return a == b || std::binary_search(s.neighbours.begin() + s.neighbourStart[a],
                                        s.neighbours.begin() + s.neighbourStart[a + 1], b);
  };
  // The queries are independent: split over threads when there are enough, each into its own
  // list. A query's candidates are sorted as they are found, and a thread's chunks come in
  // increasing order (monotonic schedule), so every list is sorted and merging them gives the
  // candidates sorted, the same for any thread count, without sorting them all.
  // The team may be smaller than asked (inside a caller's parallel region, or OMP_DYNAMIC), so every
  // list is cleared here, not by the thread that would fill it.
  const int threads = s.particles.size() >= kParallelQueries ? std::max(teamSize, 1) : 1;
  if (s.threadVertexTriangle.size() < static_cast<std::size_t>(threads)) {
    s.threadVertexTriangle.resize(threads);
    s.threadEdgeEdge.resize(threads);
  }
  for (int t = 0; t < threads; ++t) {
    s.threadVertexTriangle[t].clear();
    s.threadEdgeEdge[t].clear();
  }
  const auto vertexCount = static_cast<std::int64_t>(s.particles.size());
  const auto edgeCount = static_cast<std::int64_t>(s.edges.size());
  const auto byVertexThenTriangle = [](const Scratch::VertexTriangle& l, const Scratch::VertexTriangle& r) {
    return l.vertex != r.vertex ? l.vertex < r.vertex : l.triangle < r.triangle;
  };
  const auto byPair = [](const std::array<std::uint32_t, 2>& l, const std::array<std::uint32_t, 2>& r) {
    return l < r;
  };
  // Each list stops growing at the bound, and an allocation failure is caught where it happens:
  // no exception may leave a parallel region. The pairs found are counted on, so an overflow is
  // seen alike on any thread count; the substep then gets no candidates and the step is refused.
  const std::size_t vertexCap = kMaxCandidatesPerQuery * s.particles.size();
  const std::size_t edgeCap = kMaxCandidatesPerQuery * s.edges.size();
  std::uint64_t vertexFound = 0, edgeFound = 0;
  int allocationFailed = 0;
#pragma omp parallel num_threads(threads) reduction(+ : vertexFound, edgeFound) reduction(| : allocationFailed)
  {
    auto& vertexTriangle = s.threadVertexTriangle[omp_get_thread_num()];
    auto& edgeEdge = s.threadEdgeEdge[omp_get_thread_num()];
    auto keep = [&](auto& list, std::size_t cap, const auto& item) {
      if (list.size() >= cap || allocationFailed) return;
      try {
        list.push_back(item);
      } catch (const std::bad_alloc&) {
        allocationFailed = 1;
      }
    };
    // 2. Vertex-triangle candidates: each vertex against the triangles it is neither a corner of
    //    nor joined to a corner of by an edge.
#pragma omp for schedule(monotonic : dynamic, 256) nowait
    for (std::int64_t v = 0; v < vertexCount; ++v) {
      const auto i = static_cast<std::uint32_t>(v);
      const ParticleIndex p = s.particles[i];
      const std::size_t first = vertexTriangle.size();
      s.triangleTree.query(s.vertexBoxes[i], s.triangleBoxes, [&](std::uint32_t t) {
        const auto& tri = s.triangles[t];
        const auto& corner = s.triangleSlots[t];
        if (near(i, corner[0]) || near(i, corner[1]) || near(i, corner[2])) return;
        if (w[p] + w[tri[0]] + w[tri[1]] + w[tri[2]] == 0.0) return;
        ++vertexFound;
        keep(vertexTriangle, vertexCap, Scratch::VertexTriangle{i, t});
      });
      std::sort(vertexTriangle.begin() + static_cast<std::ptrdiff_t>(first), vertexTriangle.end(),
                byVertexThenTriangle);
    }
    // 3. Edge-edge candidates: each pair of edges, once (a < b), whose ends are neither shared
    //    nor joined by an edge.
#pragma omp for schedule(monotonic : dynamic, 256)
    for (std::int64_t e = 0; e < edgeCount; ++e) {
      const auto a = static_cast<std::uint32_t>(e);
      const auto& ea = s.edges[a];
      const auto& sa = s.edgeSlots[a];
      const std::size_t first = edgeEdge.size();
      s.edgeTree.query(s.edgeBoxes[a], s.edgeBoxes, [&](std::uint32_t b) {
        if (b <= a) return;
        const auto& eb = s.edges[b];
        const auto& sb = s.edgeSlots[b];
        if (near(sa[0], sb[0]) || near(sa[0], sb[1]) || near(sa[1], sb[0]) || near(sa[1], sb[1])) return;
        if (w[ea[0]] + w[ea[1]] + w[eb[0]] + w[eb[1]] == 0.0) return;
        ++edgeFound;
        keep(edgeEdge, edgeCap, std::array<std::uint32_t, 2>{a, b});
      });
      std::sort(edgeEdge.begin() + static_cast<std::ptrdiff_t>(first), edgeEdge.end(), byPair);
    }
  }
  if (vertexFound > vertexCap || edgeFound > edgeCap || allocationFailed) {
    for (int t = 0; t < threads; ++t) {
      s.threadVertexTriangle[t].clear();
      s.threadEdgeEdge[t].clear();
    }
    s.vertexTriangle.clear();
    s.edgeEdge.clear();
    s.built = false;
    overflow_ =
        "surface contact broad phase: " +
        (allocationFailed
             ? std::string("out of memory for its candidate pairs")
             : std::to_string(vertexFound) + " vertex-triangle and " + std::to_string(edgeFound) +
                   " edge-edge candidate pairs, above the bound of " + std::to_string(kMaxCandidatesPerQuery) +
                   " per vertex (" + std::to_string(vertexCap) + ") and per edge (" + std::to_string(edgeCap) + ")") +
        " (surface thickness " + std::to_string(model.surfaceThickness) +
        " m; a thickness near the mesh's edge length or a motion of the size of the cloth in one step "
        "makes every pair a candidate: lower the thickness or the time step)";
    return;
  }
  mergeSorted(s.threadVertexTriangle, threads, s.vertexTriangle, s.mergeVertexTriangle, byVertexThenTriangle);
  mergeSorted(s.threadEdgeEdge, threads, s.edgeEdge, s.mergeEdgeEdge, byPair);
  s.built = true;
}

void SurfaceContacts::collide(const Model& model, const SolverSettings& settings, const State& state, double h,
                              int substep, double time, int threads) {
  contacts_.clear();
  if (!active_) return;
  Scratch& s = s_;
  if (substep == 0) {
    broadPhaseRuns_ = 0;
    overflow_.clear();
  }
  if (!overflow_.empty()) return;  // an earlier substep overflowed: the step is refused
  // The candidates hold while every particle is inside the box it was given (see the top).
  bool valid = s.built;
  for (std::size_t i = 0; valid && i < s.particles.size(); ++i) {
    const ParticleIndex p = s.particles[i];
    valid = s.region[i].contains(state.previousPosition[p]) && s.region[i].contains(state.position[p]);
  }
  if (!valid) findCandidates(model, settings, state, h, settings.substeps - substep, time, threads);
  if (!overflow_.empty()) return;  // the step is refused (Solver::step)

  const double thickness = model.surfaceThickness;
  const double reach = surfaceReach(model, settings);
  const double lateral = 0.5 * thickness;  // how far beside a triangle a vertex may be and still count
  const double cap = settings.maxDepenetrationVelocity * h;
  const Vec3* x0 = state.previousPosition.data();
  const Vec3* x1 = state.position.data();
  const Vec3* v = state.velocity.data();
  const double* w = model.inverseMass.data();
  for (std::size_t i = 0; i < s.particles.size(); ++i) {
    Aabb& box = s.substepVertex[i];
    box = Aabb();
    box.add(x0[s.particles[i]]);
    box.add(x1[s.particles[i]]);
    box.inflate(0.5 * reach);
  }
  for (std::size_t t = 0; t < s.triangles.size(); ++t) {
    Aabb& box = s.substepTriangle[t];
    box = s.substepVertex[s.triangleSlots[t][0]];
    box.add(s.substepVertex[s.triangleSlots[t][1]]);
    box.add(s.substepVertex[s.triangleSlots[t][2]]);
  }
  for (std::size_t e = 0; e < s.edges.size(); ++e) {
    Aabb& box = s.substepEdge[e];
    box = s.substepVertex[s.edgeSlots[e][0]];
    box.add(s.substepVertex[s.edgeSlots[e][1]]);
  }
  const std::size_t contactCap = kMaxContactsPerParticle * s.particles.size();
  std::size_t overflowed = 0;
  // Completes a contact whose particles, normal and weights are set: allowance, velocity, mass.
  auto finish = [&](SurfaceContact& c) {
    Vec3 before = Vec3::Zero(), velocity = Vec3::Zero();
    double inverseMassSum = 0.0;
    for (int k = 0; k < 4; ++k) {
      before += c.weights[k] * x0[c.particles[k]];
      velocity += c.weights[k] * v[c.particles[k]];
      inverseMassSum += c.weights[k] * c.weights[k] * w[c.particles[k]];
    }
    if (!(inverseMassSum > 0.0)) return;
    c.inverseMassSum = inverseMassSum;
    const double gapBefore = c.normal.dot(before) - thickness;
    if (gapBefore < 0.0) c.allowance = std::max(0.0, -gapBefore - cap);
    c.normalVelocity = c.normal.dot(velocity);
    if (contacts_.size() < contactCap) contacts_.push_back(c);
    else ++overflowed;
  };

  for (const auto& candidate : s.vertexTriangle) {
    if (!s.substepVertex[candidate.vertex].overlaps(s.substepTriangle[candidate.triangle])) continue;
    const ParticleIndex p = s.particles[candidate.vertex];
    const auto& tri = s.triangles[candidate.triangle];
    const Vec3 &p0 = x0[p], &a0 = x0[tri[0]], &b0 = x0[tri[1]], &c0 = x0[tri[2]];
    const Vec3 &p1 = x1[p], &a1 = x1[tri[0]], &b1 = x1[tri[1]], &c1 = x1[tri[2]];
    const Vec3 n1 = (b1 - a1).cross(c1 - a1);
    const double length1 = n1.norm();
    if (!(length1 > 0.0) || !std::isfinite(length1)) continue;  // degenerate or non-finite
    Vec3 u1 = n1 / length1;
    const Vec3 n0 = (b0 - a0).cross(c0 - a0);
    const double length0 = n0.norm();
    const Vec3 u0 = length0 > 0.0 ? Vec3(n0 / length0) : u1;
    if (u0.dot(u1) < 0.0) u1 = -u1;  // keep one orientation through the substep
    const double d0 = u0.dot(p0 - a0), d1 = u1.dot(p1 - a1);
    const double side = d0 >= 0.0 ? 1.0 : -1.0;
    if (side * d1 >= reach) continue;
    // Where to take the closest point: where the path crosses the plane, or the prediction.
    const double tau = side * d1 < 0.0 ? d0 / (d0 - d1) : 1.0;
    const Vec3 pt = lerp(p0, p1, tau), at = lerp(a0, a1, tau), bt = lerp(b0, b1, tau), ct = lerp(c0, c1, tau);
    const Vec3 bary = closestBarycentric(pt, at, bt, ct);
    const Vec3 offset = pt - (bary[0] * at + bary[1] * bt + bary[2] * ct);
    const Vec3 nt = (bt - at).cross(ct - at);
    const double nLength = nt.norm();
    if (!(nLength > 0.0)) continue;
    const Vec3 ut = nt / nLength;
    if ((offset - ut.dot(offset) * ut).squaredNorm() > lateral * lateral) continue;  // beside the triangle
    SurfaceContact c;
    c.kind = SurfaceContact::Kind::VertexTriangle;
    c.particles[0] = p;
    c.particles[1] = tri[0];
    c.particles[2] = tri[1];
    c.particles[3] = tri[2];
    c.weights[0] = 1.0;
    c.weights[1] = -bary[0];
    c.weights[2] = -bary[1];
    c.weights[3] = -bary[2];
    c.normal = side * u1;
    finish(c);
  }

  for (const auto& candidate : s.edgeEdge) {
    if (!s.substepEdge[candidate[0]].overlaps(s.substepEdge[candidate[1]])) continue;
    const auto& ea = s.edges[candidate[0]];
    const auto& eb = s.edges[candidate[1]];
    const Vec3 &pa0 = x0[ea[0]], &qa0 = x0[ea[1]], &pb0 = x0[eb[0]], &qb0 = x0[eb[1]];
    const Vec3 &pa1 = x1[ea[0]], &qa1 = x1[ea[1]], &pb1 = x1[eb[0]], &qb1 = x1[eb[1]];
    const Vec3 ua = qa1 - pa1, ub = qb1 - pb1;
    const Vec3 n1 = ua.cross(ub);
    const double length1 = n1.norm();
    if (!(length1 > kParallel * ua.norm() * ub.norm()) || !std::isfinite(length1))
      continue;  // parallel: vertex-triangle pairs cover it
    Vec3 u1 = n1 / length1;
    const Vec3 n0 = (qa0 - pa0).cross(qb0 - pb0);
    const double length0 = n0.norm();
    const Vec3 u0 = length0 > kParallel * (qa0 - pa0).norm() * (qb0 - pb0).norm() ? Vec3(n0 / length0) : u1;
    if (u0.dot(u1) < 0.0) u1 = -u1;
    // Signed distance between the two lines, at the start and predicted.
    const double d0 = u0.dot(pa0 - pb0), d1 = u1.dot(pa1 - pb1);
    const double side = d0 >= 0.0 ? 1.0 : -1.0;
    if (side * d1 >= reach) continue;
    const double tau = side * d1 < 0.0 ? d0 / (d0 - d1) : 1.0;
    const Vec3 pa = lerp(pa0, pa1, tau), pb = lerp(pb0, pb1, tau);
    const Vec3 da = lerp(qa0, qa1, tau) - pa, db = lerp(qb0, qb1, tau) - pb;
    // Closest points of the two lines: pa + sa da and pb + sb db.
    const Vec3 r = pa - pb;
    const double A = da.dot(da), B = da.dot(db), C = db.dot(db), D = da.dot(r), E = db.dot(r);
    const double denominator = A * C - B * B;
    if (!(denominator > 0.0)) continue;
    const double sa = (B * E - C * D) / denominator;
    const double sb = (A * E - B * D) / denominator;
    if (!(sa >= 0.0 && sa <= 1.0 && sb >= 0.0 && sb <= 1.0)) continue;  // closest points off an edge
    SurfaceContact c;
    c.kind = SurfaceContact::Kind::EdgeEdge;
    c.particles[0] = ea[0];
    c.particles[1] = ea[1];
    c.particles[2] = eb[0];
    c.particles[3] = eb[1];
    c.weights[0] = 1.0 - sa;
    c.weights[1] = sa;
    c.weights[2] = -(1.0 - sb);
    c.weights[3] = -sb;
    c.normal = side * u1;
    finish(c);
  }
  if (overflowed > 0) {
    overflow_ = "surface contacts: " + std::to_string(contacts_.size() + overflowed) +
                " contacts in one substep, above " + "the bound of " + std::to_string(contactCap) + " (" +
                std::to_string(kMaxContactsPerParticle) +
                " per particle of the self-colliding cloths; surface thickness " + std::to_string(thickness) +
                " m): lower the thickness";
    contacts_.clear();
  }
}

bool SurfaceContacts::project(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace) {
  const double* w = model.inverseMass.data();
  Vec3* x = state.position.data();
  const Vec3* xPrev = state.previousPosition.data();
  const double thickness = model.surfaceThickness;
  const double mu = model.surfaceContactMaterial.staticFriction;
  const double kinetic = settings.dynamicFrictionInVelocityPass ? 0.0 : model.surfaceContactMaterial.dynamicFriction;
  for (SurfaceContact& c : contacts_) {
    Vec3 r = Vec3::Zero();
    for (int k = 0; k < 4; ++k) r += c.weights[k] * x[c.particles[k]];
    const double C = c.normal.dot(r) - thickness + c.allowance;
    if (!(C < 0.0) && !(c.lambda > 0.0)) continue;  // projected Gauss-Seidel, as the families
    const double deltaLambda = std::max(-C / c.inverseMassSum, -c.lambda);
    c.lambda += deltaLambda;
    for (int k = 0; k < 4; ++k) x[c.particles[k]] += (c.weights[k] * w[c.particles[k]] * deltaLambda) * c.normal;
    // Friction on the relative motion of this substep.
    Vec3 relative = Vec3::Zero();
    for (int k = 0; k < 4; ++k) relative += c.weights[k] * (x[c.particles[k]] - xPrev[c.particles[k]]);
    const double limit = c.inverseMassSum * c.lambda;
    const Vec3 shift =
        frictionShift(relative - c.normal.dot(relative) * c.normal, mu * limit, kinetic * limit, c.friction);
    for (int k = 0; k < 4; ++k) x[c.particles[k]] -= (c.weights[k] * w[c.particles[k]] / c.inverseMassSum) * shift;
    if (trace) {
      for (ParticleIndex p : c.particles) {
        if (!trace->check(state, p, StepTrace::Culprit::SurfaceContact)) continue;
        trace->surfaceContact = c;
        return false;
      }
    }
  }
  return true;
}

void SurfaceContacts::velocityPass(const Model& model, const SolverSettings& settings, State& state, double h) const {
  const double* w = model.inverseMass.data();
  Vec3* v = state.velocity.data();
  const double restingSpeed = 2.0 * settings.gravity.norm() * h;
  const bool friction = settings.dynamicFrictionInVelocityPass;
  for (const SurfaceContact& c : contacts_) {
    if (!(c.lambda > 0.0)) continue;
    Vec3 relative = Vec3::Zero();
    for (int k = 0; k < 4; ++k) relative += c.weights[k] * v[c.particles[k]];
    const Vec3 dv = velocityPassChange(relative, c.normal, c.inverseMassSum * c.lambda, c.normalVelocity,
                                       model.surfaceContactMaterial, friction, h, restingSpeed);
    for (int k = 0; k < 4; ++k) v[c.particles[k]] += (c.weights[k] * w[c.particles[k]] / c.inverseMassSum) * dv;
  }
}

}  // namespace pliant::detail

namespace pliant {

std::size_t surfaceCandidateBound(std::size_t particles, std::size_t edges) {
  return detail::kMaxCandidatesPerQuery * (particles + edges);
}

std::size_t surfaceContactBound(std::size_t particles) { return detail::kMaxContactsPerParticle * particles; }

}  // namespace pliant
