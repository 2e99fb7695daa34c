// Contacts of rigid bodies with each other and with colliders ([M20] sec. 3.5-3.6), a part of the
// Solver that owns its scratch: stages 3 (collide), 5 (project, after the joints) and 7 (velocity
// pass) of the step pipeline written in solver.h. The method is described in body_contacts.cpp.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "constraints/families.h"
#include "pliant/model.h"
#include "pliant/rigid_shapes.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "spin_barrier.h"
#include "thread_owned.h"

namespace pliant::detail {

struct BodySide;

// The default Gauss-Seidel passes over all the bodies' contacts per solver iteration
// (SolverSettings::bodyContactPasses, bodyVelocityPasses). Bodies are coupled through their
// rotations and through each other: a box on two boxes is turned by one pair and slid at the other,
// so one pass leaves slip behind that static friction only undoes in the next substep. Measured on
// a box resting on two boxes for 5 s (20 substeps of 1/60 s, mu_s 0.6): top box drift 4.2e-4 m
// with 1 pass of 16 sweeps per manifold, 6.1e-5 m with 8 passes of one, 1.2e-5 m with 16; a single
// box on the ground rests within 1e-9 m. The velocity pass only removes velocity (restitution
// aside), so fewer passes suffice (the drifts above do not change between 2 and 16).

class BodyContacts {
 public:
  // Sizes the scratch for `model`: bounds and sweep order per body, the collider shapes, the pairs
  // that a joint connects (they never collide), and room for the candidate pairs and contacts of a
  // pile (nothing is allocated in a step unless a scene has more touching pairs than that room).
  void prepare(const Model& model);
  // Stage 3: the broad phase over the bodies' bounds at their predicted poses (a sweep along the axis
  // of largest spread, or a uniform grid of the bounds' centres when the sweep meets too many; pairs in (body, body)
  // order, then (body, collider)) and the narrow phase of each candidate pair (collideShapes within `contactMargin`).
  // `substepStart` and `substepEnd` (s) place the kinematic colliders. The static friction anchors that held in the
  // last substep come from State::bodyContactAnchors. Sleeping bodies (sleeping.cpp) are left out: their pairs with
  // static bodies, colliders and each other are not tested; one that an awake dynamic or kinematic body or a kinematic
  // collider touches wakes with its island (in `state`) and the contacts are found again. With per-step detection
  // (SolverSettings::bodyCollisionPerSubstep false, [M20] sec. 3.5) the pairs and manifolds are found in substep 0
  // within each body's reach over the step, and later substeps (`substep` > 0) only re-evaluate each contact's
  // allowance, approach velocity and anchor.
  // The narrow phase of the pairs runs on up to `threads` threads (each pair alone; the contacts are
  // then formed in pair order, so the result does not depend on the count).
  void collide(const Model& model, const SolverSettings& settings, State& state, double h, int substep,
               double substepStart, double substepEnd, int threads);
  // Stage 5: SolverSettings::bodyContactPasses Gauss-Seidel passes over the contacts' manifolds; a large set is cut
  // into regions of space solved on up to `threads` threads, then the manifolds between them (the same result for
  // any count: the cut depends on the state only). `firstIteration`: the substep's first solver iteration. Contacts are
  // hard (alpha = 0, stiffness 1) in every solver mode, so the mode does not enter.
  void project(const Model& model, State& state, bool firstIteration, int threads);
  // Stage 7 (bodyVelocityPasses passes, over project()'s lists on up to `threads` threads): restitution and dynamic
  // friction as velocity changes, after the bodies' velocities; then the anchors that held go into the State.
  void velocityPass(const Model& model, const SolverSettings& settings, State& state, double h, int threads);

  bool active() const { return active_; }
  // Enough dynamic bodies that their contacts can be worth the team (the step then runs it).
  bool parallel() const { return parallel_; }
  const std::vector<BodyContact>& contacts() const { return contacts_; }

