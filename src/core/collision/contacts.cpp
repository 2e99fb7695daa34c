// Contacts: stages 3 (collide), 5 (project, after the families) and 7 (velocity pass) of the step
// pipeline written in solver.h.
//
// The idea (seed 004; Macklin et al. 2019, "Small steps"; Mueller et al. 2020, "Detailed rigid body
// simulation with XPBD", sec. 3.5-3.6; Macklin et al. 2014, "Unified particle physics", sec. 6.1):
// - Every substep, contacts are found where the particles are predicted to be, so a contact is
//   never older than one substep and needs no persistent state. A particle-collider contact is
//   C = phi(x) - r >= 0 (phi the collider's signed distance, r the particle radius); a pair is
//   C = |x_a - x_b| - r_a - r_b >= 0. Both are hard (alpha = 0) and projected only while violated;
//   their multiplier only grows (never pulls).
// - Overlap that already existed at the start of the substep (x^n against the collider where it
//   was then) is not removed at once: up to maxDepenetrationVelocity * h of it per substep, the
//   rest is tolerated as an `allowance` added to C. New penetration is always removed completely.
// - Friction at position level, after the normal correction, on the tangential motion of the
//   particle relative to the surface during this substep: while the total tangential correction
//   stays within mu_s times the normal one (w lambda) it is all undone (static friction: the
//   particle sticks); beyond, the contact slides and mu_d w lambda of it is undone (dynamic
//   friction, i.e. the impulse mu_d |f_n| h with f_n = lambda / h^2). Dynamic friction belongs in
//   the position solve for particles: there the friction of one slipping contact reaches the rest
//   of its body through the other constraints. Done as a velocity change of the one particle
//   (Mueller et al. 2020 eq. 30, dv = -min(mu_d |f_n| h / m, |v_t|)), it is capped at that
//   particle's own speed, and a stiff body creeps down a slope with mu_s well above tan(theta)
//   (tests/scenario/contact_v13_v14_test.cpp measures both). SolverSettings::
//   dynamicFrictionInVelocityPass selects the velocity-pass form.
// - Velocity pass after v = (x - x^n)/h, on contacts that pushed (lambda > 0): restitution sets the
//   normal velocity to -e times the one before the solve, with e = 0 when that was at most
//   2 |g| h (resting contacts stay at rest), as Mueller et al. 2020 eq. 34.
// For particle pairs the same rules act on the relative motion, shared by inverse mass.
#include <algorithm>
#include <cmath>
#include <limits>

#include "collision/cell_hash.h"
#include "collision/friction.h"
#include "pliant/solver.h"
#include "step_check.h"

namespace pliant {

using detail::cellCoordinate;
using detail::cellKey;
using detail::frictionShift;
using detail::keyHash;
using detail::velocityPassChange;

namespace {

// The 13 neighbouring cells "after" a cell (each unordered pair of neighbouring cells once).
constexpr int kForwardCells[13][3] = {{1, 0, 0},  {-1, 1, 0}, {0, 1, 0},  {1, 1, 0},  {-1, -1, 1},
                                      {0, -1, 1}, {1, -1, 1}, {-1, 0, 1}, {0, 0, 1},  {1, 0, 1},
                                      {-1, 1, 1}, {0, 1, 1},  {1, 1, 1}};

// The world position at the start of the substep of the collider's material point now at x.
Vec3 pointBefore(const Collider& c, const ColliderPose& now, const ColliderPose& before, const Vec3& x) {
  if (!c.kinematic()) return x;
  return before.position + before.rotation * (now.rotation.conjugate() * (x - now.position));
}

}  // namespace

void Solver::buildContactTopology() {
  const Model& model = *model_;
  const std::size_t n = model.particleCount();
  colliderPose_.resize(model.colliders.size());
  colliderPreviousPose_.resize(model.colliders.size());
  colliderContacts_.clear();
  particleContacts_.clear();
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
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (const auto& pair : pairs) ++restNeighbourStart_[pair.first + 1];
    for (std::size_t p = 0; p < n; ++p) restNeighbourStart_[p + 1] += restNeighbourStart_[p];
    restNeighbours_.reserve(pairs.size());
    for (const auto& pair : pairs) restNeighbours_.push_back(pair.second);
  }
  // Hash table of at least twice as many buckets as particles, a power of two.
  std::size_t buckets = 1;
  while (buckets < 2 * collidingParticles_.size()) buckets *= 2;
  gridStart_.assign(collidingParticles_.empty() ? 0 : buckets + 1, 0);
  gridEntries_.resize(collidingParticles_.size());
  gridScratch_.resize(collidingParticles_.size());
  colliderContacts_.reserve(model.colliders.empty() ? 0 : n);
  particleContacts_.reserve(4 * collidingParticles_.size());
}

void Solver::updateColliderPoses(double previousTime, double time) {
  const Model& model = *model_;
  for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
    colliderPose_[c] = colliderPose(model, c, time);
    colliderPreviousPose_[c] = model.colliders[c].kinematic() ? colliderPose(model, c, previousTime) : colliderPose_[c];
  }
}

