#include "rigid/body_integration.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "inline_hints.h"

namespace pliant::detail {

namespace {

// J^-1 r for a 3x3 J by its adjugate (the rows' cross products over the determinant): a few dozen
// flops inline where a pivoted LU costs a call and its bookkeeping; the gyroscopic Jacobians are
// close to I (h small), so well conditioned. Falls back on the pivoted LU when the determinant is
// not clearly away from 0 (relative to the rows' lengths) or not finite.
Vec3 solve3(const Mat3& jacobian, const Vec3& r) {
  const Vec3 r0 = jacobian.row(0), r1 = jacobian.row(1), r2 = jacobian.row(2);
  const Vec3 c0 = r1.cross(r2), c1 = r2.cross(r0), c2 = r0.cross(r1);
  const double determinant = r0.dot(c0);
  if (!(determinant * determinant > 1e-24 * r0.squaredNorm() * r1.squaredNorm() * r2.squaredNorm()))
    return jacobian.partialPivLu().solve(r);
  return (c0 * r.x() + c1 * r.y() + c2 * r.z()) / determinant;
}

// omega (body frame) after the gyroscopic term over h, I = diag(inertia).
Vec3 gyroscopicStep(const Vec3& omega, const Vec3& inertia, const Vec3& inverseInertia, double h,
                    GyroscopicUpdate update) {
  const Vec3 momentum = inertia.cwiseProduct(omega);
  if (update == GyroscopicUpdate::Explicit) return omega - h * inverseInertia.cwiseProduct(omega.cross(momentum));
  const auto skew = [](const Vec3& v) {
    Mat3 s;
    s << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
    return s;
  };
  if (update == GyroscopicUpdate::Implicit) {
    // f(w) = I (w - omega) + h w x I w, one Newton step from w = omega:
    // J = I + h (skew(w) I - skew(I w)), w' = omega - J^-1 h omega x I omega.
    const Mat3 jacobian = Mat3(inertia.asDiagonal()) + h * (skew(omega) * inertia.asDiagonal() - skew(momentum));
    return omega - solve3(jacobian, h * omega.cross(momentum));
  }
  // Midpoint: f(w) = I (w - omega) + h m x I m with m = (omega + w) / 2, solved by Newton's method
  // (J = I + h/2 (skew(m) I - skew(I m))). The implicit midpoint rule keeps every quadratic
  // invariant of Euler's equations: the energy m.I m / 2 and |I m| are those of omega to the
  // solve's tolerance.
  Vec3 w = omega;
  const double halfStep = 0.5 * h;
  for (int iteration = 0; iteration < 8; ++iteration) {
    const Vec3 mid = 0.5 * (omega + w);
    const Vec3 midMomentum = inertia.cwiseProduct(mid);
    const Vec3 residual = inertia.cwiseProduct(w - omega) + h * mid.cross(midMomentum);
    // I + h/2 (skew(m) I - skew(I m)) entry by entry, each as Eigen's expression evaluated it (the
    // diagonal's zeros included), without the temporaries.
    const Mat3 s = skew(mid), t = skew(midMomentum);
    Mat3 jacobian;
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i)
        jacobian(i, j) = (i == j ? inertia[i] : 0.0) + halfStep * (s(i, j) * inertia[j] - t(i, j));
    const Vec3 step = solve3(jacobian, residual);
    w -= step;
    if (!(step.squaredNorm() > 1e-30 * w.squaredNorm())) break;
  }
  return w;
}

Quat rotateBy(const Quat& q, const Vec3& omega, double h, QuaternionUpdate update) {
  if (update == QuaternionUpdate::Linear) {
    // [M20] Alg. 2: q <- q + h/2 [omega, 0] q, then normalised.
    Quat turned = q;
    turned.coeffs() += 0.5 * h * (Quat(0.0, omega.x(), omega.y(), omega.z()) * q).coeffs();
    return turned.normalized();
  }
  const double speed = omega.norm();
  const double half = 0.5 * h * speed;
  if (half == 0.0) return q;
  const Vec3 axis = omega / speed;
  const double s = std::sin(half);
  return (Quat(std::cos(half), s * axis.x(), s * axis.y(), s * axis.z()) * q).normalized();
}

}  // namespace

Vec3 angularVelocityFromRotation(const Quat& to, const Quat& from, double h, QuaternionUpdate update) {
  Quat dq = to * from.conjugate();
  if (dq.w() < 0.0) dq.coeffs() = -dq.coeffs();  // the shorter way round
  const Vec3 v = dq.vec();
  if (update == QuaternionUpdate::Linear) return 2.0 * v / h;  // [M20] Alg. 2
  const double s = v.norm();
  if (s == 0.0) return Vec3::Zero();
  return v * (2.0 * std::atan2(s, dq.w()) / (s * h));
}

