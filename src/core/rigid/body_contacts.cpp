// Contacts of rigid bodies ([M20] = Mueller, Macklin, Chentanez, Jeschke, Kim 2020, "Detailed
// Rigid Body Simulation with Extended Position Based Dynamics", sec. 3.5-3.6 and Alg. 2).
//
// The idea:
// - Found every substep at the predicted poses (as particle contacts are): a broad phase sweeps the
//   bodies' bounds (shapeBounds, enlarged by the contact margin) along the axis of their largest
//   spread, or, when that tests too many candidates (a pile), puts their centres in a uniform grid
//   and tests neighbouring cells, for overlapping pairs with at least one dynamic body that no joint
//   connects; each dynamic body is tested against each collider's bounds. Pairs are sorted by
//   index, so the order (and the Gauss-Seidel result) depends on nothing but the state. The search
//   itself runs once per step ([M20] sec. 3.5), over the bounds grown by each body's reach over the
//   step; each substep keeps the candidates whose own bounds overlap (the same list a search would
//   give while every body stays inside its grown bounds; else it searches again). The narrow
//   phase (collideShapes) gives up to four points per pair; each becomes a contact that keeps its
//   two material points in its sides' frames and the normal n (A to B), frozen for the substep.
// - Or, with SolverSettings::bodyCollisionPerSubstep false, once per step ([M20] sec. 3.5): in the
//   first substep the bounds and the narrow phase's margin grow by each body's reach over the step
//   (kReachFactor x (|v| + |g| T) T + |omega| T r, plus the margin), so contacts that close within
//   the step are present (a speculative one, C > 0, pushes nothing); later substeps re-evaluate each
//   contact's allowance, approach velocity and anchor at the same material points and normal.
//   Pairs with a sphere or capsule are collided anew every substep (a rolling contact moves over
//   the surface), and so are pairs with a body that is not settled (its points would move more than
//   kSettledMotion of the margin over the step at its velocities: a tumbling box's next corner would
//   be met only after it sank in, and pushing it out gave energy; a 1,000-box pile was thrown up);
//   everything is found again when a body leaves the bounds grown by its reach or a sleeping island
//   wakes. A resting pile's narrow phase then runs once per step (docs/performance.md, issue 17).
// - Position solve, after the joints: C = (p_B - p_A) . n with p = x + q r evaluated at the current
//   poses ([M20] sec. 3.5, d = (p1 - p2) . n with the sign of our normal), a hard unilateral constraint (alpha = 0)
//   whose correction uses the generalised inverse masses w = 1/m + (r x n)^T I^-1 (r x n) ([M20] eqs. 2-9,
//   rigid/corrections.h). Overlap present at the start of the substep is removed at most at
//   maxDepenetrationVelocity, as for particles (the rest is an allowance added to C). Within one
//   project() call the rows are linearised about the poses at its start: p = x + dx + r + dtheta x r
//   with r, n, w and the world I^-1 frozen, the bodies' corrections summed in dx and dtheta, and each
//   pose moved and turned once at the end (a call turns a body by micro-radians; per visit, the
//   quaternions and their normalisation were ~80 % of a pile's step).
// - Static friction ([M20] sec. 3.5): a contact's anchor is a pair of material points, A's and
//   the point of B that coincided with it at the substep's start; the tangential part dp_t of their
//   offset (at first [M20]'s relative motion in the substep, (p_A - p_A^n) - (p_B - p_B^n)) is undone
//   as a positional correction when the accumulated tangential multiplier stays within mu_s lambda_n;
//   otherwise the contact slides and dynamic friction acts in the velocity pass. A contact that held
//   keeps its anchor into the next substep, and the next step (State::bodyContactAnchors), when the
//   new contact's point on A lies within kAnchorDistance of it (friction anchors, as PhysX's
//   correlation distance). Why: bodies resting on several others are moved by one pair after
//   another pair's friction ran, so each substep leaves some slip; measured from the substep's
//   start, that slip was never undone and accumulated (a box on two boxes crept 1 mm/s, a 10-level
//   pyramid collapsed). Anchors kept within a step only (the State then held no contacts) left what
//   a step's last solve had not undone, ~1e-7 m per step (the pyramid crept ~0.1 mm/s); kept in the
//   State, a resting stack stops (drift below 1e-15 m), and checkpoints save them.
// - The contacts are solved in SolverSettings::bodyContactPasses Gauss-Seidel passes over all pairs per iteration, each
//   pass visiting a pair's points (its manifold, contiguous in the list) together: first their
//   normal corrections, then their static friction, so that each point's friction budget holds what
//   the manifold pushed. Bodies are coupled through rotations (a correction at a box's corner mostly
//   turns the box, at a cube's corner 3/4 of w is rotational) and through each other (a box on two
//   boxes), so a single pass leaves slip and lift behind; passes over all pairs converge the pile,
//   not only each manifold (16 sweeps per manifold in one pass left a box on two boxes creeping
//   4.2e-4 m in 5 s, 16 passes 1.2e-5 m, at the same cost). Static friction accumulates the
//   tangential multiplier as a vector, so passes whose slips point different ways do not use up the
//   cone. Each visit projects that accumulated vector on the cone of the current lambda_n (held
//   inside mu_s lambda_n; outside, sliding with mu_d lambda_n against the slip): passes move
//   lambda_n, and friction gathered under a larger one must not stay outside the cone.
// - Warm start: a held anchor keeps its contact's lambda_n (State::BodyContactAnchor::lambda); the
//   contact that keeps the anchor in the next substep starts from it, applied before the first pass
//   (a cold start per substep left 8 passes unable to carry a 5-box stack's weight down).
// - Velocity pass, after the bodies' velocities, on the contacts that pushed (lambda_n > 0)
//   ([M20] eqs. 29-34, Alg. 2): with v the relative velocity of the material points and v_n along
//   the normal, restitution sets v_n to -e v~_n (v~_n before the solve), with e = 0 when
//   |v~_n| <= 2 |g| h so resting contacts do not jitter; dynamic friction removes
//   min(mu_d |f_n| h, |v_t| / w_t) of tangential impulse (f_n = lambda_n / h^2, eq. 30 as an
//   impulse: [M20] writes it as a velocity change, which needs the weight w_t along v_t), less
//   what a contact that slid in the position solve already took there.
// - Colliders are sides with no inverse mass whose pose follows their paths; static and kinematic
//   bodies likewise (they push dynamic bodies and are not pushed).
// - Threads: the broad phase's grid cells, the narrow phase of each candidate pair and the contacts of
//   each pair (placed by a count over the pairs) run on the team, each a pure function of the poses;
//   so do the rows of a large set. The passes over a large set (kRegionManifolds) cut the moving
//   bodies into four regions of space by median cuts, solve the manifolds inside each region at once
//   (they share no moving body), then those between regions; in each list the manifold order is
//   kept, and the velocity pass uses the same lists. The cut and the lists depend on the state
//   alone, so any thread count gives the same bits; waking sleepers and the warm start run in pair
//   and contact order on one thread.
#include "rigid/body_contacts.h"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>

#include "rigid/corrections.h"

