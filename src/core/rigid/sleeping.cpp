// Islands and sleeping of rigid bodies, as Box2D (b2_timeToSleep), Bullet (deactivation) and Jolt
// do by default: a body at rest costs nothing until something disturbs it.
//
// The idea:
// - Each awake dynamic body keeps a timer (State::bodySleepTime): at the end of a step it grows by
//   the step when |v| <= sleepLinearSpeed and |omega| <= sleepAngularSpeed, and restarts otherwise.
// - Islands: dynamic bodies linked by a contact of the step's last substep or by a joint, by
//   union-find whose root is the island's lowest body index (so the islands, and everything done
//   with them, depend on the state alone, not on thread counts). Static bodies and colliders do not
//   link (a pile on the ground is one island, two piles are two).
// - An island whose shortest timer reaches sleepTime falls asleep: its bodies get
//   State::bodySleepIsland = the root, zero velocities and their previous pose set to the pose. A
//   sleeping body is neither predicted nor integrated (body_integration.cpp), counts as immovable
//   in every correction (BodySide::load), and its pairs with static bodies, colliders and other
//   sleeping bodies are not even narrow-phased (body_contacts.cpp); its pose stays bit for bit.
// - Waking: an awake dynamic body or a kinematic body or collider whose narrow phase touches a
//   sleeping body wakes its island within the substep (body_contacts.cpp), as does a particle
//   touching it (solver.cpp); at a step's start, an island whose State the user changed (a
//   velocity set, a pose moved from the one it fell asleep at) wakes, and all wake when sleeping is
//   off. A woken island wakes whole, with its timers restarted.
// - Bodies that the solver cannot watch do not sleep: those attached to particles or jointed to a
//   kinematic body (always), and those touching particles, kinematic bodies or kinematic colliders
//   (while they do). At the defaults (0.05 m/s, 0.05 rad/s, 0.5 s) a falling body, or one spinning
//   faster than 0.05 rad/s, is never slow for the sleep time; a pendulum only near its turning
//   points, for 2 asin(0.05 / V) / omega each (peak speed V): a 1 m pendulum swinging 5 cm either
//   way (V = 0.16 m/s) is slow for 0.2 s, one at 30 degrees for 0.02 s. Swings smaller than ~2 cm
//   (V below ~0.07 m/s) do sleep.
#include "rigid/sleeping.h"

#include <algorithm>

