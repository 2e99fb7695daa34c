// Contacts of rigid bodies ([M20] = Mueller, Macklin, Chentanez, Jeschke, Kim 2020, "Detailed
// Rigid Body Simulation with Extended Position Based Dynamics", sec. 3.5-3.6 and Alg. 2).
//
// The idea:
// - Found every substep at the predicted poses (as particle contacts are): a broad phase sorts the
//   bodies' bounds (shapeBounds, enlarged by the contact margin) along x and sweeps them for
//   overlapping pairs with at least one dynamic body that no joint connects; each dynamic body is
//   tested against each collider's bounds. Pairs are sorted by index, so the order (and the
//   Gauss-Seidel result) depends on nothing but the state. The narrow phase (collideShapes) gives
//   up to four points per pair; each becomes a contact that keeps its two material points in its
//   sides' frames and the normal n (A to B), frozen for the substep.
// - Position solve, after the joints: C = (p_B - p_A) . n with p = x + q r evaluated at the current
//   poses ([M20] sec. 3.5, d = (p1 - p2) . n with the sign of our normal), a hard unilateral constraint (alpha = 0)
//   whose correction uses the generalised inverse masses w = 1/m + (r x n)^T I^-1 (r x n) ([M20] eqs. 2-9,
//   rigid/corrections.h). Overlap present at the start of the substep is removed at most at
//   maxDepenetrationVelocity, as for particles (the rest is an allowance added to C).
// - Static friction ([M20] sec. 3.5): the material points' relative motion in the substep,
//   dp = (p_A - p_A^n) - (p_B - p_B^n), has a tangential part dp_t that is undone as a positional
//   correction when the accumulated tangential multiplier stays within mu_s lambda_n; otherwise the
//   contact slides and dynamic friction acts in the velocity pass.
// - A pair's points (its manifold, contiguous in the list) are solved together, kManifoldSweeps
//   Gauss-Seidel sweeps per pass: first their normal corrections, then their static friction, so
//   that each point's friction budget holds what the whole manifold pushed and the slip it undoes
//   is the pair's net motion. One sweep of single-point corrections is not enough for a flat face:
//   a correction at a box's corner mostly turns the box (at a cube's corner 3/4 of w is rotational)
//   and moves the other corners sideways by about half its size, so friction kept only a fraction
//   of a resting box in place and an incline with mu_s > tan(theta) was not held. The sweeps cost
//   a few more evaluations of at most 4 points and converge the manifold within the substep; pairs
//   still meet one another only once per pass, as in [M20]. Static friction accumulates the
//   tangential multiplier as a vector, so sweeps whose slips point different ways do not use up
//   the cone.
// - Velocity pass, after the bodies' velocities, on the contacts that pushed (lambda_n > 0)
//   ([M20] eqs. 29-34, Alg. 2): with v the relative velocity of the material points and v_n along
//   the normal, restitution sets v_n to -e v~_n (v~_n before the solve), with e = 0 when
//   |v~_n| <= 2 |g| h so resting contacts do not jitter; dynamic friction removes
//   min(mu_d |f_n| h, |v_t| / w_t) of tangential impulse (f_n = lambda_n / h^2, eq. 30 as an
//   impulse: [M20] writes it as a velocity change, which needs the weight w_t along v_t).
// - Colliders are sides with no inverse mass whose pose follows their paths; static and kinematic
//   bodies likewise (they push dynamic bodies and are not pushed). Everything runs on one thread in
//   a fixed order: bit-identical for any thread count.
#include "rigid/body_contacts.h"

#include <algorithm>
#include <cmath>

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

// Applies the impulse p (kg m/s) at world offset r to a dynamic body's velocities.
void applyImpulse(const BodySide& s, State& state, BodyIndex body, const Vec3& r, const Vec3& p) {
  if (!s.movable) return;
  state.bodyVelocity[body] += s.inverseMass * p;
  state.bodyAngularVelocity[body] += s.inverseInertiaTimes(r.cross(p));
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
  order_.resize(bodies);
  joinedPairs_.clear();
  for (const Joint& j : model.joints)
    if (j.bodies[0] != kWorldBody && j.bodies[1] != kWorldBody)
      joinedPairs_.emplace_back(std::min(j.bodies[0], j.bodies[1]), std::max(j.bodies[0], j.bodies[1]));
  std::sort(joinedPairs_.begin(), joinedPairs_.end());
  const std::size_t dynamic = static_cast<std::size_t>(
      std::count_if(model.bodies.begin(), model.bodies.end(), [](const RigidBody& b) { return b.dynamic(); }));
  active_ = dynamic > 0 && (bodies > 1 || colliders > 0);
  // Room for a pile: every body touching up to 8 others and every collider, 4 points per pair.
  const std::size_t pairs = active_ ? std::min(bodies * (bodies - 1) / 2, 8 * bodies) + dynamic * colliders : 0;
  pairs_.clear();
  pairs_.reserve(pairs);
  contacts_.clear();
  contacts_.reserve(kMaxManifoldPoints * pairs);
  dynamicImpulse_.reserve(contacts_.capacity());
}

