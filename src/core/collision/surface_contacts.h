// Surface contacts (cloth self-collision and cloth-cloth collision), a part of the Solver that owns
// its scratch: the topology of the collision triangles, the broad phase's boxes and hierarchies,
// the candidate pairs of the current step and the contacts of the current substep. Stages 3
// (collide), 5 (project, between particle pairs and colliders) and 7 (velocity pass) of the step
// pipeline (solver.h); the method is described in surface_contacts.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "collision/box_grid.h"
#include "collision/box_tree.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "step_check.h"
#include "thread_owned.h"

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

  // The contacts of the last substep in order. Where the narrow phase's threads made them, they
  // stay (the projection reads them there) and are joined here when first read after a collide or
  // a projection changed them; safe to call from several threads at once between steps.
  const std::vector<SurfaceContact>& contacts() const;
  std::size_t contactCount() const { return contactCount_; }
  // In the current step: the broad phase's runs over every triangle, and its local updates (the
  // pairs of the few particles that left their boxes searched again, see surface_contacts.cpp).
  int broadPhaseRuns() const { return broadPhaseRuns_; }
  int broadPhaseUpdates() const { return broadPhaseUpdates_; }
  // Non-empty when the step's collide stage found more candidate pairs or contacts than their
  // bounds (pliant::surfaceCandidateBound, surfaceContactBound): what overflowed, for the refused step. The
  // substep then has no surface contacts; the solver refuses the step and restores the state.
  const std::string& overflow() const { return overflow_; }
  std::size_t candidateCount() const {
    return s_.vertexTriangle.size() + s_.edgeEdge.size() + s_.vertexTriangleAdded.size() + s_.edgeEdgeAdded.size();
  }
  // Triangles in patches whose pairs within the patch the current candidates leave out (normal
  // cones, see surface_contacts.cpp).
  std::size_t skippedTriangles() const;
  // Whether the broad phase has enough queries to split over threads.
  bool parallel() const;
  // For tests: whether the broad phase may find the leaves' normal cones four triangles at a time
  // (where AVX2 is there); off, one at a time. Both give the same cones.
  void setConeLanes(bool on) { coneLanes_ = on; }
  // For tests: whether the narrow phase may screen vertex-triangle candidates four at a time (where
  // AVX2 is there); off, one at a time. Both make the same contacts.
  void setVertexLanes(bool on) { vertexLanes_ = on; }
  // For tests: whether the narrow phase notes the candidates known to be apart and drops them
  // while they stay so (surface_contacts.cpp, collide); off, it tests every candidate that passes
  // the box test. Both make the same contacts. apartDropped counts the candidates dropped so far.
  void setApartNotes(bool on) { apartNotes_ = on; }
  std::uint64_t apartDropped() const { return apartDropped_; }
  // For tests: whether the broad phase may update its candidates locally; off, every particle that
  // leaves its box makes a run over every triangle.
  void setLocalUpdates(bool on) { localUpdates_ = on; }
  // For tests: whether patches that cannot touch themselves are skipped (see surface_contacts.cpp).
  void setPatchSkipping(bool on) { patchSkipping_ = on; }
  // For tests: whether the current candidates hold the pair of collision particle `vertex` and
  // collision triangle `triangle` (index in Model::collisionTriangles), or of the edges (a0, a1)
  // and (b0, b1) (each given by its two particles, in any order).
  bool vertexTriangleCandidate(ParticleIndex vertex, std::uint32_t triangle) const;
  bool edgeEdgeCandidate(ParticleIndex a0, ParticleIndex a1, ParticleIndex b0, ParticleIndex b1) const;

 private:
  void findCandidates(const Model& model, const SolverSettings& settings, const State& state, double h,
                      int remainingSubsteps, double time, int threads);
  // The local update (see surface_contacts.cpp), its search split over `threads` threads when it
  // changed enough triangles; false when it does not apply, and the caller runs findCandidates.
  bool updateCandidates(const Model& model, const SolverSettings& settings, const State& state, double h,
                        int remainingSubsteps, double time, int threads);
  // Particle slot i's box for the rest of the step (region and vertexBoxes), in the current frame.
  void drawParticleBox(const Model& model, const SolverSettings& settings, const State& state, double h,
                       int remainingSubsteps, double time, double reach, std::size_t i);
  // Triangle t's and edge e's boxes from their particles' regions.
  void drawTriangleBox(std::uint32_t t, double reach);
  void drawEdgeBox(std::uint32_t e, double reach);
  // The slot of collision particle p, and the index of the edge joining p and q (either order);
  // kNone (0xffffffff) when there is none.
  std::uint32_t slotOf(ParticleIndex p) const;
  std::uint32_t edgeOf(ParticleIndex p, ParticleIndex q) const;
  // Slots a and b are the same or joined by an edge of the mesh.
  bool meshNear(std::uint32_t a, std::uint32_t b) const;
  // The candidates reached from triangles ta and tb, whose boxes overlap: keepVertex(slot,
  // triangle) for each vertex-triangle pair, keepEdges(a, b) (a < b) for each edge-edge pair
  // (onlyMarked: see surface_contacts.cpp).
  template <class KeepVertex, class KeepEdges>
  void trianglePairCandidates(const double* inverseMass, std::uint32_t ta, std::uint32_t tb, KeepVertex&& keepVertex,
                              KeepEdges&& keepEdges, bool onlyMarked) const;
  // candidateTriangles and candidateEdges from the candidates of a run; emptied.
  void listCandidateBoxes();
  std::uint64_t candidateKey(const SurfaceContact& contact) const;
  void joinContacts(const std::size_t partChunkEnd[4]);
  // Calls f(contact) for self's contacts in order: in the threads' lists chunk by chunk
  // (inChunks_), or in contacts_; stops when f returns false. Self: SurfaceContacts or const.
  template <class Self, class F>
  static void forEachContact(Self& self, F&& f);
  void clearCandidateBoxes();
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
  bool vertexLanes_ = true;
  bool apartNotes_ = true;
  std::uint64_t apartDropped_ = 0;
  bool localUpdates_ = true;
  bool patchSkipping_ = true;
  // The contacts, when local updates' contacts were merged in (or joined by contacts()).
  mutable std::vector<SurfaceContact> contacts_;
  bool inChunks_ = false;  // the contacts are in the threads' lists, s_.chunkContacts[0 .. chunkCount_)
  std::size_t chunkCount_ = 0;
  std::size_t contactCount_ = 0;
  mutable bool joinStale_ = false;  // contacts_ is not yet the join of the lists
  mutable std::mutex joinMutex_;
  int broadPhaseRuns_ = 0;  // in the current step
  int broadPhaseUpdates_ = 0;
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
    // The triangles and edges of each slot: slotTriangles[slotTriangleStart[i] ..
    // slotTriangleStart[i + 1]), and the same for edges.
    std::vector<std::uint32_t> slotTriangleStart;
    std::vector<std::uint32_t> slotTriangles;
    std::vector<std::uint32_t> slotEdgeStart;
    std::vector<std::uint32_t> slotEdges;
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
    // The triangles and edges that the current candidates name (those of the run ascending, then
    // those the local updates added), each marked in triangleListed and edgeListed.
    std::vector<std::uint32_t> candidateTriangles;
    std::vector<std::uint32_t> candidateEdges;
    std::vector<std::uint8_t> triangleListed;
    std::vector<std::uint8_t> edgeListed;
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
    std::vector<std::uint32_t> patchOf;      // per triangle: its entry in `skipped`, or kNone
    std::vector<std::uint32_t> sortTotals;   // sorting the candidates: per thread
    std::vector<std::uint32_t> bucketPlace;  // and per thread and key
    struct VertexTriangle {
      std::uint32_t vertex = 0;    // slot
      std::uint32_t triangle = 0;  // index in triangles
      // The candidates' order: by vertex, then triangle.
      friend bool operator<(const VertexTriangle& l, const VertexTriangle& r) {
        return l.vertex != r.vertex ? l.vertex < r.vertex : l.triangle < r.triangle;
      }
    };
    std::vector<VertexTriangle> vertexTriangle;          // candidates, sorted by (vertex, triangle)
    std::vector<std::array<std::uint32_t, 2>> edgeEdge;  // candidates (a < b), sorted
    // The candidates that local updates added since the run (none of them in the lists above),
    // sorted alike; and their scratch.
    std::vector<VertexTriangle> vertexTriangleAdded;
    std::vector<std::array<std::uint32_t, 2>> edgeEdgeAdded;
    std::vector<VertexTriangle> vertexTriangleAddedScratch;
    std::vector<std::array<std::uint32_t, 2>> edgeEdgeAddedScratch;
    // The candidates sorted by their second index only (the first pass of the sort).
    std::vector<VertexTriangle> vertexTriangleScratch;
    std::vector<std::array<std::uint32_t, 2>> edgeEdgeScratch;
    bool built = false;  // whether the candidates above were found (for the current settings)
    // Per-thread candidate lists of the broad phase, sorted together after.
    std::vector<ThreadOwned<std::vector<VertexTriangle>>> threadVertexTriangle;
    std::vector<ThreadOwned<std::vector<std::array<std::uint32_t, 2>>>> threadEdgeEdge;
    // The local update's scratch: the slots that left their boxes, the triangles and edges they
    // belong to (each marked, cleared after), and the pairs found for them.
    std::vector<std::uint32_t> escapedSlots;
    std::vector<std::uint32_t> changedTriangles;
    std::vector<std::uint32_t> changedEdges;
    std::vector<std::uint8_t> escapedMark;
    std::vector<std::uint8_t> triangleChanged;
    std::vector<std::uint8_t> edgeChanged;
    std::vector<VertexTriangle> foundVertexTriangle;
    std::vector<std::array<std::uint32_t, 2>> foundEdgeEdge;
    // Per-thread contact lists of the narrow phase, and where each chunk of candidates (see
    // collide) put its contacts; read chunk by chunk, in the candidates' order, where they are
    // (or merged with the added candidates' contacts into contacts_, joinContacts).
    std::vector<ThreadOwned<std::vector<SurfaceContact>>> threadContacts;
    // Joining the contacts of the run's candidates with those of the added ones (collide).
    struct KeyedContact {
      std::uint64_t key = 0;
      const SurfaceContact* contact = nullptr;
    };
    std::vector<KeyedContact> runContacts;
    std::vector<KeyedContact> addedContacts;
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
    // The pairs known to be apart (see collide). Per particle slot: how far the start of its
    // substep has moved over the substeps seen (m, a sum of lengths: `travel`), the start it was
    // measured to, and travel plus this substep's motion (`travelReach`). Per candidate of the run:
    // the sum of its particles' travelReach below which it stays farther apart than the narrow
    // phase's meeting distance over a substep (-infinity: unknown).
    std::vector<Vec3> travelFrom;
    std::vector<double> travel;
    std::vector<double> travelReach;
    bool travelStarted = false;
    bool apartNoted = false;                  // some candidate of the run may have a note
    std::vector<std::uint32_t> chunkDropped;  // per chunk of the narrow phase: candidates dropped
    std::vector<double> vertexTriangleApart;
    std::vector<double> edgeEdgeApart;
  };
  Scratch s_;
};

}  // namespace pliant::detail
