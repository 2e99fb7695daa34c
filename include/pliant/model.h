// The Model: everything that does not change while stepping (masses, topology, rest values,
// material parameters, prescribed paths). Build it with ModelBuilder; step a State with a Solver.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pliant/bodies.h"
#include "pliant/colliders.h"
#include "pliant/constraints.h"
#include "pliant/math.h"

namespace pliant {

// A prescribed trajectory: position (m) as a function of simulated time (s).
using PathFunction = std::function<Vec3(double time)>;

// A particle whose position is prescribed by a path. Its inverse mass is 0: constraints cannot move
// it, and its velocity is (x(t+h) - x(t)) / h.
struct KinematicParticle {
  ParticleIndex particle = 0;
  PathFunction path;
};

// A named group of particles (a cloth, a rope, a body). Momentum-conserving damping (seed 000) is
// applied per object with factor `dampingFactor` in [0, 1] once per step (0: off).
struct SimObject {
  std::string name;
  std::vector<ParticleIndex> particles;
  double dampingFactor = 0.0;
};

// A triangle of a surface that takes part in surface contact (cloth self-collision and
// cloth-cloth collision): its vertices are kept away from other collision triangles, and its edges
// from their edges, by Model::surfaceThickness. Its orientation is not used.
struct CollisionTriangle {
  ParticleIndex particles[3] = {0, 0, 0};
};

struct Model {
  // Particles.
  std::vector<Vec3> initialPosition;  // m
  std::vector<Vec3> initialVelocity;  // m/s
  std::vector<double> mass;           // kg (a fixed particle keeps its mass for diagnostics)
  std::vector<double> inverseMass;    // 1/kg, 0 for fixed and kinematic particles
  std::vector<KinematicParticle> kinematicParticles;
  std::vector<SimObject> objects;
  // Contact radius (thickness) of each particle, m: a particle touches a collider when its centre
  // is this far from the surface, and another particle at the sum of their radii. Empty or one per
  // particle (empty: all 0, point particles).
  std::vector<double> particleRadius;

  // Contacts (seed 004: collisions are constraints C >= 0), solved in every substep.
  std::vector<Collider> colliders;
  std::vector<PathFunction> colliderPaths;              // see Collider::path
  std::vector<RotationFunction> colliderRotationPaths;  // see Collider::rotationPath
  // Particle-particle contacts between particles of radius > 0, except pairs that share a
  // constraint (neighbours at rest: an edge, a bending stencil or a tet of the same body).
  bool particleCollisions = true;
  ContactMaterial particleContactMaterial;  // friction and restitution of particle-particle contacts

  // Surface contact (cloth self-collision and cloth-cloth collision, src/core/collision/
  // surface_contacts.cpp): every vertex of a collision triangle is kept at least surfaceThickness
  // from every collision triangle it is not a corner of (vertex-triangle), and every edge from
  // every edge it shares no vertex with (edge-edge), except pairs joined by one mesh edge (a vertex
  // and a triangle whose corner is its neighbour), as unilateral constraints C >= 0 solved in
  // each substep with continuous collision over the substep (every vertex that passes through a
  // triangle, and edge across an edge, on the straight paths of the substep gets a contact, found
  // by the cubic coplanarity test; docs/scene-format.md says exactly what is guaranteed). Off
  // unless selfCollision is set, since it costs a broad phase per step and a narrow phase per
  // substep. The thickness must stay below about 0.7 of the shortest
  // triangle edge (the closest a vertex is to a triangle it is not part of in a flat mesh).
  std::vector<CollisionTriangle> collisionTriangles;
  bool selfCollision = false;
  double surfaceThickness = 0.005;         // m, > 0: the gap kept between two surfaces
  ContactMaterial surfaceContactMaterial;  // friction and restitution of surface contacts

  // Constraint families, one flat array each.
  std::vector<AttachmentConstraint> attachments;
  std::vector<PathFunction> attachmentPaths;
  std::vector<DistanceConstraint> distances;
  std::vector<MaxDistanceConstraint> maxDistances;
  std::vector<DihedralBendingConstraint> dihedralBendings;
  std::vector<IsometricBendingConstraint> isometricBendings;
  std::vector<TetVolumeConstraint> tetVolumes;
  std::vector<GlobalVolumeConstraint> globalVolumes;
  std::vector<std::array<std::uint32_t, 3>> volumeTriangles;  // local vertex indices
  std::vector<ParticleIndex> volumeVertices;
  std::vector<GenericConstraint> generics;
  // Per function index: its per-constraint form, or (for a batch function) an empty function here
  // and its batch form in genericBatchFunctions, which may be shorter (missing entries are empty).
  std::vector<GenericConstraintFunction> genericFunctions;
  std::vector<GenericBatchFunction> genericBatchFunctions;
  std::vector<ParticleIndex> genericParticles;
  std::vector<NeoHookeanConstraint> neoHookeans;
  // Shape matching clusters; their members, one entry each, cluster after cluster (a particle may
  // be a member of many clusters): the particle, its rest offset q_i from the cluster's rest centre
  // of mass (m) and its weight in the fit m_i (kg).
  std::vector<ShapeMatchingConstraint> shapeMatchings;
  std::vector<ParticleIndex> shapeMatchingParticles;
  std::vector<Vec3> shapeMatchingRestOffsets;
  std::vector<double> shapeMatchingWeights;