bool BodyContacts::jointed(BodyIndex a, BodyIndex b) const {
  return std::binary_search(joinedPairs_.begin(), joinedPairs_.end(), std::make_pair(a, b));
}

void BodyContacts::collide(const Model& model, const SolverSettings& settings, const State& state, double h,
                           double substepStart, double substepEnd) {
  pairs_.clear();
  contacts_.clear();
  if (!active_) return;
  const double margin = settings.contactMargin;
  const std::size_t bodies = model.bodyCount();
  for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
    Frame& f = colliderFrames_[c];
    f.now = colliderPose(model, c, substepEnd);
    f.before = model.colliders[c].kinematic() ? colliderPose(model, c, substepStart) : f.now;
    shapeBounds(colliderShapes_[c], f.now, margin, colliderLower_[c], colliderUpper_[c]);
  }
  for (std::size_t b = 0; b < bodies; ++b) {
    const RigidBody& body = model.bodies[b];
    shapeBounds(body.shape, body.shapePose(state.bodyPosition[b], state.bodyRotation[b]), margin, lower_[b], upper_[b]);
    order_[b] = static_cast<BodyIndex>(b);
  }
  // Broad phase: sort and sweep along x (ties by index, so the order is the state's alone).
  std::sort(order_.begin(), order_.end(), [&](BodyIndex a, BodyIndex b) {
    return lower_[a].x() < lower_[b].x() || (lower_[a].x() == lower_[b].x() && a < b);
  });
  for (std::size_t i = 0; i < bodies; ++i) {
    const BodyIndex a = order_[i];
    for (std::size_t k = i + 1; k < bodies; ++k) {
      const BodyIndex b = order_[k];
      if (lower_[b].x() > upper_[a].x()) break;
      if (!model.bodies[a].dynamic() && !model.bodies[b].dynamic()) continue;
      if (!overlap(lower_[a], upper_[a], lower_[b], upper_[b])) continue;
      const BodyIndex first = std::min(a, b), second = std::max(a, b);
      if (jointed(first, second)) continue;
      pairs_.push_back({first, second, false});
    }
  }
  std::sort(pairs_.begin(), pairs_.end(),
            [](const Pair& p, const Pair& q) { return p.a < q.a || (p.a == q.a && p.b < q.b); });
  for (std::size_t b = 0; b < bodies; ++b) {
    if (!model.bodies[b].dynamic()) continue;
    for (std::uint32_t c = 0; c < model.colliders.size(); ++c)
      if (overlap(lower_[b], upper_[b], colliderLower_[c], colliderUpper_[c]))
        pairs_.push_back({static_cast<BodyIndex>(b), c, true});
  }
  // Narrow phase per candidate pair; each manifold point becomes a contact.
  const double cap = settings.maxDepenetrationVelocity * h;  // m per substep; infinity: no cap
  ContactManifold manifold;
  for (const Pair& pair : pairs_) {
    const RigidBody& bodyA = model.bodies[pair.a];
    const BodySide a = BodySide::load(model, state, pair.a);
    BodySide b;
    const BodyShape* shapeB;
    ColliderPose poseB;
    ContactMaterial material;
    if (pair.collider) {
      const Frame& f = colliderFrames_[pair.b];
      b = colliderSide(f.now, f.before);
      shapeB = &colliderShapes_[pair.b];
      poseB = f.now;
      material = combine(bodyA.material, model.colliders[pair.b].material);
    } else {
      const RigidBody& bodyB = model.bodies[pair.b];
      b = BodySide::load(model, state, pair.b);
      shapeB = &bodyB.shape;
      poseB = bodyB.shapePose(b.x, b.q);
      material = combine(bodyA.material, bodyB.material);
    }
    collideShapes(bodyA.shape, bodyA.shapePose(a.x, a.q), *shapeB, poseB, margin, manifold);
    for (int m = 0; m < manifold.count; ++m) {
      const ShapeContactPoint& point = manifold.points[m];
      BodyContact k;
      k.bodyA = pair.a;
      k.bodyB = pair.collider ? kWorldBody : pair.b;
      k.collider = pair.collider ? static_cast<std::int32_t>(pair.b) : -1;
      k.normal = point.normal;
      const Vec3 rA = point.pointA - a.x, rB = point.pointB - b.x;
      k.localA = a.q.conjugate() * rA;
      k.localB = b.q.conjugate() * rB;
      k.material = material;
      // The same material points at the substep's start: overlap they already had is removed at
      // most at maxDepenetrationVelocity (as for particles, collider_contacts.cpp).
      const double before = (b.xPrev + b.qPrev * k.localB - a.xPrev - a.qPrev * k.localA).dot(k.normal);
      if (before < 0.0) k.allowance = std::max(0.0, -before - cap);
      const BodyIndex sideB = pair.collider ? kWorldBody : pair.b;
      const Vec3 relative = pointVelocity(a, state, pair.a, rA, h) - pointVelocity(b, state, sideB, rB, h);
      k.normalVelocity = -k.normal.dot(relative);
      contacts_.push_back(k);
    }
  }
  dynamicImpulse_.resize(contacts_.size());
}

