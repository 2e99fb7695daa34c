// Particle-particle contacts: stage 3 (collide: a spatial hash grid), 5 (project) and 7 (velocity
// pass) of the step pipeline written in solver.h, by the rules of collider_contacts.cpp applied to
// the relative motion of the two particles, shared by inverse mass.
//
// The velocity pass differs from the colliders' in one way: restitution must pass along rows of
// contacts. A contact that a neighbour's correction creates within the substep (a resting ball
// pushed into the next one) had no approach speed before the solve, so Mueller et al.'s rule
// (v_n <- -e v_n before, per contact) makes it inelastic, and a row of touching balls struck at one
// end loses most of its energy (Newton's cradle). With e > 0 the impacts are resolved as a sequence
// of pairwise collisions (Moore and Wilhelms 1988, "Collision detection and response for computer
// animation"): on copies of the velocities before the solve, the contacts that pushed
// (lambda > 0) are swept in order, each approaching pair getting the impulse that turns v_n into
// -e v_n (e = 0 below the resting speed 2 |g| h), until no pair approaches, so that the pulse
// travels along a row however the contacts are numbered; once with e (v_e) and once with e = 0
// (v_0). The velocities after the solve are made inelastic on those contacts (Mueller et al.'s
// rule with e = 0, swept to convergence), then v_e - v_0, what restitution adds to the inelastic
// outcome, is added. For one isolated contact this is Mueller et al.'s rule exactly; with e = 0
// it is their single sweep, bit for bit.
#include "collision/particle_contacts.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <utility>

#include "collision/cell_hash.h"
#include "collision/counting_sort.h"
#include "collision/friction.h"

