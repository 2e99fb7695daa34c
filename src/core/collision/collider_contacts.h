// Particle-collider contacts, a part of the Solver that owns its scratch: the collider poses of the
// current substep and the contacts found in it. Stages 2 (poses), 3 (collide), 5 (project) and 7
// (velocity pass) of the step pipeline (solver.h); the method is described in collider_contacts.cpp.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "pliant/colliders.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "step_check.h"
#include "thread_owned.h"

namespace pliant::detail {

class ColliderContacts {
 public:
  // Sizes the scratch for `model` (contacts reserved for one per particle: nothing is allocated in
  // a step of a typical scene once warm).
  void prepare(const Model& model);
  // Stage 2: where each collider is at the start (previousTime) and end (time) of the substep, s.
  void updatePoses(const Model& model, double previousTime, double time);
  // Stage 3: a contact for each movable particle within contactMargin of a collider at its
  // prediction, or whose path over the substep enters the collider (swept), in (particle, collider)
  // order.
  // `team` threads each take a contiguous share of the particles (the prediction's) into a list of
  // their own (a part); the parts in thread order are the same contacts in the same order for any
  // team. The parts are not joined: the thread that made a part projects it, in place, from its
  // core's cache (joining them moved every line written by one core to the other, each substep).
  void collide(const Model& model, const SolverSettings& settings, const State& state, double h, int team = 1);
  // Stage 5, after the other contacts (obstacles win). False when `trace` found the culprit.
  // Untraced, `team` threads each project the parts they made (a part holds whole particles, and a
  // particle's contacts touch no other particle): the serial pass's result for any team.
  bool project(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace, int team = 1);
  // Stage 7: restitution (and dynamic friction when settings ask for it there), split as project.
  void velocityPass(const Model& model, const SolverSettings& settings, State& state, double h, int team = 1) const;

  // The contacts of the last substep in order (the parts are joined when this is read after a
  // collide or a projection changed them).
  const std::vector<Contact>& contacts() const;
  std::size_t count() const { return count_; }
  // For tests: whether the collide stage may screen four particles at a time (where AVX2 is there
  // and every collider is a static, unrotated plane or sphere); off, one at a time. Both find the
  // same contacts.
  void setScreenLanes(bool on) { screenLanes_ = on; }

 private:
  // A swept contact (collider_contacts.cpp) holds the particle on the collider's tangent plane
  // where its path entered, instead of pushing it to the nearest surface point.
  struct Plane {
    bool swept = false;
    Vec3 normal = Vec3::UnitY();  // unit, world, at the end pose
    Vec3 point = Vec3::Zero();    // m, world: where the particle's centre touched, carried to the end pose
  };
  // The contacts and planes of one share of the particles, in (particle, collider) order.
  struct alignas(kCacheLine) Part {  // a thread's own (thread_owned.h)
    std::vector<Contact> contacts;
    std::vector<Plane> planes;  // one per contact
  };
  // Calls f(contact, plane) for contacts [begin, end) of parts[0 .. partCount) taken in order,
  // until f returns false (parts_ or, for a const pass, const parts_).
  template <class Parts, class F>
  static void forEachIn(Parts& parts, int partCount, std::size_t begin, std::size_t end, F&& f);
  // The contacts of particles [begin, end), in particle order, appended to `contacts`/`planes`.
  void collideRange(const Model& model, const SolverSettings& settings, const State& state, double h, std::size_t begin,
                    std::size_t end, std::vector<Contact>& contacts, std::vector<Plane>& planes) const;
  // Below this many contacts a split projection costs more than it saves.
  static constexpr std::size_t kParallelContacts = 512;
  bool projectRange(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace,
                    std::size_t begin, std::size_t end);
  void velocityPassRange(const Model& model, const SolverSettings& settings, State& state, double h, std::size_t begin,
                         std::size_t end) const;
  // The contact of particle p with collider c, if any, appended to `contacts`/`planes`.
  void collideOne(const Model& model, const SolverSettings& settings, const State& state, double h, ParticleIndex p,
                  std::uint32_t c, std::vector<Contact>& contacts, std::vector<Plane>& planes) const;
  // parts_[0 .. partCount_) hold the substep's contacts (one part when collide ran on one thread;
  // grown to the largest team seen, then reused), count_ of them.
  std::vector<Part> parts_;
  int partCount_ = 1;
  std::vector<std::size_t> partStart_;  // where each part's contacts start in the parts taken in order
  std::size_t reservedParts_ = 0;       // parts whose room is reserved for their share of the particles
  std::size_t count_ = 0;
  mutable std::vector<Contact> joined_;  // contacts() of several parts
  mutable bool joinedStale_ = false;
  mutable std::mutex joinMutex_;            // the join of contacts()
  std::vector<ColliderPose> pose_;          // at the end of the current substep
  std::vector<ColliderPose> previousPose_;  // at its start
  std::vector<char> unrotated_;             // 1: both poses of the substep are unrotated
  // A static, unrotated plane or sphere, whose distance alone (as colliderDistance computes it,
  // to the bit) tells most particles apart in a few operations: far from it and not moving far
  // enough to reach it (collider_contacts.cpp).
  struct Quick {
    enum class Kind : std::uint8_t { None, Plane, Sphere } kind = Kind::None;
    Vec3 position = Vec3::Zero();  // m, world: the plane's point or the sphere's centre
    double radius = 0.0;           // m, the sphere's
  };
  std::vector<Quick> quick_;
  bool screenLanes_ = true;
};

}  // namespace pliant::detail
