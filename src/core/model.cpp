#include "pliant/model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "constraints/families.h"
#include "pliant/error.h"

namespace pliant {

namespace {

std::string describe(const char* what, std::size_t index) {
  return std::string(what) + " " + std::to_string(index);
}

void checkFinite(const Vec3& v, const std::string& where) {
  if (!v.allFinite()) throw Error(where + ": expected finite coordinates, got NaN or infinity");
}

void checkParameters(const ConstraintParameters& p, const std::string& where) {
  if (!std::isfinite(p.compliance) || p.compliance < 0.0)
    throw Error(where + ": compliance must be a finite number >= 0, got " + std::to_string(p.compliance));
  if (!std::isfinite(p.damping) || p.damping < 0.0)
    throw Error(where + ": damping must be a finite number >= 0, got " + std::to_string(p.damping));
  if (!(p.stiffness >= 0.0 && p.stiffness <= 1.0))
    throw Error(where + ": stiffness must be in [0, 1], got " + std::to_string(p.stiffness));
}

void checkMaterial(const ContactMaterial& m, const std::string& where) {
  if (!std::isfinite(m.staticFriction) || m.staticFriction < 0.0)
    throw Error(where + ": static friction must be a finite number >= 0, got " + std::to_string(m.staticFriction));
  if (!std::isfinite(m.dynamicFriction) || m.dynamicFriction < 0.0)
    throw Error(where + ": dynamic friction must be a finite number >= 0, got " + std::to_string(m.dynamicFriction));
  if (!(m.restitution >= 0.0 && m.restitution <= 1.0))
    throw Error(where + ": restitution must be in [0, 1], got " + std::to_string(m.restitution));
}

void checkCollider(const Collider& c, const std::string& where) {
  checkFinite(c.pose.position, where + " position");
  if (!c.pose.rotation.coeffs().allFinite() || std::abs(c.pose.rotation.norm() - 1.0) > 1e-9)
    throw Error(where + ": rotation must be a unit quaternion (a plane needs a non-zero normal)");
  switch (c.shape) {
    case ColliderShape::Plane: break;
    case ColliderShape::Sphere:
      if (!std::isfinite(c.radius) || !(c.radius > 0.0))
        throw Error(where + ": sphere radius must be a finite number > 0 m, got " + std::to_string(c.radius));
      break;
    case ColliderShape::Capsule:
      if (!std::isfinite(c.radius) || !(c.radius > 0.0))
        throw Error(where + ": capsule radius must be a finite number > 0 m, got " + std::to_string(c.radius));
      if (!std::isfinite(c.halfHeight) || c.halfHeight < 0.0)
        throw Error(where + ": capsule half height must be a finite number >= 0 m, got " + std::to_string(c.halfHeight));
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
        throw Error(where + ": the mesh collider's signed distance grid is malformed (build it with SignedDistanceGrid::build)");
      break;
    }
    default: throw Error(where + ": unknown shape");
  }
  checkMaterial(c.material, where);
}

void checkIndex(ParticleIndex p, std::size_t count, const std::string& where) {
  if (p >= count)
    throw Error(where + ": particle index " + std::to_string(p) + " out of range (model has " +
                std::to_string(count) + " particles)");
}

void checkLength(double value, const std::string& where, const char* field) {
  if (!std::isfinite(value) || value < 0.0)
    throw Error(where + ": " + field + " must be a finite number >= 0, got " + std::to_string(value));
}

}  // namespace

std::size_t Model::constraintCount(ConstraintFamily family) const {
  switch (family) {
    case ConstraintFamily::Attachment: return attachments.size();
    case ConstraintFamily::Distance: return distances.size();
    case ConstraintFamily::MaxDistance: return maxDistances.size();
    case ConstraintFamily::DihedralBending: return dihedralBendings.size();
    case ConstraintFamily::IsometricBending: return isometricBendings.size();
    case ConstraintFamily::TetVolume: return tetVolumes.size();
    case ConstraintFamily::GlobalVolume: return globalVolumes.size();
    case ConstraintFamily::Generic: return generics.size();
  }
  return 0;
}

