// Contacts with colliders and between particles: stages 2-3 (poses, collide), 5 (project, after the
// families) and 7 (velocity pass) of the step pipeline written in solver.h. This file holds the
// collider contacts; particle_contacts.cpp the pairs, by the same rules.
//
// The idea (seed 004; Macklin et al. 2019, "Small steps"; Mueller et al. 2020, "Detailed rigid body
// simulation with XPBD", sec. 3.5-3.6; Macklin et al. 2014, "Unified particle physics", sec. 6.1):
// - Every substep, contacts are found where the particles are predicted to be, so a contact is
//   never older than one substep and needs no persistent state. A particle-collider contact is
//   C = phi(x) - r >= 0 (phi the collider's signed distance, r the particle radius); a pair is
//   C = |x_a - x_b| - r_a - r_b >= 0. Both are hard (alpha = 0) and solved by projected
//   Gauss-Seidel: projected while violated or while they hold a multiplier from an earlier pass of
//   the substep (which they give back when others have separated the pair), with the accumulated
//   multiplier clamped at 0 (a contact never pulls).
// - Swept (continuous) test: a particle fast enough to cross a collider within one substep, or to
//   end past its middle, would be missed or pushed out of the far side by the test at the
//   prediction. So the straight path of the particle's centre over the substep, taken in the
//   collider's frame (from x^n in the frame at the substep's start to the prediction in the frame
//   at its end), is followed from x^n by conservative advancement on the signed distance (steps of
//   (phi - r) / |path|, which cannot skip the surface: phi is 1-Lipschitz) to where it first
//   touches. If it does and the prediction is then beyond reach (phi - r >= contactMargin) or its
//   nearest surface faces away from the entry (normals at entry and end with a negative dot
//   product: through a thin wall or past a sphere's centre), the contact becomes the tangent plane
//   at the entry point, C = n_e . (x - p_e) >= 0 (the time of impact by conservative advancement,
//   Mirtich 1996, "Impulse-based dynamic simulation of rigid body systems"), frozen for the substep
//   and carried with the collider to its end pose. Otherwise (a slow particle, a resting contact) the contact is the
//   one at the prediction, as before. Guarantee: for static colliders and colliders translating at constant velocity
//   over a substep (paths are sampled at substep ends) no particle centre crosses the surface offset by its radius; for
//   a rotating collider the relative path is the chord of the true one, which can clip a corner by about |q| (omega
//   h)^2 / 8 (q the point in the collider's frame, omega the spin rate).
// - Overlap that already existed at the start of the substep (x^n against the collider where it
//   was then) is not removed at once: up to maxDepenetrationVelocity * h of it per substep, the
//   rest is tolerated as an `allowance` added to C. New penetration is always removed completely.
// - Friction at position level, after the normal correction, on the tangential motion of the
//   particle relative to the surface during this substep: while the total tangential correction
//   stays within mu_s times the normal one (w lambda) it is all undone (static friction: the
//   particle sticks); beyond, the contact slides and mu_d w lambda of it is undone (dynamic
//   friction, i.e. the impulse mu_d |f_n| h with f_n = lambda / h^2). Dynamic friction belongs in
//   the position solve for particles: there the friction of one slipping contact reaches the rest
//   of its body through the other constraints. Done as a velocity change of the one particle
//   (Mueller et al. 2020 eq. 30, dv = -min(mu_d |f_n| h / m, |v_t|)), it is capped at that
//   particle's own speed, and a stiff body creeps down a slope with mu_s well above tan(theta)
//   (tests/scenario/contact_v13_v14_test.cpp measures both). SolverSettings::
//   dynamicFrictionInVelocityPass selects the velocity-pass form.
// - Velocity pass after v = (x - x^n)/h, on contacts that pushed (lambda > 0): restitution sets the
//   normal velocity to -e times the one before the solve, with e = 0 when that was at most
//   2 |g| h (resting contacts stay at rest), as Mueller et al. 2020 eq. 34.
// For particle pairs the same rules act on the relative motion, shared by inverse mass.
#include "collision/collider_contacts.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "collision/friction.h"
#include "constraints/avx2_lanes.h"