  // Rigid bodies and joints (pliant/bodies.h), stepped in the same substeps and Gauss-Seidel passes.
  std::vector<RigidBody> bodies;
  std::vector<PathFunction> bodyPaths;              // see RigidBody::path
  std::vector<RotationFunction> bodyRotationPaths;  // see RigidBody::rotationPath
  std::vector<Joint> joints;
  // Particles held at points of bodies (pliant/bodies.h: BodyAttachment).
  std::vector<BodyAttachment> bodyAttachments;

  // Offsets of each family in State::lambda (filled by ModelBuilder::build).
  std::array<std::uint32_t, kConstraintFamilyCount + 1> lambdaOffset{};

  std::size_t particleCount() const { return inverseMass.size(); }
  std::size_t bodyCount() const { return bodies.size(); }
  double radius(ParticleIndex p) const { return particleRadius.empty() ? 0.0 : particleRadius[p]; }
  // Scalar constraints (multipliers) of a family: its array's size times constraintsPerEntry.
  std::size_t constraintCount(ConstraintFamily family) const;
  std::size_t totalConstraintCount() const { return lambdaOffset[kConstraintFamilyCount]; }
  std::uint32_t lambdaIndex(ConstraintRef ref) const { return lambdaOffset[static_cast<int>(ref.family)] + ref.index; }
  // Checks every index and parameter (and that lambdaOffset matches the family sizes); throws
  // pliant::Error naming the offending entry.
  void validate() const;
};

// Largest surfaceThickness (m) Model::validate accepts for `model`'s collision triangles: their mean
// edge length at rest. A thickness above it puts every vertex in reach of its whole neighbourhood
// and beyond, so that the broad phase's pairs grow with the square of the mesh (issue 12).
// Infinity when the model has no collision triangles.
double surfaceThicknessLimit(const Model& model);

// Largest particle radius (m) Model::validate accepts on object `object` when particle contact is
// on: the mean rest length of the distance constraints between its particles. Above it, particles
// two links apart overlap at rest (2 r > 2 L): every step would start with contacts inside the
// object's own mesh and the contact list would grow with the square of the radius (issue 12).
// Infinity when the object has no distance constraints (a particle cloud: the per-step contact
// bound then applies).
double particleRadiusLimit(const Model& model, std::size_t object);

// A built Model is immutable and shared: ModelBuilder::build() returns it as a pointer to const,
// Solvers and Scenes hold it, and nothing changes it afterwards (MuJoCo's mjModel, Jolt's optimized
// settings). What a user changes between steps goes through the State (positions, velocities,
// external forces, attachment targets) or the Solver (masses and pins, constraint parameters; see
// Solver::setParticleMass), which re-plans when needed.
using ModelPtr = std::shared_ptr<const Model>;

// Builds a Model. Every add* validates its arguments and throws pliant::Error naming the bad one.
class ModelBuilder {
 public:
  // Adds a particle of `mass` kg (0 or infinity makes it fixed). Returns its index.
  ParticleIndex addParticle(const Vec3& position, double mass, const Vec3& velocity = Vec3::Zero());
  // Makes a particle immovable (inverse mass 0).
  void fixParticle(ParticleIndex particle);
  // Makes a particle follow `path`; it becomes immovable by constraints.
  void addKinematic(ParticleIndex particle, PathFunction path);