namespace {

// Runs shorter than this are not worth a batch of their own: they join a dependent batch, which
// the solver projects with the plain in-order kernel (a family built in no particular order then
// costs one kernel call, not one per constraint).
constexpr std::uint32_t kMinIndependentRun = 16;

// Cuts one family's array into batches. `particlesOf(c, out)` writes the particles of constraint c
// and returns how many (at most 4). A run ends where a constraint touches a movable particle that
// an earlier constraint of the run touched; particles of inverse mass 0 are never written by a
// projection, so sharing them does not make constraints dependent. A particle index out of range
// gives the trivial plan (one dependent batch); validate() reports the error. `runOf` is scratch
// of one entry per particle.
template <class ParticlesOf>
std::vector<SolveBatch> planFamily(std::uint32_t count, const std::vector<double>& inverseMass,
                                   std::uint32_t blockSize, std::vector<std::uint32_t>& runOf,
                                   ParticlesOf particlesOf) {
  std::vector<SolveBatch> batches;
  auto close = [&](std::uint32_t begin, std::uint32_t end) {
    if (end == begin) return;
    const std::uint32_t length = end - begin;
    if (length < kMinIndependentRun) {
      // Short runs merge into one dependent batch.
      if (!batches.empty() && !batches.back().independent) batches.back().end = end;
      else batches.push_back({begin, end, false, false});
      return;
    }
    batches.push_back({begin, end, true, length >= 2 * std::uint64_t{blockSize}});
  };
  runOf.assign(inverseMass.size(), ~0u);  // the run that last touched a particle
  std::uint32_t run = 0, runBegin = 0;
  ParticleIndex particles[4];
  for (std::uint32_t c = 0; c < count; ++c) {
    const int k = particlesOf(c, particles);
    for (int i = 0; i < k; ++i)
      if (particles[i] >= inverseMass.size()) return {{0, count, false, false}};
    bool conflict = false;
    for (int i = 0; i < k; ++i) conflict = conflict || (inverseMass[particles[i]] != 0.0 && runOf[particles[i]] == run);
    if (conflict) {
      close(runBegin, c);
      runBegin = c;
      ++run;
    }
    for (int i = 0; i < k; ++i) runOf[particles[i]] = run;
  }
  close(runBegin, count);
  return batches;
}

template <class Constraint>
auto fixedParticles(const std::vector<Constraint>& constraints) {
  return [&constraints](std::uint32_t c, ParticleIndex* out) {
    const auto& p = constraints[c].particles;
    for (std::size_t i = 0; i < std::size(p); ++i) out[i] = p[i];
    return static_cast<int>(std::size(p));
  };
}

}  // namespace

void Model::updateOffsets() {
  lambdaOffset[0] = 0;
  for (int f = 0; f < kConstraintFamilyCount; ++f)
    lambdaOffset[f + 1] =
        lambdaOffset[f] + static_cast<std::uint32_t>(constraintCount(static_cast<ConstraintFamily>(f)));
  const std::uint32_t block = std::max<std::uint32_t>(parallelBlockSize, 1);
  std::vector<std::uint32_t> runOf;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const auto family = static_cast<ConstraintFamily>(f);
    const auto count = static_cast<std::uint32_t>(constraintCount(family));
    std::vector<SolveBatch>& batches = solveBatches[f];
    batches.clear();
    if (count == 0) continue;
    switch (family) {
      case ConstraintFamily::Attachment:
        batches = planFamily(count, inverseMass, block, runOf, [this](std::uint32_t c, ParticleIndex* out) {
          out[0] = attachments[c].particle;
          return 1;
        });
        break;
      case ConstraintFamily::Distance: batches = planFamily(count, inverseMass, block, runOf, fixedParticles(distances)); break;
      case ConstraintFamily::MaxDistance: batches = planFamily(count, inverseMass, block, runOf, fixedParticles(maxDistances)); break;
      case ConstraintFamily::DihedralBending:
        batches = planFamily(count, inverseMass, block, runOf, fixedParticles(dihedralBendings));
        break;
      case ConstraintFamily::IsometricBending:
        batches = planFamily(count, inverseMass, block, runOf, fixedParticles(isometricBendings));
        break;
      case ConstraintFamily::TetVolume: batches = planFamily(count, inverseMass, block, runOf, fixedParticles(tetVolumes)); break;
      case ConstraintFamily::GlobalVolume:
      case ConstraintFamily::Generic: batches.push_back({0, count, false, false}); break;
    }
  }
}