namespace pliant::detail {

namespace {

// The pair's material: Coulomb coefficients combined by their geometric mean (a frictionless side
// makes the pair frictionless) and the larger restitution (Box2D's rules).
ContactMaterial combine(const ContactMaterial& a, const ContactMaterial& b) {
  ContactMaterial m;
  m.staticFriction = std::sqrt(a.staticFriction * b.staticFriction);
  m.dynamicFriction = std::sqrt(a.dynamicFriction * b.dynamicFriction);
  m.restitution = std::max(a.restitution, b.restitution);
  return m;
}

// Per-step detection: a body's reach is this many times the distance its velocities and gravity
// carry it in the rest of the step, plus the contact margin ([M20] sec. 3.5 grows the bounds by
// k dt v), since collisions and corrections in the step move it too; one that still leaves its
// grown bounds makes the contacts be found again.
constexpr double kReachFactor = 2.0;
// Per-step detection keeps a pair's manifold for the step only while both bodies move less than this
// fraction of the contact margin over it (BodyContacts::freshEverySubstep).
constexpr double kSettledMotion = 0.25;

// How far (m) a contact's material point on A may lie from the last substep's held anchor to keep
// it: a resting contact stays within a small fraction of it, a rolling one leaves it in a substep or
// two (at 1 m/s and h = 1/1200 s it moves 0.8 mm), so rolling keeps [M20]'s per-substep friction.
constexpr double kAnchorDistance = 1e-3;

// Stack mass scaling's largest exponent k d: a lower side 1e-13 times as mobile as its true mass
// is immovable to the pair in practice; beyond, the factor would only underflow.
constexpr double kMaxStackExponent = 30.0;

// The order of the pairs in the contact list: body pairs by (A, B), then body-collider pairs by
// (body, collider), as collide() makes them.
bool pairBefore(const State::BodyContactAnchor& p, const BodyContact& q) {
  const bool pc = p.collider >= 0, qc = q.collider >= 0;
  if (pc != qc) return qc;
  if (p.bodyA != q.bodyA) return p.bodyA < q.bodyA;
  return pc ? p.collider < q.collider : p.bodyB < q.bodyB;
}
bool samePair(const State::BodyContactAnchor& p, const BodyContact& q) {
  return p.bodyA == q.bodyA && p.bodyB == q.bodyB && p.collider == q.collider;
}

bool overlap(const Vec3& lowerA, const Vec3& upperA, const Vec3& lowerB, const Vec3& upperB) {
  return (lowerA.array() <= upperB.array()).all() && (lowerB.array() <= upperA.array()).all();
}

// A side of a contact loaded for the solve: a body (BodySide::load), or a collider as an immovable
// side at its poses of this substep.
BodySide colliderSide(const ColliderPose& now, const ColliderPose& before) {
  BodySide s;
  s.x = now.position;
  s.q = now.rotation;
  s.xPrev = before.position;
  s.qPrev = before.rotation;
  return s;
}

// The velocity (m/s) of the material point at world offset r from the side's centre: v + omega x r
// for a dynamic body; from the pose change over the substep for anything that does not move by
// the solve (static and kinematic bodies, colliders).
Vec3 pointVelocity(const BodySide& s, const State& state, BodyIndex body, const Vec3& r, double h) {
  if (s.movable) return state.bodyVelocity[body] + state.bodyAngularVelocity[body].cross(r);
  const Vec3 before = s.xPrev + s.qPrev * (s.q.conjugate() * r);
  return (s.x + r - before) / h;
}

// Models with fewer dynamic bodies keep the step on one thread (unless their particles need more).
constexpr std::size_t kParallelBodies = 64;
// Below this many candidate pairs the narrow phase stays on one thread (a fork would cost more).
constexpr std::int64_t kParallelPairs = 64;
// From this many manifolds the passes cut the bodies into regions (below: one list, in manifold
// order). The count, not the threads, decides, so the result is the same for any thread count.
constexpr std::size_t kRegionManifolds = 256;
// From this many occupied cells the broad phase's grid is searched on the team.
constexpr std::int64_t kParallelCells = 128;
// A sweep that gave up (too many candidates: a pile) is tried again after this many searches.
constexpr int kSweepRetry = 16;
// The lists of the passes with regions, in the order one thread solves them: the four leaf regions
// (phase 0: both moving sides in the region), the manifolds between regions 0 and 1 and between 2
// and 3 (phase 1), and those between the halves {0, 1} and {2, 3} (phase 2, on one thread). Lists
// of one phase share no moving body, so they run at once. Why regions and not colours: colour-major
// order scatters a pass over the whole pile, and the 1,000-box pile at 8 x 16 then never slept (it
// jittered at 3 cm/s for 10 s); within a region the passes keep the manifold order.
constexpr std::size_t kRegionLists = 7;
constexpr int kListPhase[kRegionLists] = {0, 0, 0, 0, 1, 1, 2};

// The generalised inverse mass along unit t of a point at world offset r with the inverse inertia
// Two unit tangents orthogonal to the unit normal n and to each other (t_1 x t_2 = n): t_1 is n
// crossed with the axis n is least along, so it never degenerates.
void tangentBasis(const Vec3& n, Vec3& t1, Vec3& t2) {
  const Vec3 axis = std::abs(n.x()) <= std::abs(n.y()) && std::abs(n.x()) <= std::abs(n.z()) ? Vec3::UnitX()
                    : std::abs(n.y()) <= std::abs(n.z())                                     ? Vec3::UnitY()
                                                                                             : Vec3::UnitZ();
  t1 = axis.cross(n).normalized();
  t2 = n.cross(t1);
}

}  // namespace

void BodyContacts::prepare(const Model& model) {
  const std::size_t bodies = model.bodyCount();
  const std::size_t colliders = model.colliders.size();
  colliderShapes_.clear();
  for (const Collider& c : model.colliders) colliderShapes_.push_back(shapeFromCollider(c));
  colliderFrames_.resize(colliders);
  colliderLower_.resize(colliders);
  colliderUpper_.resize(colliders);
  lower_.resize(bodies);
  upper_.resize(bodies);
  nowLower_.resize(bodies);
  nowUpper_.resize(bodies);
  role_.resize(bodies);
  order_.resize(bodies);
  reach_.resize(bodies);
  settled_.assign(bodies, 1);
  stepLower_.resize(bodies);
  stepUpper_.resize(bodies);
  stepRoles_.resize(bodies);
  stepPairsValid_ = false;
  large_.reserve(bodies);
  isLarge_.resize(bodies);
  extents_.reserve(bodies);
  cellEntries_.reserve(bodies);
  cellKeys_.reserve(bodies);
  cellBegin_.reserve(bodies + 1);
  cellTableBits_ = 1;
  while ((std::size_t{1} << cellTableBits_) < 2 * bodies) ++cellTableBits_;
  cellTable_.resize(std::size_t{1} << cellTableBits_);
  joinedPairs_.clear();
  for (const Joint& j : model.joints)
    if (j.bodies[0] != kWorldBody && j.bodies[1] != kWorldBody)
      joinedPairs_.emplace_back(std::min(j.bodies[0], j.bodies[1]), std::max(j.bodies[0], j.bodies[1]));
  std::sort(joinedPairs_.begin(), joinedPairs_.end());
  const std::size_t dynamic = static_cast<std::size_t>(
      std::count_if(model.bodies.begin(), model.bodies.end(), [](const RigidBody& b) { return b.dynamic(); }));
  active_ = dynamic > 0 && (bodies > 1 || colliders > 0);
  parallel_ = active_ && dynamic >= kParallelBodies;
  kinematicMotion_ =
      std::any_of(model.bodies.begin(), model.bodies.end(),
                  [](const RigidBody& b) { return b.motion == BodyMotion::Kinematic; }) ||
      std::any_of(model.colliders.begin(), model.colliders.end(), [](const Collider& c) { return c.kinematic(); });
  detected_ = false;
  // Room for a pile: every body touching up to 8 others and every collider, 4 points per pair.
  const std::size_t pairs = active_ ? std::min(bodies * (bodies - 1) / 2, 8 * bodies) + dynamic * colliders : 0;
  pairs_.clear();
  pairs_.reserve(pairs);
  stepPairs_.clear();
  stepPairs_.reserve(pairs);
  contacts_.clear();
  contacts_.reserve(kMaxManifoldPoints * pairs);
  anchors_.clear();
  anchors_.reserve(contacts_.capacity());
  cache_.clear();
  cache_.reserve(contacts_.capacity());
  cacheBegin_.reserve(pairs + 1);
  dynamicImpulse_.reserve(contacts_.capacity());
  manifolds_.reserve(pairs + 1);
  rows_.reserve(contacts_.capacity());
  solverBodies_.assign(bodies + 1, SolverBody{});
  inSolve_.assign(bodies, 0);
  solved_.reserve(bodies);
  manifoldSides_.reserve(2 * (pairs + 1));
  manifoldScale_.reserve(2 * (pairs + 1));
  found_.reserve(pairs);
  pairContactBegin_.reserve(pairs + 1);
  regionOf_.assign(bodies + 1, 0);
  listOf_.reserve(pairs);
  listOrder_.reserve(pairs);
  listBegin_.reserve(kRegionLists + 1);
  splitKeys_.reserve(bodies);
}

bool BodyContacts::jointed(BodyIndex a, BodyIndex b) const {
  return std::binary_search(joinedPairs_.begin(), joinedPairs_.end(), std::make_pair(a, b));
}

namespace {
constexpr int kCellBits = 21;  // per axis in a cell's key
constexpr std::int64_t kCellLimit = (std::int64_t{1} << kCellBits) - 1;
std::uint64_t cellKey(std::int64_t x, std::int64_t y, std::int64_t z) {
  return (static_cast<std::uint64_t>(x) << (2 * kCellBits)) | (static_cast<std::uint64_t>(y) << kCellBits) |
         static_cast<std::uint64_t>(z);
}
// Fibonacci hashing: the product's top bits depend on all of the key's.
std::size_t cellHash(std::uint64_t key, int tableBits) {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - tableBits));
}
// Bodies whose bounds are wider than this many times the median width are tested against all
// bodies instead of going into the grid (a long static slab would make every cell that wide).
constexpr double kLargeBody = 4.0;
// Candidates per body (on average) past which the sweep gives way to the grid.
constexpr std::size_t kSweepBudget = 8;
}  // namespace

void BodyContacts::considerPair(BodyIndex a, BodyIndex b, std::vector<Pair>& into) const {
  // Pairs with an awake dynamic body are solved; a sleeping body's pair with a kinematic body is
  // only tested, to wake it; the rest (sleeping or static on both sides) costs nothing.
  const Role ra = role_[a], rb = role_[b];
  if (ra != Role::Awake && rb != Role::Awake &&
      !((ra == Role::Kinematic && rb == Role::Asleep) || (ra == Role::Asleep && rb == Role::Kinematic)))
    return;
  if (!overlap(lower_[a], upper_[a], lower_[b], upper_[b])) return;
  const BodyIndex first = std::min(a, b), second = std::max(a, b);
  if (jointed(first, second)) return;
  into.push_back({first, second, false});
}

bool BodyContacts::sweepBodyPairs(std::size_t bodies) {
  // Sort and sweep along the axis over which the bounds' centres spread most (ties: the lower
  // axis; a hanging chain is swept along y), ties in the order by index, so the order is the
  // state's alone. Abandoned when it tests more than kSweepBudget candidates per body: cheap for
  // spread-out bodies, poor for piles, where a box meets every box of its slab.
  Vec3 lowest = Vec3::Constant(std::numeric_limits<double>::infinity()), highest = -lowest;
  for (std::size_t b = 0; b < bodies; ++b) {
    const Vec3 centre = 0.5 * (lower_[b] + upper_[b]);
    lowest = lowest.cwiseMin(centre);
    highest = highest.cwiseMax(centre);
  }
  const Vec3 spread = highest - lowest;
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (spread[k] > spread[axis]) axis = k;
  std::sort(order_.begin(), order_.end(), [&](BodyIndex a, BodyIndex b) {
    return lower_[a][axis] < lower_[b][axis] || (lower_[a][axis] == lower_[b][axis] && a < b);
  });
  const std::size_t budget = kSweepBudget * bodies;
  std::size_t tested = 0;
  for (std::size_t i = 0; i < bodies; ++i) {
    const BodyIndex a = order_[i];
    for (std::size_t k = i + 1; k < bodies; ++k) {
      const BodyIndex b = order_[k];
      if (lower_[b][axis] > upper_[a][axis]) break;
      if (++tested > budget) return false;
      considerPair(a, b, pairs_);
    }
  }
  return true;
}

