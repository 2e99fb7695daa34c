// Particle-particle contacts between particles of radius > 0, a part of the Solver that owns its
// scratch: which particles collide, their neighbours at rest (never in contact), the spatial hash
// grid and the contacts of the current substep. Stages 3 (collide), 5 (project) and 7 (velocity
// pass) of the step pipeline (solver.h); the method is described in collider_contacts.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pliant/model.h"
#include "pliant/solver.h"
#include "step_check.h"
#include "thread_owned.h"

namespace pliant::detail {

class ParticleContacts {
 public:
  // The colliding particles and their neighbours at rest (particles sharing a constraint), and the
  // grid sized for them.
  void prepare(const Model& model);
  // Stage 3: pairs within contactMargin of touching at the prediction, in (particle, other) order.
  // `team` threads share the candidate list's test, its rebuild and the re-test of its pairs (fixed
  // shares, joined in a fixed order): the same contacts in the same order for any team.
  void collide(const Model& model, const SolverSettings& settings, const State& state, double h, int team = 1);
  // Stage 5, first of the contacts. False when `trace` found the culprit.
  bool project(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace);
  // Stage 7: restitution passed along rows of contacts (particle_contacts.cpp).
  void velocityPass(const Model& model, const SolverSettings& settings, State& state, double h);

  const std::vector<Contact>& contacts() const { return contacts_; }
  // Whether the model has at least two particles that can touch.
  bool active() const { return collidingParticles_.size() >= 2; }
  // Non-empty when the last collide stage found more contacts than contactBound (a radius much
  // larger than the spacing puts every pair in contact; pliant::particleContactBound): what overflowed, for the refused
  // step.
  const std::string& overflow() const { return overflow_; }
  // For tests: whether the candidate list may be updated locally (the few particles that left the
  // skin listed again, see particle_contacts.cpp); off, the list is rebuilt. Both give the same
  // contacts. The counts are of the list's rebuilds and local updates so far.
  void setLocalUpdates(bool on) { localUpdates_ = on; }
  std::uint64_t listRebuilds() const { return listRebuilds_; }
  std::uint64_t listUpdates() const { return listUpdates_; }