namespace pliant::detail {

void BodySleep::prepare(const Model& model) {
  const std::size_t bodies = model.bodyCount();
  parent_.resize(bodies);
  islandTime_.resize(bodies);
  restless_.assign(bodies, 0);
  any_ = std::any_of(model.bodies.begin(), model.bodies.end(), [](const RigidBody& b) { return b.dynamic(); });
  for (const BodyAttachment& a : model.bodyAttachments) restless_[a.body] = 1;
  for (const Joint& j : model.joints) {
    const BodyIndex a = j.bodies[0], b = j.bodies[1];
    const bool kinematicA = a != kWorldBody && model.bodies[a].motion == BodyMotion::Kinematic;
    const bool kinematicB = b != kWorldBody && model.bodies[b].motion == BodyMotion::Kinematic;
    if (kinematicA && b != kWorldBody) restless_[b] = 1;
    if (kinematicB && a != kWorldBody) restless_[a] = 1;
  }
}

BodyIndex BodySleep::find(BodyIndex b) {
  while (parent_[b] != b) {
    parent_[b] = parent_[parent_[b]];  // path halving
    b = parent_[b];
  }
  return b;
}

void BodySleep::unite(BodyIndex a, BodyIndex b) {
  a = find(a);
  b = find(b);
  if (a == b) return;
  if (a < b) parent_[b] = a;
  else parent_[a] = b;
}

void BodySleep::wakeChanged(const Model& model, const SolverSettings& settings, State& state) const {
  if (!any_) return;
  for (std::size_t b = 0; b < model.bodyCount(); ++b) {
    if (!state.bodyAsleep(b)) continue;
    // Falling asleep zeroed the velocities and set the previous pose to the pose: anything else
    // was written by the user.
    const bool changed = !settings.sleeping || state.bodyVelocity[b] != Vec3::Zero() ||
                         state.bodyAngularVelocity[b] != Vec3::Zero() ||
                         state.bodyPosition[b] != state.bodyPreviousPosition[b] ||
                         state.bodyRotation[b].coeffs() != state.bodyPreviousRotation[b].coeffs();
    if (changed) state.wakeBody(b);
  }
}

void BodySleep::update(const Model& model, const SolverSettings& settings, State& state,
                       const std::vector<BodyContact>& contacts,
                       const std::vector<ParticleBodyContact>& particleContacts) {
  if (!any_ || !settings.sleeping) return;
  const std::size_t bodies = model.bodyCount();
  const double linear2 = settings.sleepLinearSpeed * settings.sleepLinearSpeed;
  const double angular2 = settings.sleepAngularSpeed * settings.sleepAngularSpeed;
  for (std::size_t b = 0; b < bodies; ++b) {
    parent_[b] = static_cast<BodyIndex>(b);
    if (!model.bodies[b].dynamic() || state.bodyAsleep(b)) continue;
    const bool slow = !restless_[b] && state.bodyVelocity[b].squaredNorm() <= linear2 &&
                      state.bodyAngularVelocity[b].squaredNorm() <= angular2;
    state.bodySleepTime[b] = slow ? state.bodySleepTime[b] + settings.timeStep : 0.0;
  }
  const auto kinematic = [&](BodyIndex b) { return model.bodies[b].motion == BodyMotion::Kinematic; };
  for (const BodyContact& k : contacts) {
    // Contacts have an awake dynamic side; the other is awake too, or static, kinematic or a collider.
    if (k.collider >= 0) {
      if (model.colliders[static_cast<std::size_t>(k.collider)].kinematic()) state.bodySleepTime[k.bodyA] = 0.0;
      continue;
    }
    const bool dynamicA = model.bodies[k.bodyA].dynamic(), dynamicB = model.bodies[k.bodyB].dynamic();
    if (dynamicA && dynamicB) unite(k.bodyA, k.bodyB);
    else if (dynamicA && kinematic(k.bodyB)) state.bodySleepTime[k.bodyA] = 0.0;
    else if (dynamicB && kinematic(k.bodyA)) state.bodySleepTime[k.bodyB] = 0.0;
  }
  for (const ParticleBodyContact& k : particleContacts)
    if (model.bodies[k.body].dynamic()) state.bodySleepTime[k.body] = 0.0;
  for (const Joint& j : model.joints) {
    const BodyIndex a = j.bodies[0], b = j.bodies[1];
    if (a != kWorldBody && b != kWorldBody && model.bodies[a].dynamic() && model.bodies[b].dynamic()) unite(a, b);
  }
  // The shortest timer of each island, at its root.
  for (std::size_t b = 0; b < bodies; ++b) islandTime_[b] = settings.sleepTime;
  for (std::size_t b = 0; b < bodies; ++b) {
    if (!model.bodies[b].dynamic() || state.bodyAsleep(b)) continue;
    const BodyIndex root = find(static_cast<BodyIndex>(b));
    islandTime_[root] = std::min(islandTime_[root], state.bodySleepTime[b]);
  }
  for (std::size_t b = 0; b < bodies; ++b) {
    if (!model.bodies[b].dynamic() || state.bodyAsleep(b)) continue;
    const BodyIndex root = find(static_cast<BodyIndex>(b));
    if (islandTime_[root] < settings.sleepTime) continue;
    state.bodySleepIsland[b] = static_cast<std::int32_t>(root);
    state.bodyVelocity[b].setZero();
    state.bodyAngularVelocity[b].setZero();
    state.bodyPreviousPosition[b] = state.bodyPosition[b];
    state.bodyPreviousRotation[b] = state.bodyRotation[b];
  }
}

}  // namespace pliant::detail