void BodyContacts::findBodyPairs(std::size_t bodies, int threads) {
  const std::size_t before = pairs_.size();
  // Either search finds the same pairs (sorted afterwards), so the sweep is skipped while it keeps
  // giving up (a pile), and tried again now and then.
  if (sweepGaveUp_ == 0) {
    for (std::size_t b = 0; b < bodies; ++b) order_[b] = static_cast<BodyIndex>(b);
    if (sweepBodyPairs(bodies)) return;
    pairs_.resize(before);
    sweepGaveUp_ = kSweepRetry;
  } else {
    --sweepGaveUp_;
  }
  // A uniform grid of the bounds' centres, cells a little wider than the widest ordinary bounds:
  // two bounds that overlap have centres at most a cell apart along each axis, so they lie in the
  // same or neighbouring cells. (A sweep along x degraded on piles: a box met every box of its
  // x-slab.) The pairs' order comes from sorting them afterwards, so it is the state's alone.
  extents_.clear();
  for (std::size_t b = 0; b < bodies; ++b) {
    const double width = (upper_[b] - lower_[b]).maxCoeff();
    if (std::isfinite(width) && lower_[b].allFinite()) extents_.push_back(width);
  }
  large_.clear();
  cellEntries_.clear();
  double cell = 0.0;
  Vec3 origin = Vec3::Constant(std::numeric_limits<double>::infinity());
  if (!extents_.empty()) {
    const auto middle = extents_.begin() + static_cast<std::ptrdiff_t>(extents_.size() / 2);
    std::nth_element(extents_.begin(), middle, extents_.end());
    const double largeAbove = kLargeBody * *middle;
    for (std::size_t b = 0; b < bodies; ++b) {
      const double width = (upper_[b] - lower_[b]).maxCoeff();
      const bool large = !(std::isfinite(width) && lower_[b].allFinite()) || width > largeAbove;
      isLarge_[b] = large;
      if (large) {
        large_.push_back(static_cast<BodyIndex>(b));
        continue;
      }
      cell = std::max(cell, width);
      origin = origin.cwiseMin(0.5 * (lower_[b] + upper_[b]));
    }
  } else {
    std::fill(isLarge_.begin(), isLarge_.end(), std::uint8_t{1});
    for (std::size_t b = 0; b < bodies; ++b) large_.push_back(static_cast<BodyIndex>(b));
  }
  // 1% wider, so that rounding cannot put two touching centres two cells apart.
  cell = cell > 0.0 ? 1.01 * cell : 1.0;
  for (std::size_t b = 0; b < bodies; ++b) {
    if (isLarge_[b]) continue;
    const Vec3 at = (0.5 * (lower_[b] + upper_[b]) - origin) / cell;
    // Clamped (far-off cells merge: still correct, as clamping keeps neighbours neighbours).
    const auto coordinate = [](double u) {
      return std::clamp(static_cast<std::int64_t>(std::min(std::floor(u), 1e12)), std::int64_t{0}, kCellLimit);
    };
    cellEntries_.push_back(
        {cellKey(coordinate(at.x()), coordinate(at.y()), coordinate(at.z())), static_cast<BodyIndex>(b)});
  }
  std::sort(cellEntries_.begin(), cellEntries_.end(), [](const CellEntry& p, const CellEntry& q) {
    return p.key < q.key || (p.key == q.key && p.body < q.body);
  });
  cellKeys_.clear();
  cellBegin_.clear();
  for (std::size_t i = 0; i < cellEntries_.size(); ++i)
    if (i == 0 || cellEntries_[i].key != cellEntries_[i - 1].key) {
      cellKeys_.push_back(cellEntries_[i].key);
      cellBegin_.push_back(static_cast<std::uint32_t>(i));
    }
  cellBegin_.push_back(static_cast<std::uint32_t>(cellEntries_.size()));
  // Open addressing from a cell's key to its index + 1 (0: empty).
  std::fill(cellTable_.begin(), cellTable_.end(), 0u);
  const std::size_t tableSize = cellTable_.size();
  for (std::size_t c = 0; c < cellKeys_.size(); ++c) {
    std::size_t slot = cellHash(cellKeys_[c], cellTableBits_);
    while (cellTable_[slot] != 0) slot = (slot + 1) & (tableSize - 1);
    cellTable_[slot] = static_cast<std::uint32_t>(c + 1);
  }
  const auto findCell = [&](std::uint64_t key) -> std::int64_t {
    for (std::size_t slot = cellHash(key, cellTableBits_);; slot = (slot + 1) & (tableSize - 1)) {
      const std::uint32_t c = cellTable_[slot];
      if (c == 0) return -1;
      if (cellKeys_[c - 1] == key) return c - 1;
    }
  };
  const std::uint64_t mask = static_cast<std::uint64_t>(kCellLimit);
  const auto searchCell = [&](std::size_t c, std::vector<Pair>& into) {
    const std::uint64_t key = cellKeys_[c];
    const std::int64_t x = static_cast<std::int64_t>(key >> (2 * kCellBits)),
                       y = static_cast<std::int64_t>((key >> kCellBits) & mask),
                       z = static_cast<std::int64_t>(key & mask);
    const std::uint32_t begin = cellBegin_[c], end = cellBegin_[c + 1];
    for (std::uint32_t i = begin; i < end; ++i)
      for (std::uint32_t j = i + 1; j < end; ++j) considerPair(cellEntries_[i].body, cellEntries_[j].body, into);
    // The 13 neighbours with a larger key, so that each pair of cells is visited once.
    for (std::int64_t dx = -1; dx <= 1; ++dx)
      for (std::int64_t dy = -1; dy <= 1; ++dy)
        for (std::int64_t dz = -1; dz <= 1; ++dz) {
          const std::int64_t nx = x + dx, ny = y + dy, nz = z + dz;
          if (nx < 0 || ny < 0 || nz < 0 || nx > kCellLimit || ny > kCellLimit || nz > kCellLimit) continue;
          const std::uint64_t neighbour = cellKey(nx, ny, nz);
          if (neighbour <= key) continue;
          const std::int64_t n = findCell(neighbour);
          if (n < 0) continue;
          for (std::uint32_t i = begin; i < end; ++i)
            for (std::uint32_t j = cellBegin_[n]; j < cellBegin_[n + 1]; ++j)
              considerPair(cellEntries_[i].body, cellEntries_[j].body, into);
        }
  };
  const auto cells = static_cast<std::int64_t>(cellKeys_.size());
  const int team = threads > 1 && cells >= kParallelCells ? threads : 1;
  if (team == 1) {
    for (std::size_t c = 0; c < cellKeys_.size(); ++c) searchCell(c, pairs_);
  } else {
    // Each thread's share of the cells into its own list; the lists joined in thread order (the
    // pairs are sorted afterwards, so the split does not show).
    if (threadPairs_.size() < static_cast<std::size_t>(team)) {  // once per team size, with the room of pairs_
      threadPairs_.resize(static_cast<std::size_t>(team));
      for (std::vector<Pair>& list : threadPairs_) list.reserve(pairs_.capacity());
    }
#pragma omp parallel num_threads(team)
    {
      std::vector<Pair>& mine = threadPairs_[static_cast<std::size_t>(omp_get_thread_num())];
      mine.clear();
#pragma omp for schedule(static)
      for (std::int64_t c = 0; c < cells; ++c) searchCell(static_cast<std::size_t>(c), mine);
    }
    for (int t = 0; t < team; ++t)
      pairs_.insert(pairs_.end(), threadPairs_[static_cast<std::size_t>(t)].begin(),
                    threadPairs_[static_cast<std::size_t>(t)].end());
  }
  // Large bodies against every other body (a pair of large ones once).
  for (const BodyIndex l : large_)
    for (std::size_t b = 0; b < bodies; ++b)
      if (b != l && !(isLarge_[b] && b < l)) considerPair(l, static_cast<BodyIndex>(b), pairs_);
}

void BodyContacts::collide(const Model& model, const SolverSettings& settings, State& state, double h, int substep,
                           double substepStart, double substepEnd, int threads) {
  contactPasses_ = settings.bodyContactPasses;
  const double g = settings.gravity.norm();
  up_ = g > 0.0 ? Vec3(-settings.gravity / g) : Vec3::Zero();
  stackScaling_ = g > 0.0 ? settings.bodyStackMassScaling : 0.0;
  // [M20] sec. 3.5: contacts found once per step, with bounds and margins grown by each body's
  // motion over the step, then re-evaluated per substep. Kinematic bodies and colliders follow
  // paths that bounds need not cover, so their scenes keep per-substep detection.
  const bool perStep = !settings.bodyCollisionPerSubstep && !kinematicMotion_;
  // Found again when a sleeping island woke or a body left the bounds its reach was measured for
  // (a collision in the step sped it up), so no contact the step needs is missed.
  if (perStep && substep > 0 && detected_ && !wokenSinceDetection(state) && !escapedReach(model, settings, state)) {
    refresh(model, settings, state, h, substepStart, substepEnd);
    return;
  }
  const double stepLeft = (settings.substeps - substep) * h;  // s
  const double lookahead = perStep ? stepLeft : 0.0;
  if (substep == 0) stepPairsValid_ = false;  // a new step: its candidate pairs are found anew
  // Until no sleeping island is touched: one that is wakes, and the contacts are found again with
  // its bodies awake (once per island woken, so rarely more than twice).
  while (!collideOnce(model, settings, state, h, lookahead, stepLeft, substepStart, substepEnd, threads)) {
  }
  detected_ = true;
}