 private:
  struct Pair {
    BodyIndex a = 0;
    BodyIndex b = 0;  // a body (> a), or the collider's index when collider is set
    bool collider = false;
  };
  // Where the collider or body of one side of a contact is now and at the substep's start.
  struct Frame {
    ColliderPose now;
    ColliderPose before;
  };
  // Static friction's anchor of a contact: the material points (in A's and B's frames, as
  // BodyContact::localA/localB) whose tangential offset the friction undoes, and whether the contact
  // held (stayed in the cone) in its substep, so that the next substep's contact at the same place
  // keeps the anchor.
  struct Anchor {
    Vec3 a = Vec3::Zero();  // m
    Vec3 b = Vec3::Zero();  // m
    bool held = false;
  };
  // What a body is to the collide stage: sleeping bodies are only tested against what can wake them.
  enum class Role : std::uint8_t { Static, Awake, Kinematic, Asleep };
  // One round of collide(); false when it woke an island (the contacts are then incomplete).
  // `lookahead` (s): how long the contacts serve (0: this substep only; bounds grow by the reach).
  // `stepLeft` (s): the rest of the step (per-substep detection keeps candidate pairs over it).
  bool collideOnce(const Model& model, const SolverSettings& settings, State& state, double h, double lookahead,
                   double stepLeft, double substepStart, double substepEnd, int threads);
  // How far (m) any point of awake body `b` (bounds in lower_, upper_) can move in `time` (s), times
  // kReachFactor, plus `margin`.
  double reachOver(const State& state, std::size_t b, double time, double gravity, double margin) const;
  // Per-substep detection's broad phase: pairs_ from the step's candidate pairs (found again when
  // stale), those whose bounds overlap now.
  void findStepPairs(const State& state, std::size_t bodies, double stepLeft, double gravity, double margin,
                     int threads);
  // Every body's bounds inside those the step's candidates were found for.
  bool insideStepBounds(std::size_t bodies) const;
  // pairs_ by (a, b).
  void sortPairs();
  // Per-step detection, substeps after the first: the same contacts at this substep's poses
  // (allowance, normal velocity and anchor anew; multipliers zero).
  void refresh(const Model& model, const SolverSettings& settings, State& state, double h, double substepStart,
               double substepEnd);
  // A sleeping body of the last detection has woken since (a particle touched it): detect again.
  bool wokenSinceDetection(const State& state) const;
  // An awake body's bounds now are not inside those grown by its reach at the detection. The bounds
  // now go into nowLower_, nowUpper_ (all the awake bodies' when it returns false).
  bool escapedReach(const Model& model, const SolverSettings& settings, const State& state);
  // Pairs with a sphere or capsule or a body that is not settled: their manifold is found every substep
  // even with per-step detection.
  bool freshEverySubstep(const Model& model, const Pair& pair) const;
  // Appends the pair's contacts at the current poses (within contactMargin, plus the sides' reach
  // when `speculative`); true when it woke a sleeping side instead.
  bool pairContacts(const Model& model, const SolverSettings& settings, State& state, const Pair& pair,
                    bool speculative, double h, double cap, std::size_t& cursor);
  // Its narrow phase alone (no state changes): the manifold of the pair at the current poses.
  void findManifold(const Model& model, const SolverSettings& settings, const State& state, const Pair& pair,
                    bool speculative, ContactManifold& manifold) const;
  // The rest: wakes a sleeping side that is touched (true), or appends the manifold's contacts.
  bool addContacts(const Model& model, State& state, const Pair& pair, const ContactManifold& manifold, double h,
                   double cap, std::size_t& cursor);
  // Wakes the sleeping side of a pair whose manifold has points (true); false when no side sleeps or
  // nothing touches.
  bool wakesSleeper(State& state, const Pair& pair, const ContactManifold& manifold) const;
  // A side of the pair was asleep when this round began.
  bool touchesSleeper(const Pair& pair) const;
  // The manifold's contacts and anchors into contacts_[at...] and anchors_[at...]; `cursor` walks
  // State::bodyContactAnchors from the first entry of the pair or before.
  void writeContacts(const Model& model, const State& state, const Pair& pair, const ContactManifold& manifold,
                     double h, double cap, std::size_t& cursor, std::size_t at);
  // One Gauss-Seidel visit of manifold `m`: its normal rows, then its static friction.
  void solveManifold(std::size_t m);
  // Its body: with `Isotropic` (both sides' I^-1 multiples of the identity) I^-1 v is one scalar
  // product (SolverBody::inverseInertiaTimesAs), for a third of a cube pile's flops.
  // With `Scaled`, the manifold's sides carry stack mass scaling factors other than 1.
  template <bool Isotropic, bool Scaled>
  void solveManifoldWith(std::size_t m);
  // One velocity pass visit of manifold `m` (restitution, then dynamic friction).
  void velocityManifold(std::size_t m, const Model& model, State& state, double restingSpeed, double h);
  // `passes` passes of `visit(m)` over the manifolds in the lists' order, the lists of a phase at
  // once on up to `threads` threads (one list in manifold order below kRegionManifolds).
  template <class Visit>
  void inPhases(int threads, int passes, const Visit& visit);
  // A new or refreshed contact's allowance, normal velocity and anchor from the sides' poses (rA, rB:
  // the material points' world offsets); `cap` (m) the depenetration allowed in the substep.
  void startContact(BodyContact& k, Anchor& anchor, const BodySide& a, const BodySide& b, const Vec3& rA,
                    const Vec3& rB, const State& state, double h, double cap, std::size_t& cursor) const;
  bool jointed(BodyIndex a, BodyIndex b) const;
  // The broad phase: the body pairs whose bounds overlap (unsorted) into pairs_.
  void findBodyPairs(std::size_t bodies, int threads);
  // Its sweep along one axis; false (pairs_ partly filled) when it gave up for the grid.
  bool sweepBodyPairs(std::size_t bodies);
  // Adds the pair to pairs_ if its bounds overlap, one side can move or wake, and no joint connects it.
  void considerPair(BodyIndex a, BodyIndex b, std::vector<Pair>& into) const;
  // The anchor held in the last substep (`held`, in contact order) by a contact of the same pair
  // whose point on A lies within kAnchorDistance of `k`'s, or null. `cursor` walks `held` along.
  static const State::BodyContactAnchor* heldAnchor(const std::vector<State::BodyContactAnchor>& held,
                                                    const BodyContact& k, std::size_t& cursor);
  // A body during project(): the translation and rotation the contacts gave it so far, and what its
  // corrections need, frozen at the call's start ([M20] eqs. 6-9 linearised over the call).
  struct SolverBody {
    Vec3 dx = Vec3::Zero();              // m
    Vec3 dtheta = Vec3::Zero();          // rad, rotation vector (world)
    Mat3 inverseInertia = Mat3::Zero();  // 1/(kg m^2), world axes (0: does not move)
    double inverseMass = 0.0;            // 1/kg (0: does not move)
    bool isotropic = true;               // inverseInertia is a multiple of the identity (a sphere, a cube, 0)
    // I^-1 v (1/(kg m^2) times v): for an isotropic body one scalar product, the matrix product's bits
    // (s x + 0 y + 0 z). The template for callers that know which (solveManifoldWith).
    template <bool Isotropic>
    Vec3 inverseInertiaTimesAs(const Vec3& v) const {
      if constexpr (Isotropic) return inverseInertia(0, 0) * v;
      else return inverseInertia * v;
    }
    Vec3 inverseInertiaTimes(const Vec3& v) const {
      return isotropic ? inverseInertiaTimesAs<true>(v) : inverseInertiaTimesAs<false>(v);
    }
  };
  // A contact's rows for one project() call, at the poses of its start.
  // Everything a pass reads of a contact, in one place (a pile's passes stream every contact's row:
  // the I^-1 (r x n) products are formed per use from the solver bodies, which stay in cache).
  struct ContactRow {
    Vec3 normal = Vec3::UnitY();                         // unit, world, from A to B (BodyContact::normal)
    Vec3 crossA = Vec3::Zero(), crossB = Vec3::Zero();   // m, r x n per side (r: the point's world offset)
    double separation = 0.0;                             // m, C = (p_B - p_A) . n + allowance at the start
    double inverseWeight = 0.0;                          // kg, 1 / (w_A + w_B) along n ([M20] eq. 2)
    double lambda = 0.0;                                 // kg m, the normal multiplier (back to the contact at the end)
    bool held = false;                                   // the last visit left the contact inside the static cone
    double staticFriction = 0.0, dynamicFriction = 0.0;  // the pair's coefficients
    // Static friction's offset as two rows along the tangents t_1 and t_2 = n x t_1 (unit, orthogonal
    // to n) at the anchor's points (a_A, a_B: world offsets), and its 2 x 2 generalised mass. The
    // multiplier comes first: a pass reads everything up to it (and writes `held`) for a contact
    // that carries no load (most of a pile's), and nothing after it.
    double friction[2] = {};                              // kg m, the accumulated static friction multiplier along t_i
    Vec3 tangent = Vec3::UnitX();                         // t_1
    Vec3 anchorCrossA[2] = {Vec3::Zero(), Vec3::Zero()};  // m, a_A x t_i
    Vec3 anchorCrossB[2] = {Vec3::Zero(), Vec3::Zero()};  // m, a_B x t_i
    double slip[2] = {};                                  // m, t_i . ((x_A + a_A) - (x_B + a_B)) at the start
    double tangentMass[3] = {};  // 1/kg, t_i^T K t_j: 11, 12, 22 (K = sum 1/m + [a]x^T I^-1 [a]x)
  };
  // Cuts the loaded bodies into four regions by two median cuts along the axes of largest spread.
  void cutRegions(const State& state);
  // Loads the rows and the bodies for project() and, in the first iteration, applies the warm start:
  // each contact that kept a held anchor from the last substep starts from that substep's normal
  // multiplier (State::BodyContactAnchor::lambda).
  void loadRows(const Model& model, const State& state, bool firstIteration, int threads);
  // The rest of loadRows: the immovable slot cleared and the passes' order (one list, or the regions' lists).
  void finishRows(const State& state);
  // The two sides of the manifold whose first contact is `first`, at their poses in `state`.
  void loadSides(const Model& model, const State& state, const BodyContact& first, BodySide& a, BodySide& b) const;
  // The solver body of one side of a contact (the last slot, which never moves, for a side that does not).
  std::uint32_t solverBodyOf(const Model& model, const State& state, BodyIndex body);
  // One past the last contact of the manifold (the pair's points, contiguous) that starts at `begin`.
  std::size_t manifoldEnd(std::size_t begin) const;