 private:
  std::vector<Contact> contacts_;
  std::string overflow_;
  std::vector<ParticleIndex> collidingParticles_;  // radius > 0, when particle contacts are on
  double maxRadius_ = 0.0;                         // m, over collidingParticles_
  // Pairs never in contact: particles sharing a constraint (neighbours at rest), as sorted lists.
  std::vector<std::uint32_t> restNeighbourStart_;
  std::vector<ParticleIndex> restNeighbours_;
  // Per thread of a search, per particle: the tag of the last particle whose neighbours at rest,
  // stamped by stampRestNeighbours, include it.
  std::vector<std::uint32_t> restStamps_;
  // Thread `part`'s stamps of a search by a team of `parts` (grown to the largest team seen).
  std::uint32_t* restNeighbourStamps(int parts, int part);
  // Stamps a's neighbours at rest with a's tag (a + 1), returned: then q is a's neighbour exactly
  // when stamps[q] equals it, a load instead of a search of the sorted lists.
  std::uint32_t stampRestNeighbours(std::uint32_t* stamps, ParticleIndex a) const;
  // Spatial hash grid: bucket b holds gridEntries_[gridStart_[b] .. gridStart_[b + 1]), sorted by
  // cell key, so that each cell's particles are one run (in index order).
  struct GridEntry {
    Vec3 position = Vec3::Zero();  // m, a copy: the pair tests read the grid in its own order
    ParticleIndex particle = 0;
    std::uint64_t key = 0;  // the cell, packed
    std::int64_t cell[3] = {0, 0, 0};
  };
  std::vector<std::uint32_t> gridStart_;
  std::vector<GridEntry> gridEntries_;
  std::vector<GridEntry> gridScratch_;
  // The grid of the colliding particles' positions in cells of `cellSize` (m); `team` threads each
  // take a fixed share of the particles and of the buckets, with the one thread's result.
  void buildGrid(const State& state, double cellSize, int team = 1);
  // The split build's count of each thread's particles per bucket, then where they go (threads x
  // buckets, grown to the largest team seen).
  std::vector<std::uint32_t> threadBucketStart_;
  std::vector<std::uint32_t> threadTotals_;  // per thread: its share of the buckets' entries
  void buildGridSplit(const State& state, double inverseCellSize, int team);
  void sortBucketRuns(std::size_t firstBucket, std::size_t endBucket);
  // Every pair of particles in the same or neighbouring cells whose first cell is in buckets
  // [firstBucket, endBucket), each unordered pair once (cells far enough apart to share a key may
  // repeat a pair), grouped by its first particle a: visit(a, others) with the entry indices (into
  // gridEntries_) of a's others, gathered in `neighbourhood`; visit returns false to stop.
  template <class Visit>
  void forEachParticleNeighbourhood(std::size_t firstBucket, std::size_t endBucket,
                                    std::vector<std::uint32_t>& neighbourhood, Visit&& visit) const;
  // Stage 3 by its two variants: pairs from the candidate list (updated locally, or rebuilt, first
  // when particles have moved too far from where they were listed), or the grid searched directly.
  bool candidatesHold(const Model& model, const State& state, double margin, int team);
  // The local update of the list (particle_contacts.cpp): false when it does not apply.
  bool updateCandidates(const Model& model, const State& state, const Vec3& centre, double limitSquared);
  bool buildCandidates(const Model& model, const State& state, double margin, int team);
  void collideCandidates(const Model& model, const SolverSettings& settings, const State& state, double h, int team);
  void collideDirect(const Model& model, const SolverSettings& settings, const State& state, double h);
  // Candidate (Verlet) list: every pair, not neighbours at rest, whose centres were within their
  // reach plus twice the skin where they were listed (listPosition_, in collidingParticles_ order:
  // at the list's build, or for a few particles at a local update since), as (lower, higher)
  // index, sorted. While the colliding particles' displacements since they were listed all lie
  // within the skin of one vector, every pair within reach is in it.
  struct Candidate {
    ParticleIndex particle = 0;
    ParticleIndex other = 0;
  };
  std::vector<Candidate> candidates_;
  std::vector<Vec3> listPosition_;
  bool listValid_ = false;
  double listMargin_ = 0.0;       // m, the contactMargin it was built for
  double skin_ = 0.0;             // m
  int listRetryIn_ = 0;           // substeps to search directly after a list overflowed its capacity
  double listInverseCell_ = 0.0;  // 1/m, of the grid the list was built from (gridEntries_ while listValid_)
  // The local updates since the list was built: the slots listed again (each once, in order),
  // marked per particle index in relisted_ (bit 1; bit 2 while one update runs: the slots it
  // moves); at most maxRelisted_ of them, then the list is rebuilt. Scratch: the slots an update
  // moves and the pairs it finds.
  std::vector<std::uint32_t> relistedSlots_;
  std::vector<std::uint8_t> relisted_;
  std::size_t maxRelisted_ = 0;
  std::vector<std::uint32_t> movedSlots_;
  std::vector<Candidate> foundPairs_;
  bool localUpdates_ = true;
  std::uint64_t listRebuilds_ = 0;
  std::uint64_t listUpdates_ = 0;
  // Per-thread scratch of the split stages (grown to the largest team seen, then reused): of
  // `parts` threads, thread t owns pairScratch_[capacity t / parts, capacity (t + 1) / parts) for
  // the pairs it finds in a rebuild, and the same share of the list's length for the pairs it keeps
  // in the re-test; its end in threadEnd_; the displacement box of the hold test in
  // threadLow_/threadHigh_.
  std::vector<Candidate> pairScratch_;
  std::vector<std::size_t> threadEnd_;
  std::vector<Vec3> threadLow_;
  std::vector<Vec3> threadHigh_;
  std::vector<char> threadFlag_;
  std::vector<ThreadOwned<std::vector<std::uint32_t>>>
      threadNeighbourhood_;  // forEachParticleNeighbourhood's, per thread
  // Counting sort of the rebuilt list by lower index: group starts, per particle index.
  std::vector<std::uint32_t> lowStart_;
  // Runs fn(part, parts) on `team` threads (on the caller alone when team <= 1) and returns parts.
  template <class Fn>
  int runShares(int team, Fn&& fn);
  void growThreadScratch(int team);
  // Velocity pass scratch, per particle (written only for particles in a contact): the velocity
  // before the solve (after the prediction), and its copies after the pairwise impacts with the
  // material's restitution and with none (particle_contacts.cpp).
  std::vector<Vec3> velocityBefore_;
  std::vector<Vec3> bounced_;
  std::vector<Vec3> stopped_;
};

}  // namespace pliant::detail