bool BodyContacts::wokenSinceDetection(const State& state) const {
  for (std::size_t b = 0; b < role_.size(); ++b)
    if (role_[b] == Role::Asleep && !state.bodyAsleep(b)) return true;
  return false;
}

void BodyContacts::refresh(const Model& model, const SolverSettings& settings, State& state, double h,
                           double substepStart, double substepEnd) {
  for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
    Frame& f = colliderFrames_[c];
    f.now = colliderPose(model, c, substepEnd);
    f.before = model.colliders[c].kinematic() ? colliderPose(model, c, substepStart) : f.now;
  }
  const double cap = settings.maxDepenetrationVelocity * h;
  std::size_t cursor = 0;
  contacts_.clear();
  anchors_.clear();
  // A pair found anew whose bounds now (with the margin; escapedReach measured the awake bodies', the
  // others do not move) do not meet has no contact within the margin: its narrow phase is skipped,
  // as per-substep detection's candidates are filtered.
  const auto lowerNow = [&](BodyIndex b) -> const Vec3& { return role_[b] == Role::Awake ? nowLower_[b] : lower_[b]; };
  const auto upperNow = [&](BodyIndex b) -> const Vec3& { return role_[b] == Role::Awake ? nowUpper_[b] : upper_[b]; };
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    const Pair& pair = pairs_[p];
    // A sleeping side was only tested (and not touched) at the detection.
    if (role_[pair.a] == Role::Asleep || (!pair.collider && role_[pair.b] == Role::Asleep)) continue;
    if (freshEverySubstep(model, pair)) {
      const bool meet =
          pair.collider ? overlap(lowerNow(pair.a), upperNow(pair.a), colliderLower_[pair.b], colliderUpper_[pair.b])
                        : overlap(lowerNow(pair.a), upperNow(pair.a), lowerNow(pair.b), upperNow(pair.b));
      if (meet) pairContacts(model, settings, state, pair, false, h, cap, cursor);
      continue;
    }
    if (cacheBegin_[p] == cacheBegin_[p + 1]) continue;
    const BodySide a = BodySide::load(model, state, pair.a);
    const BodySide b = pair.collider ? colliderSide(colliderFrames_[pair.b].now, colliderFrames_[pair.b].before)
                                     : BodySide::load(model, state, pair.b);
    for (std::uint32_t j = cacheBegin_[p]; j < cacheBegin_[p + 1]; ++j) {
      BodyContact k = cache_[j];
      Anchor anchor;
      startContact(k, anchor, a, b, a.q * k.localA, b.q * k.localB, state, h, cap, cursor);
      contacts_.push_back(k);
      anchors_.push_back(anchor);
    }
  }
  dynamicImpulse_.resize(contacts_.size());
  manifolds_.clear();
  for (std::size_t begin = 0; begin < contacts_.size(); begin = manifoldEnd(begin)) manifolds_.push_back(begin);
  manifolds_.push_back(contacts_.size());
}

bool BodyContacts::freshEverySubstep(const Model& model, const Pair& pair) const {
  // A round shape's contact point moves over its surface as it rolls: its manifold is found anew.
  const auto round = [](const BodyShape& shape) {
    return shape.kind == BodyShapeKind::Sphere || shape.kind == BodyShapeKind::Capsule;
  };
  // So is the manifold of a body that moves or turns enough in the step to bring other features
  // into contact (a tumbling box's next corner): kept a step, it would be met only after it sank in.
  return round(model.bodies[pair.a].shape) || !settled_[pair.a] ||
         (pair.collider ? round(colliderShapes_[pair.b]) : round(model.bodies[pair.b].shape) || !settled_[pair.b]);
}

bool BodyContacts::escapedReach(const Model& model, const SolverSettings& settings, const State& state) {
  for (std::size_t b = 0; b < role_.size(); ++b) {
    if (role_[b] != Role::Awake) continue;
    const RigidBody& body = model.bodies[b];
    Vec3& lower = nowLower_[b];
    Vec3& upper = nowUpper_[b];
    shapeBounds(body.shape, body.shapePose(state.bodyPosition[b], state.bodyRotation[b]), settings.contactMargin, lower,
                upper);
    if (!((lower.array() >= lower_[b].array()).all() && (upper.array() <= upper_[b].array()).all())) return true;
  }
  return false;
}

bool BodyContacts::pairContacts(const Model& model, const SolverSettings& settings, State& state, const Pair& pair,
                                bool speculative, double h, double cap, std::size_t& cursor) {
  ContactManifold manifold;
  findManifold(model, settings, state, pair, speculative, manifold);
  return addContacts(model, state, pair, manifold, h, cap, cursor);
}

void BodyContacts::findManifold(const Model& model, const SolverSettings& settings, const State& state,
                                const Pair& pair, bool speculative, ContactManifold& manifold) const {
  const RigidBody& bodyA = model.bodies[pair.a];
  const ColliderPose poseA = bodyA.shapePose(state.bodyPosition[pair.a], state.bodyRotation[pair.a]);
  const BodyShape* shapeB;
  ColliderPose poseB;
  if (pair.collider) {
    shapeB = &colliderShapes_[pair.b];
    poseB = colliderFrames_[pair.b].now;
  } else {
    const RigidBody& bodyB = model.bodies[pair.b];
    shapeB = &bodyB.shape;
    poseB = bodyB.shapePose(state.bodyPosition[pair.b], state.bodyRotation[pair.b]);
  }
  // Within the contact margin, and (per-step detection of a pair kept for the step) the distance
  // the two can close in the step, so that contacts that close within it are present.
  double reach = settings.contactMargin;
  if (speculative && !freshEverySubstep(model, pair)) reach += reach_[pair.a] + (pair.collider ? 0.0 : reach_[pair.b]);
  manifold.count = 0;
  collideShapes(bodyA.shape, poseA, *shapeB, poseB, reach, manifold);
}

bool BodyContacts::addContacts(const Model& model, State& state, const Pair& pair, const ContactManifold& manifold,
                               double h, double cap, std::size_t& cursor) {
  // No points: nothing to add and nothing touched to wake (most candidate pairs of a chain or a pile).
  if (manifold.count == 0) return false;
  if (wakesSleeper(state, pair, manifold)) return true;
  const std::size_t at = contacts_.size();
  contacts_.resize(at + static_cast<std::size_t>(manifold.count));
  anchors_.resize(contacts_.size());
  writeContacts(model, state, pair, manifold, h, cap, cursor, at);
  return false;
}

bool BodyContacts::wakesSleeper(State& state, const Pair& pair, const ContactManifold& manifold) const {
  // A sleeping side that is touched wakes with its island (sleeping.cpp); the contacts are then
  // found again.
  const bool asleepA = role_[pair.a] == Role::Asleep, asleepB = !pair.collider && role_[pair.b] == Role::Asleep;
  if (!asleepA && !asleepB) return false;
  if (manifold.count == 0) return false;
  state.wakeBody(asleepA ? pair.a : pair.b);
  return true;
}

bool BodyContacts::touchesSleeper(const Pair& pair) const {
  return role_[pair.a] == Role::Asleep || (!pair.collider && role_[pair.b] == Role::Asleep);
}

void BodyContacts::writeContacts(const Model& model, const State& state, const Pair& pair,
                                 const ContactManifold& manifold, double h, double cap, std::size_t& cursor,
                                 std::size_t at) {
  const RigidBody& bodyA = model.bodies[pair.a];
  const BodySide a = BodySide::load(model, state, pair.a);
  BodySide b;
  ContactMaterial material;
  if (pair.collider) {
    const Frame& f = colliderFrames_[pair.b];
    b = colliderSide(f.now, f.before);
    material = combine(bodyA.material, model.colliders[pair.b].material);
  } else {
    b = BodySide::load(model, state, pair.b);
    material = combine(bodyA.material, model.bodies[pair.b].material);
  }
  for (int m = 0; m < manifold.count; ++m) {
    const ShapeContactPoint& point = manifold.points[m];
    BodyContact& k = contacts_[at + static_cast<std::size_t>(m)];
    k = BodyContact{};
    k.bodyA = pair.a;
    k.bodyB = pair.collider ? kWorldBody : pair.b;
    k.collider = pair.collider ? static_cast<std::int32_t>(pair.b) : -1;
    k.normal = point.normal;
    const Vec3 rA = point.pointA - a.x, rB = point.pointB - b.x;
    k.localA = a.q.conjugate() * rA;
    k.localB = b.q.conjugate() * rB;
    k.material = material;
    startContact(k, anchors_[at + static_cast<std::size_t>(m)], a, b, rA, rB, state, h, cap, cursor);
  }
}

void BodyContacts::startContact(BodyContact& k, Anchor& anchor, const BodySide& a, const BodySide& b, const Vec3& rA,
                                const Vec3& rB, const State& state, double h, double cap, std::size_t& cursor) const {
  // The same material points at the substep's start: overlap they already had is removed at
  // most at maxDepenetrationVelocity (as for particles, collider_contacts.cpp).
  const double before = (b.xPrev + b.qPrev * k.localB - a.xPrev - a.qPrev * k.localA).dot(k.normal);
  k.allowance = before < 0.0 ? std::max(0.0, -before - cap) : 0.0;
  const Vec3 relative = pointVelocity(a, state, k.bodyA, rA, h) - pointVelocity(b, state, k.bodyB, rB, h);
  k.normalVelocity = -k.normal.dot(relative);
  // Static friction's anchor: kept from the last substep where the contact held at the same
  // place; else A's material point and the point of B that coincided with it at the substep's
  // start, so that their offset is [M20]'s relative motion in the substep (sec. 3.5).
  if (const State::BodyContactAnchor* held = heldAnchor(state.bodyContactAnchors, k, cursor)) {
    anchor.a = held->a;
    anchor.b = held->b;
  } else {
    anchor.a = k.localA;
    anchor.b = b.qPrev.conjugate() * (a.xPrev + a.qPrev * k.localA - b.xPrev);
  }
  anchor.held = false;
}