bool Model::hasParallelBatch() const {
  for (const auto& batches : solveBatches)
    for (const SolveBatch& b : batches)
      if (b.parallel) return true;
  return false;
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
      throw Error(where + ": mass must be >= 0 kg, got " + std::to_string(mass[i]));
    if (!std::isfinite(inverseMass[i]) || inverseMass[i] < 0.0)
      throw Error(where + ": inverse mass must be a finite number >= 0");
  }
  if (!particleRadius.empty() && particleRadius.size() != n)
    throw Error("model: particleRadius must be empty or hold one radius per particle");
  for (std::size_t i = 0; i < particleRadius.size(); ++i)
    if (!std::isfinite(particleRadius[i]) || particleRadius[i] < 0.0)
      throw Error(describe("particle", i) + ": radius must be a finite number >= 0 m, got " +
                  std::to_string(particleRadius[i]));
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
    throw Error("model: surfaceThickness must be a finite number > 0 m, got " + std::to_string(surfaceThickness));
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
  for (std::size_t i = 0; i < attachments.size(); ++i) {
    const auto& c = attachments[i];
    const std::string where = describe("attachment", i);
    checkIndex(c.particle, n, where);
    checkParameters(c.params, where);
    checkFinite(c.target, where + " target");
    checkLength(c.restDistance, where, "rest distance");
    if (c.targetPath >= static_cast<std::int64_t>(attachmentPaths.size()))
      throw Error(where + ": target path " + std::to_string(c.targetPath) + " does not exist");
  }
  for (std::size_t i = 0; i < distances.size(); ++i) {
    const std::string where = describe("distance constraint", i);
    for (ParticleIndex p : distances[i].particles) checkIndex(p, n, where);
    checkParameters(distances[i].params, where);
    checkLength(distances[i].restLength, where, "rest length");
  }
  for (std::size_t i = 0; i < maxDistances.size(); ++i) {
    const std::string where = describe("max-distance constraint", i);
    for (ParticleIndex p : maxDistances[i].particles) checkIndex(p, n, where);
    checkParameters(maxDistances[i].params, where);
    checkLength(maxDistances[i].maxLength, where, "maximum length");
  }
  for (std::size_t i = 0; i < dihedralBendings.size(); ++i) {
    const std::string where = describe("dihedral bending constraint", i);
    for (ParticleIndex p : dihedralBendings[i].particles) checkIndex(p, n, where);
    checkParameters(dihedralBendings[i].params, where);
    if (!std::isfinite(dihedralBendings[i].restAngle)) throw Error(where + ": rest angle must be finite");
  }
  for (std::size_t i = 0; i < isometricBendings.size(); ++i) {
    const std::string where = describe("isometric bending constraint", i);
    for (ParticleIndex p : isometricBendings[i].particles) checkIndex(p, n, where);
    checkParameters(isometricBendings[i].params, where);
    for (double k : isometricBendings[i].weights)
      if (!std::isfinite(k)) throw Error(where + ": weights must be finite");
  }
  for (std::size_t i = 0; i < tetVolumes.size(); ++i) {
    const std::string where = describe("tet volume constraint", i);
    for (ParticleIndex p : tetVolumes[i].particles) checkIndex(p, n, where);
    checkParameters(tetVolumes[i].params, where);
    if (!std::isfinite(tetVolumes[i].restVolume)) throw Error(where + ": rest volume must be finite");
  }
  for (std::size_t i = 0; i < globalVolumes.size(); ++i) {
    const auto& c = globalVolumes[i];
    const std::string where = describe("global volume constraint", i);
    checkParameters(c.params, where);
    if (c.firstTriangle + std::size_t(c.triangleCount) > volumeTriangles.size() ||
        c.firstVertex + std::size_t(c.vertexCount) > volumeVertices.size())
      throw Error(where + ": triangle or vertex range out of bounds");
    for (std::uint32_t t = c.firstTriangle; t < c.firstTriangle + c.triangleCount; ++t)
      for (std::uint32_t v : volumeTriangles[t])
        if (v >= c.vertexCount) throw Error(where + ": triangle " + std::to_string(t) + " vertex out of range");
    for (std::uint32_t v = 0; v < c.vertexCount; ++v) checkIndex(volumeVertices[c.firstVertex + v], n, where);
    if (!std::isfinite(c.pressure) || c.pressure < 0.0) throw Error(where + ": pressure must be >= 0");
  }
  for (std::size_t i = 0; i < generics.size(); ++i) {
    const auto& c = generics[i];
    const std::string where = describe("generic constraint", i);
    checkParameters(c.params, where);
    if (c.function >= genericFunctions.size() || !genericFunctions[c.function])
      throw Error(where + ": function " + std::to_string(c.function) + " does not exist");
    if (c.particleCount == 0) throw Error(where + ": needs at least one particle");
    if (c.firstParticle + std::size_t(c.particleCount) > genericParticles.size())
      throw Error(where + ": particle range out of bounds");
    for (std::uint32_t k = 0; k < c.particleCount; ++k) checkIndex(genericParticles[c.firstParticle + k], n, where);
  }
}

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

