// Scene files, private to the I/O layer: SceneLoader turns a scene file's JSON into a Scene, one
// block kind per file (scene_file.cpp: the top level and the solver; scene_objects.cpp,
// scene_colliders.cpp, scene_constraints.cpp, scene_probes.cpp). JSON reading is json_fields.h.
//
// Three phases, so that a mistake anywhere costs nothing to report and a scene too large to fit
// is refused before anything big is allocated (issue 12):
//   1. check: every field of the whole file is read and checked (types, ranges, names, particle
//      references against each object's particle count, which follows from its fields), and what
//      each part will build is counted (scene_size.h); the building itself is queued in build_;
//   2. estimate: the memory the counts need against the budget, naming the field that asks most;
//   3. build: the queued work in file order (the same calls, in the same order, as a single pass
//      made), then the checks that need the built geometry (box selections, the surface
//      thickness against the mesh, probe indices against constraint counts), then the Model.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "json_fields.h"
#include "pliant/builders.h"
#include "pliant/io/mesh_io.h"
#include "pliant/io/scenes.h"
#include "scene_size.h"

namespace pliant::scenefile {

using Triangle = std::array<ParticleIndex, 3>;

// Each family's constraint count in `model`.
std::array<std::uint32_t, kConstraintFamilyCount> familyCounts(const Model& model);
ConstraintFamily parseFamily(const SceneReader& r, const Node& node);
// Piecewise-linear path through keyframes, held constant before the first and after the last.
PathFunction parsePath(const SceneReader& r, const Node& node, const Vec3& offset);
// Nodes of the signed distance grid of a mesh with these vertices (m), counted the way the grid
// sizes itself (signed_distance_grid.cpp), at most the grid limit, past which building it is refused.
std::uint64_t gridNodeEstimate(const std::vector<Vec3>& vertices, const SignedDistanceGridOptions& options);

class SceneLoader {
 public:
  // memoryBudget: bytes the built scene may need (SceneLoadOptions::maxMemoryBytes resolved).
  SceneLoader(const SceneReader& reader, std::uint64_t memoryBudget) : r_(reader), budget_(memoryBudget) {}

  Scene load(const Json& root);

 private:
  // What one object will be: its particle count, what it builds (counted), the field that sets its
  // size (named when the scene is too large) and the work that builds it (phase 3).
  struct ObjectPlan {
    std::uint64_t particles = 0;
    SceneSize size;
    std::string sizeField;  // JSON path
    std::function<GeneratedObject()> generate;
    bool lines = false;  // draw as a polyline (ropes)
    // Texture coordinates of its particles for the frame writers (io::TopologyPart::uv); may be empty.
    std::function<std::vector<std::array<float, 2>>()> uv;
  };
  // Phase 2: the estimate of everything counted so far against the budget; fails at the field of
  // the largest part when it is over. `extra` (at `extraField`) is counted in too (phase 3's
  // late counts: tethers to anchors chosen by a box).
  void checkMemory(const SceneSize& extra = {}, const std::string& extraField = "") const;
  // Queues build work (phase 3), in file order.
  void queue(std::function<void()> work) { build_.push_back(std::move(work)); }