double BodyContacts::reachOver(const State& state, std::size_t b, double time, double gravity, double margin) const {
  // How far (m) any point of the body can move in `time`: its centre at most (|v| + |g| T) T, and a
  // point at distance r from it |omega| T r more.
  const Vec3& x = state.bodyPosition[b];
  const double radius = 0.5 * (upper_[b] - lower_[b]).norm() + (0.5 * (lower_[b] + upper_[b]) - x).norm();
  return kReachFactor * ((state.bodyVelocity[b].norm() + gravity * time) * time +
                         state.bodyAngularVelocity[b].norm() * time * radius) +
         margin;
}

bool BodyContacts::insideStepBounds(std::size_t bodies) const {
  for (std::size_t b = 0; b < bodies; ++b)
    if (!((lower_[b].array() >= stepLower_[b].array()).all() && (upper_[b].array() <= stepUpper_[b].array()).all()))
      return false;
  return true;
}

void BodyContacts::findStepPairs(const State& state, std::size_t bodies, double stepLeft, double gravity, double margin,
                                 int threads) {
  // [M20] sec. 3.5: candidates once per step over bounds grown by each body's reach over the rest of
  // the step; each substep keeps those whose own bounds overlap. The candidates come sorted and the
  // filter keeps their order, so pairs_ is what a search of this substep's bounds would give, as
  // long as every body's bounds stay inside its grown ones and no body changed role (checked each
  // substep: else the candidates are found again).
  if (!stepPairsValid_ || stepRoles_ != role_ || !insideStepBounds(bodies)) {
    for (std::size_t b = 0; b < bodies; ++b) {
      const double reach = role_[b] == Role::Awake ? reachOver(state, b, stepLeft, gravity, margin) : 0.0;
      stepLower_[b] = lower_[b].array() - reach;
      stepUpper_[b] = upper_[b].array() + reach;
    }
    lower_.swap(stepLower_);
    upper_.swap(stepUpper_);
    pairs_.clear();
    findBodyPairs(bodies, threads);
    sortPairs();
    lower_.swap(stepLower_);
    upper_.swap(stepUpper_);
    stepPairs_.swap(pairs_);
    stepRoles_ = role_;
    stepPairsValid_ = true;
  }
  pairs_.clear();
  for (const Pair& pair : stepPairs_)
    if (overlap(lower_[pair.a], upper_[pair.a], lower_[pair.b], upper_[pair.b])) pairs_.push_back(pair);
}

void BodyContacts::sortPairs() {
  std::sort(pairs_.begin(), pairs_.end(),
            [](const Pair& p, const Pair& q) { return p.a < q.a || (p.a == q.a && p.b < q.b); });
}

bool BodyContacts::collideOnce(const Model& model, const SolverSettings& settings, State& state, double h,
                               double lookahead, double stepLeft, double substepStart, double substepEnd, int threads) {
  pairs_.clear();
  contacts_.clear();
  anchors_.clear();
  if (!active_) return true;
  const double margin = settings.contactMargin;
  const double gravity = settings.gravity.norm();  // m/s^2
  const std::size_t bodies = model.bodyCount();
  for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
    Frame& f = colliderFrames_[c];
    f.now = colliderPose(model, c, substepEnd);
    f.before = model.colliders[c].kinematic() ? colliderPose(model, c, substepStart) : f.now;
    shapeBounds(colliderShapes_[c], f.now, margin, colliderLower_[c], colliderUpper_[c]);
  }
  for (std::size_t b = 0; b < bodies; ++b) {
    const RigidBody& body = model.bodies[b];
    role_[b] = state.bodyAsleep(b)                    ? Role::Asleep
               : body.dynamic()                       ? Role::Awake
               : body.motion == BodyMotion::Kinematic ? Role::Kinematic
                                                      : Role::Static;
  }
  // Nothing awake and nothing that could wake a sleeper (a kinematic body or collider): no pairs.
  bool anyAwake =
      std::any_of(model.colliders.begin(), model.colliders.end(), [](const Collider& c) { return c.kinematic(); });
  for (std::size_t b = 0; b < bodies && !anyAwake; ++b)
    anyAwake = model.bodies[b].motion == BodyMotion::Kinematic || (model.bodies[b].dynamic() && !state.bodyAsleep(b));
  if (!anyAwake) {
    manifolds_.assign(1, 0);
    return true;
  }
  for (std::size_t b = 0; b < bodies; ++b) {
    const RigidBody& body = model.bodies[b];
    shapeBounds(body.shape, body.shapePose(state.bodyPosition[b], state.bodyRotation[b]), margin, lower_[b], upper_[b]);
    reach_[b] = 0.0;
    settled_[b] = 1;
    if (lookahead > 0.0 && role_[b] == Role::Awake) {
      // Settled: no point of the body moves more than kSettledMotion of the margin at its velocities
      // over the step (gravity left out: contacts hold a resting body against it).
      const double radius =
          0.5 * (upper_[b] - lower_[b]).norm() + (0.5 * (lower_[b] + upper_[b]) - state.bodyPosition[b]).norm();
      settled_[b] = (state.bodyVelocity[b].norm() + state.bodyAngularVelocity[b].norm() * radius) * lookahead <=
                    kSettledMotion * margin;
      reach_[b] = reachOver(state, b, lookahead, gravity, margin);
      lower_[b].array() -= reach_[b];
      upper_[b].array() += reach_[b];
    }
  }
  // Per-substep detection takes its pairs from the step's candidates; kinematic paths, which no
  // reach bounds, and per-step detection (once per step anyway) search the bounds themselves.
  if (lookahead == 0.0 && !kinematicMotion_) {
    findStepPairs(state, bodies, stepLeft, gravity, margin, threads);
  } else {
    findBodyPairs(bodies, threads);
    sortPairs();
  }
  for (std::size_t b = 0; b < bodies; ++b) {
    if (role_[b] != Role::Awake && role_[b] != Role::Asleep) continue;
    for (std::uint32_t c = 0; c < model.colliders.size(); ++c)
      if ((role_[b] == Role::Awake || model.colliders[c].kinematic()) &&
          overlap(lower_[b], upper_[b], colliderLower_[c], colliderUpper_[c]))
        pairs_.push_back({static_cast<BodyIndex>(b), c, true});
  }
  // Narrow phase per candidate pair; each manifold point becomes a contact.
  const double cap = settings.maxDepenetrationVelocity * h;  // m per substep; infinity: no cap
  bool woke = false;
  cache_.clear();
  cacheBegin_.clear();
  // The narrow phase of every pair on its own (a pure function of the poses), split over the threads;
  // then the contacts in pair order.
  found_.resize(pairs_.size());
  const auto pairCount = static_cast<std::int64_t>(pairs_.size());
  const bool speculative = lookahead > 0.0;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && pairCount >= kParallelPairs)
  for (std::int64_t p = 0; p < pairCount; ++p)
    findManifold(model, settings, state, pairs_[static_cast<std::size_t>(p)], speculative,
                 found_[static_cast<std::size_t>(p)]);
  // Sleepers touched wake here, in pair order; the round is then found again with them awake.
  pairContactBegin_.resize(pairs_.size() + 1);
  std::size_t total = 0;
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    pairContactBegin_[p] = total;
    if (touchesSleeper(pairs_[p])) woke = wakesSleeper(state, pairs_[p], found_[p]) || woke;
    else total += static_cast<std::size_t>(found_[p].count);
  }
  pairContactBegin_[pairs_.size()] = total;
  if (woke) return false;
  // The contacts of each pair at the place the count gave it, on the team (each a function of its
  // point and the poses; a pair's held anchors found by a search of the sorted list).
  contacts_.resize(total);
  anchors_.resize(total);
  const std::vector<State::BodyContactAnchor>& held = state.bodyContactAnchors;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && pairCount >= kParallelPairs)
  for (std::int64_t p = 0; p < pairCount; ++p) {
    const auto i = static_cast<std::size_t>(p);
    const ContactManifold& manifold = found_[i];
    if (manifold.count == 0 || touchesSleeper(pairs_[i])) continue;
    BodyContact key;
    key.bodyA = pairs_[i].a;
    key.bodyB = pairs_[i].collider ? kWorldBody : pairs_[i].b;
    key.collider = pairs_[i].collider ? static_cast<std::int32_t>(pairs_[i].b) : -1;
    std::size_t cursor =
        static_cast<std::size_t>(std::lower_bound(held.begin(), held.end(), key, pairBefore) - held.begin());
    writeContacts(model, state, pairs_[i], manifold, h, cap, cursor, pairContactBegin_[i]);
  }
  // Per-step detection keeps the polytope pairs' points for the later substeps.
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    cacheBegin_.push_back(static_cast<std::uint32_t>(cache_.size()));
    if (lookahead > 0.0 && !freshEverySubstep(model, pairs_[p]))
      cache_.insert(cache_.end(), contacts_.begin() + static_cast<std::ptrdiff_t>(pairContactBegin_[p]),
                    contacts_.begin() + static_cast<std::ptrdiff_t>(pairContactBegin_[p + 1]));
  }
  cacheBegin_.push_back(static_cast<std::uint32_t>(cache_.size()));
  dynamicImpulse_.resize(contacts_.size());
  manifolds_.clear();
  for (std::size_t begin = 0; begin < contacts_.size(); begin = manifoldEnd(begin)) manifolds_.push_back(begin);
  manifolds_.push_back(contacts_.size());
  return !woke;
}

