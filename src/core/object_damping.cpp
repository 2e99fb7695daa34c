#include "object_damping.h"

#include <Eigen/Eigenvalues>
#include <algorithm>

namespace pliant::detail {

// Momentum-conserving damping of one object (seed 000): remove a fraction k of each particle's
// deviation from the object's rigid motion. Fixed and kinematic particles are not part of the
// rigid fit (their velocity is prescribed). A singular inertia tensor (collinear particles) is
// inverted on its range, which keeps L = I omega exact there.
void dampObject(const Model& model, const SimObject& object, State& state) {
  if (object.dampingFactor == 0.0) return;
  double totalMass = 0.0;
  Vec3 centre = Vec3::Zero();
  Vec3 momentum = Vec3::Zero();
  for (ParticleIndex p : object.particles) {
    if (model.inverseMass[p] == 0.0) continue;
    const double m = model.mass[p];
    totalMass += m;
    centre += m * state.position[p];
    momentum += m * state.velocity[p];
  }
  if (!(totalMass > 0.0)) return;
  centre /= totalMass;
  const Vec3 centreVelocity = momentum / totalMass;
  Vec3 angularMomentum = Vec3::Zero();
  Mat3 inertia = Mat3::Zero();
  for (ParticleIndex p : object.particles) {
    if (model.inverseMass[p] == 0.0) continue;
    const double m = model.mass[p];
    const Vec3 r = state.position[p] - centre;
    angularMomentum += r.cross(m * state.velocity[p]);
    inertia += m * (r.squaredNorm() * Mat3::Identity() - r * r.transpose());
  }
  Eigen::SelfAdjointEigenSolver<Mat3> eigen(inertia);
  const Vec3 values = eigen.eigenvalues();
  const double cutoff = 1e-12 * std::max(values.cwiseAbs().maxCoeff(), 1e-300);
  Vec3 inverted;
  for (int k = 0; k < 3; ++k) inverted[k] = values[k] > cutoff ? 1.0 / values[k] : 0.0;
  const Mat3& basis = eigen.eigenvectors();
  const Vec3 omega = basis * inverted.asDiagonal() * (basis.transpose() * angularMomentum);
  for (ParticleIndex p : object.particles) {
    if (model.inverseMass[p] == 0.0) continue;
    const Vec3 r = state.position[p] - centre;
    const Vec3 deviation = centreVelocity + omega.cross(r) - state.velocity[p];
    state.velocity[p] += object.dampingFactor * deviation;
  }
}

}  // namespace pliant::detail
