// Surface contacts (cloth self-collision and cloth-cloth collision), a part of the Solver that owns
// its scratch: the topology of the collision triangles, the broad phase's boxes and hierarchies,
// the candidate pairs of the current step and the contacts of the current substep. Stages 3
// (collide), 5 (project, between particle pairs and colliders) and 7 (velocity pass) of the step
// pipeline (solver.h); the method is described in surface_contacts.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "collision/box_grid.h"
#include "collision/box_tree.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "step_check.h"

namespace pliant::detail {

class SurfaceContacts {
 public:
  // The collision triangles' topology and hierarchies; inactive when the model has no self-collision.
  void prepare(const Model& model);
  // Stage 3 of substep `substep` (of h s, starting at `time` s): the broad phase when the
  // candidates no longer hold (see surface_contacts.cpp), then the contacts of this substep.
  // The broad phase splits its queries over `threads` threads when there are enough of them.
  void collide(const Model& model, const SolverSettings& settings, const State& state, double h, int substep,
               double time, int threads);
  // Stage 5. False when `trace` found the culprit.
  bool project(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace);
  // Stage 7.
  void velocityPass(const Model& model, const SolverSettings& settings, State& state, double h) const;
  // The candidates depend on the settings (the contact margin): find them again at the next step.
  void invalidateCandidates() { s_.built = false; }

  const std::vector<SurfaceContact>& contacts() const { return contacts_; }
  int broadPhaseRuns() const { return broadPhaseRuns_; }
  // Non-empty when the step's collide stage found more candidate pairs or contacts than their
  // bounds (pliant::surfaceCandidateBound, surfaceContactBound): what overflowed, for the refused step. The
  // substep then has no surface contacts; the solver refuses the step and restores the state.
  const std::string& overflow() const { return overflow_; }
  std::size_t candidateCount() const { return s_.vertexTriangle.size() + s_.edgeEdge.size(); }
  // Triangles in patches whose pairs within the patch the current candidates leave out (normal
  // cones, see surface_contacts.cpp).
  std::size_t skippedTriangles() const;
  // Whether the broad phase has enough queries to split over threads.
  bool parallel() const;
  // For tests: whether the broad phase may find the leaves' normal cones four triangles at a time
  // (where AVX2 is there); off, one at a time. Both give the same cones.
  void setConeLanes(bool on) { coneLanes_ = on; }

 private:
  void findCandidates(const Model& model, const SolverSettings& settings, const State& state, double h,
                      int remainingSubsteps, double time, int threads);
  // Where the broad phase's frame is at substep j of its run (m, see surface_contacts.cpp).
  Vec3 frameOffset(int j) const;
  // Whether every skipped patch's cone still holds over the substep (x^n to the prediction), for
  // the patches' triangles [begin, end) counted in the order of `skipped`.
  bool patchesHold(const State& state, std::size_t begin, std::size_t end) const;
  // The cones of the triangle tree's leaves among nodes [begin, end) over the substep, and whether
  // to skip them; then (findPatches) those of the inner nodes, and the topmost nodes to skip.
  void leafCones(const State& state, std::size_t begin, std::size_t end);
  void findPatches();
  bool active_ = false;
  bool coneLanes_ = true;
  std::vector<SurfaceContact> contacts_;
  int broadPhaseRuns_ = 0;  // in the current step
  std::string overflow_;

