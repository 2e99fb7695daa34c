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
  // Rigid bodies (pliant/bodies.h): the body frame's pose and velocity, and the pose at the start
  // of the last substep.
  std::vector<Vec3> bodyPosition;          // m, centre of mass
  std::vector<Quat> bodyRotation;          // unit, body frame -> world
  std::vector<Vec3> bodyVelocity;          // m/s
  std::vector<Vec3> bodyAngularVelocity;   // rad/s, world axes
  std::vector<Vec3> bodyPreviousPosition;  // m
  std::vector<Quat> bodyPreviousRotation;
  // Joints: kJointMultipliers scalar multipliers each, and the sums of the joint's positional and
  // angular corrections on body B in the last substep (kg m, kg m^2 rad): the force (N) and the
  // couple (N m, about the anchor) the joint exerts on B are these over h^2 (jointForce below).
  std::vector<double> jointLambda;
  std::vector<Vec3> jointLinearImpulse;
  std::vector<Vec3> jointAngularImpulse;
  // Static friction's anchors of the body contacts that held in the last substep
  // (src/core/rigid/body_contacts.cpp): a contact's pair and the two material points its friction
  // holds together, so that a resting contact undoes slip left over from earlier substeps and steps.
  struct BodyContactAnchor {
    BodyIndex bodyA = 0;
    BodyIndex bodyB = kWorldBody;  // or kWorldBody for a collider
    std::int32_t collider = -1;    // index in Model::colliders, or -1 for a body pair
    Vec3 a = Vec3::Zero();         // m, A's material point in A's body frame
    Vec3 b = Vec3::Zero();         // m, B's in B's body frame (or the collider's frame)
    double lambda = 0.0;           // kg m, the contact's normal multiplier when it held (the next solve starts from it)
  };
  std::vector<BodyContactAnchor> bodyContactAnchors;
  // Sleeping (src/core/rigid/sleeping.cpp, SolverSettings::sleeping): per body, how long (s) it has
  // stayed below the sleep speeds, and the island it sleeps in: -1 while awake, else the lowest body
  // index of its island. A sleeping body is neither predicted nor solved; setting its velocity or
  // pose (or an awake body touching its island) wakes the island in the next step.
  std::vector<double> bodySleepTime;          // s
  std::vector<std::int32_t> bodySleepIsland;  // -1: awake
  double time = 0.0;                          // s
  double lastSubstep = 0.0;                   // s, h of the last substep (for force estimates)
  std::uint64_t stepCount = 0;

  // A state at rest at the model's initial positions and velocities, time 0.
  static State fromModel(const Model& model);
  // 64-bit FNV-1a over the bit patterns of position, velocity, external force, attachment
  // targets, lambda, the bodies' poses, velocities and joint multipliers, the body contacts'
  // anchors, the sleep timers and islands (only when one is set: a state without sleep data hashes
  // as before), time and stepCount: everything that decides the next step.
  std::uint64_t hash() const;
  // Force (N) and couple (N m) that joint j exerted on its body B in the last substep (lambda / h^2,
  // [M20] sec. 3.3): zero before the first step.
  Vec3 jointForce(std::size_t joint) const;
  Vec3 jointTorque(std::size_t joint) const;
  // Whether body `body` sleeps (bodySleepIsland >= 0).
  bool bodyAsleep(std::size_t body) const { return body < bodySleepIsland.size() && bodySleepIsland[body] >= 0; }
  // Wakes body `body`'s island (nothing for an awake body): its bodies' timers restart.
  void wakeBody(std::size_t body);
};

}  // namespace pliant
