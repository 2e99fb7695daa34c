// ModelBuilder: every add* validates its arguments, build() the whole model.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "constraints/families.h"
#include "pliant/error.h"
#include "pliant/model.h"
#include "solve_plan.h"
#include "validation.h"

namespace pliant {

using detail::checkCollider;
using detail::checkFinite;
using detail::checkIndex;
using detail::checkLength;
using detail::checkMaterial;
using detail::checkParameters;
using detail::describe;

ParticleIndex ModelBuilder::addParticle(const Vec3& position, double mass, const Vec3& velocity) {
  const std::size_t index = model_.particleCount();
  const std::string where = describe("particle", index);
  checkFinite(position, where + " position");
  checkFinite(velocity, where + " velocity");
  if (std::isnan(mass) || mass < 0.0)
    throw Error(where + ": mass must be >= 0 kg (0 or infinity = fixed), got " + std::to_string(mass));
  model_.initialPosition.push_back(position);
  model_.initialVelocity.push_back(velocity);
  const bool fixed = mass == 0.0 || std::isinf(mass);
  model_.mass.push_back(std::isinf(mass) ? 0.0 : mass);
  model_.inverseMass.push_back(fixed ? 0.0 : 1.0 / mass);
  if (model_.particleRadius.size() + 1 == model_.inverseMass.size()) model_.particleRadius.push_back(0.0);
  return static_cast<ParticleIndex>(index);
}

void ModelBuilder::checkParticle(ParticleIndex particle, const char* what) const {
  checkIndex(particle, model_.particleCount(), what);
}

const Vec3& ModelBuilder::position(ParticleIndex particle) const {
  checkParticle(particle, "position");
  return model_.initialPosition[particle];
}

void ModelBuilder::fixParticle(ParticleIndex particle) {
  checkParticle(particle, "fixParticle");
  model_.inverseMass[particle] = 0.0;
  model_.initialVelocity[particle].setZero();
}

void ModelBuilder::addKinematic(ParticleIndex particle, PathFunction path) {
  checkParticle(particle, "addKinematic");
  if (!path) throw Error("addKinematic: path is empty");
  model_.inverseMass[particle] = 0.0;
  model_.kinematicParticles.push_back({particle, std::move(path)});
}

std::uint32_t ModelBuilder::addDistance(ParticleIndex a, ParticleIndex b, const ConstraintParameters& params,
                                        double restLength) {
  const std::string where = describe("distance constraint", model_.distances.size());
  checkIndex(a, particleCount(), where);
  checkIndex(b, particleCount(), where);
  checkParameters(params, where);
  if (restLength < 0.0) restLength = (position(a) - position(b)).norm();
  checkLength(restLength, where, "rest length");
  model_.distances.push_back({{a, b}, restLength, params});
  return static_cast<std::uint32_t>(model_.distances.size() - 1);
}

std::uint32_t ModelBuilder::addMaxDistance(ParticleIndex a, ParticleIndex b, const ConstraintParameters& params,
                                           double maxLength) {
  const std::string where = describe("max-distance constraint", model_.maxDistances.size());
  checkIndex(a, particleCount(), where);
  checkIndex(b, particleCount(), where);
  checkParameters(params, where);
  if (maxLength < 0.0) maxLength = (position(a) - position(b)).norm();
  checkLength(maxLength, where, "maximum length");
  model_.maxDistances.push_back({{a, b}, maxLength, params});
  return static_cast<std::uint32_t>(model_.maxDistances.size() - 1);
}

std::uint32_t ModelBuilder::addAttachment(ParticleIndex particle, const Vec3& target,
                                          const ConstraintParameters& params, double restDistance) {
  const std::string where = describe("attachment", model_.attachments.size());
  checkIndex(particle, particleCount(), where);
  checkFinite(target, where + " target");
  checkParameters(params, where);
  checkLength(restDistance, where, "rest distance");
  model_.attachments.push_back({particle, target, -1, restDistance, params});
  return static_cast<std::uint32_t>(model_.attachments.size() - 1);
}

std::uint32_t ModelBuilder::addMovingAttachment(ParticleIndex particle, PathFunction targetPath,
                                                const ConstraintParameters& params, double restDistance) {
  if (!targetPath) throw Error("addMovingAttachment: target path is empty");
  const Vec3 start = targetPath(0.0);
  const std::uint32_t index = addAttachment(particle, start, params, restDistance);
  model_.attachmentPaths.push_back(std::move(targetPath));
  model_.attachments[index].targetPath = static_cast<std::int32_t>(model_.attachmentPaths.size() - 1);
  return index;
}

std::uint32_t ModelBuilder::addDihedralBending(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2, ParticleIndex p3,
                                               const ConstraintParameters& params, double restAngle) {
  const std::string where = describe("dihedral bending constraint", model_.dihedralBendings.size());
  for (ParticleIndex p : {p0, p1, p2, p3}) checkIndex(p, particleCount(), where);
  checkParameters(params, where);
  if (std::isnan(restAngle)) restAngle = detail::dihedralAngle(position(p0), position(p1), position(p2), position(p3));
  if (!std::isfinite(restAngle)) throw Error(where + ": rest angle must be finite");
  model_.dihedralBendings.push_back({{p0, p1, p2, p3}, restAngle, params});
  return static_cast<std::uint32_t>(model_.dihedralBendings.size() - 1);
}

std::uint32_t ModelBuilder::addIsometricBending(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2, ParticleIndex p3,
                                                const ConstraintParameters& params) {
  const std::string where = describe("isometric bending constraint", model_.isometricBendings.size());
  for (ParticleIndex p : {p0, p1, p2, p3}) checkIndex(p, particleCount(), where);
  checkParameters(params, where);
  IsometricBendingConstraint c;
  c.particles[0] = p0;
  c.particles[1] = p1;
  c.particles[2] = p2;
  c.particles[3] = p3;
  c.params = params;
  if (!detail::isometricBendingWeights(position(p0), position(p1), position(p2), position(p3), c.weights))
    throw Error(where + ": degenerate stencil (a triangle of zero area)");
  model_.isometricBendings.push_back(c);
  return static_cast<std::uint32_t>(model_.isometricBendings.size() - 1);
}

std::uint32_t ModelBuilder::addTetVolume(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2, ParticleIndex p3,
                                         const ConstraintParameters& params) {
  const std::string where = describe("tet volume constraint", model_.tetVolumes.size());
  for (ParticleIndex p : {p0, p1, p2, p3}) checkIndex(p, particleCount(), where);
  checkParameters(params, where);
  const double volume = detail::signedTetVolume(position(p0), position(p1), position(p2), position(p3));
  // A rest volume of zero (coincident or coplanar corners) is a broken mesh, not a material.
  const double edge = std::max({(position(p1) - position(p0)).norm(), (position(p2) - position(p0)).norm(),
                                (position(p3) - position(p0)).norm()});
  if (!(std::abs(volume) > 1e-12 * edge * edge * edge))
    throw Error(where + ": degenerate tetrahedron (rest volume " + std::to_string(volume) + " m^3)");
  model_.tetVolumes.push_back({{p0, p1, p2, p3}, volume, params});
  return static_cast<std::uint32_t>(model_.tetVolumes.size() - 1);
}

std::uint32_t ModelBuilder::addNeoHookeanTet(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2, ParticleIndex p3,
                                             const NeoHookeanMaterial& material) {
  const std::string where = describe("neo-Hookean tet", model_.neoHookeans.size());
  for (ParticleIndex p : {p0, p1, p2, p3}) checkIndex(p, particleCount(), where);
  const double E = material.youngsModulus, nu = material.poissonRatio;
  if (!(E > 0.0) || !std::isfinite(E))
    throw Error(where + ": Young's modulus must be a finite number > 0 Pa, got " + formatNumber(E));
  // nu = 0.5 is incompressible: lambda and the hydrostatic stiffness would be infinite.
  if (!(nu > -1.0 && nu < 0.5)) throw Error(where + ": Poisson's ratio must be in (-1, 0.5), got " + formatNumber(nu));
  if (!(material.damping >= 0.0) || !std::isfinite(material.damping))
    throw Error(where + ": damping must be a finite time >= 0 s, got " + formatNumber(material.damping));
  Mat3 ds;
  ds.col(0) = position(p1) - position(p0);
  ds.col(1) = position(p2) - position(p0);
  ds.col(2) = position(p3) - position(p0);
  const double volume = std::abs(ds.determinant()) / 6.0;
  const double edge = ds.colwise().norm().maxCoeff();
  if (!(volume > 1e-12 * edge * edge * edge))
    throw Error(where + ": degenerate tetrahedron (rest volume " + formatNumber(volume) + " m^3)");
  const double mu = material.lameMu();
  // The paper's lambda: Lame's plus mu, so that small strains give back E and nu (validation V15).
  const double lambda = material.lameLambda() + mu;
  NeoHookeanConstraint c;
  c.particles[0] = p0;
  c.particles[1] = p1;
  c.particles[2] = p2;
  c.particles[3] = p3;
  c.restInverse = ds.inverse();
  c.restVolume = volume;
  c.gamma = 1.0 + mu / lambda;
  c.deviatoric.compliance = 1.0 / (mu * volume);
  c.hydrostatic.compliance = 1.0 / (lambda * volume);
  // Kelvin-Voigt: gamma_XPBD = alpha beta / h = damping / h on both constraints.
  c.deviatoric.damping = material.damping / c.deviatoric.compliance;
  c.hydrostatic.damping = material.damping / c.hydrostatic.compliance;
  c.coupled = material.coupled;
  if (!c.restInverse.allFinite() || !std::isfinite(c.deviatoric.compliance) ||
      !std::isfinite(c.hydrostatic.compliance) || !std::isfinite(c.deviatoric.damping) ||
      !std::isfinite(c.hydrostatic.damping))
    throw Error(where + ": the material and rest volume give a compliance or damping out of range (E " +
                formatNumber(E) + " Pa, rest volume " + formatNumber(volume) + " m^3)");
  model_.neoHookeans.push_back(c);
  return static_cast<std::uint32_t>(model_.neoHookeans.size() - 1);
}

std::uint32_t ModelBuilder::addShapeMatchingCluster(std::span<const ParticleIndex> particles,
                                                    const ShapeMatchingSettings& settings) {
  const std::string where = describe("shape matching cluster", model_.shapeMatchings.size());
  checkParameters(settings.params, where);
  if (settings.mode != ShapeMatchingMode::Rigid && settings.mode != ShapeMatchingMode::Linear)
    throw Error(where + ": mode must be rigid or linear");
  if (!(settings.beta >= 0.0 && settings.beta <= 1.0))
    throw Error(where + ": beta must be in [0, 1], got " + formatNumber(settings.beta));
  if (particles.size() < 2)
    throw Error(where + ": needs at least 2 particles, got " + std::to_string(particles.size()));
  if (particles.size() > std::numeric_limits<std::uint32_t>::max()) throw Error(where + ": too many particles");
  for (ParticleIndex p : particles) checkIndex(p, particleCount(), where);
  std::vector<ParticleIndex> sorted(particles.begin(), particles.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw Error(where + ": particle " + std::to_string(*std::adjacent_find(sorted.begin(), sorted.end())) +
                " is listed twice");
  // Fit weights: the masses; a particle of mass 0 (fixed) weighs as the mean of the others.
  std::vector<double> weights(particles.size());
  double massSum = 0.0;
  std::size_t massive = 0;
  for (std::size_t i = 0; i < particles.size(); ++i) {
    weights[i] = model_.mass[particles[i]];
    if (weights[i] > 0.0) {
      massSum += weights[i];
      ++massive;
    }
  }
  const double meanMass = massive > 0 ? massSum / static_cast<double>(massive) : 1.0;
  for (double& m : weights)
    if (!(m > 0.0)) m = meanMass;
  ShapeMatchingConstraint c;
  c.firstMember = static_cast<std::uint32_t>(model_.shapeMatchingParticles.size());
  c.memberCount = static_cast<std::uint32_t>(particles.size());
  c.mode = settings.mode;
  c.beta = settings.mode == ShapeMatchingMode::Linear ? settings.beta : 0.0;
  c.preserveVolume = settings.preserveVolume;
  c.params = settings.params;
  std::vector<Vec3> offsets(particles.size());
  detail::shapeMatchingRestShape(model_.initialPosition.data(), particles.data(), weights.data(), c, offsets.data());
  if (!c.restInverse.allFinite() || !(c.totalWeight > 0.0) || !std::isfinite(c.totalWeight))
    throw Error(where + ": the rest shape gives non-finite matrices (coordinates or masses out of range)");
  model_.shapeMatchingParticles.insert(model_.shapeMatchingParticles.end(), particles.begin(), particles.end());
  model_.shapeMatchingRestOffsets.insert(model_.shapeMatchingRestOffsets.end(), offsets.begin(), offsets.end());
  model_.shapeMatchingWeights.insert(model_.shapeMatchingWeights.end(), weights.begin(), weights.end());
  model_.shapeMatchings.push_back(c);
  return static_cast<std::uint32_t>(model_.shapeMatchings.size() - 1);
}

std::uint32_t ModelBuilder::addGlobalVolume(std::span<const std::array<ParticleIndex, 3>> triangles, double pressure,
                                            const ConstraintParameters& params) {
  const std::string where = describe("global volume constraint", model_.globalVolumes.size());
  checkParameters(params, where);
  if (triangles.empty()) throw Error(where + ": needs at least one triangle");
  if (!std::isfinite(pressure) || pressure < 0.0) throw Error(where + ": pressure must be >= 0");
  GlobalVolumeConstraint c;
  c.firstTriangle = static_cast<std::uint32_t>(model_.volumeTriangles.size());
  c.triangleCount = static_cast<std::uint32_t>(triangles.size());
  c.firstVertex = static_cast<std::uint32_t>(model_.volumeVertices.size());
  std::vector<ParticleIndex> vertices;
  for (const auto& t : triangles)
    for (ParticleIndex p : t) {
      checkIndex(p, particleCount(), where);
      vertices.push_back(p);
    }
  std::sort(vertices.begin(), vertices.end());
  vertices.erase(std::unique(vertices.begin(), vertices.end()), vertices.end());
  c.vertexCount = static_cast<std::uint32_t>(vertices.size());
  for (const auto& t : triangles) {
    std::array<std::uint32_t, 3> local{};
    for (int k = 0; k < 3; ++k)
      local[k] =
          static_cast<std::uint32_t>(std::lower_bound(vertices.begin(), vertices.end(), t[k]) - vertices.begin());
    model_.volumeTriangles.push_back(local);
  }
  model_.volumeVertices.insert(model_.volumeVertices.end(), vertices.begin(), vertices.end());
  c.pressure = pressure;
  c.params = params;
  model_.globalVolumes.push_back(c);
  const std::uint32_t index = static_cast<std::uint32_t>(model_.globalVolumes.size() - 1);
  model_.globalVolumes[index].restVolume = detail::closedMeshVolume(model_, index, model_.initialPosition.data());
  return index;
}

std::uint32_t ModelBuilder::addGenericFunction(GenericConstraintFunction function) {
  if (!function) throw Error("addGenericFunction: function is empty");
  model_.genericFunctions.push_back(std::move(function));
  return static_cast<std::uint32_t>(model_.genericFunctions.size() - 1);
}

std::uint32_t ModelBuilder::addGeneric(std::uint32_t function, std::span<const ParticleIndex> particles,
                                       bool inequality, const ConstraintParameters& params) {
  const std::string where = describe("generic constraint", model_.generics.size());
  if (function >= model_.genericFunctions.size())
    throw Error(where + ": function " + std::to_string(function) + " does not exist");
  if (particles.empty()) throw Error(where + ": needs at least one particle");
  for (ParticleIndex p : particles) checkIndex(p, particleCount(), where);
  checkParameters(params, where);
  GenericConstraint c;
  c.function = function;
  c.firstParticle = static_cast<std::uint32_t>(model_.genericParticles.size());
  c.particleCount = static_cast<std::uint32_t>(particles.size());
  c.inequality = inequality;
  c.params = params;
  // A batch function's constraint added on its own is a group of one.
  const bool batch = function < model_.genericBatchFunctions.size() && model_.genericBatchFunctions[function];
  if (batch) c.batchEnd = static_cast<std::uint32_t>(model_.generics.size() + 1);
  model_.genericParticles.insert(model_.genericParticles.end(), particles.begin(), particles.end());
  model_.generics.push_back(c);
  return static_cast<std::uint32_t>(model_.generics.size() - 1);
}

std::uint32_t ModelBuilder::addGeneric(GenericConstraintFunction function, std::span<const ParticleIndex> particles,
                                       bool inequality, const ConstraintParameters& params) {
  return addGeneric(addGenericFunction(std::move(function)), particles, inequality, params);
}

std::uint32_t ModelBuilder::addGenericBatchFunction(GenericBatchFunction function) {
  if (!function) throw Error("addGenericBatchFunction: function is empty");
  model_.genericFunctions.emplace_back();
  model_.genericBatchFunctions.resize(model_.genericFunctions.size());
  model_.genericBatchFunctions.back() = std::move(function);
  return static_cast<std::uint32_t>(model_.genericFunctions.size() - 1);
}

std::vector<std::uint32_t> ModelBuilder::addGenericBatch(std::uint32_t function,
                                                         std::span<const ParticleIndex> particles, std::uint32_t arity,
                                                         bool inequality, const ConstraintParameters& params) {
  const std::size_t first = model_.generics.size();
  const std::string where = "generic constraints from " + std::to_string(first);
  if (function >= model_.genericBatchFunctions.size() || !model_.genericBatchFunctions[function])
    throw Error(where + ": function " + std::to_string(function) + " is not a batch function");
  if (arity == 0) throw Error(where + ": arity must be >= 1 particle per constraint");
  if (particles.size() % arity != 0)
    throw Error(where + ": " + std::to_string(particles.size()) + " particle indices are not a whole number of " +
                std::to_string(arity) + "-particle constraints");
  for (std::size_t k = 0; k < particles.size(); ++k)
    checkIndex(particles[k], particleCount(), describe("generic constraint", first + k / arity));
  checkParameters(params, where);
  const std::size_t count = particles.size() / arity;
  if (first + count > std::numeric_limits<std::uint32_t>::max())
    throw Error(where + ": too many constraints (" + std::to_string(count) + ")");
  // Greedy colouring: each constraint takes the first group none of its particles is in yet.
  // `groupsOf[p]` lists the groups particle p is in, in increasing order.
  std::vector<std::vector<std::uint32_t>> groupsOf(particleCount());
  std::vector<std::uint32_t> groupOf(count);
  std::vector<std::uint32_t> groupSize;
  for (std::size_t k = 0; k < count; ++k) {
    const ParticleIndex* stencil = particles.data() + k * arity;
    std::uint32_t group = 0;
    for (bool taken = true; taken;) {
      taken = false;
      for (std::uint32_t i = 0; i < arity && !taken; ++i) {
        const auto& groups = groupsOf[stencil[i]];
        taken = std::binary_search(groups.begin(), groups.end(), group);
      }
      if (taken) ++group;
    }
    groupOf[k] = group;
    if (group == groupSize.size()) groupSize.push_back(0);
    ++groupSize[group];
    for (std::uint32_t i = 0; i < arity; ++i) {
      auto& groups = groupsOf[stencil[i]];
      groups.insert(std::lower_bound(groups.begin(), groups.end(), group), group);
    }
  }
  // Group g occupies [groupStart[g], groupStart[g + 1]) after `first`.
  std::vector<std::uint32_t> groupStart(groupSize.size() + 1, 0);
  for (std::size_t g = 0; g < groupSize.size(); ++g) groupStart[g + 1] = groupStart[g] + groupSize[g];
  std::vector<std::uint32_t> result(count);
  std::vector<std::uint32_t> next(groupStart.begin(), groupStart.end() - 1);
  for (std::size_t k = 0; k < count; ++k) result[k] = static_cast<std::uint32_t>(first + next[groupOf[k]]++);
  std::vector<std::uint32_t> constraintOf(count);  // inverse of result, relative to `first`
  for (std::size_t k = 0; k < count; ++k) constraintOf[result[k] - first] = static_cast<std::uint32_t>(k);
  model_.generics.reserve(first + count);
  model_.genericParticles.reserve(model_.genericParticles.size() + particles.size());
  for (std::size_t g = 0; g < groupSize.size(); ++g)
    for (std::uint32_t slot = groupStart[g]; slot < groupStart[g + 1]; ++slot) {
      const std::uint32_t k = constraintOf[slot];
      GenericConstraint c;
      c.function = function;
      c.firstParticle = static_cast<std::uint32_t>(model_.genericParticles.size());
      c.particleCount = arity;
      c.inequality = inequality;
      c.params = params;
      c.batchEnd = static_cast<std::uint32_t>(first + groupStart[g + 1]);
      model_.genericParticles.insert(model_.genericParticles.end(), particles.begin() + k * arity,
                                     particles.begin() + (k + 1) * arity);
      model_.generics.push_back(c);
    }
  return result;
}

void ModelBuilder::setParticleRadius(ParticleIndex particle, double radius) {
  const std::string where = describe("particle", particle);
  checkIndex(particle, particleCount(), "setParticleRadius");
  if (!std::isfinite(radius) || radius < 0.0)
    throw Error(where + ": radius must be a finite number >= 0 m, got " + formatNumber(radius));
  if (model_.particleRadius.size() != particleCount()) model_.particleRadius.assign(particleCount(), 0.0);
  model_.particleRadius[particle] = radius;
}

void ModelBuilder::setParticleRadius(ParticleIndex first, std::uint32_t count, double radius) {
  if (count == 0) return;
  const std::uint64_t end = std::uint64_t{first} + count;
  if (end > particleCount())
    throw Error("setParticleRadius: particles " + std::to_string(first) + " to " + std::to_string(end - 1) +
                " out of range (model has " + std::to_string(particleCount()) + " particles)");
  setParticleRadius(first, radius);  // validates the radius, naming the first particle
  std::fill(model_.particleRadius.begin() + first, model_.particleRadius.begin() + static_cast<std::ptrdiff_t>(end),
            radius);
}

std::uint32_t ModelBuilder::addCollider(const Collider& collider, PathFunction path, RotationFunction rotationPath) {
  const std::string where = describe("collider", model_.colliders.size());
  Collider c = collider;
  c.path = -1;
  c.rotationPath = -1;
  // The pose at time 0 is validated like a static one; later poses are the caller's promise.
  if (path) c.pose.position = path(0.0);
  if (rotationPath) c.pose.rotation = rotationPath(0.0);
  checkCollider(c, where);
  if (path) {
    model_.colliderPaths.push_back(std::move(path));
    c.path = static_cast<std::int32_t>(model_.colliderPaths.size() - 1);
  }
  if (rotationPath) {
    model_.colliderRotationPaths.push_back(std::move(rotationPath));
    c.rotationPath = static_cast<std::int32_t>(model_.colliderRotationPaths.size() - 1);
  }
  model_.colliders.push_back(c);
  return static_cast<std::uint32_t>(model_.colliders.size() - 1);
}

std::uint32_t ModelBuilder::addCollisionTriangles(std::span<const std::array<ParticleIndex, 3>> triangles,
                                                  bool enable) {
  const auto first = static_cast<std::uint32_t>(model_.collisionTriangles.size());
  for (std::size_t i = 0; i < triangles.size(); ++i) {
    const std::string where = describe("collision triangle", first + i);
    for (ParticleIndex p : triangles[i]) checkIndex(p, particleCount(), where);
    if (triangles[i][0] == triangles[i][1] || triangles[i][1] == triangles[i][2] || triangles[i][0] == triangles[i][2])
      throw Error(where + ": its three particles must differ");
  }
  for (const auto& t : triangles) model_.collisionTriangles.push_back({{t[0], t[1], t[2]}});
  if (enable) model_.selfCollision = true;
  return first;
}

std::uint32_t ModelBuilder::addObject(std::string name, std::vector<ParticleIndex> particles, double dampingFactor) {
  const std::string where = "object '" + name + "'";
  for (ParticleIndex p : particles) checkIndex(p, particleCount(), where);
  if (!(dampingFactor >= 0.0 && dampingFactor <= 1.0))
    throw Error(where + ": damping factor must be in [0, 1], got " + formatNumber(dampingFactor));
  model_.objects.push_back({std::move(name), std::move(particles), dampingFactor});
  return static_cast<std::uint32_t>(model_.objects.size() - 1);
}

ModelPtr ModelBuilder::build() const {
  auto model = std::make_shared<Model>(model_);
  detail::fillLambdaOffsets(*model);
  model->validate();
  return model;
}

}  // namespace pliant