namespace pliant::detail {

namespace {

// The 13 neighbouring cells "after" a cell (each unordered pair of neighbouring cells once).
constexpr int kForwardCells[13][3] = {{1, 0, 0},  {-1, 1, 0}, {0, 1, 0},  {1, 1, 0}, {-1, -1, 1},
                                      {0, -1, 1}, {1, -1, 1}, {-1, 0, 1}, {0, 0, 1}, {1, 0, 1},
                                      {-1, 1, 1}, {0, 1, 1},  {1, 1, 1}};

// Bound on the contacts: equal spheres touch at most 12 others (the kissing number); more than
// this many per colliding particle means radii far larger than the spacing, where every pair
// touches and the list grows quadratically: the step is refused instead (issue 12).
constexpr std::size_t kMaxContactsPerParticle = 32;

// Capacity of the candidate list per colliding particle: close-packed equal spheres have about 21
// others within twice their reach (the list's), counted once per pair.
constexpr std::size_t kMaxCandidatesPerParticle = 32;

// Entries gathered per cell by the candidate search before it grows its list (a cell and the 13
// after it, about 30 particles each in a close-packed cloud).
constexpr std::size_t kNeighbourhoodRoom = 512;

// Pairs screened at once by the candidate search (buildCandidates).
constexpr std::size_t kPendingPairs = 64;

// The candidate list is updated locally (updateCandidates) while at most one colliding particle
// in kRelistedShare, or kLeastRelisted, has been listed again since it was built; beyond, it is
// rebuilt.
// An update searches around each particle it lists again (27 cells), where a rebuild searches
// around every particle: in contact-sphere-80, 103 of the 128 rebuilds were for fewer than 32 of
// its 6,400 particles.
constexpr std::size_t kRelistedShare = 64;
constexpr std::size_t kLeastRelisted = 16;

std::string contactOverflowMessage(std::size_t bound, double maxRadius) {
  return "particle contacts: more than " + std::to_string(bound) + " pairs of particles in contact (" +
         std::to_string(kMaxContactsPerParticle) + " per particle of radius > 0; the largest radius is " +
         std::to_string(maxRadius) +
         " m): radii much larger than the spacing put every pair in contact; lower particle_radius";
}

}  // namespace

void ParticleContacts::prepare(const Model& model) {
  const std::size_t n = model.particleCount();
  contacts_.clear();
  overflow_.clear();
  collidingParticles_.clear();
  maxRadius_ = 0.0;
  if (model.particleCollisions)
    for (std::size_t p = 0; p < n; ++p) {
      const double r = model.radius(static_cast<ParticleIndex>(p));
      if (r > 0.0) {
        collidingParticles_.push_back(static_cast<ParticleIndex>(p));
        maxRadius_ = std::max(maxRadius_, r);
      }
    }
  restNeighbourStart_.assign(n + 1, 0);
  restNeighbours_.clear();
  if (!collidingParticles_.empty()) {
    // Neighbours at rest: particles that share a distance, bending or tet constraint. Their own
    // constraint keeps them apart, and thick particles on a fine mesh overlap by construction.
    std::vector<std::pair<ParticleIndex, ParticleIndex>> pairs;
    auto link = [&](const ParticleIndex* p, int count) {
      for (int i = 0; i < count; ++i)
        for (int j = 0; j < count; ++j)
          if (p[i] != p[j]) pairs.emplace_back(p[i], p[j]);
    };
    for (const DistanceConstraint& c : model.distances) link(c.particles, 2);
    for (const DihedralBendingConstraint& c : model.dihedralBendings) link(c.particles, 4);
    for (const IsometricBendingConstraint& c : model.isometricBendings) link(c.particles, 4);
    for (const TetVolumeConstraint& c : model.tetVolumes) link(c.particles, 4);
    for (const NeoHookeanConstraint& c : model.neoHookeans) link(c.particles, 4);
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (const auto& pair : pairs) ++restNeighbourStart_[pair.first + 1];
    for (std::size_t p = 0; p < n; ++p) restNeighbourStart_[p + 1] += restNeighbourStart_[p];
    restNeighbours_.reserve(pairs.size());
    for (const auto& pair : pairs) restNeighbours_.push_back(pair.second);
  }
  restStamps_.assign(collidingParticles_.empty() ? 0 : n, 0u);
  // Hash table of at least twice as many buckets as particles, a power of two.
  std::size_t buckets = 1;
  while (buckets < 2 * collidingParticles_.size()) buckets *= 2;
  gridStart_.assign(collidingParticles_.empty() ? 0 : buckets + 1, 0);
  gridEntries_.resize(collidingParticles_.size());
  gridScratch_.resize(collidingParticles_.size());
  velocityBefore_.assign(collidingParticles_.size() >= 2 ? n : 0, Vec3::Zero());
  bounced_.assign(velocityBefore_.size(), Vec3::Zero());
  stopped_.assign(velocityBefore_.size(), Vec3::Zero());
  contacts_.reserve(4 * collidingParticles_.size());
  const std::size_t capacity =
      collidingParticles_.size() >= 2 ? kMaxCandidatesPerParticle * collidingParticles_.size() : 0;
  candidates_.clear();
  candidates_.reserve(capacity);
  pairScratch_.assign(capacity, Candidate{});
  lowStart_.assign(capacity > 0 ? n + 1 : 0, 0u);
  listPosition_.assign(collidingParticles_.size(), Vec3::Zero());
  const bool pairs = collidingParticles_.size() >= 2;
  relisted_.assign(pairs ? n : 0, 0);
  maxRelisted_ = pairs ? std::max(kLeastRelisted, collidingParticles_.size() / kRelistedShare) : 0;
  relistedSlots_.clear();
  relistedSlots_.reserve(maxRelisted_);
  movedSlots_.clear();
  movedSlots_.reserve(maxRelisted_);
  foundPairs_.clear();
  foundPairs_.reserve(maxRelisted_ * kMaxCandidatesPerParticle);
  growThreadScratch(1);
  listValid_ = false;
  listRetryIn_ = 0;
}

template <class Fn>
int ParticleContacts::runShares(int team, Fn&& fn) {
  growThreadScratch(team);
  if (team <= 1) {
    fn(0, 1);
    return 1;
  }
  int parts = 1;
#pragma omp parallel num_threads(team)
  {
    const int part = omp_get_thread_num();
    const int count = omp_get_num_threads();
#pragma omp single
    parts = count;
    fn(part, count);
  }
  return parts;
}

void ParticleContacts::growThreadScratch(int team) {
  const auto size = static_cast<std::size_t>(std::max(team, 1));
  if (threadEnd_.size() >= size) return;
  threadEnd_.resize(size);
  threadLow_.resize(size);
  threadHigh_.resize(size);
  threadFlag_.resize(size);
  threadNeighbourhood_.resize(size);
  // Room for the particles of 14 cells of a dense cloud: a search does not allocate.
  for (auto& list : threadNeighbourhood_) list.reserve(kNeighbourhoodRoom);
}

void ParticleContacts::buildGrid(const State& state, double cellSize, int team) {
  const double inverseCellSize = 1.0 / cellSize;
  const std::size_t buckets = gridStart_.size() - 1;
  const std::uint64_t mask = buckets - 1;
  if (team > 1) {
    buildGridSplit(state, inverseCellSize, team);
    return;
  }
  // Counting sort of the particles by bucket; within a bucket they stay in index order.
  std::fill(gridStart_.begin(), gridStart_.end(), 0u);
  std::size_t used = 0;
  for (ParticleIndex p : collidingParticles_) {
    const Vec3& x = state.position[p];
    if (!x.allFinite()) continue;
    GridEntry& e = gridScratch_[used++];
    e.position = x;
    e.particle = p;
    for (int k = 0; k < 3; ++k) e.cell[k] = cellCoordinate(x[k], inverseCellSize);
    e.key = cellKey(e.cell[0], e.cell[1], e.cell[2]);
    ++gridStart_[keyHash(e.key) & mask];
  }
  for (std::size_t b = 1; b < buckets; ++b) gridStart_[b] += gridStart_[b - 1];
  gridStart_[buckets] = static_cast<std::uint32_t>(used);
  for (std::size_t k = used; k-- > 0;) {
    const GridEntry& e = gridScratch_[k];
    gridEntries_[--gridStart_[keyHash(e.key) & mask]] = e;
  }
  sortBucketRuns(0, buckets);
}

// Cells that share a bucket are made runs (a stable insertion sort by key; most buckets hold one
// cell, which it leaves after one comparison per entry).
void ParticleContacts::sortBucketRuns(std::size_t firstBucket, std::size_t endBucket) {
  for (std::size_t b = firstBucket; b < endBucket; ++b)
    for (std::uint32_t s = gridStart_[b] + 1; s < gridStart_[b + 1]; ++s) {
      if (!(gridEntries_[s].key < gridEntries_[s - 1].key)) continue;
      const GridEntry moving = gridEntries_[s];
      std::uint32_t t = s;
      for (; t > gridStart_[b] && moving.key < gridEntries_[t - 1].key; --t) gridEntries_[t] = gridEntries_[t - 1];
      gridEntries_[t] = moving;
    }
}

// The grid built by `team` threads, entry for entry the serial build's: each thread computes the
// cells of a fixed share of the particles and counts them per bucket in its own row; the rows are
// turned into starts (bucket by bucket, the threads in order, so a bucket holds its particles in
// index order as the serial counting sort leaves them), each thread over a fixed share of the
// buckets; each thread places its share; each sorts the runs of a fixed share of the buckets.
void ParticleContacts::buildGridSplit(const State& state, double inverseCellSize, int team) {
  const std::size_t buckets = gridStart_.size() - 1;
  const std::uint64_t mask = buckets - 1;
  const std::size_t n = collidingParticles_.size();
  if (threadBucketStart_.size() < buckets * static_cast<std::size_t>(team))
    threadBucketStart_.resize(buckets * static_cast<std::size_t>(team));
  if (threadTotals_.size() < static_cast<std::size_t>(team)) threadTotals_.resize(static_cast<std::size_t>(team));
#pragma omp parallel num_threads(team)
  {
    const auto part = static_cast<std::size_t>(omp_get_thread_num());
    const auto parts = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t begin = n * part / parts, end = n * (part + 1) / parts;
    std::uint32_t* row = threadBucketStart_.data() + buckets * part;
    std::fill(row, row + buckets, 0u);
    for (std::size_t i = begin; i < end; ++i) {
      const Vec3& x = state.position[collidingParticles_[i]];
      if (!x.allFinite()) continue;
      GridEntry& e = gridScratch_[i];
      e.position = x;
      e.particle = collidingParticles_[i];
      for (int k = 0; k < 3; ++k) e.cell[k] = cellCoordinate(x[k], inverseCellSize);
      e.key = cellKey(e.cell[0], e.cell[1], e.cell[2]);
      ++row[keyHash(e.key) & mask];
    }
#pragma omp barrier
    partCountsToStartsShared(threadBucketStart_.data(), parts, buckets, threadTotals_.data(), gridStart_.data());
    for (std::size_t i = begin; i < end; ++i) {
      if (!state.position[collidingParticles_[i]].allFinite()) continue;
      const GridEntry& e = gridScratch_[i];
      gridEntries_[row[keyHash(e.key) & mask]++] = e;
    }
#pragma omp barrier
    sortBucketRuns(buckets * part / parts, buckets * (part + 1) / parts);
  }
}

template <class Visit>
void ParticleContacts::forEachParticleNeighbourhood(std::size_t firstBucket, std::size_t endBucket,
                                                    std::vector<std::uint32_t>& neighbourhood, Visit&& visit) const {
  const std::uint64_t mask = gridStart_.size() - 2;
  const GridEntry* entries = gridEntries_.data();
  // Cell by cell (a run of one key): the 13 cells after it are looked up once per cell, and each
  // particle of the cell meets the later ones of its own cell and those cells' particles, gathered
  // as entry indices.
  for (std::size_t b = firstBucket; b < endBucket; ++b) {
    const std::uint32_t bucketEnd = gridStart_[b + 1];
    for (std::uint32_t run = gridStart_[b]; run < bucketEnd;) {
      const GridEntry& first = entries[run];
      std::uint32_t runEnd = run + 1;
      while (runEnd < bucketEnd && entries[runEnd].key == first.key) ++runEnd;
      neighbourhood.clear();
      for (std::uint32_t j = run + 1; j < runEnd; ++j) neighbourhood.push_back(j);
      for (const auto& offset : kForwardCells) {
        const std::uint64_t key =
            cellKey(first.cell[0] + offset[0], first.cell[1] + offset[1], first.cell[2] + offset[2]);
        const std::uint64_t bucket = keyHash(key) & mask;
        std::uint32_t other = gridStart_[bucket];
        const std::uint32_t otherBucketEnd = gridStart_[bucket + 1];
        while (other < otherBucketEnd && entries[other].key != key) ++other;
        for (; other < otherBucketEnd && entries[other].key == key; ++other) neighbourhood.push_back(other);
      }
      // Particle i of the run meets the run's particles after it (the first runEnd - i - 1
      // entries from i - run on) and the other cells'; the last one with nothing is not visited.
      for (std::uint32_t i = run; i < runEnd; ++i) {
        const std::size_t skip = i - run;
        if (skip == neighbourhood.size()) break;
        if (!visit(entries[i], std::span<const std::uint32_t>(neighbourhood).subspan(skip))) return;
      }
      run = runEnd;
    }
  }
}

std::uint32_t* ParticleContacts::restNeighbourStamps(int parts, int part) {
  const std::size_t n = restNeighbourStart_.size() - 1;
  const auto team = static_cast<std::size_t>(std::max(parts, 1));
  if (restStamps_.size() < n * team) restStamps_.resize(n * team, 0u);
  return restStamps_.data() + n * static_cast<std::size_t>(part);
}

std::uint32_t ParticleContacts::stampRestNeighbours(std::uint32_t* stamps, ParticleIndex a) const {
  // stamps[q] == a + 1 exactly when q is a's neighbour at rest, until another particle is stamped:
  // no other particle writes that value.
  const std::uint32_t tag = a + 1;
  for (std::uint32_t k = restNeighbourStart_[a]; k < restNeighbourStart_[a + 1]; ++k) stamps[restNeighbours_[k]] = tag;
  return tag;
}

void ParticleContacts::collide(const Model& model, const SolverSettings& settings, const State& state, double h,
                               int team) {
  contacts_.clear();
  overflow_.clear();
  if (collidingParticles_.size() < 2) return;
  // The list, when it holds or can be rebuilt within its capacity; else the direct search (both
  // find the same contacts in the same order).
  if (listRetryIn_ > 0) --listRetryIn_;
  if (listRetryIn_ == 0 && (candidatesHold(model, state, settings.contactMargin, team) ||
                            buildCandidates(model, state, settings.contactMargin, team)))
    collideCandidates(model, settings, state, h, team);
  else collideDirect(model, settings, state, h);
}

// Whether the colliding particles' displacements since the list was built all lie within (less
// than) the skin of one vector c: then two particles' distance changed by less than twice the skin,
// and a pair within reach now was within reach + 2 skin then (a non-finite position fails the
// test). c is the centre of the displacements' bounding box, which moves with a cloth falling or
// sliding as a whole; the box and the test are exact, so any split over threads decides the same.
bool ParticleContacts::candidatesHold(const Model& model, const State& state, double margin, int team) {
  if (!listValid_ || margin != listMargin_) return false;
  const std::size_t n = collidingParticles_.size();
  const Vec3* x = state.position.data();
  const ParticleIndex* particles = collidingParticles_.data();
  const Vec3* listed = listPosition_.data();
  const int parts = runShares(team, [&](int part, int count) {
    Vec3 low = Vec3::Constant(std::numeric_limits<double>::infinity());
    Vec3 high = -low;
    bool finite = true;
    for (std::size_t i = n * part / count; i < n * (part + 1) / count; ++i) {
      const Vec3 moved = x[particles[i]] - listed[i];
      finite = finite && moved.allFinite();
      low = low.cwiseMin(moved);
      high = high.cwiseMax(moved);
    }
    threadLow_[part] = low;
    threadHigh_[part] = high;
    threadFlag_[part] = finite ? 1 : 0;
  });
  Vec3 low = threadLow_[0], high = threadHigh_[0];
  for (int t = 0; t < parts; ++t) {
    if (!threadFlag_[t]) return false;
    low = low.cwiseMin(threadLow_[t]);
    high = high.cwiseMax(threadHigh_[t]);
  }
  // A thousandth of the skin spare for the rounding of the distances compared.
  const double limit = 0.999 * skin_;
  const double limitSquared = limit * limit;
  const Vec3 centre = 0.5 * (low + high);
  // Every displacement lies within half the box's diagonal of its centre.
  if ((0.5 * (high - low)).squaredNorm() < limitSquared) return true;
  const int checks = runShares(team, [&](int part, int count) {
    bool within = true;
    for (std::size_t i = n * part / count; i < n * (part + 1) / count && within; ++i)
      within = (x[particles[i]] - listed[i] - centre).squaredNorm() < limitSquared;
    threadFlag_[part] = within ? 1 : 0;
  });
  for (int t = 0; t < checks; ++t)
    if (!threadFlag_[t]) return localUpdates_ && updateCandidates(model, state, centre, limitSquared);
  return true;
}

// The local update. When a few particles left the skin (a cloth resting but for a sliding corner,
// a particle bouncing on a pile), each is listed again at x - c (c the displacements' centre, so
// that its displacement is c itself) and its pairs are searched again: with the particles not
// listed again since the build, in the 27 cells around it in the list's grid, which holds them
// where they were listed (a pair within reach plus twice the skin lies in neighbouring cells), and
// with those listed again, one by one. The list is then again every pair (not neighbours at rest)
// whose listed positions are within reach plus twice the skin, so the hold test's argument stands:
// a pair within reach now was within reach plus twice the skin where both were listed. It is not
// the list a rebuild would make now, but the contacts made from it are the same: every pair within
// reach, in (particle, other) order. False, with the list left to a rebuild, when more particles
// than maxRelisted_ would have been listed again, or its scratch or capacity would overflow.
bool ParticleContacts::updateCandidates(const Model& model, const State& state, const Vec3& centre,
                                        double limitSquared) {
  const std::size_t n = collidingParticles_.size();
  const Vec3* x = state.position.data();
  movedSlots_.clear();
  std::size_t first = 0;  // moved slots not listed again before
  for (std::size_t i = 0; i < n; ++i) {
    const ParticleIndex a = collidingParticles_[i];
    if ((x[a] - listPosition_[i] - centre).squaredNorm() < limitSquared) continue;
    if (movedSlots_.size() == maxRelisted_) return false;
    movedSlots_.push_back(static_cast<std::uint32_t>(i));
    first += (relisted_[a] & 1u) ? 0 : 1;
  }
  if (relistedSlots_.size() + first > maxRelisted_) return false;
  for (const std::uint32_t i : movedSlots_) {
    const ParticleIndex a = collidingParticles_[i];
    listPosition_[i] = x[a] - centre;
    if (!(relisted_[a] & 1u)) relistedSlots_.push_back(i);
    relisted_[a] = 3;  // listed again, and moved by this update
  }
  // Their old pairs go; the others' stand.
  std::size_t kept = 0;
  for (const Candidate& c : candidates_)
    if (!((relisted_[c.particle] | relisted_[c.other]) & 2u)) candidates_[kept++] = c;
  candidates_.resize(kept);
  foundPairs_.clear();
  const double margin = listMargin_, skins = 2.0 * skin_;
  std::uint32_t* stamps = restNeighbourStamps(1, 0);
  const std::uint64_t mask = gridStart_.size() - 2;
  const GridEntry* entries = gridEntries_.data();
  // Keeps (a, b) when their listed positions la, lb are within reach plus twice the skin; false
  // when the scratch is full (a step allocates nothing: the list is rebuilt instead).
  auto keep = [&](ParticleIndex a, ParticleIndex b, const Vec3& la, const Vec3& lb) {
    const double reach = model.radius(a) + model.radius(b) + margin + skins;
    if (!((la - lb).squaredNorm() < reach * reach)) return true;
    if (foundPairs_.size() == foundPairs_.capacity()) return false;
    foundPairs_.push_back({std::min(a, b), std::max(a, b)});
    return true;
  };
  for (const std::uint32_t i : movedSlots_) {
    const ParticleIndex a = collidingParticles_[i];
    const Vec3& la = listPosition_[i];
    const std::uint32_t tag = stampRestNeighbours(stamps, a);
    std::int64_t cell[3];
    for (int k = 0; k < 3; ++k) cell[k] = cellCoordinate(la[k], listInverseCell_);
    for (std::int64_t dx = -1; dx <= 1; ++dx)
      for (std::int64_t dy = -1; dy <= 1; ++dy)
        for (std::int64_t dz = -1; dz <= 1; ++dz) {
          const std::uint64_t key = cellKey(cell[0] + dx, cell[1] + dy, cell[2] + dz);
          const std::uint64_t bucket = keyHash(key) & mask;
          for (std::uint32_t e = gridStart_[bucket]; e < gridStart_[bucket + 1]; ++e) {
            const ParticleIndex b = entries[e].particle;
            // Particles listed again (a itself among them) are not where their entries say.
            if (entries[e].key != key || relisted_[b] != 0 || stamps[b] == tag) continue;
            if (!keep(a, b, la, entries[e].position)) return false;
          }
        }
    for (const std::uint32_t j : relistedSlots_) {
      const ParticleIndex b = collidingParticles_[j];
      // Two moved particles are paired once, from the higher one.
      if (b == a || stamps[b] == tag || ((relisted_[b] & 2u) && b > a)) continue;
      if (!keep(a, b, la, listPosition_[j])) return false;
    }
  }
  if (candidates_.size() + foundPairs_.size() > pairScratch_.size()) return false;
  const auto pairBefore = [](const Candidate& l, const Candidate& r) {
    return l.particle != r.particle ? l.particle < r.particle : l.other < r.other;
  };
  std::sort(foundPairs_.begin(), foundPairs_.end(), pairBefore);
  const auto end = std::merge(candidates_.begin(), candidates_.end(), foundPairs_.begin(), foundPairs_.end(),
                              pairScratch_.begin(), pairBefore);
  candidates_.assign(pairScratch_.begin(), end);  // within the capacity reserved by prepare
  for (const std::uint32_t i : movedSlots_) relisted_[collidingParticles_[i]] = 1;
  ++listUpdates_;
  return true;
}

bool ParticleContacts::buildCandidates(const Model& model, const State& state, double margin, int team) {
  listValid_ = false;
  candidates_.clear();
  ++listRebuilds_;
  for (const std::uint32_t i : relistedSlots_) relisted_[collidingParticles_[i]] = 0;
  relistedSlots_.clear();
  // A skin of half the cell of the direct search: candidates within twice the reach, about eight
  // times as many as contacts in a packed cloud, few in a cloth; rebuilt every few substeps while
  // the particles move fast relative to each other.
  skin_ = 0.5 * (2.0 * maxRadius_ + margin);
  const double skins = 2.0 * skin_;
  buildGrid(state, 2.0 * maxRadius_ + margin + skins, team);
  listInverseCell_ = 1.0 / (2.0 * maxRadius_ + margin + skins);
  const std::size_t capacity = pairScratch_.size();
  const std::size_t buckets = gridStart_.size() - 1;
  // Each thread searches a fixed share of the buckets into its own part of the scratch; a part
  // that fills up sends the substep to the direct search, which finds the same contacts.
  // No pair reaches further than the largest radii allow: most pairs of neighbouring cells are
  // told apart by that before their own radii are read.
  const double widest = 2.0 * maxRadius_ + margin + skins;
  const double widestSquared = widest * widest;
  restNeighbourStamps(team, 0);  // grown for the team here, outside its region
  const int parts = runShares(team, [&](int part, int count) {
    const std::size_t begin = capacity * part / count, end = capacity * (part + 1) / count;
    std::size_t found = begin;
    bool full = false;
    std::uint32_t* stamps = restNeighbourStamps(team, part);
    // Most pairs of neighbouring cells are too far apart or neighbours at rest, and which is
    // which follows no pattern a branch predictor learns (it cost a misprediction per few pairs):
    // the pairs of one particle are screened without a branch into `pending`, by the widest reach
    // and the rest-neighbour stamps, and the few left are tested with their own radii.
    std::uint32_t pending[kPendingPairs];
    forEachParticleNeighbourhood(
        buckets * part / count, buckets * (part + 1) / count, threadNeighbourhood_[static_cast<std::size_t>(part)],
        [&](const GridEntry& a, std::span<const std::uint32_t> others) {
          const std::uint32_t tag = stampRestNeighbours(stamps, a.particle);
          const GridEntry* entries = gridEntries_.data();
          for (std::size_t first = 0; first < others.size(); first += kPendingPairs) {
            const std::size_t last = std::min(others.size(), first + kPendingPairs);
            std::size_t kept = 0;
            for (std::size_t o = first; o < last; ++o) {
              const GridEntry& b = entries[others[o]];
              pending[kept] = others[o];
              kept += static_cast<std::size_t>((a.position - b.position).squaredNorm() < widestSquared) &
                      static_cast<std::size_t>(stamps[b.particle] != tag);
            }
            for (std::size_t o = 0; o < kept; ++o) {
              const GridEntry& b = entries[pending[o]];
              const double reach = model.radius(a.particle) + model.radius(b.particle) + margin + skins;
              if (!((a.position - b.position).squaredNorm() < reach * reach)) continue;
              if (found == end) {
                full = true;
                return false;
              }
              pairScratch_[found++] = {std::min(a.particle, b.particle), std::max(a.particle, b.particle)};
            }
          }
          return true;
        });
    threadEnd_[part] = found;
    threadFlag_[part] = full ? 1 : 0;
  });
  bool full = false;
  for (int t = 0; t < parts; ++t) full = full || threadFlag_[t];
  if (full) {
    // Particles packed denser than the capacity allows: search directly for a while.
    constexpr int kRetrySubsteps = 16;
    listRetryIn_ = kRetrySubsteps;
    return false;
  }
  // The documented order (particle, other), whatever thread found a pair: a counting sort by the
  // lower index, then each particle's few partners sorted; a pair repeats only when keys alias
  // (cells 2^21 apart).
  std::fill(lowStart_.begin(), lowStart_.end(), 0u);
  std::size_t total = 0;
  for (int t = 0; t < parts; ++t) {
    const std::size_t begin = capacity * t / parts;
    for (std::size_t k = begin; k < threadEnd_[t]; ++k) ++lowStart_[pairScratch_[k].particle + 1];
    total += threadEnd_[t] - begin;
  }
  const std::size_t particleCount = lowStart_.size() - 1;
  for (std::size_t p = 0; p < particleCount; ++p) lowStart_[p + 1] += lowStart_[p];
  candidates_.resize(total);
  for (int t = 0; t < parts; ++t)
    for (std::size_t k = capacity * t / parts; k < threadEnd_[t]; ++k)
      candidates_[lowStart_[pairScratch_[k].particle]++] = pairScratch_[k];
  // lowStart_[p] is now the end of particle p's group, and the start of p + 1's.
  std::uint32_t groupStart = 0;
  for (std::size_t p = 0; p < particleCount; ++p) {
    const std::uint32_t groupEnd = lowStart_[p];
    for (std::uint32_t s = groupStart + 1; s < groupEnd; ++s) {
      const Candidate moving = candidates_[s];
      std::uint32_t t = s;
      for (; t > groupStart && moving.other < candidates_[t - 1].other; --t) candidates_[t] = candidates_[t - 1];
      candidates_[t] = moving;
    }
    groupStart = groupEnd;
  }
  candidates_.erase(std::unique(candidates_.begin(), candidates_.end(),
                                [](const Candidate& l, const Candidate& r) {
                                  return l.particle == r.particle && l.other == r.other;
                                }),
                    candidates_.end());
  for (std::size_t i = 0; i < collidingParticles_.size(); ++i)
    listPosition_[i] = state.position[collidingParticles_[i]];
  listMargin_ = margin;
  listValid_ = true;
  return true;
}

namespace {

// The contact of a pair (low < high) within reach at the prediction, as both variants find it.
Contact pairContact(const State& state, ParticleIndex low, ParticleIndex high, double radii, double cap) {
  const Vec3 d = state.position[low] - state.position[high];
  const double distance = d.norm();
  const Vec3 n = distance > 0.0 ? Vec3(d / distance) : Vec3(Vec3::UnitY());
  Contact c;
  c.particle = low;
  c.other = high;
  const double d0 = (state.previousPosition[low] - state.previousPosition[high]).norm() - radii;
  if (d0 < 0.0) c.allowance = std::max(0.0, -d0 - cap);
  c.normalVelocity = n.dot(state.velocity[low] - state.velocity[high]);
  return c;
}

}  // namespace

void ParticleContacts::collideCandidates(const Model& model, const SolverSettings& settings, const State& state,
                                         double h, int team) {
  const std::size_t bound = particleContactBound(collidingParticles_.size());
  const double margin = settings.contactMargin;
  const double cap = settings.maxDepenetrationVelocity * h;
  const double* w = model.inverseMass.data();
  const Vec3* x = state.position.data();
  const std::size_t count = candidates_.size();
  // Each thread keeps the pairs of a fixed share of the list that are within reach, in the same
  // share of the scratch (no longer than the list); the shares are joined in order.
  const int parts = runShares(team, [&](int part, int shares) {
    std::size_t kept = count * part / shares;
    for (std::size_t k = count * part / shares; k < count * (part + 1) / shares; ++k) {
      const ParticleIndex a = candidates_[k].particle, b = candidates_[k].other;
      if (w[a] + w[b] == 0.0) continue;
      const double reach = model.radius(a) + model.radius(b) + margin;
      if (!((x[a] - x[b]).squaredNorm() < reach * reach)) continue;
      pairScratch_[kept++] = candidates_[k];
    }
    threadEnd_[part] = kept;
  });
  std::size_t total = 0;
  for (int t = 0; t < parts; ++t) total += threadEnd_[t] - count * t / parts;
  if (total > bound) {
    overflow_ = contactOverflowMessage(bound, maxRadius_);
    return;
  }
  for (int t = 0; t < parts; ++t)
    for (std::size_t k = count * t / parts; k < threadEnd_[t]; ++k) {
      const ParticleIndex a = pairScratch_[k].particle, b = pairScratch_[k].other;
      contacts_.push_back(pairContact(state, a, b, model.radius(a) + model.radius(b), cap));
      velocityBefore_[a] = state.velocity[a];
      velocityBefore_[b] = state.velocity[b];
    }
}

void ParticleContacts::collideDirect(const Model& model, const SolverSettings& settings, const State& state, double h) {
  const std::size_t bound = particleContactBound(collidingParticles_.size());
  std::uint64_t found = 0;
  const double margin = settings.contactMargin;
  const double cap = settings.maxDepenetrationVelocity * h;
  // Cells of 2 r_max + margin: any pair within reach lies in neighbouring cells. The pair test;
  // (a, b) in any order, stored as (lower, higher index).
  buildGrid(state, 2.0 * maxRadius_ + margin);
  std::uint32_t* stamps = restNeighbourStamps(1, 0);
  const GridEntry* entries = gridEntries_.data();
  forEachParticleNeighbourhood(0, gridStart_.size() - 1, threadNeighbourhood_[0],
                               [&](const GridEntry& a, std::span<const std::uint32_t> others) {
                                 const std::uint32_t tag = stampRestNeighbours(stamps, a.particle);
                                 for (const std::uint32_t o : others) {
                                   const GridEntry& b = entries[o];
                                   const ParticleIndex pa = a.particle, pb = b.particle;
                                   const double wa = model.inverseMass[pa];
                                   const double wb = model.inverseMass[pb];
                                   if (wa + wb == 0.0) continue;
                                   const double radii = model.radius(pa) + model.radius(pb);
                                   const double reach = radii + margin;
                                   if (!((a.position - b.position).squaredNorm() < reach * reach)) continue;
                                   if (stamps[pb] == tag) continue;  // neighbours at rest
                                   const ParticleIndex low = std::min(pa, pb), high = std::max(pa, pb);
                                   if (++found > bound) return false;
                                   contacts_.push_back(pairContact(state, low, high, radii, cap));
                                   velocityBefore_[low] = state.velocity[low];
                                   velocityBefore_[high] = state.velocity[high];
                                 }
                                 return true;
                               });
  if (found > bound) {
    contacts_.clear();
    overflow_ = contactOverflowMessage(bound, maxRadius_);
    return;
  }
  // Sorting gives the documented order (particle, other) whatever the grid; a pair can only repeat
  // when keys alias (cells 2^21 apart), and unique drops it.
  std::sort(contacts_.begin(), contacts_.end(), [](const Contact& l, const Contact& r) {
    return l.particle != r.particle ? l.particle < r.particle : l.other < r.other;
  });
  contacts_.erase(
      std::unique(contacts_.begin(), contacts_.end(),
                  [](const Contact& l, const Contact& r) { return l.particle == r.particle && l.other == r.other; }),
      contacts_.end());
}

bool ParticleContacts::project(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace) {
  const double* w = model.inverseMass.data();
  Vec3* x = state.position.data();
  const Vec3* xPrev = state.previousPosition.data();
  auto bad = [&](ParticleIndex p, const Contact& c) {
    if (!trace || !trace->check(state, p, StepTrace::Culprit::Contact)) return false;
    trace->contact = c;
    return true;
  };
  // Particle pairs first, then surface contacts (surface_contacts.cpp), colliders last: at the end
  // of a pass the obstacles hold.
  const bool kineticHere = !settings.dynamicFrictionInVelocityPass;
  const double muPair = model.particleContactMaterial.staticFriction;
  const double kineticPair = kineticHere ? model.particleContactMaterial.dynamicFriction : 0.0;
  for (Contact& c : contacts_) {
    const ParticleIndex a = c.particle, b = c.other;
    const Vec3 diff = x[a] - x[b];
    const double distance = diff.norm();
    const double C = distance - model.radius(a) - model.radius(b) + c.allowance;
    if (!(C < 0.0) && !(c.lambda > 0.0)) continue;  // projected Gauss-Seidel, as the families
    const Vec3 n = distance > 0.0 ? Vec3(diff / distance) : Vec3(Vec3::UnitY());
    const double wSum = w[a] + w[b];
    const double deltaLambda = std::max(-C / wSum, -c.lambda);
    c.lambda += deltaLambda;
    x[a] += (w[a] * deltaLambda) * n;
    x[b] -= (w[b] * deltaLambda) * n;
    // Static friction: undo the relative tangential motion of this substep while inside the cone.
    const Vec3 relative = (x[a] - xPrev[a]) - (x[b] - xPrev[b]);
    const Vec3 shift = frictionShift(relative - n.dot(relative) * n, muPair * wSum * c.lambda,
                                     kineticPair * wSum * c.lambda, c.friction);
    x[a] -= (w[a] / wSum) * shift;
    x[b] += (w[b] / wSum) * shift;
    if (bad(a, c) || bad(b, c)) return false;
  }
  return true;
}

void ParticleContacts::velocityPass(const Model& model, const SolverSettings& settings, State& state, double h) {
  const double* w = model.inverseMass.data();
  const Vec3* x = state.position.data();
  Vec3* v = state.velocity.data();
  const double restingSpeed = 2.0 * settings.gravity.norm() * h;  // m/s, below it e = 0
  const bool friction = settings.dynamicFrictionInVelocityPass;
  const ContactMaterial& material = model.particleContactMaterial;
  auto normalOf = [&](const Contact& c) {
    const Vec3 diff = x[c.particle] - x[c.other];
    const double distance = diff.norm();
    return distance > 0.0 ? Vec3(diff / distance) : Vec3(Vec3::UnitY());
  };
  // A relative velocity change dv of the pair, shared by inverse mass (momentum kept).
  auto applyChange = [&](ParticleIndex a, ParticleIndex b, double wSum, const Vec3& dv) {
    v[a] += (w[a] / wSum) * dv;
    v[b] -= (w[b] / wSum) * dv;
  };
  // Without restitution there is nothing to pass along: Mueller et al.'s one sweep.
  if (!(material.restitution > 0.0)) {
    for (const Contact& c : contacts_) {
      if (!(c.lambda > 0.0)) continue;
      const ParticleIndex a = c.particle, b = c.other;
      const Vec3 n = normalOf(c);
      const double wSum = w[a] + w[b];
      const Vec3 dv =
          velocityPassChange(v[a] - v[b], n, wSum * c.lambda, c.normalVelocity, material, friction, h, restingSpeed);
      applyChange(a, b, wSum, dv);
    }
    return;
  }
  bool anyPushed = false;
  for (const Contact& c : contacts_) {
    if (!(c.lambda > 0.0)) continue;
    anyPushed = true;
    for (ParticleIndex p : {c.particle, c.other}) {
      bounced_[p] = velocityBefore_[p];
      stopped_[p] = velocityBefore_[p];
    }
  }
  if (!anyPushed) return;
  // Sequential pairwise impacts on `u` (the velocities before the solve) with restitution e, until
  // no pair approaches. A sweep that changes nothing beyond rounding ends it; the bound matters
  // only for long inelastic chains, whose remaining approach speeds shrink geometrically.
  constexpr int kMaxSweeps = 64;
  auto resolve = [&](std::vector<Vec3>& u, double e) {
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      bool changed = false;
      for (const Contact& c : contacts_) {
        if (!(c.lambda > 0.0)) continue;
        const ParticleIndex a = c.particle, b = c.other;
        const Vec3 n = normalOf(c);
        const double vn = n.dot(u[a] - u[b]);
        const double change = -(1.0 + (-vn <= restingSpeed ? 0.0 : e)) * vn;  // of v_n
        if (!(change > 1e-12 * (u[a].norm() + u[b].norm()))) continue;
        const double wSum = w[a] + w[b];
        u[a] += (w[a] / wSum * change) * n;
        u[b] -= (w[b] / wSum * change) * n;
        changed = true;
      }
      if (!changed) break;
    }
  };
  resolve(bounced_, material.restitution);
  resolve(stopped_, 0.0);
  // The inelastic part on the velocities after the solve, swept until the pairs that pushed move
  // apart no faster than before (Mueller et al.'s rule with e = 0, to convergence: one sweep leaves
  // a row's first pairs inelastic and its last ones not), with dynamic friction in the first sweep
  // when asked there.
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool changed = false;
    for (const Contact& c : contacts_) {
      if (!(c.lambda > 0.0)) continue;
      const ParticleIndex a = c.particle, b = c.other;
      const Vec3 n = normalOf(c);
      const double wSum = w[a] + w[b];
      const Vec3 dv =
          velocityPassChange(v[a] - v[b], n, wSum * c.lambda, 0.0, ContactMaterial{0.0, material.dynamicFriction, 0.0},
                             friction && sweep == 0, h, restingSpeed);
      if (!(dv.norm() > 1e-12 * (v[a].norm() + v[b].norm()))) continue;
      applyChange(a, b, wSum, dv);
      changed = true;
    }
    if (!changed) break;
  }
  // Then what restitution adds to the inelastic outcome of the impacts, once per particle.
  for (const Contact& c : contacts_) {
    if (!(c.lambda > 0.0)) continue;
    for (ParticleIndex p : {c.particle, c.other}) {
      v[p] += bounced_[p] - stopped_[p];
      stopped_[p] = bounced_[p];
    }
  }
}

}  // namespace pliant::detail

namespace pliant {

std::size_t particleContactBound(std::size_t particles) { return detail::kMaxContactsPerParticle * particles; }

}  // namespace pliant
