// User constraints: the user's function supplies C and its gradient (seed 004's general solve);
// the shared multiplier update does the rest. Positions and gradients go through a scratch buffer
// sized when the solver is built, so a step allocates nothing here either.
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <span>
#include <string>

#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {

const GenericBatchFunction* batchFunction(const Model& model, const GenericConstraint& con) {
  if (con.function >= model.genericBatchFunctions.size() || !model.genericBatchFunctions[con.function]) return nullptr;
  return &model.genericBatchFunctions[con.function];
}

// The user's function must not throw through the solver (it may run inside an OpenMP region, where
// an exception ends the program): its exception becomes a NaN value, which refuses the step, and
// its message is kept for the refusal.
void keepError(std::string* error, const char* what) {
  if (error && error->empty()) *error = what;
}

double callUserFunction(const Model& model, std::uint32_t c, std::span<const Vec3> positions, std::span<Vec3> gradient,
                        std::string* error) {
  const GenericConstraint& con = model.generics[c];
  try {
    if (const GenericBatchFunction* batch = batchFunction(model, con)) {
      double value = std::numeric_limits<double>::quiet_NaN();
      (*batch)(c, positions, std::span<double>(&value, 1), gradient);
      return value;
    }
    return model.genericFunctions[con.function](positions, gradient);
  } catch (const std::exception& e) {
    keepError(error, e.what());
  } catch (...) {
    keepError(error, "an exception that is not a std::exception");
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Evaluates the group [c, end) of one batch function with one call into `values` and `gradient`
// (positions gathered into `positions`); a throw makes every value NaN.
void callBatchFunction(const Model& model, const GenericBatchFunction& batch, std::uint32_t c, std::uint32_t end,
                       const Vec3* x, Vec3* positions, Vec3* gradient, double* values, std::string* error) {
  const std::uint32_t arity = model.generics[c].particleCount;
  const std::size_t count = end - c;
  for (std::uint32_t k = c; k < end; ++k) {
    const ParticleIndex* particles = model.genericParticles.data() + model.generics[k].firstParticle;
    for (std::uint32_t i = 0; i < arity; ++i) {
      positions[(k - c) * arity + i] = x[particles[i]];
      gradient[(k - c) * arity + i].setZero();
    }
  }
  std::fill(values, values + count, std::numeric_limits<double>::quiet_NaN());
  try {
    batch(c, std::span<const Vec3>(positions, count * arity), std::span<double>(values, count),
          std::span<Vec3>(gradient, count * arity));
    return;
  } catch (const std::exception& e) {
    keepError(error, e.what());
  } catch (...) {
    keepError(error, "an exception that is not a std::exception");
  }
  std::fill(values, values + count, std::numeric_limits<double>::quiet_NaN());
}

// The multiplier update of one user constraint from its value and gradient.
void applyGeneric(const Model& model, const SolveContext& ctx, std::uint32_t c, double C, Vec3* gradient) {
  const GenericConstraint& con = model.generics[c];
  const std::uint32_t n = con.particleCount;
  const ParticleIndex* particles = model.genericParticles.data() + con.firstParticle;
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  double wSum = 0.0;
  for (std::uint32_t i = 0; i < n; ++i) wSum += w[particles[i]] * gradient[i].squaredNorm();
  // A non-finite value or gradient from the user's function must not vanish in a zero
  // denominator: poison the constraint's particles so the step check refuses the step and the
  // replay names this constraint.
  if (!std::isfinite(C) || !std::isfinite(wSum)) {
    for (std::uint32_t i = 0; i < n; ++i)
      if (w[particles[i]] != 0.0) x[particles[i]].setConstant(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  const double dLambda = solveMultiplier(C, wSum, static_cast<int>(n), gradient, particles, con.params, ctx.lambda[c],
                                         con.inequality, ctx);
  for (std::uint32_t i = 0; i < n; ++i) x[particles[i]] += (w[particles[i]] * dLambda) * gradient[i];
}

}  // namespace

// Per-constraint functions are called just before their constraint is projected; a batch
// function once per group (or the part of it in [begin, end)), whose constraints are then projected
// in order from the values and gradients of that call.
void projectGeneric(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  Vec3* scratch = ctx.scratch->data();
  for (std::uint32_t c = begin; c < end;) {
    const GenericConstraint& con = model.generics[c];
    const std::uint32_t n = con.particleCount;
    if (const GenericBatchFunction* batch = batchFunction(model, con)) {
      const std::uint32_t groupEnd = std::min(end, con.batchEnd);
      const std::size_t values = groupEnd - c;
      Vec3* positions = scratch;
      Vec3* gradient = scratch + values * n;
      callBatchFunction(model, *batch, c, groupEnd, ctx.x, positions, gradient, ctx.values->data(),
                        ctx.userFunctionError);
      for (std::uint32_t k = c; k < groupEnd; ++k)
        applyGeneric(model, ctx, k, (*ctx.values)[k - c], gradient + (k - c) * n);
      c = groupEnd;
      continue;
    }
    const ParticleIndex* particles = model.genericParticles.data() + con.firstParticle;
    Vec3* positions = scratch;
    Vec3* gradient = scratch + n;
    for (std::uint32_t i = 0; i < n; ++i) {
      positions[i] = ctx.x[particles[i]];
      gradient[i].setZero();
    }
    const double C = callUserFunction(model, c, std::span<const Vec3>(positions, n), std::span<Vec3>(gradient, n),
                                      ctx.userFunctionError);
    applyGeneric(model, ctx, c, C, gradient);
    ++c;
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
  return callUserFunction(model, i, positions, gradient, nullptr);
}

namespace {
void validateGenerics(const Model& model) {
  for (std::size_t i = 0; i < model.generics.size(); ++i) {
    const auto& c = model.generics[i];
    const std::string where = describe("generic constraint", i);
    checkParameters(c.params, where);
    const bool batch = batchFunction(model, c) != nullptr;
    if (c.function >= model.genericFunctions.size() || (!batch && !model.genericFunctions[c.function]))
      throw Error(where + ": function " + std::to_string(c.function) + " does not exist");
    if (batch && model.genericFunctions[c.function])
      throw Error(where + ": function " + std::to_string(c.function) + " has both a per-constraint and a batch form");
    if (c.particleCount == 0) throw Error(where + ": needs at least one particle");
    if (c.firstParticle + std::size_t(c.particleCount) > model.genericParticles.size())
      throw Error(where + ": particle range out of bounds");
    for (std::uint32_t k = 0; k < c.particleCount; ++k)
      checkIndex(model.genericParticles[c.firstParticle + k], model.particleCount(), where);
  }
  // Batch groups: consecutive, one function and particle count each, no particle shared within one.
  std::vector<std::size_t> groupOf(model.particleCount(), ~std::size_t{0});
  for (std::size_t i = 0; i < model.generics.size();) {
    const auto& first = model.generics[i];
    if (!batchFunction(model, first)) {
      ++i;
      continue;
    }
    const std::string where = describe("generic constraint", i);
    if (first.batchEnd <= i || first.batchEnd > model.generics.size())
      throw Error(where + ": batch group end " + std::to_string(first.batchEnd) + " out of range (" +
                  std::to_string(i + 1) + " to " + std::to_string(model.generics.size()) + ")");
    for (std::size_t k = i; k < first.batchEnd; ++k) {
      const auto& c = model.generics[k];
      const std::string at = describe("generic constraint", k);
      if (c.function != first.function || c.particleCount != first.particleCount || c.batchEnd != first.batchEnd)
        throw Error(at + ": differs in function, particle count or group end from the first of its batch group (" +
                    std::to_string(i) + ")");
      for (std::uint32_t p = 0; p < c.particleCount; ++p) {
        const ParticleIndex particle = model.genericParticles[c.firstParticle + p];
        // Marked after each constraint: a particle repeated within one constraint is allowed.
        if (groupOf[particle] == i)
          throw Error(at + ": shares particle " + std::to_string(particle) +
                      " with another constraint of its batch group (from " + std::to_string(i) + ")");
      }
      for (std::uint32_t p = 0; p < c.particleCount; ++p) groupOf[model.genericParticles[c.firstParticle + p]] = i;
    }
    i = first.batchEnd;
  }
}
bool genericUnilateral(const Model& model, std::uint32_t i) { return model.generics[i].inequality; }
}  // namespace

const FamilyKernels kGenericKernels = {projectGeneric, projectGeneric,    evaluateGeneric,
                                       nullptr,        genericUnilateral, validateGenerics};

}  // namespace pliant::detail
