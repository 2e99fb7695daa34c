// User constraints: the user's function supplies C and its gradient (seed 004's general solve);
// the shared multiplier update does the rest. Positions and gradients go through a scratch buffer
// sized when the solver is built, so a step allocates nothing here either.
#include <cmath>
#include <exception>
#include <limits>
#include <span>
#include <string>

#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {

// The user's function must not throw through the solver (it may run inside an OpenMP region, where
// an exception ends the program): its exception becomes a NaN value, which refuses the step, and
// its message is kept for the refusal.
double callUserFunction(const Model& model, const GenericConstraint& con, std::span<const Vec3> positions,
                        std::span<Vec3> gradient, std::string* error) {
  try {
    return model.genericFunctions[con.function](positions, gradient);
  } catch (const std::exception& e) {
    if (error && error->empty()) *error = e.what();
  } catch (...) {
    if (error && error->empty()) *error = "an exception that is not a std::exception";
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

void projectGeneric(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  Vec3* scratch = ctx.scratch->data();
  for (std::uint32_t c = begin; c < end; ++c) {
    const GenericConstraint& con = model.generics[c];
    const std::uint32_t n = con.particleCount;
    const ParticleIndex* particles = model.genericParticles.data() + con.firstParticle;
    Vec3* positions = scratch;
    Vec3* gradient = scratch + n;
    for (std::uint32_t i = 0; i < n; ++i) {
      positions[i] = x[particles[i]];
      gradient[i].setZero();
    }
    const double C = callUserFunction(model, con, std::span<const Vec3>(positions, n), std::span<Vec3>(gradient, n),
                                      ctx.userFunctionError);
    double wSum = 0.0;
    for (std::uint32_t i = 0; i < n; ++i) wSum += w[particles[i]] * gradient[i].squaredNorm();
    // A non-finite value or gradient from the user's function must not vanish in a zero
    // denominator: poison the constraint's particles so the step check refuses the step and the
    // replay names this constraint.
    if (!std::isfinite(C) || !std::isfinite(wSum)) {
      for (std::uint32_t i = 0; i < n; ++i)
        if (w[particles[i]] != 0.0) x[particles[i]].setConstant(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    const double dLambda = solveMultiplier(C, wSum, static_cast<int>(n), gradient, particles, con.params, ctx.lambda[c],
                                           con.inequality, ctx);
    for (std::uint32_t i = 0; i < n; ++i) x[particles[i]] += (w[particles[i]] * dLambda) * gradient[i];
  }
}

double evaluateGeneric(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                       std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const GenericConstraint& con = model.generics[i];
  const ParticleIndex* indices = model.genericParticles.data() + con.firstParticle;
  particles.assign(indices, indices + con.particleCount);
  std::vector<Vec3> positions(con.particleCount);
  for (std::uint32_t k = 0; k < con.particleCount; ++k) positions[k] = x[indices[k]];
  gradient.assign(con.particleCount, Vec3::Zero());
  return callUserFunction(model, con, positions, gradient, nullptr);
}

namespace {
void validateGenerics(const Model& model) {
  for (std::size_t i = 0; i < model.generics.size(); ++i) {
    const auto& c = model.generics[i];
    const std::string where = describe("generic constraint", i);
    checkParameters(c.params, where);
    if (c.function >= model.genericFunctions.size() || !model.genericFunctions[c.function])
      throw Error(where + ": function " + std::to_string(c.function) + " does not exist");
    if (c.particleCount == 0) throw Error(where + ": needs at least one particle");
    if (c.firstParticle + std::size_t(c.particleCount) > model.genericParticles.size())
      throw Error(where + ": particle range out of bounds");
    for (std::uint32_t k = 0; k < c.particleCount; ++k)
      checkIndex(model.genericParticles[c.firstParticle + k], model.particleCount(), where);
  }
}
bool genericUnilateral(const Model& model, std::uint32_t i) { return model.generics[i].inequality; }
}  // namespace

const FamilyKernels kGenericKernels = {projectGeneric, projectGeneric,    evaluateGeneric,
                                       nullptr,        genericUnilateral, validateGenerics};

}  // namespace pliant::detail
