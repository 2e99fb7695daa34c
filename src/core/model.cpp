// The Model's own functions: counts, lambda offsets and validation. The builder is in
// model_builder.cpp, the parallel plan in solve_plan.cpp.
#include "pliant/model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "constraints/families.h"
#include "pliant/error.h"
#include "rigid/bodies_validation.h"
#include "solve_plan.h"
#include "validation.h"

namespace pliant {

using detail::checkCollider;
using detail::checkFinite;
using detail::checkIndex;
using detail::checkMaterial;
using detail::describe;
using detail::familyKernels;

namespace detail {

void checkMaterial(const ContactMaterial& m, const std::string& where) {
  if (!std::isfinite(m.staticFriction) || m.staticFriction < 0.0)
    throw Error(where + ": static friction must be a finite number >= 0, got " + formatNumber(m.staticFriction));
  if (!std::isfinite(m.dynamicFriction) || m.dynamicFriction < 0.0)
    throw Error(where + ": dynamic friction must be a finite number >= 0, got " + formatNumber(m.dynamicFriction));
  if (!(m.restitution >= 0.0 && m.restitution <= 1.0))
    throw Error(where + ": restitution must be in [0, 1], got " + formatNumber(m.restitution));
}

void checkCollider(const Collider& c, const std::string& where) {
  checkFinite(c.pose.position, where + " position");
  if (!c.pose.rotation.coeffs().allFinite() || std::abs(c.pose.rotation.norm() - 1.0) > 1e-9)
    throw Error(where + ": rotation must be a unit quaternion (a plane needs a non-zero normal)");
  switch (c.shape) {
    case ColliderShape::Plane:
      break;
    case ColliderShape::Sphere:
      if (!std::isfinite(c.radius) || !(c.radius > 0.0))
        throw Error(where + ": sphere radius must be a finite number > 0 m, got " + formatNumber(c.radius));
      break;
    case ColliderShape::Capsule:
      if (!std::isfinite(c.radius) || !(c.radius > 0.0))
        throw Error(where + ": capsule radius must be a finite number > 0 m, got " + formatNumber(c.radius));
      if (!std::isfinite(c.halfHeight) || c.halfHeight < 0.0)
        throw Error(where + ": capsule half height must be a finite number >= 0 m, got " + formatNumber(c.halfHeight));
      break;
    case ColliderShape::Box:
      if (!c.halfExtents.allFinite() || !(c.halfExtents.array() > 0.0).all())
        throw Error(where + ": box half extents must be finite numbers > 0 m");
      break;
    case ColliderShape::Mesh: {
      const SignedDistanceGrid* g = c.grid.get();
      if (g == nullptr) throw Error(where + ": a mesh collider needs its signed distance grid (use Collider::mesh)");
      const std::uint64_t nodes = static_cast<std::uint64_t>(g->nodes[0]) * g->nodes[1] * g->nodes[2];
      if (g->nodes[0] < 2 || g->nodes[1] < 2 || g->nodes[2] < 2 || g->distance.size() != nodes ||
          !(g->cellSize > 0.0) || !std::isfinite(g->cellSize) || !g->origin.allFinite())
        throw Error(
            where +
            ": the mesh collider's signed distance grid is malformed (build it with SignedDistanceGrid::build)");
      break;
    }
    default:
      throw Error(where + ": unknown shape");
  }
  checkMaterial(c.material, where);
}

}  // namespace detail

std::size_t Model::constraintCount(ConstraintFamily family) const {
  switch (family) {
#define PLIANT_FAMILY_COUNT(Enumerator, array, name, Struct) \
  case ConstraintFamily::Enumerator:                         \
    return array.size() * constraintsPerEntry(ConstraintFamily::Enumerator);
    PLIANT_CONSTRAINT_FAMILIES(PLIANT_FAMILY_COUNT)
#undef PLIANT_FAMILY_COUNT
  }
  return 0;
}

namespace detail {

void fillLambdaOffsets(Model& model) {
  model.lambdaOffset[0] = 0;
  for (int f = 0; f < kConstraintFamilyCount; ++f)
    model.lambdaOffset[f + 1] =
        model.lambdaOffset[f] + static_cast<std::uint32_t>(model.constraintCount(static_cast<ConstraintFamily>(f)));
}

}  // namespace detail

double surfaceThicknessLimit(const Model& model) {
  double sum = 0.0;
  std::size_t edges = 0;
  const std::size_t n = model.initialPosition.size();
  for (const CollisionTriangle& t : model.collisionTriangles)
    for (int k = 0; k < 3; ++k) {
      const ParticleIndex a = t.particles[k], b = t.particles[(k + 1) % 3];
      if (a >= n || b >= n) continue;  // reported by validate
      sum += (model.initialPosition[a] - model.initialPosition[b]).norm();
      ++edges;
    }
  return edges > 0 ? sum / static_cast<double>(edges) : std::numeric_limits<double>::infinity();
}

double particleRadiusLimit(const Model& model, std::size_t object) {
  const std::size_t n = model.initialPosition.size();
  std::vector<char> member(n, 0);
  for (ParticleIndex p : model.objects[object].particles)
    if (p < n) member[p] = 1;
  double sum = 0.0;
  std::size_t links = 0;
  for (const DistanceConstraint& c : model.distances) {
    const ParticleIndex a = c.particles[0], b = c.particles[1];
    if (a >= n || b >= n || !member[a] || !member[b]) continue;  // reported by validate
    sum += c.restLength;
    ++links;
  }
  return links > 0 ? sum / static_cast<double>(links) : std::numeric_limits<double>::infinity();
}

void Model::validate() const {
  const std::size_t n = particleCount();
  if (initialPosition.size() != n || initialVelocity.size() != n || mass.size() != n)
    throw Error("model: particle arrays have different lengths");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string where = describe("particle", i);
    checkFinite(initialPosition[i], where + " position");
    checkFinite(initialVelocity[i], where + " velocity");
    if (!(mass[i] >= 0.0) || std::isnan(mass[i]))
      throw Error(where + ": mass must be >= 0 kg, got " + formatNumber(mass[i]));
    if (!std::isfinite(inverseMass[i]) || inverseMass[i] < 0.0)
      throw Error(where + ": inverse mass must be a finite number >= 0");
  }
  if (!particleRadius.empty() && particleRadius.size() != n)
    throw Error("model: particleRadius must be empty or hold one radius per particle");
  for (std::size_t i = 0; i < particleRadius.size(); ++i)
    if (!std::isfinite(particleRadius[i]) || particleRadius[i] < 0.0)
      throw Error(describe("particle", i) + ": radius must be a finite number >= 0 m, got " +
                  formatNumber(particleRadius[i]));
  for (std::size_t i = 0; i < colliders.size(); ++i) {
    const Collider& c = colliders[i];
    const std::string where = describe("collider", i);
    checkCollider(c, where);
    if (c.path >= static_cast<std::int64_t>(colliderPaths.size()) || (c.path >= 0 && !colliderPaths[c.path]))
      throw Error(where + ": path " + std::to_string(c.path) + " does not exist");
    if (c.rotationPath >= static_cast<std::int64_t>(colliderRotationPaths.size()) ||
        (c.rotationPath >= 0 && !colliderRotationPaths[c.rotationPath]))
      throw Error(where + ": rotation path " + std::to_string(c.rotationPath) + " does not exist");
  }
  checkMaterial(particleContactMaterial, "particle contact material");
  for (std::size_t i = 0; i < collisionTriangles.size(); ++i) {
    const CollisionTriangle& t = collisionTriangles[i];
    const std::string where = describe("collision triangle", i);
    for (ParticleIndex p : t.particles) checkIndex(p, n, where);
    if (t.particles[0] == t.particles[1] || t.particles[1] == t.particles[2] || t.particles[0] == t.particles[2])
      throw Error(where + ": its three particles must differ");
  }
  if (!std::isfinite(surfaceThickness) || !(surfaceThickness > 0.0))
    throw Error("model: surfaceThickness must be a finite number > 0 m, got " + formatNumber(surfaceThickness));
  if (selfCollision) {
    const double limit = surfaceThicknessLimit(*this);
    if (surfaceThickness > limit)
      throw Error("model: surfaceThickness " + formatNumber(surfaceThickness) +
                  " m is above the mean edge length of the collision triangles, " + formatNumber(limit) +
                  " m: every vertex would be in contact with its whole neighbourhood (keep it below about 0.7 of the "
                  "shortest edge)");
  }
  checkMaterial(surfaceContactMaterial, "surface contact material");
  for (std::size_t i = 0; i < kinematicParticles.size(); ++i) {
    checkIndex(kinematicParticles[i].particle, n, describe("kinematic particle", i));
    if (!kinematicParticles[i].path) throw Error(describe("kinematic particle", i) + ": path is empty");
  }
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const std::string where = "object '" + objects[i].name + "'";
    for (ParticleIndex p : objects[i].particles) checkIndex(p, n, where);
    if (!(objects[i].dampingFactor >= 0.0 && objects[i].dampingFactor <= 1.0))
      throw Error(where + ": damping factor must be in [0, 1]");
  }
  if (particleCollisions && !particleRadius.empty())
    for (std::size_t i = 0; i < objects.size(); ++i) {
      const double limit = particleRadiusLimit(*this, i);
      for (ParticleIndex p : objects[i].particles)
        if (particleRadius[p] > limit)
          throw Error("object '" + objects[i].name + "': particle radius " + std::to_string(particleRadius[p]) +
                      " m (particle " + std::to_string(p) + ") is above the mean length of its links, " +
                      std::to_string(limit) +
                      " m: particles two links apart would overlap at rest (expected at most that; half the link "
                      "length makes neighbours just touch)");
    }
  for (int f = 0; f < kConstraintFamilyCount; ++f) familyKernels(static_cast<ConstraintFamily>(f)).validate(*this);
  detail::validateBodies(*this);
  std::uint32_t offset = 0;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    if (lambdaOffset[f] != offset)
      throw Error("model: lambda offsets do not match the constraint arrays (build models with ModelBuilder::build)");
    offset += static_cast<std::uint32_t>(constraintCount(static_cast<ConstraintFamily>(f)));
  }
  if (lambdaOffset[kConstraintFamilyCount] != offset)
    throw Error("model: lambda offsets do not match the constraint arrays (build models with ModelBuilder::build)");
}

}  // namespace pliant