void BodyContacts::loadSides(const Model& model, const State& state, const BodyContact& first, BodySide& a,
                             BodySide& b) const {
  a = BodySide::load(model, state, first.bodyA);
  b = first.collider >= 0 ? colliderSide(colliderFrames_[first.collider].now, colliderFrames_[first.collider].before)
                          : BodySide::load(model, state, first.bodyB);
}

std::uint32_t BodyContacts::solverBodyOf(const Model& model, const State& state, BodyIndex body) {
  const auto still = static_cast<std::uint32_t>(solverBodies_.size() - 1);
  // As BodySide::load: a sleeping body does not move.
  if (body == kWorldBody || !model.bodies[body].dynamic() || state.bodyAsleep(body)) return still;
  if (!inSolve_[body]) {
    inSolve_[body] = 1;
    solved_.push_back(body);
  }
  return body;
}

void BodyContacts::loadRows(const Model& model, const State& state, bool firstIteration, int threads) {
  rows_.resize(contacts_.size());
  manifoldSides_.clear();
  solved_.clear();
  const std::size_t count = manifolds_.size() - 1;
  // The solver bodies, in manifold order (solved_ keeps it: the poses are written back in it).
  for (std::size_t m = 0; m < count; ++m) {
    const BodyContact& first = contacts_[manifolds_[m]];
    manifoldSides_.push_back(solverBodyOf(model, state, first.bodyA));
    manifoldSides_.push_back(solverBodyOf(model, state, first.collider >= 0 ? kWorldBody : first.bodyB));
  }
  manifoldScale_.resize(2 * count);  // every entry is written with its manifold's row below
  const int team = threads > 1 && count >= kRegionManifolds ? threads : 1;
  const auto moving = static_cast<std::int64_t>(solved_.size());
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (std::int64_t i = 0; i < moving; ++i) {
    const BodyIndex body = solved_[static_cast<std::size_t>(i)];
    SolverBody& s = solverBodies_[body];
    s.dx = Vec3::Zero();
    s.dtheta = Vec3::Zero();
    s.inverseInertia = BodySide::load(model, state, body).inverseInertiaWorld();
    s.inverseMass = model.bodies[body].inverseMass;
    s.isotropic = BodySide::isotropic(model.bodies[body].inverseInertia);
  }
  // The rows: each a function of its contact and the poses alone, so they are formed on the team.
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (std::size_t m = 0; m < count; ++m) {
    const std::size_t begin = manifolds_[m], end = manifolds_[m + 1];
    BodySide a, b;
    loadSides(model, state, contacts_[begin], a, b);
    const SolverBody& bodyA = solverBodies_[manifoldSides_[2 * m]];
    const SolverBody& bodyB = solverBodies_[manifoldSides_[2 * m + 1]];
    const Mat3 rotationA = a.q.toRotationMatrix(), rotationB = b.q.toRotationMatrix();
    // Stack mass scaling (SolverSettings::bodyStackMassScaling): the lower side solved as heavier,
    // between two bodies that move (against one that does not, the correction is all the mover's
    // anyway, and scaling it would only rescale its multipliers). Every use below multiplies by its
    // factor, exact (the same bits) when it is 1.
    double scaleA = 1.0, scaleB = 1.0;
    if (stackScaling_ > 0.0 && bodyA.inverseMass > 0.0 && bodyB.inverseMass > 0.0) {
      const double rise = up_.dot(b.x - a.x);  // m, B's centre above A's
      const double exponent = std::min(stackScaling_ * std::abs(rise), kMaxStackExponent);
      (rise > 0.0 ? scaleA : scaleB) = std::exp(-exponent);
    }
    manifoldScale_[2 * m] = scaleA;
    manifoldScale_[2 * m + 1] = scaleB;
    const double massA = scaleA * bodyA.inverseMass, massB = scaleB * bodyB.inverseMass;
    for (std::size_t j = begin; j < end; ++j) {
      const BodyContact& k = contacts_[j];
      ContactRow& row = rows_[j];
      const Vec3& n = k.normal;
      const Vec3 rA = rotationA * k.localA, rB = rotationB * k.localB;
      // [M20] sec. 3.5: the penetration along the frozen normal; C >= 0 grows when A moves along -n.
      row.separation = (b.x + rB - a.x - rA).dot(n) + k.allowance;
      row.normal = n;
      row.crossA = rA.cross(n);
      row.crossB = rB.cross(n);
      const Vec3 turnA = scaleA * bodyA.inverseInertiaTimes(row.crossA);
      const Vec3 turnB = scaleB * bodyB.inverseInertiaTimes(row.crossB);
      // [M20] eq. 2 on both sides.
      const double weight = massA + row.crossA.dot(turnA) + massB + row.crossB.dot(turnB);
      row.inverseWeight = weight > 0.0 ? 1.0 / weight : 0.0;
      row.lambda = k.lambda;
      row.staticFriction = k.material.staticFriction;
      row.dynamicFriction = k.material.dynamicFriction;
      row.held = false;
      row.friction[0] = row.friction[1] = 0.0;
      if (k.material.staticFriction > 0.0) {
        const Anchor& anchor = anchors_[j];
        const Vec3 anchorA = rotationA * anchor.a, anchorB = rotationB * anchor.b;
        const Vec3 offset = (a.x + anchorA) - (b.x + anchorB);
        Vec3 tangent[2];
        tangentBasis(n, tangent[0], tangent[1]);
        row.tangent = tangent[0];
        Vec3 anchorTurnA[2], anchorTurnB[2];
        for (int i = 0; i < 2; ++i) {
          const Vec3& t = tangent[i];
          row.anchorCrossA[i] = anchorA.cross(t);
          row.anchorCrossB[i] = anchorB.cross(t);
          anchorTurnA[i] = scaleA * bodyA.inverseInertiaTimes(row.anchorCrossA[i]);
          anchorTurnB[i] = scaleB * bodyB.inverseInertiaTimes(row.anchorCrossB[i]);
          row.slip[i] = t.dot(offset);
          row.friction[i] = t.dot(k.friction);
        }
        // t_i^T K t_j (K = sum 1/m + [a]x^T I^-1 [a]x, [M20] eq. 2).
        row.tangentMass[0] =
            massA + massB + row.anchorCrossA[0].dot(anchorTurnA[0]) + row.anchorCrossB[0].dot(anchorTurnB[0]);
        row.tangentMass[1] = row.anchorCrossA[0].dot(anchorTurnA[1]) + row.anchorCrossB[0].dot(anchorTurnB[1]);
        row.tangentMass[2] =
            massA + massB + row.anchorCrossA[1].dot(anchorTurnA[1]) + row.anchorCrossB[1].dot(anchorTurnB[1]);
      }
    }
  }
  if (!firstIteration || state.bodyContactAnchors.empty()) {
    finishRows(state);
    return;
  }
  // The warm start, in contact order: each contact that kept a held anchor (collide copies its points
  // exactly) starts from its multiplier, applied now.
  const std::vector<State::BodyContactAnchor>& held = state.bodyContactAnchors;
  std::size_t cursor = 0;
  std::size_t used = held.size();  // the anchor the last contact took: neighbouring points never share one
  for (std::size_t m = 0; m < count; ++m) {
    SolverBody& bodyA = solverBodies_[manifoldSides_[2 * m]];
    SolverBody& bodyB = solverBodies_[manifoldSides_[2 * m + 1]];
    for (std::size_t j = manifolds_[m]; j < manifolds_[m + 1]; ++j) {
      BodyContact& k = contacts_[j];
      ContactRow& row = rows_[j];
      const Anchor& anchor = anchors_[j];
      while (cursor < held.size() && pairBefore(held[cursor], k)) ++cursor;
      std::size_t match = held.size();
      for (std::size_t i = cursor; i < held.size() && samePair(held[i], k); ++i)
        if (i != used && held[i].lambda > 0.0 && held[i].a == anchor.a && held[i].b == anchor.b) {
          match = i;
          break;
        }
      if (match == held.size()) continue;
      used = match;
      k.lambda = held[match].lambda;
      row.lambda = k.lambda;
      const double scaleA = manifoldScale_[2 * m], scaleB = manifoldScale_[2 * m + 1];
      bodyA.dx -= (scaleA * bodyA.inverseMass * k.lambda) * k.normal;
      const Vec3 turnA = scaleA * bodyA.inverseInertiaTimes(row.crossA);
      const Vec3 turnB = scaleB * bodyB.inverseInertiaTimes(row.crossB);
      bodyA.dtheta -= k.lambda * turnA;
      bodyB.dx += (scaleB * bodyB.inverseMass * k.lambda) * k.normal;
      bodyB.dtheta += k.lambda * turnB;
    }
  }
  finishRows(state);
}