namespace {

// Enough awake bodies to share (a sleeping pile would pay only the team's fork and join).
bool worthTheTeam(const State& state, int threads) {
  if (threads <= 1) return false;
  std::int64_t awake = 0;
  for (const std::int32_t island : state.bodySleepIsland) awake += island < 0;
  return awake >= kParallelBodyCount;
}

// Runs range(begin, end) over [0, count) on this thread, or in equal shares on the team (each body
// alone, so any split gives the same state).
template <class Range>
void overBodies(const State& state, std::size_t count, int threads, const Range& range) {
  if (!worthTheTeam(state, threads)) return range(std::size_t{0}, count);
#pragma omp parallel num_threads(threads)
  {
    const auto team = static_cast<std::size_t>(omp_get_num_threads());
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    range(count * t / team, count * (t + 1) / team);
  }
}

// Flattened (every call inlined, the same operations): the gyroscopic solve's calls per body and
// substep showed in the hinge chain's profile (docs/performance.md, issue 17, session 29).
PLIANT_FLATTEN void predictRange(const Model& model, const SolverSettings& settings, State& state, double h,
                                 std::size_t begin, std::size_t end) {
  for (std::size_t b = begin; b < end; ++b) {
    const RigidBody& body = model.bodies[b];
    if (state.bodyAsleep(b) || body.motion == BodyMotion::Kinematic) continue;  // sleeping: pose = previous pose
    state.bodyPreviousPosition[b] = state.bodyPosition[b];
    state.bodyPreviousRotation[b] = state.bodyRotation[b];
    if (!body.dynamic()) continue;
    Vec3& v = state.bodyVelocity[b];
    v += h * settings.gravity;
    state.bodyPosition[b] += h * v;
    Quat& q = state.bodyRotation[b];
    const Vec3 omegaBody = gyroscopicStep(q.conjugate() * state.bodyAngularVelocity[b], body.inertia,
                                          body.inverseInertia, h, settings.gyroscopic);
    const Vec3 omega = q * omegaBody;
    state.bodyAngularVelocity[b] = omega;
    q = rotateBy(q, omega, h, settings.quaternionUpdate);
  }
}

}  // namespace

void predictBodies(const Model& model, const SolverSettings& settings, State& state, double h, double substepEnd,
                   int threads) {
  overBodies(state, model.bodyCount(), threads,
             [&](std::size_t begin, std::size_t end) { predictRange(model, settings, state, h, begin, end); });
  // Kinematic bodies on this thread (their paths may be the user's functions).
  for (std::size_t b = 0; b < model.bodyCount(); ++b) {
    if (model.bodies[b].motion != BodyMotion::Kinematic || state.bodyAsleep(b)) continue;
    state.bodyPreviousPosition[b] = state.bodyPosition[b];
    state.bodyPreviousRotation[b] = state.bodyRotation[b];
    const ColliderPose pose = bodyPose(model, b, substepEnd);
    state.bodyPosition[b] = pose.position;
    state.bodyRotation[b] = pose.rotation;
  }
}

namespace {

// Flattened as predictRange (the rotation's angular velocity was a call per body and substep).
PLIANT_FLATTEN void velocityRange(const Model& model, const SolverSettings& settings, State& state, double h,
                                  double dampingFactor, std::size_t begin, std::size_t end) {
  const double invH = 1.0 / h;
  for (std::size_t b = begin; b < end; ++b) {
    const RigidBody& body = model.bodies[b];
    if (body.motion == BodyMotion::Static) {
      state.bodyVelocity[b].setZero();
      state.bodyAngularVelocity[b].setZero();
      continue;
    }
    if (state.bodyAsleep(b)) continue;  // at rest, velocities zero
    Vec3 v = (state.bodyPosition[b] - state.bodyPreviousPosition[b]) * invH;
    Vec3 omega =
        angularVelocityFromRotation(state.bodyRotation[b], state.bodyPreviousRotation[b], h, settings.quaternionUpdate);
    if (dampingFactor != 1.0 && body.dynamic()) {
      v *= dampingFactor;
      omega *= dampingFactor;
    }
    state.bodyVelocity[b] = v;
    state.bodyAngularVelocity[b] = omega;
  }
}

}  // namespace

void updateBodyVelocities(const Model& model, const SolverSettings& settings, State& state, double h,
                          double dampingFactor, int threads) {
  overBodies(state, model.bodyCount(), threads, [&](std::size_t begin, std::size_t end) {
    velocityRange(model, settings, state, h, dampingFactor, begin, end);
  });
}

}  // namespace pliant::detail
