#include "pliant/diagnostics.h"

#include <cmath>

#include "constraints/families.h"

namespace pliant {

namespace {

template <class Visit>
void forEachConstraint(const Model& model, Visit&& visit) {
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const auto family = static_cast<ConstraintFamily>(f);
    const auto count = static_cast<std::uint32_t>(model.constraintCount(family));
    for (std::uint32_t i = 0; i < count; ++i) visit(ConstraintRef{family, i});
  }
}

}  // namespace

double constraintValue(const Model& model, const State& state, ConstraintRef ref) {
  std::vector<ParticleIndex> particles;
  std::vector<Vec3> gradient;
  return detail::familyKernels(ref.family)
      .evaluate(model, state.position.data(), state.attachmentTarget.data(), ref.index, particles, gradient);
}

EnergyReport computeEnergy(const Model& model, const State& state, const SolverSettings& settings) {
  EnergyReport e;
  for (std::size_t i = 0; i < model.particleCount(); ++i) {
    if (model.inverseMass[i] == 0.0) continue;
    e.kinetic += 0.5 * model.mass[i] * state.velocity[i].squaredNorm();
    e.gravitational -= model.mass[i] * settings.gravity.dot(state.position[i]);
  }
  std::vector<ParticleIndex> particles;
  std::vector<Vec3> gradient;
  forEachConstraint(model, [&](ConstraintRef ref) {
    const double alpha = detail::constraintParameters(model, ref).compliance;
    if (alpha <= 0.0) return;
    const double C =
        detail::familyKernels(ref.family)
            .evaluate(model, state.position.data(), state.attachmentTarget.data(), ref.index, particles, gradient);
    if (detail::isUnilateral(model, ref) && C >= 0.0) return;
    e.elastic += 0.5 * C * C / alpha;
  });
  return e;
}

MomentumReport computeMomentum(const Model& model, const State& state, const std::vector<ParticleIndex>* particles) {
  MomentumReport r;
  auto add = [&](std::size_t i) {
    if (model.inverseMass[i] == 0.0) return;
    const double m = model.mass[i];
    r.mass += m;
    r.centreOfMass += m * state.position[i];
    r.linear += m * state.velocity[i];
    r.angular += state.position[i].cross(m * state.velocity[i]);
  };
  if (particles) {
    for (ParticleIndex p : *particles) add(p);
  } else {
    for (std::size_t i = 0; i < model.particleCount(); ++i) add(i);
  }
  if (r.mass > 0.0) r.centreOfMass /= r.mass;
  return r;
}

ResidualReport computeResidual(const Model& model, const State& state, const SolverSettings& settings) {
  ResidualReport r;
  const double h = state.lastSubstep > 0.0 ? state.lastSubstep : settings.timeStep / settings.substeps;
  const double invH2 = settings.mode == SolverMode::Xpbd ? 1.0 / (h * h) : 0.0;
  std::vector<ParticleIndex> particles;
  std::vector<Vec3> gradient;
  double sum2 = 0.0;
  forEachConstraint(model, [&](ConstraintRef ref) {
    const double C =
        detail::familyKernels(ref.family)
            .evaluate(model, state.position.data(), state.attachmentTarget.data(), ref.index, particles, gradient);
    const double lambda = state.lambda[model.lambdaIndex(ref)];
    double residual = C + detail::constraintParameters(model, ref).compliance * invH2 * lambda;
    if (detail::isUnilateral(model, ref) && C >= 0.0 && lambda == 0.0) residual = 0.0;
    residual = std::abs(residual);
    sum2 += residual * residual;
    ++r.count;
    if (residual > r.max || r.count == 1) {
      r.max = residual;
      r.worst = ref;
    }
  });
  r.rms = r.count ? std::sqrt(sum2 / static_cast<double>(r.count)) : 0.0;
  return r;
}

double constraintForce(const Model& model, const State& state, ConstraintRef ref) {
  const double h = state.lastSubstep;
  if (!(h > 0.0)) return 0.0;
  return state.lambda[model.lambdaIndex(ref)] / (h * h);
}

void constraintForceVectors(const Model& model, const State& state, ConstraintRef ref,
                            std::vector<ParticleIndex>& particles, std::vector<Vec3>& forces) {
  detail::familyKernels(ref.family)
      .evaluate(model, state.position.data(), state.attachmentTarget.data(), ref.index, particles, forces);
  const double f = constraintForce(model, state, ref);
  for (Vec3& v : forces) v *= f;
}

}  // namespace pliant