void Solver::collide(const State& state, double h) {
  const Model& model = *model_;
  const double margin = settings_.contactMargin;
  const double cap = settings_.maxDepenetrationVelocity * h;  // m per substep; infinity: no cap
  colliderContacts_.clear();
  if (!model.colliders.empty()) {
    const std::size_t n = model.particleCount();
    for (std::size_t i = 0; i < n; ++i) {
      if (model.inverseMass[i] == 0.0) continue;
      const Vec3& x = state.position[i];
      if (!x.allFinite()) continue;
      const auto p = static_cast<ParticleIndex>(i);
      const double r = model.radius(p);
      for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
        const Collider& collider = model.colliders[c];
        Vec3 normal;
        const double d = colliderDistance(collider, colliderPose_[c], x, normal) - r;
        if (!(d < margin)) continue;
        Contact k;
        k.particle = p;
        k.collider = static_cast<std::int32_t>(c);
        Vec3 normalBefore;
        const double d0 =
            colliderDistance(collider, colliderPreviousPose_[c], state.previousPosition[i], normalBefore) - r;
        if (d0 < 0.0) k.allowance = std::max(0.0, -d0 - cap);
        const Vec3 surfaceVelocity = (x - pointBefore(collider, colliderPose_[c], colliderPreviousPose_[c], x)) / h;
        k.normalVelocity = normal.dot(state.velocity[i] - surfaceVelocity);
        colliderContacts_.push_back(k);
      }
    }
  }
  findParticlePairs(state, h);
}

