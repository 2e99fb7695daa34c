// Coupling of particles with rigid bodies in the same substep and Gauss-Seidel pass ([M20] sec.
// 3.2 and 3.5), a part of the Solver that owns its scratch: stages 3 (collide), 5 (project, after
// the bodies' joints and contacts) and 7 (velocity pass) of the step pipeline written in solver.h.
// The method is described in particle_coupling.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "constraints/families.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "step_check.h"

namespace pliant::detail {

class ParticleCoupling {
 public:
  // Sizes the scratch for `model`: the attachments' multipliers, the (particle, body) pairs that an
  // attachment joins (they never collide), and room for one contact per movable particle and body
  // (capped at four bodies per particle; more touching pairs than that allocate).
  void prepare(const Model& model);
  // Stage 3: a contact for each movable particle within contactMargin (plus its radius) of a body's
  // shape at the predicted poses, in (particle, body) order.
  void collide(const Model& model, const SolverSettings& settings, const State& state, double h);
  // Stage 4: the attachments' multipliers and impulse sums to 0.
  void reset();
  // Stage 5: one pass over the body attachments, then the particle-body contacts, on one thread.
  // False when `trace` found the culprit (a particle made bad by one of them).
  bool project(const Model& model, const SolveContext& ctx, State& state, StepTrace* trace);
  // Stage 7: restitution and dynamic friction of the contacts that pushed, as equal and opposite
  // impulses on the particle and the body (after both have their velocities).
  void velocityPass(const Model& model, const SolverSettings& settings, State& state, double h);

  // Whether the model has particles that can touch bodies (the collide stage has work).
  bool collides() const { return collides_; }
  const std::vector<ParticleBodyContact>& contacts() const { return contacts_; }
  // Sum of body attachment a's corrections on its particle in the last substep (kg m): the force
  // on the particle is this over h^2.
  const Vec3& attachmentImpulse(std::size_t a) const { return attachmentImpulse_[a]; }

 private:
  bool attached(ParticleIndex particle, BodyIndex body) const;

  bool collides_ = false;
  std::vector<double> attachmentLambda_;
  std::vector<Vec3> attachmentImpulse_;
  std::vector<std::uint64_t> attachedPairs_;  // sorted (particle << 32 | body)
  std::vector<Vec3> lower_, upper_;           // m, each body's bounds at its prediction, enlarged
  std::vector<ParticleBodyContact> contacts_;
};

}  // namespace pliant::detail
