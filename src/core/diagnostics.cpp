#include "pliant/diagnostics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

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
  // f = lambda / h^2, the force of the last substep's solve; before any step there is none.
  const double h = state.lastSubstep;
  const bool forces = settings.mode == SolverMode::Xpbd;
  const double invH2 = forces && h > 0.0 ? 1.0 / (h * h) : 0.0;
  std::vector<ParticleIndex> particles;
  std::vector<Vec3> gradient;
  forEachConstraint(model, [&](ConstraintRef ref) {
    const double alpha = detail::constraintParameters(model, ref).compliance;
    if (alpha <= 0.0) return;
    // Neo-Hookean constraints hold energy at rest (C != 0 there); report it relative to rest, so
    // that an undeformed body stores none (the constant does not change the dynamics).
    double restEnergy = 0.0;
    if (ref.family == ConstraintFamily::NeoHookean) {
      const double restC = detail::neoHookeanRestValue(model, ref.index);
      restEnergy = 0.5 * restC * restC / alpha;
    }
    const double f = state.lambda[model.lambdaIndex(ref)] * invH2;
    if (invH2 > 0.0) e.elastic += 0.5 * alpha * f * f - restEnergy;
    const double C =
        detail::familyKernels(ref.family)
            .evaluate(model, state.position.data(), state.attachmentTarget.data(), ref.index, particles, gradient);
    if (detail::isUnilateral(model, ref) && C >= 0.0) return;
    e.elasticFromPositions += 0.5 * C * C / alpha - restEnergy;
  });
  if (!forces) e.elastic = e.elasticFromPositions;
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
  double compliantResidual2 = 0.0, compliantC2 = 0.0;  // over the acting compliant constraints
  double strain2 = 0.0;  // over the acting constraints (hard ones too) with two or more particles
  std::size_t strainCount = 0;
  forEachConstraint(model, [&](ConstraintRef ref) {
    const double C =
        detail::familyKernels(ref.family)
            .evaluate(model, state.position.data(), state.attachmentTarget.data(), ref.index, particles, gradient);
    const double lambda = state.lambda[model.lambdaIndex(ref)];
    const double alpha = detail::constraintParameters(model, ref).compliance;
    double residual = C + alpha * invH2 * lambda;
    const bool idle = detail::isUnilateral(model, ref) && C >= 0.0 && lambda == 0.0;
    if (idle) residual = 0.0;
    if (!idle && alpha > 0.0 && invH2 > 0.0) {
      // Weighted by 1/alpha: r^2/alpha and C^2/alpha are energies (J) in every family, so the
      // ratio mixes no units, and the stiff constraints, whose energy is misread most, weigh most.
      compliantResidual2 += residual * residual / alpha;
      compliantC2 += C * C / alpha;
    }
    if (!idle && invH2 > 0.0) {
      // The minimum-norm correction grad C r / |grad C|^2 (equal masses) moves a particle at most
      // |r| max|grad_i C| / sum |grad_i C|^2; the constraint's extent is the diagonal of the box
      // around its particles (the length, for a distance constraint).
      double gradientMax2 = 0.0, gradientSum2 = 0.0;
      Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
      for (std::size_t a = 0; a < particles.size(); ++a) {
        const double g2 = gradient[a].squaredNorm();
        gradientMax2 = std::max(gradientMax2, g2);
        gradientSum2 += g2;
        lo = lo.cwiseMin(state.position[particles[a]]);
        hi = hi.cwiseMax(state.position[particles[a]]);
      }
      const double halfExtent = particles.size() >= 2 ? 0.5 * (hi - lo).norm() : 0.0;
      if (halfExtent > 0.0 && gradientSum2 > 0.0) {
        const double move = std::abs(residual) * std::sqrt(gradientMax2) / gradientSum2;
        strain2 += (move / halfExtent) * (move / halfExtent);
        ++strainCount;
      }
    }
    residual = std::abs(residual);
    sum2 += residual * residual;
    ++r.count;
    if (residual > r.max || r.count == 1) {
      r.max = residual;
      r.worst = ref;
    }
  });
  r.rms = r.count ? std::sqrt(sum2 / static_cast<double>(r.count)) : 0.0;
  r.relative = compliantC2 > 0.0 ? std::sqrt(compliantResidual2 / compliantC2) : 0.0;
  r.strain = strainCount ? std::sqrt(strain2 / static_cast<double>(strainCount)) : 0.0;
  return r;
}

bool farFromConverged(const ResidualReport& residual) { return residual.strain > kFarFromConvergedStrain; }

std::string convergenceWarning(const ResidualReport& residual, const SolverSettings& settings) {
  if (!farFromConverged(residual)) return {};
  std::ostringstream out;
  out.precision(2);
  out << "the constraint solve is far from converged: the shapes are off by " << 100.0 * residual.strain
      << " % of their size from what the constraints and their compliance ask (RMS of the residual |C + alpha~ "
         "lambda| as a move, warned above "
      << 100.0 * kFarFromConvergedStrain << " %; relative residual " << residual.relative
      << ", converged near 0), so the objects deform more than their compliance says and the elastic energy "
         "reported is what the applied forces store; increase substeps (now "
      << settings.substeps << ", the most effective) or iterations (now " << settings.iterations
      << "), or use a larger compliance";
  return out.str();
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