  bool active_ = false;    // the model has a dynamic body that can touch something
  bool parallel_ = false;  // it has at least kParallelBodies dynamic bodies
  std::vector<BodyShape> colliderShapes_;
  std::vector<Frame> colliderFrames_;                // this substep's collider poses
  std::vector<Vec3> colliderLower_, colliderUpper_;  // m, their bounds (a plane's are infinite)
  std::vector<Vec3> lower_, upper_;                  // m, each body's bounds at its prediction
  std::vector<Vec3> nowLower_, nowUpper_;            // m, per-step detection: awake bodies' bounds this substep
  // The broad phase's grid (findBodyPairs): bodies by cell key, the occupied cells, a hash table
  // from key to cell, and the bodies too wide for the grid.
  struct CellEntry {
    std::uint64_t key = 0;
    BodyIndex body = 0;
  };
  std::vector<CellEntry> cellEntries_;
  std::vector<std::uint64_t> cellKeys_;
  std::vector<std::uint32_t> cellBegin_;  // per cell, where its bodies begin in cellEntries_, then the end
  std::vector<std::uint32_t> cellTable_;  // cell index + 1, or 0
  int cellTableBits_ = 1;                 // log2 of its size
  std::vector<BodyIndex> large_;
  std::vector<std::uint8_t> isLarge_;                        // per body
  std::vector<double> extents_;                              // m, the bounds' widths (scratch for their median)
  std::vector<BodyIndex> order_;                             // bodies by lower x (then index), for the sweep
  int sweepGaveUp_ = 0;                                      // searches left before the sweep is tried again
  std::vector<ThreadOwned<std::vector<Pair>>> threadPairs_;  // the grid's pairs per thread (scratch)
  std::vector<Role> role_;                                   // per body, this round's
  std::vector<double> reach_;                                // m, per body: its motion left in the step
  std::vector<std::uint8_t> settled_;                        // per body: slow enough to keep its manifolds a step
  bool kinematicMotion_ = false;                             // a kinematic body or collider: per substep
  // Per-substep detection's candidates for the step: body pairs whose bounds grown by their reach over
  // the rest of the step overlap (sorted), those bounds, and the roles they were found with.
  std::vector<Pair> stepPairs_;
  std::vector<Vec3> stepLower_, stepUpper_;  // m
  std::vector<Role> stepRoles_;
  bool stepPairsValid_ = false;
  bool detected_ = false;                                     // contacts_ hold a detection
  int contactPasses_ = 16;                                    // this substep's (SolverSettings)
  double stackScaling_ = 0.0;                                 // 1/m, SolverSettings::bodyStackMassScaling
  Vec3 up_ = Vec3::Zero();                                    // unit, against gravity (0: no gravity)
  std::vector<std::pair<BodyIndex, BodyIndex>> joinedPairs_;  // sorted, (lower, higher)
  std::vector<Pair> pairs_;
  std::vector<BodyContact> contacts_;
  // Per-step detection: the polytope pairs' contacts as found (pair p's are cache_[cacheBegin_[p],
  // cacheBegin_[p + 1])), re-evaluated in each later substep.
  std::vector<BodyContact> cache_;
  std::vector<std::uint32_t> cacheBegin_;
  std::vector<Anchor> anchors_;               // per contact
  std::vector<std::size_t> manifolds_;        // where each pair's contacts begin, then contacts_.size()
  std::vector<Vec3> dynamicImpulse_;          // kg m/s, per contact: the velocity pass's friction impulse so far
  std::vector<ContactRow> rows_;              // per contact, this project() call's
  std::vector<SolverBody> solverBodies_;      // per body, then one that never moves
  std::vector<std::uint8_t> inSolve_;         // per body: its solver body is loaded in this call
  std::vector<BodyIndex> solved_;             // the bodies loaded, in the order they were met
  std::vector<std::uint32_t> manifoldSides_;  // per manifold, its two sides' solver bodies
  // Per manifold, the factors of its sides' inverse masses and inertias in the passes (stack mass
  // scaling: the lower side's exp(-k d) < 1, the upper side's 1; both 1 when it is off).
  std::vector<double> manifoldScale_;
  // The order of the passes (loadRows): the manifolds in lists, each in manifold order; the lists of
  // one phase touch disjoint moving bodies (kRegionLists in body_contacts.cpp says which).
  std::vector<std::uint8_t> regionOf_;                   // per body: its leaf region (0-3)
  std::vector<std::uint8_t> listOf_;                     // per manifold
  std::vector<std::uint32_t> listOrder_;                 // the manifolds by list
  std::vector<std::uint32_t> listBegin_;                 // where each list begins in listOrder_, then the end
  std::vector<std::pair<double, BodyIndex>> splitKeys_;  // scratch of the median cuts
  std::vector<ContactManifold> found_;                   // per candidate pair, its narrow phase's manifold
  std::vector<std::size_t> pairContactBegin_;            // per candidate pair, where its contacts begin, then the end
  SpinBarrier barrier_;
};

}  // namespace pliant::detail
