// Scene files, private to the I/O layer: SceneLoader turns a scene file's JSON into a Scene, one
// block kind per file (scene_file.cpp: the top level and the solver; scene_objects.cpp,
// scene_colliders.cpp, scene_constraints.cpp, scene_probes.cpp). JSON reading is json_fields.h.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "json_fields.h"
#include "pliant/builders.h"
#include "pliant/io/scenes.h"

namespace pliant::scenefile {

using Triangle = std::array<ParticleIndex, 3>;

// Each family's constraint count in `model`.
std::array<std::uint32_t, kConstraintFamilyCount> familyCounts(const Model& model);
ConstraintFamily parseFamily(const SceneReader& r, const Node& node);
// Piecewise-linear path through keyframes, held constant before the first and after the last.
PathFunction parsePath(const SceneReader& r, const Node& node, const Vec3& offset);

class SceneLoader {
 public:
  SceneLoader(const SceneReader& reader) : r_(reader) {}

  Scene load(const Json& root);

 private:
  // The solver block (scene_file.cpp).
  void parseSolver(const Node& top);
  // Objects and particle references (scene_objects.cpp).
  const SceneObject& object(const Node& node);
  int objectIndex(const Node& node);
  ParticleIndex localParticle(const Node& node, const SceneObject& o);
  // A particle reference: ["object", index] or {"object": name, "index": i}.
  ParticleIndex particleRef(const Node& node);
  // A selection of an object's particles: {"index": i}, {"indices": [...]}, {"box": {"min", "max"}}
  // or {"all": true}. Selecting nothing is an error (it is almost always a mistake).
  std::vector<ParticleIndex> select(const Node& node, const SceneObject& o);
  void checkName(const Node& node, const std::string& name);
  void parseBending(const Node& node, BendingModel& model, ConstraintParameters& params);
  // Scale then translate a mesh: "transform": {"scale": s or [sx, sy, sz], "translate": [x, y, z]}.
  void transformMesh(const Node& o, std::vector<Vec3>& vertices);
  void parseObject(const Node& o);
  GeneratedObject parseCloth(const Node& o, const std::string& name);
  GeneratedObject parseRope(const Node& o, const std::string& name);
  GeneratedObject parseSoftBody(const Node& o, const std::string& name);
  GeneratedObject parseBalloon(const Node& o, const std::string& name);
  GeneratedObject parseParticles(const Node& o, const std::string& name);
  // Colliders and contact (scene_colliders.cpp).
  // Surface contact (cloth self-collision and cloth-cloth collision) of the cloths that have
  // "self_collision": true: {"enabled", "thickness" (m), "friction", "restitution"}.
  void parseSurfaceContact(const Node& sc);
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
  // A triangle-mesh collider from an OBJ file (relative to the scene file), scaled, then placed.
  Collider parseMeshCollider(const Node& c);
  // Constraints, attachments, kinematic particles (scene_constraints.cpp).
  void parseConstraint(const Node& c);
  void parseAttachment(const Node& a);
  void parseKinematic(const Node& k);
  // Probes (scene_probes.cpp).
  void parseProbe(const Node& p);

  const SceneReader& r_;
  ModelBuilder builder_;
  Scene scene_;
};

}  // namespace pliant::scenefile