std::uint32_t ModelBuilder::addDistance(ParticleIndex a, ParticleIndex b,
                                        const ConstraintParameters& params, double restLength) {
  const std::string where = describe("distance constraint", model_.distances.size());
  checkIndex(a, particleCount(), where);
  checkIndex(b, particleCount(), where);
  checkParameters(params, where);
  if (restLength < 0.0) restLength = (position(a) - position(b)).norm();
  checkLength(restLength, where, "rest length");
  model_.distances.push_back({{a, b}, restLength, params});
  return static_cast<std::uint32_t>(model_.distances.size() - 1);
}

std::uint32_t ModelBuilder::addMaxDistance(ParticleIndex a, ParticleIndex b,
                                           const ConstraintParameters& params, double maxLength) {
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
                                                const ConstraintParameters& params,
                                                double restDistance) {
  if (!targetPath) throw Error("addMovingAttachment: target path is empty");
  const Vec3 start = targetPath(0.0);
  const std::uint32_t index = addAttachment(particle, start, params, restDistance);
  model_.attachmentPaths.push_back(std::move(targetPath));
  model_.attachments[index].targetPath = static_cast<std::int32_t>(model_.attachmentPaths.size() - 1);
  return index;
}

std::uint32_t ModelBuilder::addDihedralBending(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2,
                                               ParticleIndex p3, const ConstraintParameters& params,
                                               double restAngle) {
  const std::string where = describe("dihedral bending constraint", model_.dihedralBendings.size());
  for (ParticleIndex p : {p0, p1, p2, p3}) checkIndex(p, particleCount(), where);
  checkParameters(params, where);
  if (std::isnan(restAngle))
    restAngle = detail::dihedralAngle(position(p0), position(p1), position(p2), position(p3));
  if (!std::isfinite(restAngle)) throw Error(where + ": rest angle must be finite");
  model_.dihedralBendings.push_back({{p0, p1, p2, p3}, restAngle, params});
  return static_cast<std::uint32_t>(model_.dihedralBendings.size() - 1);
}

std::uint32_t ModelBuilder::addIsometricBending(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2,
                                                ParticleIndex p3, const ConstraintParameters& params) {
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

std::uint32_t ModelBuilder::addTetVolume(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2,
                                         ParticleIndex p3, const ConstraintParameters& params) {
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

std::uint32_t ModelBuilder::addGlobalVolume(std::span<const std::array<ParticleIndex, 3>> triangles,
                                            double pressure, const ConstraintParameters& params) {
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
      local[k] = static_cast<std::uint32_t>(
          std::lower_bound(vertices.begin(), vertices.end(), t[k]) - vertices.begin());
    model_.volumeTriangles.push_back(local);
  }
  model_.volumeVertices.insert(model_.volumeVertices.end(), vertices.begin(), vertices.end());
  c.pressure = pressure;
  c.params = params;
  model_.globalVolumes.push_back(c);
  const std::uint32_t index = static_cast<std::uint32_t>(model_.globalVolumes.size() - 1);
  model_.globalVolumes[index].restVolume =
      detail::closedMeshVolume(model_, index, model_.initialPosition.data());
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
  model_.genericParticles.insert(model_.genericParticles.end(), particles.begin(), particles.end());
  model_.generics.push_back(c);
  return static_cast<std::uint32_t>(model_.generics.size() - 1);
}

std::uint32_t ModelBuilder::addGeneric(GenericConstraintFunction function,
                                       std::span<const ParticleIndex> particles, bool inequality,
                                       const ConstraintParameters& params) {
  return addGeneric(addGenericFunction(std::move(function)), particles, inequality, params);
}

void ModelBuilder::setParticleRadius(ParticleIndex particle, double radius) {
  const std::string where = describe("particle", particle);
  checkIndex(particle, particleCount(), "setParticleRadius");
  if (!std::isfinite(radius) || radius < 0.0)
    throw Error(where + ": radius must be a finite number >= 0 m, got " + std::to_string(radius));
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
  std::fill(model_.particleRadius.begin() + first, model_.particleRadius.begin() + static_cast<std::ptrdiff_t>(end), radius);
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

std::uint32_t ModelBuilder::addObject(std::string name, std::vector<ParticleIndex> particles,
                                      double dampingFactor) {
  const std::string where = "object '" + name + "'";
  for (ParticleIndex p : particles) checkIndex(p, particleCount(), where);
  if (!(dampingFactor >= 0.0 && dampingFactor <= 1.0))
    throw Error(where + ": damping factor must be in [0, 1], got " + std::to_string(dampingFactor));
  model_.objects.push_back({std::move(name), std::move(particles), dampingFactor});
  return static_cast<std::uint32_t>(model_.objects.size() - 1);
}

Model ModelBuilder::build() const {
  Model model = model_;
  model.updateOffsets();
  model.validate();
  return model;
}

}  // namespace pliant