  // Rest lengths < 0 mean "the current distance".
  std::uint32_t addDistance(ParticleIndex a, ParticleIndex b, const ConstraintParameters& params,
                            double restLength = -1.0);
  std::uint32_t addMaxDistance(ParticleIndex a, ParticleIndex b, const ConstraintParameters& params,
                               double maxLength = -1.0);
  std::uint32_t addAttachment(ParticleIndex particle, const Vec3& target, const ConstraintParameters& params,
                              double restDistance = 0.0);
  std::uint32_t addMovingAttachment(ParticleIndex particle, PathFunction targetPath, const ConstraintParameters& params,
                                    double restDistance = 0.0);
  // Triangles (p0, p1, p2) and (p1, p0, p3) share edge p0-p1. restAngle NaN means "current angle".
  std::uint32_t addDihedralBending(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2, ParticleIndex p3,
                                   const ConstraintParameters& params,
                                   double restAngle = std::numeric_limits<double>::quiet_NaN());
  // Weights are computed from the current positions (the rest state).
  std::uint32_t addIsometricBending(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2, ParticleIndex p3,
                                    const ConstraintParameters& params);
  // Rest volume from the current positions.
  std::uint32_t addTetVolume(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2, ParticleIndex p3,
                             const ConstraintParameters& params);
  // Closed outward-oriented triangle mesh over global particle indices; rest volume from now.
  std::uint32_t addGlobalVolume(std::span<const std::array<ParticleIndex, 3>> triangles, double pressure,
                                const ConstraintParameters& params);
  std::uint32_t addGenericFunction(GenericConstraintFunction function);
  std::uint32_t addGeneric(std::uint32_t function, std::span<const ParticleIndex> particles, bool inequality,
                           const ConstraintParameters& params);
  // Convenience: a one-off user constraint from a lambda.
  std::uint32_t addGeneric(GenericConstraintFunction function, std::span<const ParticleIndex> particles,
                           bool inequality, const ConstraintParameters& params);
  // A user constraint function that evaluates many constraints per call (see GenericBatchFunction).
  std::uint32_t addGenericBatchFunction(GenericBatchFunction function);
  // particles.size() / arity constraints of batch function `function`, constraint k over particles
  // [k * arity, (k + 1) * arity). They are grouped so that no two of a group share a particle
  // (greedy colouring in the given order; see GenericConstraint::batchEnd) and stored group after
  // group, so the k-th becomes generic constraint result[k]. A particle shared by many constraints
  // (e.g. one anchor) puts each of them in a group of its own: keep such a point in the function.
  std::vector<std::uint32_t> addGenericBatch(std::uint32_t function, std::span<const ParticleIndex> particles,
                                             std::uint32_t arity, bool inequality, const ConstraintParameters& params);

  // A stable neo-Hookean tet (see NeoHookeanConstraint) with the current positions as its rest
  // shape, either orientation; throws pliant::Error for a degenerate tet or material. Returns its
  // entry index (its constraints are 2i and 2i + 1).
  std::uint32_t addNeoHookeanTet(ParticleIndex p0, ParticleIndex p1, ParticleIndex p2, ParticleIndex p3,
                                 const NeoHookeanMaterial& material);

  // A shape matching cluster (see ShapeMatchingConstraint) over `particles` (at least 2, each once),
  // with the current positions as its rest shape and the particles' masses as fit weights (a
  // particle of mass 0, fixed, weighs as the mean of the others, so that it anchors the cluster;
  // all of mass 0 weigh 1 kg each). Returns its index; throws pliant::Error naming the bad field.
  std::uint32_t addShapeMatchingCluster(std::span<const ParticleIndex> particles,
                                        const ShapeMatchingSettings& settings);

  // Contact radius (m, >= 0) of one particle; 0 by default.
  void setParticleRadius(ParticleIndex particle, double radius);
  // The same radius for particles first .. first + count - 1 (an object's, e.g. a GeneratedObject).
  void setParticleRadius(ParticleIndex first, std::uint32_t count, double radius);
  // Adds a collider (see pliant/colliders.h). With `path` its frame origin follows path(t) and with
  // `rotationPath` its orientation follows rotationPath(t) (a kinematic collider); otherwise it stays
  // at collider.pose. Returns its index in Model::colliders.
  std::uint32_t addCollider(const Collider& collider, PathFunction path = {}, RotationFunction rotationPath = {});

  // Adds a rigid body (pliant/bodies.h): mass properties from its shape and density or mass, the
  // body frame from the principal axes. Returns its index in Model::bodies.
  BodyIndex addBody(const BodyDefinition& body);
  // Adds a joint between two bodies (or a body and the world, kWorldBody), its frames taken from
  // the bodies' initial poses. Returns its index in Model::joints.
  std::uint32_t addJoint(const JointDefinition& joint);
  // Holds `particle` at the material point of `body` that is at `point` (m, world) at time 0 (see
  // BodyAttachment; restDistance < 0 means the current distance of the particle from the point).
  // Returns its index in Model::bodyAttachments.
  std::uint32_t addBodyAttachment(ParticleIndex particle, BodyIndex body, const Vec3& point,
                                  const ConstraintParameters& params, double restDistance = 0.0);

  // Registers triangles (particle indices) for surface contact; returns the index of the first in
  // Model::collisionTriangles. They collide only while Model::selfCollision is on (see there);
  // `enable` turns it on.
  std::uint32_t addCollisionTriangles(std::span<const std::array<ParticleIndex, 3>> triangles, bool enable = true);

  // Adds a named object; returns its index.
  std::uint32_t addObject(std::string name, std::vector<ParticleIndex> particles, double dampingFactor = 0.0);

  std::size_t particleCount() const { return model_.particleCount(); }
  const Vec3& position(ParticleIndex particle) const;
  // Read and edit access for generators.
  Model& model() { return model_; }
  const Model& model() const { return model_; }

  // Validates the model, fills its lambda offsets and returns it, immutable from now on. The builder
  // keeps its copy: it may be edited further and built again (a new, independent model).
  ModelPtr build() const;

 private:
  void checkParticle(ParticleIndex particle, const char* what) const;
  Model model_;
};

}  // namespace pliant