namespace pliant::detail {

namespace {

// Signed distance and outward normal in the collider's own frame.
double localDistance(const Collider& c, const Vec3& q, Vec3& normal) {
  return colliderDistance(c, ColliderPose{}, q, normal);
}

// Conservative advancement along the segment q0 -> q1 (collider frame, length `length` > 0) from
// its start, where phi - r = d0 >= 0. True, with the entry point and its phi - r and normal, when it
// comes within a tolerance of touching before its end. Bounded: a grazing path that needs more
// steps than the limit counts as a miss (it passes within about the tolerance of the surface).
bool sweptEntry(const Collider& c, double r, const Vec3& q0, const Vec3& q1, double length, double d0, Vec3& entry,
                double& de, Vec3& ne) {
  constexpr int kMaxSteps = 64;
  const double tolerance = 1e-9 * length;
  double t = 0.0;
  double d = d0;
  Vec3 q = q0;
  for (int step = 0; step < kMaxSteps; ++step) {
    if (d <= tolerance) {
      entry = q;
      de = localDistance(c, q, ne) - r;
      return true;
    }
    t += d / length;
    if (!(t < 1.0)) return false;
    q = q0 + t * (q1 - q0);
    Vec3 unused;
    d = localDistance(c, q, unused) - r;
  }
  return false;
}

// Whether the outward normals at two points of a path of `length` (m) starting outside the collider
// (offset by any radius >= 0) always have a positive dot product.
bool normalsAgreeAlongPath(const Collider& c, double length) {
  switch (c.shape) {
    case ColliderShape::Plane:
      return true;
    case ColliderShape::Sphere:
      return length < 0.5 * c.radius;
    default:
      return false;
  }
}

#ifdef PLIANT_HAVE_AVX2_KERNELS
// Colliders that the screen of four particles at a time takes (more: one at a time).
constexpr std::uint32_t kQuadColliders = 8;

// The screen of collideRange for particles i .. i + 3 against `count` quick colliders (Q is
// ColliderContacts::Quick), in lanes: the same operations as the scalar screen in its order
// (Eigen's squared norm sums (x^2 + y^2) + z^2), so the same decisions, NaN included; the pairs
// left appended in (particle, collider) order.
template <class Q>
__attribute__((target("avx2"))) void screenQuad(const Q* quick, std::uint32_t count, double margin, const double* w,
                                                const double* radius, const Vec3* position, const Vec3* previous,
                                                std::size_t i, std::uint32_t* pendingParticle,
                                                std::uint32_t* pendingCollider, std::size_t& pending) {
  const double* xs[4] = {position[i].data(), position[i + 1].data(), position[i + 2].data(), position[i + 3].data()};
  const double* ps[4] = {previous[i].data(), previous[i + 1].data(), previous[i + 2].data(), previous[i + 3].data()};
  __m256d x, y, z, px, py, pz;
  gather4(xs, x, y, z);
  gather4(ps, px, py, pz);
  const int movable = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(w + i), _mm256_setzero_pd(), _CMP_NEQ_UQ));
  const __m256d r = radius ? _mm256_loadu_pd(radius + i) : _mm256_setzero_pd();
  const __m256d pathX = _mm256_sub_pd(x, px), pathY = _mm256_sub_pd(y, py), pathZ = _mm256_sub_pd(z, pz);
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d travelBound =
      _mm256_mul_pd(_mm256_add_pd(_mm256_add_pd(_mm256_andnot_pd(sign, pathX), _mm256_andnot_pd(sign, pathY)),
                                  _mm256_andnot_pd(sign, pathZ)),
                    _mm256_set1_pd(1.0 + 1e-12));
  const __m256d travel = _mm256_sqrt_pd(_mm256_add_pd(
      _mm256_add_pd(_mm256_mul_pd(pathX, pathX), _mm256_mul_pd(pathY, pathY)), _mm256_mul_pd(pathZ, pathZ)));
  const __m256d marginLanes = _mm256_set1_pd(margin);
  int kept[kQuadColliders];
  for (std::uint32_t c = 0; c < count; ++c) {
    const Q& q = quick[c];
    __m256d d;
    if (q.kind == Q::Kind::Plane) {
      d = _mm256_sub_pd(_mm256_sub_pd(y, _mm256_set1_pd(q.position.y())), r);
    } else {
      const __m256d dx = _mm256_sub_pd(x, _mm256_set1_pd(q.position.x()));
      const __m256d dy = _mm256_sub_pd(y, _mm256_set1_pd(q.position.y()));
      const __m256d dz = _mm256_sub_pd(z, _mm256_set1_pd(q.position.z()));
      const __m256d norm = _mm256_sqrt_pd(
          _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy)), _mm256_mul_pd(dz, dz)));
      d = _mm256_sub_pd(_mm256_sub_pd(norm, _mm256_set1_pd(q.radius)), r);
    }
    // Left out: !(d < margin) && (d > travelBound || !(d < travel)).
    const __m256d skip =
        _mm256_and_pd(_mm256_cmp_pd(d, marginLanes, _CMP_NLT_UQ),
                      _mm256_or_pd(_mm256_cmp_pd(d, travelBound, _CMP_GT_OQ), _mm256_cmp_pd(d, travel, _CMP_NLT_UQ)));
    kept[c] = ~_mm256_movemask_pd(skip) & movable;
  }
  int any = 0;
  for (std::uint32_t c = 0; c < count; ++c) any |= kept[c];
  if (any == 0) return;  // most groups of four
  for (int lane = 0; lane < 4; ++lane)
    for (std::uint32_t c = 0; c < count; ++c)
      if ((kept[c] >> lane) & 1) {
        pendingParticle[pending] = static_cast<std::uint32_t>(i + static_cast<std::size_t>(lane));
        pendingCollider[pending] = c;
        ++pending;
      }
}
#endif

