// The State: everything that changes while stepping. It can be copied, hashed, saved and restored;
// two states with equal hashes are bit-identical in everything that decides the next step.
#pragma once

#include <cstdint>
#include <vector>

#include "pliant/math.h"
#include "pliant/model.h"

namespace pliant {

struct State {
  std::vector<Vec3> position;          // m
  std::vector<Vec3> velocity;          // m/s
  std::vector<Vec3> previousPosition;  // m, positions at the start of the last substep (x^n)
  std::vector<Vec3> externalForce;     // N, per particle, added to gravity; kept across steps
  std::vector<double> lambda;          // accumulated multipliers of the last substep, see Model::lambdaOffset
  std::vector<Vec3> attachmentTarget;  // m, current target point of each attachment
  double time = 0.0;                   // s
  double lastSubstep = 0.0;            // s, h of the last substep (for force estimates)
  std::uint64_t stepCount = 0;

  // A state at rest at the model's initial positions and velocities, time 0.
  static State fromModel(const Model& model);
  // 64-bit FNV-1a over the bit patterns of position, velocity, external force, attachment
  // targets, lambda, time and stepCount: everything that decides the next step.
  std::uint64_t hash() const;
};

}  // namespace pliant