  // The solver block (scene_file.cpp).
  void parseSolver(const Node& top);
  // Objects and particle references (scene_objects.cpp).
  const SceneObject& object(const Node& node);
  int objectIndex(const Node& node);
  ParticleIndex localParticle(const Node& node, const SceneObject& o);
  // A particle reference: ["object", index] or {"object": name, "index": i}.
  ParticleIndex particleRef(const Node& node);
  // A selection of an object's particles: {"index": i}, {"indices": [...]}, {"box": {"min", "max"}}
  // or {"all": true}. Selecting nothing is an error (it is almost always a mistake). Needs the
  // object's particles (phase 3).
  std::vector<ParticleIndex> select(const Node& node, const SceneObject& o);
  // Phase 1 of select: checks the fields and indices; the number of particles selected, or -1 for
  // a box (known once the particles exist).
  std::int64_t checkSelection(const Node& node, const SceneObject& o);
  void checkName(const Node& node, const std::string& name);
  void parseBending(const Node& node, BendingModel& model, ConstraintParameters& params);
  // Scale then translate a mesh: "transform": {"scale": s or [sx, sy, sz], "translate": [x, y, z]}.
  void transformMesh(const Node& o, std::vector<Vec3>& vertices);
  void parseObject(const Node& o);
  ObjectPlan parseCloth(const Node& o, const std::string& name);
  ObjectPlan parseRope(const Node& o, const std::string& name);
  ObjectPlan parseSoftBody(const Node& o, const std::string& name);
  ObjectPlan parseSurfaceSoftBody(const Node& o, const TetMeshDef& tets);
  NeoHookeanMaterial parseNeoHookean(const Node& softBody);
  // An object's "shape_matching" block: the clusters' settings and cell size (m; 0: one cluster).
  struct ShapeMatchingBlock {
    ShapeMatchingSettings settings;
    double cellSize = 0.0;
  };
  ShapeMatchingBlock parseShapeMatching(const Node& block);
  ObjectPlan parseBalloon(const Node& o, const std::string& name);
  ObjectPlan parseParticles(const Node& o, const std::string& name);
  // Colliders and contact (scene_colliders.cpp).
  // Surface contact (cloth self-collision and cloth-cloth collision) of the cloths that have
  // "self_collision": true: {"enabled", "thickness" (m), "friction", "restitution"}.
  void parseSurfaceContact(const Node& sc);
  // Phase 3, before the Model is built: the thickness against the collision triangles' edges.
  void checkSurfaceThickness(const Node& top);
  void checkParticleRadii(const Node& top);
  // Surface material: "friction" is a number (static = dynamic) or {"static", "dynamic"} (a missing
  // one takes the other's value), "restitution" in [0, 1].
  ContactMaterial contactMaterial(const Node& parent);
  // A rotation {"axis": [x, y, z], "angle": rad}.
  Quat rotation(const Node& node);
  // A collider: plane {point, normal}, sphere {centre, radius}, box {centre, half_extents, rotation},
  // capsule {start, end, radius} or mesh {file, position, rotation, scale, cell_size | max_cells,
  // padding}; each with "friction", "restitution", an optional "path" (keyframes) that moves it
  // rigidly, keeping its offset from the path's first position, and an optional "angular_velocity"
  // (rad/s, world axes) that spins it about its frame origin (the plane's point, the box's centre, ...).
  void parseCollider(const Node& c);
  // A triangle-mesh collider from an OBJ file (relative to the scene file), scaled, then placed;
  // the mesh is read now, its signed distance grid built by the returned work (phase 3).
  std::function<Collider()> parseMeshCollider(const Node& c);
  // Rigid bodies and joints (scene_bodies.cpp). A body: "type" sphere {radius}, box {half_extents},
  // capsule {radius, half_height}, convex_hull {points | file, scale} or mesh {file, scale,
  // cell_size | max_cells, padding}; "density" or "mass", "motion", "position", "rotation",
  // "velocity", "angular_velocity", "friction", "restitution", "path" (kinematic).
  void parseBody(const Node& b);
  // The vertices of the OBJ file "file" scaled by "scale" (the whole mesh in `mesh`).
  std::vector<Vec3> bodyMeshVertices(const Node& b, io::TriangleMesh& mesh);
  // A joint: "type", "body_a", "body_b", "anchor", and per type "axis", "anchor_b", "rest_length",
  // "compliance", "damping", "lower", "upper", "swing_limit", "drive".
  void parseJoint(const Node& j);
  // A body by name, by index into "bodies", or "world" (kWorldBody).
  BodyIndex bodyRef(const Node& node);
  // A body by name or index into "bodies" (not the world).
  int bodyIndex(const Node& node);
  // A joint by name or index into "joints".
  std::uint32_t jointRef(const Node& node);
  // Constraints, attachments, kinematic particles (scene_constraints.cpp).
  void parseConstraint(const Node& c);
  void parseAttachment(const Node& a);
  // An attachment with "body" (after the bodies): each selected particle held at the body's material
  // point where the particle starts.
  void parseBodyAttachment(const Node& a);
  void parseKinematic(const Node& k);
  // Probes (scene_probes.cpp); a constraint_force probe's index is checked once the Model is built.
  void parseProbe(const Node& p);
  void checkProbeIndices(const Node& top);

  const SceneReader& r_;
  std::uint64_t budget_;
  ModelBuilder builder_;
  Scene scene_;
  std::uint64_t particleTotal_ = 0;    // particles of the objects checked so far
  bool selfCollisionObjects_ = false;  // an object has "self_collision": true
  bool particleContacts_ = true;       // "particle_contact": {"enabled"}
  bool surfaceContactEnabled_ = true;  // "surface_contact": {"enabled"}
  // What each part builds, with the field named when the scene is too large.
  struct Demand {
    std::string field;
    SceneSize size;
  };
  std::vector<Demand> demands_;
  std::vector<std::string> bodyNames_;   // bodies checked so far, in file order (= Model::bodies)
  std::vector<std::string> jointNames_;  // joints checked so far (= Model::joints)
  std::vector<std::function<void()>> build_;
};

}  // namespace pliant::scenefile