// The world position at the start of the substep of the collider's material point now at x.
Vec3 pointBefore(const Collider& c, const ColliderPose& now, const ColliderPose& before, const Vec3& x) {
  if (!c.kinematic()) return x;
  return before.position + before.rotation * (now.rotation.conjugate() * (x - now.position));
}

}  // namespace

void ColliderContacts::prepare(const Model& model) {
  pose_.resize(model.colliders.size());
  previousPose_.resize(model.colliders.size());
  unrotated_.assign(model.colliders.size(), 0);
  quick_.assign(model.colliders.size(), Quick{});
  parts_.assign(1, Part{});
  parts_[0].contacts.reserve(model.colliders.empty() ? 0 : model.particleCount());
  parts_[0].planes.reserve(parts_[0].contacts.capacity());
  partCount_ = 1;
  reservedParts_ = 0;
  count_ = 0;
  joined_.clear();
  joinedStale_ = false;
}

void ColliderContacts::updatePoses(const Model& model, double previousTime, double time) {
  for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
    pose_[c] = colliderPose(model, c, time);
    previousPose_[c] = model.colliders[c].kinematic() ? colliderPose(model, c, previousTime) : pose_[c];
    const auto identity = [](const Quat& q) { return q.w() == 1.0 && q.vec() == Vec3::Zero(); };
    unrotated_[c] = identity(pose_[c].rotation) && identity(previousPose_[c].rotation) ? 1 : 0;
    const Collider& collider = model.colliders[c];
    Quick& quick = quick_[c];
    quick.kind = Quick::Kind::None;
    if (collider.kinematic() || !unrotated_[c]) continue;
    if (collider.shape == ColliderShape::Plane) quick.kind = Quick::Kind::Plane;
    if (collider.shape == ColliderShape::Sphere) quick.kind = Quick::Kind::Sphere;
    quick.position = pose_[c].position;
    quick.radius = collider.radius;
  }
}

