// The test behind refused steps (Solver::step) and the trace that names their cause: a particle is
// bad when its position or velocity is not finite, or it moved further than `bound` (m) from where
// the step started. When a step is refused, the solver replays it with a StepTrace: every stage
// checks the particles it has just written and the first bad one stops the replay, naming the
// particle and what moved it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant::detail {

inline bool particleBad(const State& state, const std::vector<Vec3>& start, std::size_t p, double bound) {
  const Vec3& x = state.position[p];
  if (!x.allFinite() || !state.velocity[p].allFinite()) return true;
  return (x - start[p]).norm() > bound;
}

struct StepTrace {
  const std::vector<Vec3>* stepStart = nullptr;  // positions at the start of the step
  double bound = 0.0;                            // m
  // Particles whose path prescribes their position (kinematic) are held to this bound instead.
  const std::vector<std::uint8_t>* prescribed = nullptr;
  double prescribedBound = 0.0;  // m
  // What was found: the first bad particle and the stage work that made it so.
  enum class Culprit : std::uint8_t {
    None,
    Prediction,
    Constraint,
    Contact,
    SurfaceContact,
    ObjectDamping,
    BodyCoupling
  };
  bool found = false;
  Culprit culprit = Culprit::None;
  std::int64_t particle = -1;
  ConstraintRef constraint;
  Contact contact;
  SurfaceContact surfaceContact;
  std::int64_t object = -1;     // Model::objects index, for ObjectDamping
  std::int64_t joint = -1;      // the first joint whose projection left a body non-finite
  std::int64_t body = -1;       // BodyCoupling: the body of the attachment or contact
  bool bodyAttachment = false;  // BodyCoupling: an attachment (else a contact)

  // True when particle p has gone bad (the first time: records it with the culprit).
  bool check(const State& state, std::size_t p, Culprit cause) {
    if (found) return true;
    if (!particleBad(state, *stepStart, p, prescribed && (*prescribed)[p] ? prescribedBound : bound)) return false;
    found = true;
    culprit = cause;
    particle = static_cast<std::int64_t>(p);
    return true;
  }
};

}  // namespace pliant::detail