void BodyContacts::finishRows(const State& state) {
  // The immovable slot is written by no correction (its inverse mass and inertia are 0), but keep it clean.
  solverBodies_.back() = SolverBody{};
  // The order of the passes: one list in manifold order, or (a large set) the lists of kRegionLists.
  const std::size_t count = manifolds_.size() - 1;
  const auto still = static_cast<std::uint32_t>(solverBodies_.size() - 1);
  listOf_.assign(count, 0);
  listBegin_.assign(kRegionLists + 1, 0);
  if (count >= kRegionManifolds) {
    cutRegions(state);
    for (std::size_t m = 0; m < count; ++m) {
      const std::uint32_t sideA = manifoldSides_[2 * m], sideB = manifoldSides_[2 * m + 1];
      // A side that does not move belongs to no region.
      const int a = regionOf_[sideA != still ? sideA : sideB], b = regionOf_[sideB != still ? sideB : sideA];
      listOf_[m] = static_cast<std::uint8_t>(a == b ? a : a / 2 == b / 2 ? 4 + a / 2 : 6);
    }
  }
  for (std::size_t m = 0; m < count; ++m) ++listBegin_[listOf_[m] + std::size_t{1}];
  for (std::size_t l = 0; l < kRegionLists; ++l) listBegin_[l + 1] += listBegin_[l];
  std::uint32_t next[kRegionLists];
  std::copy(listBegin_.begin(), listBegin_.begin() + kRegionLists, next);
  listOrder_.resize(count);
  for (std::size_t m = 0; m < count; ++m) listOrder_[next[listOf_[m]]++] = static_cast<std::uint32_t>(m);
}

void BodyContacts::cutRegions(const State& state) {
  // The median of the bodies in [begin, end) of splitKeys_ along the axis of their largest spread
  // (ties broken by index, so the halves are a function of the poses alone).
  const auto cut = [&](std::size_t begin, std::size_t end, int level) {
    Vec3 lower = Vec3::Constant(std::numeric_limits<double>::infinity()), upper = -lower;
    for (std::size_t i = begin; i < end; ++i) {
      const Vec3& x = state.bodyPosition[splitKeys_[i].second];
      lower = lower.cwiseMin(x);
      upper = upper.cwiseMax(x);
    }
    int axis = 0;
    (upper - lower).maxCoeff(&axis);
    for (std::size_t i = begin; i < end; ++i) splitKeys_[i].first = state.bodyPosition[splitKeys_[i].second][axis];
    const std::size_t middle = begin + (end - begin) / 2;
    const auto first = splitKeys_.begin();
    std::nth_element(first + static_cast<std::ptrdiff_t>(begin), first + static_cast<std::ptrdiff_t>(middle),
                     first + static_cast<std::ptrdiff_t>(end));
    for (std::size_t i = middle; i < end; ++i) regionOf_[splitKeys_[i].second] += static_cast<std::uint8_t>(level);
    return middle;
  };
  splitKeys_.clear();
  for (const BodyIndex body : solved_) {
    regionOf_[body] = 0;
    splitKeys_.emplace_back(0.0, body);
  }
  const std::size_t middle = cut(0, splitKeys_.size(), 2);
  cut(0, middle, 1);
  cut(middle, splitKeys_.size(), 1);
}

void BodyContacts::solveManifold(std::size_t m) {
  const bool isotropic =
      solverBodies_[manifoldSides_[2 * m]].isotropic && solverBodies_[manifoldSides_[2 * m + 1]].isotropic;
  if (manifoldScale_[2 * m] != 1.0 || manifoldScale_[2 * m + 1] != 1.0) {
    if (isotropic) solveManifoldWith<true, true>(m);
    else solveManifoldWith<false, true>(m);
  } else if (isotropic) {
    solveManifoldWith<true, false>(m);
  } else {
    solveManifoldWith<false, false>(m);
  }
}

template <bool Isotropic, bool Scaled>
void BodyContacts::solveManifoldWith(std::size_t m) {
  const std::uint32_t still = static_cast<std::uint32_t>(solverBodies_.size() - 1);
  const std::size_t begin = manifolds_[m], end = manifolds_[m + 1];
  const std::uint32_t sideA = manifoldSides_[2 * m], sideB = manifoldSides_[2 * m + 1];
  SolverBody& bodyA = solverBodies_[sideA];
  SolverBody& bodyB = solverBodies_[sideB];
  // The sides' factors (stack mass scaling), as loadRows applied them; unscaled manifolds (both 1)
  // take the kernel without the products by them.
  const double scaleA = manifoldScale_[2 * m], scaleB = manifoldScale_[2 * m + 1];
  const double massA = Scaled ? scaleA * bodyA.inverseMass : bodyA.inverseMass;
  const double massB = Scaled ? scaleB * bodyB.inverseMass : bodyB.inverseMass;
  // I^-1 v for side A and side B (a named product: Eigen would fold a scalar factor into it).
  const auto turnOfA = [&](const Vec3& v) -> Vec3 {
    if constexpr (Scaled) return scaleA * bodyA.template inverseInertiaTimesAs<Isotropic>(v);
    else return bodyA.template inverseInertiaTimesAs<Isotropic>(v);
  };
  const auto turnOfB = [&](const Vec3& v) -> Vec3 {
    if constexpr (Scaled) return scaleB * bodyB.template inverseInertiaTimesAs<Isotropic>(v);
    else return bodyB.template inverseInertiaTimesAs<Isotropic>(v);
  };
  Vec3 dxA = bodyA.dx, dthetaA = bodyA.dtheta, dxB = bodyB.dx, dthetaB = bodyB.dtheta;
  for (std::size_t j = begin; j < end; ++j) {
    ContactRow& row = rows_[j];
    const Vec3& n = row.normal;
    // n . (dtheta x r) = dtheta . (r x n).
    const double C = row.separation + n.dot(dxB - dxA) + dthetaB.dot(row.crossB) - dthetaA.dot(row.crossA);
    // A hard unilateral row (alpha = 0 in XPBD, k = 1 in PBD): dlambda = -C / w, lambda >= 0.
    if (C >= 0.0 && !(row.lambda > 0.0)) continue;
    const double deltaLambda = std::max(-C * row.inverseWeight, -row.lambda);
    row.lambda += deltaLambda;
    if (deltaLambda == 0.0) continue;
    // [M20] eqs. 6-9: -dlambda n on A, +dlambda n on B.
    // I^-1 (r x n) as loadRows formed it.
    const Vec3 turnA = turnOfA(row.crossA), turnB = turnOfB(row.crossB);
    dxA -= (massA * deltaLambda) * n;
    dthetaA -= deltaLambda * turnA;
    dxB += (massB * deltaLambda) * n;
    dthetaB += deltaLambda * turnB;
  }
  for (std::size_t j = begin; j < end; ++j) {
    ContactRow& row = rows_[j];
    row.held = false;
    if (!(row.staticFriction > 0.0)) continue;
    const bool pushed = row.lambda > 0.0;
    if (!pushed && row.friction[0] == 0.0 && row.friction[1] == 0.0) continue;
    // [M20] sec. 3.5: the tangential offset of the anchor's material points (their relative
    // motion in the substep, or since the contact began to hold) is undone while the friction
    // multiplier stays within mu_s lambda_n. The offset in the tangents' coordinates comes from the
    // rows as the normal's separation does.
    const Vec3 tangent[2] = {row.tangent, row.normal.cross(row.tangent)};
    const Vec3 move = dxA - dxB;
    double total[2];
    for (int i = 0; i < 2; ++i)
      total[i] =
          row.slip[i] + tangent[i].dot(move) + dthetaA.dot(row.anchorCrossA[i]) - dthetaB.dot(row.anchorCrossB[i]);
    const double slip0 = total[0], slip1 = total[1];
    // Along the offset's direction d with its generalised mass w = d^T K d ([M20] eq. 2), as [M20]
    // sec. 3.5 corrects it (solving both tangent rows at once, exactly, made more contacts of a
    // box leave the cone in the first passes, and a box on a slope it should hold slid).
    // With s the offset and d = s / |s|: dlambda = -(|s| / w) d = -s |s|^2 / (s^T K s), no root.
    const double squaredSlip = slip0 * slip0 + slip1 * slip1;
    const double massAlong = row.tangentMass[0] * slip0 * slip0 + 2.0 * row.tangentMass[1] * slip0 * slip1 +
                             row.tangentMass[2] * slip1 * slip1;
    total[0] = row.friction[0];
    total[1] = row.friction[1];
    if (squaredSlip > 0.0 && massAlong > 0.0) {
      const double step = squaredSlip / massAlong;
      total[0] -= step * slip0;
      total[1] -= step * slip1;
    }
    // Projected Gauss-Seidel on the accumulated tangential multiplier, as lambda_n >= 0 is for the
    // normal: within the static cone the contact holds; outside it slides, and its friction is
    // the kinetic mu_d lambda_n against the slip ([M20] eq. 30 at the position level; the
    // velocity pass then adds only what is left of that budget). Passes change lambda_n (a box's
    // weight moves between its corners as it turns), so each visit projects the whole sum:
    // friction accumulated under a larger lambda_n is given back, not kept outside the cone.
    const double squared = total[0] * total[0] + total[1] * total[1];
    const double staticLimit = row.staticFriction * row.lambda;
    if (pushed && squared <= staticLimit * staticLimit) {
      row.held = true;
    } else {
      const double kinetic = pushed ? row.dynamicFriction * row.lambda : 0.0;
      if (squared > kinetic * kinetic) {
        const double scale = kinetic / std::sqrt(squared);
        total[0] *= scale;
        total[1] *= scale;
      }
    }
    const double delta0 = total[0] - row.friction[0], delta1 = total[1] - row.friction[1];
    if (delta0 == 0.0 && delta1 == 0.0) continue;
    row.friction[0] = total[0];
    row.friction[1] = total[1];
    const Vec3 deltaLambda = delta0 * tangent[0] + delta1 * tangent[1];
    dxA += massA * deltaLambda;
    const Vec3 turnA0 = turnOfA(row.anchorCrossA[0]), turnA1 = turnOfA(row.anchorCrossA[1]);
    const Vec3 turnB0 = turnOfB(row.anchorCrossB[0]), turnB1 = turnOfB(row.anchorCrossB[1]);
    dthetaA += delta0 * turnA0 + delta1 * turnA1;
    dxB -= massB * deltaLambda;
    dthetaB -= delta0 * turnB0 + delta1 * turnB1;
  }
  if (sideA != still) bodyA.dx = dxA, bodyA.dtheta = dthetaA;
  if (sideB != still) bodyB.dx = dxB, bodyB.dtheta = dthetaB;
}