void ColliderContacts::collide(const Model& model, const SolverSettings& settings, const State& state, double h,
                               int team) {
  for (Part& part : parts_) {
    part.contacts.clear();
    part.planes.clear();
  }
  partCount_ = 1;
  count_ = 0;
  joinedStale_ = true;
  if (model.colliders.empty()) return;
  const std::size_t n = model.particleCount();
  if (team <= 1) {
    collideRange(model, settings, state, h, 0, n, parts_[0].contacts, parts_[0].planes);
    count_ = parts_[0].contacts.size();
    return;
  }
  // One part per thread: thread t takes the t-th share of the particles, cut at the same groups of
  // four as the prediction's shares (Solver::StepFrame::predictShare), so that the lines of a
  // particle's position and velocity stay with one core from the prediction to the velocity pass.
  // (Parts taken round robin balanced the contacts crowding into a range of particles better, but
  // every contact's particle then crossed to the other core and back: slower on the whole.) A part
  // holds at most n / team + 4 particles, each with at most one contact per collider (reserved
  // once per team size, so that no step allocates).
  const auto wanted = static_cast<std::size_t>(team);
  if (parts_.size() < wanted) parts_.resize(wanted);
  if (reservedParts_ != wanted) {
    const std::size_t bound = (n / wanted + 4) * model.colliders.size();
    for (std::size_t p = 0; p < wanted; ++p) {
      parts_[p].contacts.reserve(bound);
      parts_[p].planes.reserve(bound);
    }
    reservedParts_ = wanted;
  }
  const std::size_t groups = (n + 3) / 4;
#pragma omp parallel num_threads(team)
  {
    const auto part = static_cast<std::size_t>(omp_get_thread_num());
    const auto parts = static_cast<std::size_t>(omp_get_num_threads());
#pragma omp single nowait
    partCount_ = static_cast<int>(parts);
    collideRange(model, settings, state, h, std::min(n, 4 * (groups * part / parts)),
                 std::min(n, 4 * (groups * (part + 1) / parts)), parts_[part].contacts, parts_[part].planes);
  }
  partStart_.resize(static_cast<std::size_t>(partCount_) + 1);
  partStart_[0] = 0;
  for (int p = 0; p < partCount_; ++p) partStart_[p + 1] = partStart_[p] + parts_[p].contacts.size();
  count_ = partStart_[partCount_];
}

const std::vector<Contact>& ColliderContacts::contacts() const {
  if (partCount_ == 1) return parts_[0].contacts;
  // Readers of a solver between steps may ask from several threads at once.
  const std::lock_guard<std::mutex> lock(joinMutex_);
  if (joinedStale_) {
    joined_.clear();
    for (int p = 0; p < partCount_; ++p)
      joined_.insert(joined_.end(), parts_[p].contacts.begin(), parts_[p].contacts.end());
    joinedStale_ = false;
  }
  return joined_;
}

template <class Parts, class F>
void ColliderContacts::forEachIn(Parts& parts, int partCount, std::size_t begin, std::size_t end, F&& f) {
  std::size_t first = 0;  // of the part, in the parts taken in order
  for (int p = 0; p < partCount && first < end; ++p) {
    auto& part = parts[static_cast<std::size_t>(p)];
    const std::size_t size = part.contacts.size();
    for (std::size_t j = std::max(begin, first); j < std::min(end, first + size); ++j)
      if (!f(part.contacts[j - first], part.planes[j - first])) return;
    first += size;
  }
}