void BodyContacts::project(const Model& model, const SolveContext& ctx, State& state) {
  const ConstraintParameters hard{};  // alpha = 0, stiffness 1: contacts are hard in both modes
  for (std::size_t begin = 0; begin < contacts_.size();) {
    const std::size_t end = manifoldEnd(begin);
    const BodyContact& first = contacts_[begin];
    BodySide a = BodySide::load(model, state, first.bodyA);
    BodySide b = first.collider >= 0
                     ? colliderSide(colliderFrames_[first.collider].now, colliderFrames_[first.collider].before)
                     : BodySide::load(model, state, first.bodyB);
    for (int sweep = 0; sweep < kManifoldSweeps; ++sweep) {
      for (std::size_t j = begin; j < end; ++j) {
        BodyContact& k = contacts_[j];
        const Vec3& n = k.normal;
        const Vec3 rA = a.q * k.localA, rB = b.q * k.localB;
        // [M20] sec. 3.5: the penetration along the frozen normal; C >= 0 grows when A moves along -n.
        const double C = (b.x + rB - a.x - rA).dot(n) + k.allowance;
        solvePositional(a, b, rA, rB, -n, C, 0.0, hard, k.lambda, true, ctx);
      }
      for (std::size_t j = begin; j < end; ++j) {
        BodyContact& k = contacts_[j];
        if (!(k.lambda > 0.0) || !(k.material.staticFriction > 0.0)) continue;
        // [M20] sec. 3.5: the tangential part of the material points' relative motion in the
        // substep is undone while the friction multiplier stays within mu_s lambda_n.
        const Vec3& n = k.normal;
        const Vec3 rA = a.q * k.localA, rB = b.q * k.localB;
        const Vec3 motion = (a.x + rA - (a.xPrev + a.qPrev * k.localA)) - (b.x + rB - (b.xPrev + b.qPrev * k.localB));
        const Vec3 tangential = motion - n.dot(motion) * n;
        const double length = tangential.norm();
        if (!(length > 0.0)) continue;
        const Vec3 t = tangential / length;
        const double w = a.positionalWeight(rA, t) + b.positionalWeight(rB, t);
        if (!(w > 0.0)) continue;
        const Vec3 deltaLambda = -(length / w) * t;
        const Vec3 total = k.friction + deltaLambda;
        if (total.norm() > k.material.staticFriction * k.lambda) continue;  // outside the cone: it slides
        k.friction = total;
        a.applyPositional(rA, deltaLambda);
        b.applyPositional(rB, -deltaLambda);
      }
    }
    a.store(state, first.bodyA);
    if (first.collider < 0) b.store(state, first.bodyB);
    begin = end;
  }
}

void BodyContacts::velocityPass(const Model& model, const SolverSettings& settings, State& state, double h) {
  const double restingSpeed = 2.0 * settings.gravity.norm() * h;  // m/s, below it e = 0 ([M20] eq. 34)
  for (std::size_t begin = 0; begin < contacts_.size();) {
    const std::size_t end = manifoldEnd(begin);
    const BodyContact& first = contacts_[begin];
    const BodySide a = BodySide::load(model, state, first.bodyA);
    const BodySide b = first.collider >= 0
                           ? colliderSide(colliderFrames_[first.collider].now, colliderFrames_[first.collider].before)
                           : BodySide::load(model, state, first.bodyB);
    for (std::size_t j = begin; j < end; ++j) dynamicImpulse_[j].setZero();
    for (int sweep = 0; sweep < kManifoldSweeps; ++sweep)
      for (std::size_t j = begin; j < end; ++j) {
        const BodyContact& k = contacts_[j];
        if (!(k.lambda > 0.0)) continue;
        const Vec3 rA = a.q * k.localA, rB = b.q * k.localB;
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
        const double wn = a.positionalWeight(rA, n) + b.positionalWeight(rB, n);
        if (wn > 0.0 && dvn != 0.0) {
          applyImpulse(a, state, k.bodyA, rA, (dvn / wn) * n);
          applyImpulse(b, state, k.bodyB, rB, (-dvn / wn) * n);
        }
        // Dynamic friction ([M20] eqs. 30-31): a tangential impulse against the sliding velocity,
        // in all at most mu_d |f_n| h = mu_d lambda_n / h, and no more than stops it.
        if (!(k.material.dynamicFriction > 0.0)) continue;
        const Vec3 v = relative();
        const Vec3 vt = v - n.dot(v) * n;
        const double speed = vt.norm();
        if (!(speed > 0.0)) continue;
        const Vec3 t = vt / speed;
        const double wt = a.positionalWeight(rA, t) + b.positionalWeight(rB, t);
        if (!(wt > 0.0)) continue;
        const double limit = k.material.dynamicFriction * k.lambda / h;
        Vec3 total = dynamicImpulse_[j] - (speed / wt) * t;
        if (total.norm() > limit) total *= limit / total.norm();
        const Vec3 impulse = total - dynamicImpulse_[j];
        dynamicImpulse_[j] = total;
        applyImpulse(a, state, k.bodyA, rA, impulse);
        applyImpulse(b, state, k.bodyB, rB, -impulse);
      }
    begin = end;
  }
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
