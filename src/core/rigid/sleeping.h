// Islands and sleeping of rigid bodies (SolverSettings::sleeping), a part of the Solver that owns
// its scratch. Described in sleeping.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant::detail {

class BodySleep {
 public:
  // Sizes the scratch for `model` and notes the bodies that never sleep (attached to particles,
  // jointed to a kinematic body).
  void prepare(const Model& model);
  // At the start of a step: wakes the islands whose State the user changed (a velocity set, a pose
  // moved away from the one it fell asleep at), and every island when sleeping is off.
  void wakeChanged(const Model& model, const SolverSettings& settings, State& state) const;
  // At the end of a step: each awake dynamic body's timer grows by the step while it is slow and
  // restarts otherwise; the islands of `contacts` (the last substep's) and the joints whose every
  // body has slept long enough fall asleep. `restless` bodies (touched by particles in the last
  // substep) restart their timers.
  void update(const Model& model, const SolverSettings& settings, State& state,
              const std::vector<BodyContact>& contacts, const std::vector<ParticleBodyContact>& particleContacts);

 private:
  BodyIndex find(BodyIndex b);
  void unite(BodyIndex a, BodyIndex b);

  std::vector<BodyIndex> parent_;       // union-find, the root of an island its lowest index
  std::vector<double> islandTime_;      // s, per root: the shortest timer of its bodies
  std::vector<std::uint8_t> restless_;  // per body: never sleeps
  bool any_ = false;                    // the model has a dynamic body
};

}  // namespace pliant::detail