void ColliderContacts::collideRange(const Model& model, const SolverSettings& settings, const State& state, double h,
                                    std::size_t begin, std::size_t end, std::vector<Contact>& contacts,
                                    std::vector<Plane>& planes) const {
  const double margin = settings.contactMargin;
  const std::uint32_t colliderCount = static_cast<std::uint32_t>(model.colliders.size());
  const Quick* quick = quick_.data();
  const double* w = model.inverseMass.data();
  const double* radius = model.particleRadius.empty() ? nullptr : model.particleRadius.data();
  const Vec3* position = state.position.data();
  const Vec3* previous = state.previousPosition.data();
  // Two phases per chunk of particles: a screen without calls lists the (particle, collider) pairs
  // the full test must see, in (particle, collider) order, then collideOne tests them.
  constexpr std::uint32_t kPending = 256;
  std::uint32_t pendingParticle[kPending];
  std::uint32_t pendingCollider[kPending];
  if (colliderCount > kPending) {  // more colliders than the list holds for one particle: no screen
    for (std::size_t i = begin; i < end; ++i)
      if (w[i] != 0.0 && position[i].allFinite())
        for (std::uint32_t c = 0; c < colliderCount; ++c)
          collideOne(model, settings, state, h, static_cast<ParticleIndex>(i), c, contacts, planes);
    return;
  }
  const std::size_t chunkParticles = kPending / std::max<std::uint32_t>(colliderCount, 1);
  // Four particles at a time where every collider is a quick one and AVX2 is there (the same
  // operations in lanes, so the same answers; screenQuad).
  bool lanes = false;
#ifdef PLIANT_HAVE_AVX2_KERNELS
  lanes = screenLanes_ && cpuHasAvx2() && colliderCount <= kQuadColliders &&
          std::all_of(quick, quick + colliderCount, [](const Quick& q) { return q.kind != Quick::Kind::None; });
#endif
  for (std::size_t chunk = begin; chunk < end; chunk += chunkParticles) {
    const std::size_t chunkEnd = std::min(end, chunk + chunkParticles);
    std::size_t pending = 0;
    std::size_t i = chunk;
#ifdef PLIANT_HAVE_AVX2_KERNELS
    if (lanes)
      for (; i + 4 <= chunkEnd; i += 4)
        screenQuad(quick, colliderCount, margin, w, radius, position, previous, i, pendingParticle, pendingCollider,
                   pending);
#endif
    for (; i < chunkEnd; ++i) {
      if (w[i] == 0.0) continue;
      const Vec3 x = position[i];
      const double r = radius ? radius[i] : 0.0;
      // The path's length in the world: a bound above it without a square root (the sum of the
      // coordinates' magnitudes, with room for its rounding), and the length as collideOne finds
      // it for a static collider, taken only where the bound does not decide.
      const Vec3 path = x - previous[i];
      const double travelBound = (std::abs(path.x()) + std::abs(path.y()) + std::abs(path.z())) * (1.0 + 1e-12);
      for (std::uint32_t c = 0; c < colliderCount; ++c) {
        // Static, unrotated planes and spheres: the distance at the prediction as colliderDistance
        // finds it (the same operations, so the same bits); a particle at least the margin away
        // that does not travel that far gets no contact (neither the one at the prediction nor a
        // swept one), and most particles are such. (A non-finite position is skipped here or when
        // tested.)
        const Quick& q = quick[c];
        if (q.kind != Quick::Kind::None) {
          const double d =
              (q.kind == Quick::Kind::Plane ? x.y() - q.position.y() : (x - q.position).norm() - q.radius) - r;
          if (!(d < margin) && (d > travelBound || !(d < std::sqrt(path.squaredNorm())))) continue;
        }
        pendingParticle[pending] = static_cast<std::uint32_t>(i);
        pendingCollider[pending] = c;
        ++pending;
      }
    }
    for (std::size_t k = 0; k < pending; ++k) {
      const auto p = static_cast<ParticleIndex>(pendingParticle[k]);
      if (!position[p].allFinite()) continue;
      collideOne(model, settings, state, h, p, pendingCollider[k], contacts, planes);
    }
  }
}

