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

namespace pliant::detail {

// Gauss-Seidel sweeps over one manifold's points per pass (position solve and velocity pass): a
// body's points are coupled through its rotation, so one sweep of single-point corrections mostly
// turns the body instead of moving it, and friction leaves most of a slip in place. Measured on a
// box resting on the ground for 5 s (tests/scenario/rigid_contacts_test.cpp): drift 5e-5 m with 4
// sweeps, 2e-6 m with 8, below 1e-6 m with 16.
inline constexpr int kManifoldSweeps = 16;

class BodyContacts {
 public:
  // Sizes the scratch for `model`: bounds and sweep order per body, the collider shapes, the pairs
  // that a joint connects (they never collide), and room for the candidate pairs and contacts of a
  // pile (nothing is allocated in a step unless a scene has more touching pairs than that room).
  void prepare(const Model& model);
  // Stage 3: the broad phase over the bodies' bounds at their predicted poses (a sorted sweep along
  // x, pairs in (body, body) order, then (body, collider)) and the narrow phase of each candidate
  // pair (collideShapes within `contactMargin`). `substepStart` and `substepEnd` (s) place the
  // kinematic colliders.
  void collide(const Model& model, const SolverSettings& settings, const State& state, double h, double substepStart,
               double substepEnd);
  // Stage 5: one Gauss-Seidel pass over the contacts, in their order, on one thread.
  void project(const Model& model, const SolveContext& ctx, State& state);
  // Stage 7: restitution and dynamic friction as velocity changes, after the bodies' velocities.
  void velocityPass(const Model& model, const SolverSettings& settings, State& state, double h);

  bool active() const { return active_; }
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
  bool jointed(BodyIndex a, BodyIndex b) const;
  // One past the last contact of the manifold (the pair's points, contiguous) that starts at `begin`.
  std::size_t manifoldEnd(std::size_t begin) const;

  bool active_ = false;  // the model has a dynamic body that can touch something
  std::vector<BodyShape> colliderShapes_;
  std::vector<Frame> colliderFrames_;                         // this substep's collider poses
  std::vector<Vec3> colliderLower_, colliderUpper_;           // m, their bounds (a plane's are infinite)
  std::vector<Vec3> lower_, upper_;                           // m, each body's bounds at its prediction
  std::vector<BodyIndex> order_;                              // bodies by lower x (then index)
  std::vector<std::pair<BodyIndex, BodyIndex>> joinedPairs_;  // sorted, (lower, higher)
  std::vector<Pair> pairs_;
  std::vector<BodyContact> contacts_;
  std::vector<Vec3> dynamicImpulse_;  // kg m/s, per contact: the velocity pass's friction impulse so far
};

}  // namespace pliant::detail