template <class Visit>
void BodyContacts::inPhases(int threads, int passes, const Visit& visit) {
  const std::size_t count = manifolds_.empty() ? 0 : manifolds_.size() - 1;
  if (count == 0) return;
  if (listOrder_.size() != count) {  // no lists for these manifolds (not projected): their order
    for (int pass = 0; pass < passes; ++pass)
      for (std::size_t m = 0; m < count; ++m) visit(m);
    return;
  }
  const int team = threads > 1 && count >= kRegionManifolds ? std::min(threads, 4) : 1;
#pragma omp parallel num_threads(team) if (team > 1)
  {
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    const int size = omp_get_num_threads();
    const auto parts = static_cast<std::size_t>(size);
    for (int pass = 0; pass < passes; ++pass)
      for (int phase = 0; phase < 3; ++phase) {
        // Thread t takes the lists of this phase whose rank within it is t modulo the team.
        std::size_t rank = 0;
        for (std::size_t l = 0; l < kRegionLists; ++l) {
          if (kListPhase[l] != phase) continue;
          if (rank++ % parts == thread)
            for (std::size_t i = listBegin_[l]; i < listBegin_[l + 1]; ++i) visit(listOrder_[i]);
        }
        barrier_.wait(size);
      }
  }
}

void BodyContacts::project(const Model& model, State& state, bool firstIteration, int threads) {
  if (contacts_.empty()) return;
  // Every position in this call is the pose at its start moved by the bodies' corrections so far,
  // p = x + dx + r + dtheta x r, with r and I^-1 frozen at the start: a call turns a resting body by
  // micro-radians, and the rows need no quaternion per visit (they did: ~80 % of a pile's step). The
  // poses are turned by the whole rotation once, at the end; the next call starts from them.
  loadRows(model, state, firstIteration, threads);
  inPhases(threads, contactPasses_, [&](std::size_t m) { solveManifold(m); });
  // The multipliers back to the contacts (the velocity pass, the next call and the probes read them),
  // static friction as a world vector, and whether each held.
  for (std::size_t j = 0; j < contacts_.size(); ++j) {
    const ContactRow& row = rows_[j];
    BodyContact& k = contacts_[j];
    k.lambda = row.lambda;
    anchors_[j].held = row.held;
    if (row.staticFriction > 0.0)
      k.friction = row.friction[0] * row.tangent + row.friction[1] * row.normal.cross(row.tangent);
  }
  // The poses: translated, and turned by the whole rotation as BodySide::turn turns by one
  // correction ([M20] eqs. 8-9: q <- q + 1/2 [theta, 0] q, normalised).
  for (const BodyIndex body : solved_) {
    const SolverBody& s = solverBodies_[body];
    inSolve_[body] = 0;
    state.bodyPosition[body] += s.dx;
    Quat& q = state.bodyRotation[body];
    q.coeffs() += 0.5 * (Quat(0.0, s.dtheta.x(), s.dtheta.y(), s.dtheta.z()) * q).coeffs();
    q.normalize();
  }
}

void BodyContacts::velocityManifold(std::size_t m, const Model& model, State& state, double restingSpeed, double h) {
  const std::size_t begin = manifolds_[m], end = manifolds_[m + 1];
  const BodyContact& first = contacts_[begin];
  BodySide a, b;
  loadSides(model, state, first, a, b);
  // The rotations once per manifold and I^-1 once per body (velocityPass), not a quaternion per use.
  const Mat3 rotationA = a.q.toRotationMatrix(), rotationB = b.q.toRotationMatrix();
  const SolverBody& bodyA = solverBodies_[manifoldSides_[2 * m]];
  const SolverBody& bodyB = solverBodies_[manifoldSides_[2 * m + 1]];
  // [M20] eq. 2 for one side: w = 1/m + (r x d)^T I^-1 (r x d) (0 for a side that does not move).
  const auto weight = [](const SolverBody& s, const Vec3& r, const Vec3& d) {
    const Vec3 rd = r.cross(d);
    return s.inverseMass + rd.dot(s.inverseInertiaTimes(rd));
  };
  const auto push = [&](const BodySide& side, const SolverBody& s, BodyIndex body, const Vec3& r, const Vec3& p) {
    if (!side.movable) return;
    state.bodyVelocity[body] += s.inverseMass * p;
    state.bodyAngularVelocity[body] += s.inverseInertiaTimes(r.cross(p));
  };
  for (std::size_t j = begin; j < end; ++j) {
    const BodyContact& k = contacts_[j];
    if (!(k.lambda > 0.0)) continue;
    const Vec3 rA = rotationA * k.localA, rB = rotationB * k.localB;
    const Vec3 n = -k.normal;  // from B to A: the relative velocity of A along it is v_n
    const auto relative = [&]() -> Vec3 {
      return pointVelocity(a, state, k.bodyA, rA, h) - pointVelocity(b, state, k.bodyB, rB, h);
    };
    // Restitution ([M20] eq. 34): v_n becomes -e v~_n (not negative), e = 0 below the resting
    // speed.
    const bool resting = std::abs(k.normalVelocity) <= restingSpeed;
    const double vn = n.dot(relative());
    const double e = resting ? 0.0 : k.material.restitution;
    const double dvn = -vn + std::max(-e * k.normalVelocity, 0.0);
    const double wn = weight(bodyA, rA, n) + weight(bodyB, rB, n);
    if (wn > 0.0 && dvn != 0.0) {
      push(a, bodyA, k.bodyA, rA, (dvn / wn) * n);
      push(b, bodyB, k.bodyB, rB, (-dvn / wn) * n);
    }
    // Dynamic friction ([M20] eqs. 30-31): a tangential impulse against the sliding velocity,
    // in all at most mu_d |f_n| h = mu_d lambda_n / h, and no more than stops it.
    if (!(k.material.dynamicFriction > 0.0)) continue;
    const Vec3 v = relative();
    const Vec3 vt = v - n.dot(v) * n;
    const double speed = vt.norm();
    if (!(speed > 0.0)) continue;
    const Vec3 t = vt / speed;
    const double wt = weight(bodyA, rA, t) + weight(bodyB, rB, t);
    if (!(wt > 0.0)) continue;
    // A contact that slid in the position solve already had its kinetic friction there.
    const double limit =
        std::max(0.0, k.material.dynamicFriction * k.lambda / h - (anchors_[j].held ? 0.0 : k.friction.norm() / h));
    Vec3 total = dynamicImpulse_[j] - (speed / wt) * t;
    const double size = total.norm();
    if (size > limit) total *= limit / size;
    const Vec3 impulse = total - dynamicImpulse_[j];
    dynamicImpulse_[j] = total;
    push(a, bodyA, k.bodyA, rA, impulse);
    push(b, bodyB, k.bodyB, rB, -impulse);
  }
}

void BodyContacts::velocityPass(const Model& model, const SolverSettings& settings, State& state, double h,
                                int threads) {
  const double restingSpeed = 2.0 * settings.gravity.norm() * h;  // m/s, below it e = 0 ([M20] eq. 34)
  std::fill(dynamicImpulse_.begin(), dynamicImpulse_.end(), Vec3::Zero());
  // The moving bodies' world I^-1 at their poses after project() (the solver bodies it loaded for
  // these contacts; none are loaded when there are none).
  const auto moving = static_cast<std::int64_t>(contacts_.empty() ? 0 : solved_.size());
  const int team = threads > 1 && manifolds_.size() > kRegionManifolds ? threads : 1;
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (std::int64_t i = 0; i < moving; ++i) {
    const BodyIndex body = solved_[static_cast<std::size_t>(i)];
    solverBodies_[body].inverseInertia =
        BodySide::worldInverseInertia(state.bodyRotation[body], model.bodies[body].inverseInertia);
  }
  inPhases(threads, settings.bodyVelocityPasses,
           [&](std::size_t m) { velocityManifold(m, model, state, restingSpeed, h); });
  // The anchors that held, in contact order, for the next substep (and step: they are State).
  std::vector<State::BodyContactAnchor>& held = state.bodyContactAnchors;
  if (held.capacity() < contacts_.capacity()) held.reserve(contacts_.capacity());  // once, not per step
  held.clear();
  for (std::size_t j = 0; j < contacts_.size(); ++j)
    if (anchors_[j].held)
      held.push_back({contacts_[j].bodyA, contacts_[j].bodyB, contacts_[j].collider, anchors_[j].a, anchors_[j].b,
                      contacts_[j].lambda});
}

const State::BodyContactAnchor* BodyContacts::heldAnchor(const std::vector<State::BodyContactAnchor>& held,
                                                         const BodyContact& k, std::size_t& cursor) {
  while (cursor < held.size() && pairBefore(held[cursor], k)) ++cursor;
  const State::BodyContactAnchor* best = nullptr;
  double nearest = kAnchorDistance * kAnchorDistance;
  for (std::size_t j = cursor; j < held.size() && samePair(held[j], k); ++j) {
    const State::BodyContactAnchor& anchor = held[j];
    const double distance = (anchor.a - k.localA).squaredNorm();
    if (distance < nearest) nearest = distance, best = &anchor;
  }
  return best;
}

std::size_t BodyContacts::manifoldEnd(std::size_t begin) const {
  const BodyContact& first = contacts_[begin];
  std::size_t end = begin + 1;
  while (end < contacts_.size() && contacts_[end].bodyA == first.bodyA && contacts_[end].bodyB == first.bodyB &&
         contacts_[end].collider == first.collider)
    ++end;
  return end;
}

}  // namespace pliant::detail