void ColliderContacts::collideOne(const Model& model, const SolverSettings& settings, const State& state, double h,
                                  ParticleIndex p, std::uint32_t c, std::vector<Contact>& contacts,
                                  std::vector<Plane>& planes) const {
  const double margin = settings.contactMargin;
  const double cap = settings.maxDepenetrationVelocity * h;  // m per substep; infinity: no cap
  const std::size_t i = p;
  const Vec3& x = state.position[i];
  const Vec3& xStart = state.previousPosition[i];
  const double r = model.radius(p);
  const Collider& collider = model.colliders[c];
  const ColliderPose& pose = pose_[c];
  const ColliderPose& before = previousPose_[c];
  const bool unrotated = unrotated_[c] != 0;
  Vec3 normal;
  const double d = colliderDistance(collider, pose, x, normal) - r;
  // The path in the collider's frame. Every point of it is at least d - length from touching
  // (phi is 1-Lipschitz), so only a path longer than d can have entered. A static collider's
  // frame is fixed: the path's length is the world one.
  Vec3 q1 = Vec3::Zero(), q0 = Vec3::Zero();
  const auto toFrame = [&] {
    if (unrotated) {  // as colliderDistance: rotating by the identity changes no value
      q1 = x - pose.position;
      q0 = xStart - before.position;
      return;
    }
    q1 = pose.rotation.conjugate() * (x - pose.position);
    q0 = before.rotation.conjugate() * (xStart - before.position);
  };
  if (collider.kinematic()) toFrame();
  const double reach = collider.kinematic() ? (q1 - q0).norm() : (x - xStart).norm();
  Plane plane;
  double d0 = 0.0;
  bool haveStart = false;  // d0 found for the path (the same value as the start's distance below)
  if (reach > 0.0 && d < reach && xStart.allFinite()) {
    if (!collider.kinematic()) toFrame();
    const double length = (q1 - q0).norm();
    Vec3 n0;
    d0 = localDistance(collider, q0, n0) - r;
    Vec3 entry = q0, ne = n0;
    double de = d0;
    // Started inside (a resting overlap): swept only when the path went on through to the far
    // side; started outside: also when it entered and ends beyond reach.
    const bool inside = d0 < 0.0;
    haveStart = true;
    // From outside, the entry makes the contact swept only when the prediction is beyond
    // reach or the normals at entry and end oppose; neither can happen within the margin of
    // a plane (one normal) or of a sphere along a path shorter than half its radius (the
    // entry e lies outside it and the end q1 within the path's length of e, so
    // e . q1 >= |e| (|e| - length) > 0): no need to find the entry then.
    const bool entryMatters = !(d < margin) || !normalsAgreeAlongPath(collider, length);
    if (inside || (length > 0.0 && entryMatters && sweptEntry(collider, r, q0, q1, length, d0, entry, de, ne))) {
      const Vec3 entryNormal = pose.rotation * ne;
      if ((!inside && !(d < margin)) || entryNormal.dot(normal) < 0.0) {
        plane.swept = true;
        plane.normal = entryNormal;
        plane.point = pose.position + pose.rotation * Vec3(entry - de * ne);
      }
    }
  }
  if (!plane.swept && !(d < margin)) return;
  Contact k;
  k.particle = p;
  k.collider = static_cast<std::int32_t>(c);
  if (!plane.swept && !haveStart) {  // as found before there were swept contacts, to the bit
    Vec3 normalBefore;
    d0 = colliderDistance(collider, before, xStart, normalBefore) - r;
  }
  if (d0 < 0.0) k.allowance = std::max(0.0, -d0 - cap);
  const Vec3& at = plane.swept ? plane.point : x;
  const Vec3 surfaceVelocity = (at - pointBefore(collider, pose, before, at)) / h;
  k.normalVelocity = (plane.swept ? plane.normal : normal).dot(state.velocity[i] - surfaceVelocity);
  contacts.push_back(k);
  planes.push_back(plane);
}

bool ColliderContacts::project(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace,
                               int team) {
  joinedStale_ = true;  // the multipliers and friction change
  if (trace || team <= 1 || partCount_ == 1 || count_ < kParallelContacts) {
    return projectRange(model, settings, state, trace, 0, count_);
  }
  // Each thread projects the part it made (when the team is the collide's): its contacts and its
  // particles are in its core's cache.
#pragma omp parallel num_threads(team)
  {
    const int thread = omp_get_thread_num();
    const int threads = omp_get_num_threads();
    for (int part = thread * partCount_ / threads; part < (thread + 1) * partCount_ / threads; ++part)
      projectRange(model, settings, state, nullptr, partStart_[part], partStart_[part + 1]);
  }
  return true;
}