void Solver::findParticlePairs(const State& state, double h) {
  const Model& model = *model_;
  particleContacts_.clear();
  if (collidingParticles_.size() < 2) return;
  const double margin = settings_.contactMargin;
  const double cap = settings_.maxDepenetrationVelocity * h;
  // Cells of 2 r_max + margin: any pair within reach lies in neighbouring cells.
  const double inverseCellSize = 1.0 / (2.0 * maxRadius_ + margin);
  const std::size_t buckets = gridStart_.size() - 1;
  const std::uint64_t mask = buckets - 1;
  // Counting sort of the particles by bucket; within a bucket they stay in index order.
  std::fill(gridStart_.begin(), gridStart_.end(), 0u);
  std::size_t used = 0;
  for (ParticleIndex p : collidingParticles_) {
    const Vec3& x = state.position[p];
    if (!x.allFinite()) continue;
    GridEntry& e = gridScratch_[used++];
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
  // The pair test; (a, b) in any order, stored as (lower, higher index).
  auto test = [&](ParticleIndex pa, ParticleIndex pb) {
    const double wa = model.inverseMass[pa];
    const double wb = model.inverseMass[pb];
    if (wa + wb == 0.0) return;
    const double radii = model.radius(pa) + model.radius(pb);
    const double reach = radii + margin;
    const Vec3 diff = state.position[pa] - state.position[pb];
    if (!(diff.squaredNorm() < reach * reach)) return;
    const ParticleIndex low = std::min(pa, pb), high = std::max(pa, pb);
    if (std::binary_search(restNeighbours_.data() + restNeighbourStart_[low],
                           restNeighbours_.data() + restNeighbourStart_[low + 1], high))
      return;
    const Vec3 d = state.position[low] - state.position[high];
    const double distance = d.norm();
    const Vec3 n = distance > 0.0 ? Vec3(d / distance) : Vec3(Vec3::UnitY());
    Contact c;
    c.particle = low;
    c.other = high;
    const double d0 = (state.previousPosition[low] - state.previousPosition[high]).norm() - radii;
    if (d0 < 0.0) c.allowance = std::max(0.0, -d0 - cap);
    c.normalVelocity = n.dot(state.velocity[low] - state.velocity[high]);
    particleContacts_.push_back(c);
  };
  // Each particle pairs with the higher-indexed particles of its own cell and with every particle
  // of the 13 cells after it; comparing keys (not only buckets) keeps each pair to one visit.
  for (std::size_t k = 0; k < used; ++k) {
    const GridEntry& a = gridScratch_[k];
    const std::uint64_t ownBucket = keyHash(a.key) & mask;
    for (std::uint32_t s = gridStart_[ownBucket]; s < gridStart_[ownBucket + 1]; ++s)
      if (gridEntries_[s].key == a.key && gridEntries_[s].particle > a.particle) test(a.particle, gridEntries_[s].particle);
    for (const auto& offset : kForwardCells) {
      const std::uint64_t key = cellKey(a.cell[0] + offset[0], a.cell[1] + offset[1], a.cell[2] + offset[2]);
      const std::uint64_t bucket = keyHash(key) & mask;
      for (std::uint32_t s = gridStart_[bucket]; s < gridStart_[bucket + 1]; ++s)
        if (gridEntries_[s].key == key) test(a.particle, gridEntries_[s].particle);
    }
  }
  // Sorting gives the documented order (particle, other) whatever the grid; a pair can only repeat
  // when keys alias (cells 2^21 apart), and unique drops it.
  std::sort(particleContacts_.begin(), particleContacts_.end(), [](const Contact& l, const Contact& r) {
    return l.particle != r.particle ? l.particle < r.particle : l.other < r.other;
  });
  particleContacts_.erase(std::unique(particleContacts_.begin(), particleContacts_.end(),
                                      [](const Contact& l, const Contact& r) {
                                        return l.particle == r.particle && l.other == r.other;
                                      }),
                          particleContacts_.end());
}

bool Solver::projectContacts(State& state, bool trace) {
  const Model& model = *model_;
  const double* w = model.inverseMass.data();
  Vec3* x = state.position.data();
  const Vec3* xPrev = state.previousPosition.data();
  auto bad = [&](ParticleIndex p, const Contact& c) {
    if (!trace || trace_.found || !detail::particleBad(state, *trace_.stepStart, p, trace_.bound)) return false;
    trace_.found = true;
    trace_.particle = p;
    trace_.contactSet = true;
    trace_.contact = c;
    return true;
  };
  // Particle pairs first, then surface contacts (self_collision.cpp), colliders last: at the end of a
  // pass the obstacles hold.
  const bool kineticHere = !settings_.dynamicFrictionInVelocityPass;
  const double muPair = model.particleContactMaterial.staticFriction;
  const double kineticPair = kineticHere ? model.particleContactMaterial.dynamicFriction : 0.0;
  for (Contact& c : particleContacts_) {
    const ParticleIndex a = c.particle, b = c.other;
    const Vec3 diff = x[a] - x[b];
    const double distance = diff.norm();
    const double C = distance - model.radius(a) - model.radius(b) + c.allowance;
    if (!(C < 0.0)) continue;
    const Vec3 n = distance > 0.0 ? Vec3(diff / distance) : Vec3(Vec3::UnitY());
    const double wSum = w[a] + w[b];
    const double deltaLambda = -C / wSum;
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
  if (!surfaceContacts_.empty() && !projectSurfaceContacts(state, trace)) return false;
  for (Contact& c : colliderContacts_) {
    const ParticleIndex p = c.particle;
    const Collider& collider = model.colliders[c.collider];
    const ColliderPose& pose = colliderPose_[c.collider];
    Vec3 n;
    const double C = colliderDistance(collider, pose, x[p], n) - model.radius(p) + c.allowance;
    if (!(C < 0.0)) continue;
    const double deltaLambda = -C / w[p];
    c.lambda += deltaLambda;
    x[p] += (w[p] * deltaLambda) * n;
    const Vec3 relative = pointBefore(collider, pose, colliderPreviousPose_[c.collider], x[p]) - xPrev[p];
    const double kinetic = kineticHere ? collider.material.dynamicFriction : 0.0;
    x[p] -= frictionShift(relative - n.dot(relative) * n, collider.material.staticFriction * w[p] * c.lambda,
                          kinetic * w[p] * c.lambda, c.friction);
    if (bad(p, c)) return false;
  }
  return true;
}

void Solver::contactVelocityPass(State& state, double h) {
  const Model& model = *model_;
  const double* w = model.inverseMass.data();
  const Vec3* x = state.position.data();
  Vec3* v = state.velocity.data();
  const double restingSpeed = 2.0 * settings_.gravity.norm() * h;  // m/s, below it e = 0
  const bool friction = settings_.dynamicFrictionInVelocityPass;
  for (const Contact& c : particleContacts_) {
    if (!(c.lambda > 0.0)) continue;
    const ParticleIndex a = c.particle, b = c.other;
    const Vec3 diff = x[a] - x[b];
    const double distance = diff.norm();
    const Vec3 n = distance > 0.0 ? Vec3(diff / distance) : Vec3(Vec3::UnitY());
    const double wSum = w[a] + w[b];
    const Vec3 dv = velocityPassChange(v[a] - v[b], n, wSum * c.lambda, c.normalVelocity,
                                       model.particleContactMaterial, friction, h, restingSpeed);
    v[a] += (w[a] / wSum) * dv;
    v[b] -= (w[b] / wSum) * dv;
  }
  surfaceVelocityPass(state, h);
  for (const Contact& c : colliderContacts_) {
    if (!(c.lambda > 0.0)) continue;
    const ParticleIndex p = c.particle;
    const Collider& collider = model.colliders[c.collider];
    const ColliderPose& pose = colliderPose_[c.collider];
    Vec3 n;
    colliderDistance(collider, pose, x[p], n);
    const Vec3 surfaceVelocity = (x[p] - pointBefore(collider, pose, colliderPreviousPose_[c.collider], x[p])) / h;
    v[p] += velocityPassChange(v[p] - surfaceVelocity, n, w[p] * c.lambda, c.normalVelocity, collider.material,
                               friction, h, restingSpeed);
  }
}

}  // namespace pliant