  struct Scratch {
    std::vector<ParticleIndex> particles;     // vertices of collision triangles, ascending
    std::vector<std::int32_t> kinematicPath;  // per particle slot: index in kinematicParticles or -1
    bool kinematicSurface = false;            // whether any slot has a path
    std::vector<std::array<ParticleIndex, 3>> triangles;
    std::vector<std::array<std::uint32_t, 3>> triangleSlots;  // corners as slots in `particles`
    std::vector<std::array<ParticleIndex, 2>> edges;          // unique, (lower, higher), ascending
    std::vector<std::array<std::uint32_t, 2>> edgeSlots;
    // Mesh neighbours of each particle slot (slots joined by an edge), sorted: slot i's are
    // neighbours[neighbourStart[i] .. neighbourStart[i + 1]).
    std::vector<std::uint32_t> neighbourStart;
    std::vector<std::uint32_t> neighbours;
    std::vector<std::uint64_t> neighbourFilter;  // per slot: bits of itself and its neighbours
    // Broad phase: where each particle stays during the step, and the boxes compared, in a frame
    // that moves with velocity frameVelocity (m/s) and acceleration frameAcceleration (m/s^2) in
    // substeps of frameStep (s); frameSubsteps substeps have passed since the run.
    int frameSubsteps = 0;
    double frameStep = 0.0;
    Vec3 frameVelocity = Vec3::Zero();
    Vec3 frameAcceleration = Vec3::Zero();
    std::vector<Aabb> region;       // per particle slot
    std::vector<Aabb> vertexBoxes;  // region padded by half the reach
    std::vector<Aabb> triangleBoxes;
    std::vector<Aabb> edgeBoxes;
    // Narrow phase: boxes of each particle's path in this substep (x^n to the prediction), padded
    // by half the reach, and their unions per triangle and edge: a cheap first test per candidate.
    std::vector<Aabb> substepVertex;
    std::vector<Aabb> substepTriangle;  // drawn for candidateTriangles only
    std::vector<Aabb> substepEdge;      // drawn for candidateEdges only
    // The triangles and edges that the current candidates name, ascending (found with the
    // candidates, marking each in boxMark, cleared after).
    std::vector<std::uint32_t> candidateTriangles;
    std::vector<std::uint32_t> candidateEdges;
    std::vector<std::uint8_t> boxMark;
    BoxTree triangleTree;                      // built on the rest layout, refitted by each broad phase run
    std::vector<BoxTree::Task> triangleTasks;  // the search cut into pieces for threads
    std::vector<BoxTree::Task> taskScratch;
    // Each vertex slot and edge is searched from one triangle it belongs to, its owner: triangle t
    // owns slots ownedVertices[t] and edges ownedEdges[t] (kNone where it owns fewer than three).
    std::vector<std::array<std::uint32_t, 3>> ownedVertices;
    std::vector<std::array<std::uint32_t, 3>> ownedEdges;
    // Normal cones (see surface_contacts.cpp): per node of triangleTree, whether its triangles
    // form a topological disk (fixed) and whether the current search skips its pairs within it;
    // the topmost skipped nodes and their cones' axes, checked in every substep.
    std::vector<std::uint8_t> diskNode;
    std::vector<std::uint8_t> skipNode;
    struct Cone {
      Vec3 axis = Vec3::Zero();  // unit
      double angle = 0.0;        // rad, half the opening
    };
    std::vector<Cone> cones;  // per node, scratch of the search
    struct SkippedPatch {
      std::uint32_t node = 0;
      Vec3 axis = Vec3::Zero();
      std::size_t before = 0;  // triangles in the patches before this one
    };
    std::vector<SkippedPatch> skipped;
    std::vector<std::uint32_t> sortTotals;   // sorting the candidates: per thread
    std::vector<std::uint32_t> bucketPlace;  // and per thread and key
    struct VertexTriangle {
      std::uint32_t vertex = 0;    // slot
      std::uint32_t triangle = 0;  // index in triangles
    };
    std::vector<VertexTriangle> vertexTriangle;          // candidates, sorted by (vertex, triangle)
    std::vector<std::array<std::uint32_t, 2>> edgeEdge;  // candidates (a < b), sorted
    // The candidates sorted by their second index only (the first pass of the sort).
    std::vector<VertexTriangle> vertexTriangleScratch;
    std::vector<std::array<std::uint32_t, 2>> edgeEdgeScratch;
    bool built = false;  // whether the candidates above were found (for the current settings)
    // Per-thread candidate lists of the broad phase, sorted together after.
    std::vector<std::vector<VertexTriangle>> threadVertexTriangle;
    std::vector<std::vector<std::array<std::uint32_t, 2>>> threadEdgeEdge;
    // Per-thread contact lists of the narrow phase, and where each chunk of candidates (see
    // collide) put its contacts; joined chunk by chunk, in the candidates' order, after.
    std::vector<std::vector<SurfaceContact>> threadContacts;
    struct ChunkContacts {
      std::uint32_t thread = 0;
      std::size_t begin = 0;  // in threadContacts[thread]
      std::size_t end = 0;
    };
    std::vector<ChunkContacts> chunkContacts;
    // Per candidate (vertex-triangle, then edge-edge): the narrow phase's list of those whose
    // substep boxes overlap, each chunk in its part.
    std::vector<std::uint32_t> kept;
    // The near list (see collide), in the same parts: per chunk, the candidates whose substep boxes
    // came within nearGap (m) of each other when it was drawn, nearCount[chunk] of them;
    // anchorBoxes are the particles' substep boxes then, and anchorScale (m) their largest
    // coordinate (its size).
    std::vector<std::uint32_t> nearList;
    std::vector<std::uint32_t> nearCount;
    std::vector<Aabb> anchorBoxes;
    double nearGap = 0.0;
    double anchorScale = 0.0;
    bool nearValid = false;
  };
  Scratch s_;
};

}  // namespace pliant::detail