bool ColliderContacts::projectRange(const Model& model, const SolverSettings& settings, State& state, StepTrace* trace,
                                    std::size_t begin, std::size_t end) {
  const double* w = model.inverseMass.data();
  Vec3* x = state.position.data();
  const Vec3* xPrev = state.previousPosition.data();
  const bool kineticHere = !settings.dynamicFrictionInVelocityPass;
  bool found = false;
  forEachIn(parts_, partCount_, begin, end, [&](Contact& c, const Plane& plane) {
    const ParticleIndex p = c.particle;
    const Collider& collider = model.colliders[c.collider];
    const ColliderPose& pose = pose_[c.collider];
    Vec3 n = plane.normal;
    const double C = (plane.swept ? plane.normal.dot(x[p] - plane.point)
                                  : colliderDistance(collider, pose, x[p], n) - model.radius(p)) +
                     c.allowance;
    if (!(C < 0.0) && !(c.lambda > 0.0)) return true;  // projected Gauss-Seidel, as the families
    const double deltaLambda = std::max(-C / w[p], -c.lambda);
    c.lambda += deltaLambda;
    x[p] += (w[p] * deltaLambda) * n;
    const Vec3 relative = pointBefore(collider, pose, previousPose_[c.collider], x[p]) - xPrev[p];
    const double kinetic = kineticHere ? collider.material.dynamicFriction : 0.0;
    x[p] -= frictionShift(relative - n.dot(relative) * n, collider.material.staticFriction * w[p] * c.lambda,
                          kinetic * w[p] * c.lambda, c.friction);
    if (trace && trace->check(state, p, StepTrace::Culprit::Contact)) {
      trace->contact = c;
      found = true;
      return false;
    }
    return true;
  });
  return !found;
}

void ColliderContacts::velocityPass(const Model& model, const SolverSettings& settings, State& state, double h,
                                    int team) const {
  if (team <= 1 || partCount_ == 1 || count_ < kParallelContacts) {
    velocityPassRange(model, settings, state, h, 0, count_);
    return;
  }
#pragma omp parallel num_threads(team)
  {
    const int thread = omp_get_thread_num();
    const int threads = omp_get_num_threads();
    for (int part = thread * partCount_ / threads; part < (thread + 1) * partCount_ / threads; ++part)
      velocityPassRange(model, settings, state, h, partStart_[part], partStart_[part + 1]);
  }
}

void ColliderContacts::velocityPassRange(const Model& model, const SolverSettings& settings, State& state, double h,
                                         std::size_t begin, std::size_t end) const {
  const double* w = model.inverseMass.data();
  const Vec3* x = state.position.data();
  Vec3* v = state.velocity.data();
  const double restingSpeed = 2.0 * settings.gravity.norm() * h;  // m/s, below it e = 0
  const bool friction = settings.dynamicFrictionInVelocityPass;
  forEachIn(parts_, partCount_, begin, end, [&](const Contact& c, const Plane& plane) {
    if (!(c.lambda > 0.0)) return true;
    const ParticleIndex p = c.particle;
    const Collider& collider = model.colliders[c.collider];
    const ColliderPose& pose = pose_[c.collider];
    Vec3 n = plane.normal;
    if (!plane.swept) colliderDistance(collider, pose, x[p], n);
    const Vec3 surfaceVelocity = (x[p] - pointBefore(collider, pose, previousPose_[c.collider], x[p])) / h;
    v[p] += velocityPassChange(v[p] - surfaceVelocity, n, w[p] * c.lambda, c.normalVelocity, collider.material,
                               friction, h, restingSpeed);
    return true;
  });
}

}  // namespace pliant::detail
