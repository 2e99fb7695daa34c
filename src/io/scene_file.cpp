// Scene files: JSON in, a Scene out. Every value is checked where it is read, and every error names
// the source, the JSON path (RFC 6901 style, e.g. /objects/0/stretch/compliance) and what was
// expected. Unknown fields are errors too: a typo must not silently fall back to a default.
// The format is documented in docs/scene-format.md and docs/scene.schema.json.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/io/mesh_io.h"
#include "pliant/io/scenes.h"

namespace pliant {

namespace {

using Json = nlohmann::json;
using Triangle = std::array<ParticleIndex, 3>;

std::string typeName(const Json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

// A JSON value together with its path, for error messages.
struct Node {
  const Json& json;
  std::string path;
};

class SceneReader {
 public:
  SceneReader(std::string source, std::string baseDirectory)
      : source_(std::move(source)), base_(std::move(baseDirectory)) {}

  [[noreturn]] void fail(const Node& node, const std::string& what) const {
    throw Error(source_ + ": " + (node.path.empty() ? "/" : node.path) + ": " + what);
  }

  void requireObject(const Node& node) const {
    if (!node.json.is_object()) fail(node, "expected an object, got " + typeName(node.json));
  }

  void allowOnly(const Node& node, std::initializer_list<const char*> keys) const {
    allowOnly(node, std::vector<const char*>(keys));
  }

  void allowOnly(const Node& node, const std::vector<const char*>& keys) const {
    requireObject(node);
    for (const auto& [key, value] : node.json.items()) {
      bool known = false;
      for (const char* k : keys) known = known || key == k;
      if (!known) {
        std::string list;
        for (const char* k : keys) list += std::string(list.empty() ? "" : ", ") + k;
        fail(node, "unknown field '" + key + "' (expected one of: " + list + ")");
      }
    }
  }

  bool has(const Node& node, const char* key) const { return node.json.contains(key); }

  Node child(const Node& node, const char* key) const {
    requireObject(node);  // else a number where an object belongs reads as "missing field"
    if (!node.json.contains(key)) fail(node, std::string("missing required field '") + key + "'");
    return {node.json.at(key), node.path + "/" + key};
  }

  Node element(const Node& node, std::size_t index) const {
    return {node.json.at(index), node.path + "/" + std::to_string(index)};
  }

  // Calls parse(element) for each element of the array node.json[key], which must hold at least
  // minSize elements. An absent key is an empty list unless minSize > 0, when it is an error.
  template <class Parse>
  void forEachElement(const Node& node, const char* key, Parse&& parse, std::size_t minSize = 0) const {
    if (minSize == 0 && !has(node, key)) return;
    const Node list = child(node, key);
    array(list, minSize);
    for (std::size_t i = 0; i < list.json.size(); ++i) parse(element(list, i));
  }

  const Json& array(const Node& node, std::size_t minSize = 0) const {
    if (!node.json.is_array()) fail(node, "expected an array, got " + typeName(node.json));
    if (node.json.size() < minSize)
      fail(node,
           "expected an array of at least " + std::to_string(minSize) + (minSize == 1 ? " element" : " elements"));
    return node.json;
  }

  double number(const Node& node, double min = -std::numeric_limits<double>::infinity(),
                double max = std::numeric_limits<double>::infinity(), bool exclusiveMin = false) const {
    if (!node.json.is_number()) fail(node, "expected a number, got " + typeName(node.json));
    const double v = node.json.get<double>();
    if (!std::isfinite(v)) fail(node, "expected a finite number, got " + node.json.dump());
    if ((exclusiveMin ? !(v > min) : !(v >= min)) || !(v <= max)) {
      std::ostringstream range;
      range << "expected a number " << (exclusiveMin ? "> " : ">= ") << min;
      if (std::isfinite(max)) range << " and <= " << max;
      range << ", got " << node.json.dump();
      fail(node, range.str());
    }
    return v;
  }

  double number(const Node& parent, const char* key, double fallback, double min, double max,
                bool exclusiveMin = false) const {
    return has(parent, key) ? number(child(parent, key), min, max, exclusiveMin) : fallback;
  }

  std::int64_t integer(const Node& node, std::int64_t min, std::int64_t max) const {
    if (!node.json.is_number_integer())
      fail(node, "expected an integer, got " + (node.json.is_number() ? node.json.dump() : typeName(node.json)));
    if (node.json.is_number_unsigned() && node.json.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
      fail(node, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                     node.json.dump());
    const std::int64_t v = node.json.get<std::int64_t>();
    if (v < min || v > max)
      fail(node, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                     node.json.dump());
    return v;
  }

  bool boolean(const Node& node) const {
    if (!node.json.is_boolean()) fail(node, "expected true or false, got " + typeName(node.json));
    return node.json.get<bool>();
  }

  std::string string(const Node& node) const {
    if (!node.json.is_string()) fail(node, "expected a string, got " + typeName(node.json));
    return node.json.get<std::string>();
  }

  Vec3 vec3(const Node& node) const {
    if (!node.json.is_array() || node.json.size() != 3)
      fail(node, "expected an array of 3 numbers [x, y, z], got " + typeName(node.json));
    return Vec3(number(element(node, 0)), number(element(node, 1)), number(element(node, 2)));
  }

  Vec3 vec3(const Node& parent, const char* key, const Vec3& fallback) const {
    return has(parent, key) ? vec3(child(parent, key)) : fallback;
  }

  ConstraintParameters material(const Node& node, std::initializer_list<const char*> extra = {}) const {
    std::vector<const char*> keys = {"compliance", "damping", "stiffness"};
    keys.insert(keys.end(), extra.begin(), extra.end());
    allowOnly(node, keys);
    ConstraintParameters p;
    p.compliance = number(node, "compliance", 0.0, 0.0, std::numeric_limits<double>::infinity());
    p.damping = number(node, "damping", 0.0, 0.0, std::numeric_limits<double>::infinity());
    p.stiffness = number(node, "stiffness", 1.0, 0.0, 1.0);
    return p;
  }

  std::string resolve(const std::string& file) const {
    const std::filesystem::path p(file);
    return p.is_absolute() || base_.empty() ? p.string() : (std::filesystem::path(base_) / p).string();
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::string base_;
};

std::array<std::uint32_t, kConstraintFamilyCount> familyCounts(const Model& model) {
  std::array<std::uint32_t, kConstraintFamilyCount> counts{};
  for (int f = 0; f < kConstraintFamilyCount; ++f)
    counts[f] = static_cast<std::uint32_t>(model.constraintCount(static_cast<ConstraintFamily>(f)));
  return counts;
}

ConstraintFamily parseFamily(const SceneReader& r, const Node& node) {
  const std::string name = r.string(node);
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    std::string known = familyName(static_cast<ConstraintFamily>(f));
    std::string underscored = known;
    for (char& c : underscored)
      if (c == '-') c = '_';
    if (name == known || name == underscored) return static_cast<ConstraintFamily>(f);
  }
  r.fail(node, "unknown constraint family '" + name +
                   "' (expected attachment, distance, max_distance, dihedral_bending, isometric_bending, "
                   "tet_volume, global_volume or generic)");
}

// Piecewise-linear path through keyframes, held constant before the first and after the last.
PathFunction parsePath(const SceneReader& r, const Node& node, const Vec3& offset) {
  r.allowOnly(node, {"keyframes"});
  const Node frames = r.child(node, "keyframes");
  r.array(frames, 1);
  std::vector<std::pair<double, Vec3>> keys;
  for (std::size_t i = 0; i < frames.json.size(); ++i) {
    const Node k = r.element(frames, i);
    r.allowOnly(k, {"time", "position"});
    const double t = r.number(r.child(k, "time"));
    if (!keys.empty() && !(t > keys.back().first)) r.fail(k, "keyframe times must increase strictly");
    keys.emplace_back(t, r.vec3(r.child(k, "position")) + offset);
  }
  return [keys](double t) -> Vec3 {
    if (t <= keys.front().first) return keys.front().second;
    if (t >= keys.back().first) return keys.back().second;
    std::size_t i = 1;
    while (keys[i].first < t) ++i;
    const double s = (t - keys[i - 1].first) / (keys[i].first - keys[i - 1].first);
    return (1.0 - s) * keys[i - 1].second + s * keys[i].second;
  };
}

class SceneLoader {
 public:
  SceneLoader(const SceneReader& reader) : r_(reader) {}

  Scene load(const Json& root) {
    const Node top{root, ""};
    r_.allowOnly(
        top, {"$schema", "name", "description", "solver", "frames", "duration", "objects", "constraints", "attachments",
              "kinematic", "colliders", "particle_contact", "surface_contact", "probes", "probe_every"});
    if (r_.has(top, "name")) scene_.name = r_.string(r_.child(top, "name"));
    if (r_.has(top, "description")) scene_.description = r_.string(r_.child(top, "description"));
    parseSolver(top);
    r_.forEachElement(
        top, "objects", [&](const Node& o) { parseObject(o); }, 1);
    r_.forEachElement(top, "constraints", [&](const Node& n) { parseConstraint(n); });
    r_.forEachElement(top, "attachments", [&](const Node& n) { parseAttachment(n); });
    r_.forEachElement(top, "kinematic", [&](const Node& n) { parseKinematic(n); });
    r_.forEachElement(top, "colliders", [&](const Node& n) { parseCollider(n); });
    if (r_.has(top, "particle_contact")) {
      const Node pc = r_.child(top, "particle_contact");
      r_.allowOnly(pc, {"enabled", "friction", "restitution"});
      if (r_.has(pc, "enabled")) builder_.model().particleCollisions = r_.boolean(r_.child(pc, "enabled"));
      builder_.model().particleContactMaterial = contactMaterial(pc);
    }
    if (r_.has(top, "surface_contact")) parseSurfaceContact(r_.child(top, "surface_contact"));
    if (r_.has(top, "frames") && r_.has(top, "duration")) r_.fail(top, "give either 'frames' or 'duration', not both");
    if (r_.has(top, "frames")) scene_.frames = static_cast<int>(r_.integer(r_.child(top, "frames"), 0, 100000000));
    if (r_.has(top, "duration")) {
      const double duration = r_.number(r_.child(top, "duration"), 0.0, 1e9);
      scene_.frames = static_cast<int>(std::ceil(duration / scene_.settings.timeStep - 1e-9));
    }
    try {
      scene_.model = builder_.build();
    } catch (const Error& e) {
      throw Error(r_.source() + ": " + e.what());
    }
    r_.forEachElement(top, "probes", [&](const Node& n) { parseProbe(n); });
    if (r_.has(top, "probe_every")) {
      const Node every = r_.child(top, "probe_every");
      const std::string value = r_.string(every);
      if (value != "frame" && value != "substep") r_.fail(every, "expected \"frame\" or \"substep\"");
      scene_.probeEverySubstep = value == "substep";
    }
    return std::move(scene_);
  }

 private:
  void parseSolver(const Node& top) {
    if (!r_.has(top, "solver")) return;
    const Node s = r_.child(top, "solver");
    r_.allowOnly(s, {"mode", "time_step", "substeps", "iterations", "gravity", "iteration_independent_stiffness",
                     "velocity_damping", "max_displacement", "contact_margin", "max_depenetration_velocity",
                     "dynamic_friction"});
    SolverSettings& out = scene_.settings;
    bool smallSteps = false;
    if (r_.has(s, "mode")) {
      const Node mode = r_.child(s, "mode");
      const std::string m = r_.string(mode);
      if (m == "xpbd") out.mode = SolverMode::Xpbd;
      else if (m == "pbd") out.mode = SolverMode::Pbd;
      else if (m == "small-steps" || m == "small_steps") {
        out.mode = SolverMode::Xpbd;
        smallSteps = true;
        out.substeps = 10;
      } else r_.fail(mode, "expected \"pbd\", \"xpbd\" or \"small-steps\", got \"" + m + "\"");
    }
    out.timeStep = r_.number(s, "time_step", out.timeStep, 0.0, 10.0, true);
    if (r_.has(s, "substeps")) out.substeps = static_cast<int>(r_.integer(r_.child(s, "substeps"), 1, 100000));
    if (r_.has(s, "iterations")) {
      const Node it = r_.child(s, "iterations");
      out.iterations = static_cast<int>(r_.integer(it, 1, 100000));
      if (smallSteps && out.iterations != 1) r_.fail(it, "small steps use exactly 1 iteration per substep");
    }
    out.gravity = r_.vec3(s, "gravity", out.gravity);
    if (r_.has(s, "iteration_independent_stiffness"))
      out.iterationIndependentStiffness = r_.boolean(r_.child(s, "iteration_independent_stiffness"));
    out.velocityDamping = r_.number(s, "velocity_damping", 0.0, 0.0, 1e6);
    out.maxDisplacementPerStep = r_.number(s, "max_displacement", out.maxDisplacementPerStep, 0.0,
                                           std::numeric_limits<double>::infinity(), true);
    out.contactMargin = r_.number(s, "contact_margin", out.contactMargin, 0.0, 1e6);
    out.maxDepenetrationVelocity = r_.number(s, "max_depenetration_velocity", out.maxDepenetrationVelocity, 0.0,
                                             std::numeric_limits<double>::infinity(), true);
    if (r_.has(s, "dynamic_friction")) {
      const Node where = r_.child(s, "dynamic_friction");
      const std::string value = r_.string(where);
      if (value != "position" && value != "velocity_pass")
        r_.fail(where, "expected \"position\" or \"velocity_pass\", got \"" + value + "\"");
      out.dynamicFrictionInVelocityPass = value == "velocity_pass";
    }
  }

  // Surface contact (cloth self-collision and cloth-cloth collision) of the cloths that have
  // "self_collision": true: {"enabled", "thickness" (m), "friction", "restitution"}.
  void parseSurfaceContact(const Node& sc) {
    r_.allowOnly(sc, {"enabled", "thickness", "friction", "restitution"});
    Model& model = builder_.model();
    const bool enabled = r_.has(sc, "enabled") ? r_.boolean(r_.child(sc, "enabled")) : true;
    if (enabled && model.collisionTriangles.empty())
      r_.fail(sc, "no object has \"self_collision\": true, so surface contact has nothing to act on");
    model.selfCollision = enabled && !model.collisionTriangles.empty();
    model.surfaceThickness = r_.number(sc, "thickness", model.surfaceThickness, 0.0, 1e3, true);
    model.surfaceContactMaterial = contactMaterial(sc);
  }

  // Surface material: "friction" is a number (static = dynamic) or {"static", "dynamic"} (a missing
  // one takes the other's value), "restitution" in [0, 1].
  ContactMaterial contactMaterial(const Node& parent) {
    ContactMaterial m;
    const double inf = std::numeric_limits<double>::infinity();
    if (r_.has(parent, "friction")) {
      const Node f = r_.child(parent, "friction");
      if (f.json.is_number()) {
        m.staticFriction = m.dynamicFriction = r_.number(f, 0.0, inf);
      } else {
        r_.allowOnly(f, {"static", "dynamic"});
        if (!r_.has(f, "static") && !r_.has(f, "dynamic")) r_.fail(f, "give \"static\", \"dynamic\" or both");
        const double first = r_.has(f, "static") ? r_.number(r_.child(f, "static"), 0.0, inf)
                                                 : r_.number(r_.child(f, "dynamic"), 0.0, inf);
        m.staticFriction = r_.number(f, "static", first, 0.0, inf);
        m.dynamicFriction = r_.number(f, "dynamic", first, 0.0, inf);
      }
    }
    m.restitution = r_.number(parent, "restitution", 0.0, 0.0, 1.0);
    return m;
  }

  // A rotation {"axis": [x, y, z], "angle": rad}.
  Quat rotation(const Node& node) {
    r_.allowOnly(node, {"axis", "angle"});
    const Node axisNode = r_.child(node, "axis");
    const Vec3 axis = r_.vec3(axisNode);
    if (!(axis.norm() > 0.0)) r_.fail(axisNode, "the rotation axis must not be zero");
    return Quat(Eigen::AngleAxisd(r_.number(r_.child(node, "angle")), axis.normalized()));
  }

  // A collider: plane {point, normal}, sphere {centre, radius}, box {centre, half_extents, rotation},
  // capsule {start, end, radius} or mesh {file, position, rotation, scale, cell_size | max_cells,
  // padding}; each with "friction", "restitution", an optional "path" (keyframes) that moves it
  // rigidly, keeping its offset from the path's first position, and an optional "angular_velocity"
  // (rad/s, world axes) that spins it about its frame origin (the plane's point, the box's centre, ...).
  void parseCollider(const Node& c) {
    const Node typeNode = r_.child(c, "type");
    const std::string type = r_.string(typeNode);
    const double inf = std::numeric_limits<double>::infinity();
    Collider collider;
    if (type == "plane") {
      r_.allowOnly(c, {"type", "point", "normal", "friction", "restitution", "path", "angular_velocity"});
      const Node normalNode = r_.child(c, "normal");
      const Vec3 normal = r_.vec3(normalNode);
      if (!(normal.norm() > 0.0)) r_.fail(normalNode, "the normal must not be zero");
      collider = Collider::plane(r_.vec3(c, "point", Vec3::Zero()), normal);
    } else if (type == "sphere") {
      r_.allowOnly(c, {"type", "centre", "radius", "friction", "restitution", "path", "angular_velocity"});
      collider = Collider::sphere(r_.vec3(r_.child(c, "centre")), r_.number(r_.child(c, "radius"), 0.0, inf, true));
    } else if (type == "box") {
      r_.allowOnly(
          c, {"type", "centre", "half_extents", "rotation", "friction", "restitution", "path", "angular_velocity"});
      const Node halfNode = r_.child(c, "half_extents");
      const Vec3 half = r_.vec3(halfNode);
      if (!(half.array() > 0.0).all()) r_.fail(halfNode, "half extents must be > 0 m");
      const Quat q = r_.has(c, "rotation") ? rotation(r_.child(c, "rotation")) : Quat::Identity();
      collider = Collider::box(r_.vec3(r_.child(c, "centre")), half, q);
    } else if (type == "capsule") {
      r_.allowOnly(c, {"type", "start", "end", "radius", "friction", "restitution", "path", "angular_velocity"});
      collider = Collider::capsule(r_.vec3(r_.child(c, "start")), r_.vec3(r_.child(c, "end")),
                                   r_.number(r_.child(c, "radius"), 0.0, inf, true));
    } else if (type == "mesh") {
      collider = parseMeshCollider(c);
    } else {
      r_.fail(typeNode, "unknown collider type '" + type + "' (expected plane, sphere, box, capsule or mesh)");
    }
    collider.material = contactMaterial(c);
    PathFunction path;
    if (r_.has(c, "path")) {
      const Node pathNode = r_.child(c, "path");
      const Vec3 start = parsePath(r_, pathNode, Vec3::Zero())(-inf);
      path = parsePath(r_, pathNode, collider.pose.position - start);
    }
    RotationFunction spin;
    if (r_.has(c, "angular_velocity")) {
      // Constant angular velocity w from time 0: R(t) = exp(t [w]x) R(0).
      const Vec3 omega = r_.vec3(r_.child(c, "angular_velocity"));
      const double rate = omega.norm();
      if (rate > 0.0) {
        const Vec3 axis = omega / rate;
        const Quat initial = collider.pose.rotation;
        spin = [axis, rate, initial](double t) { return Quat(Eigen::AngleAxisd(rate * t, axis)) * initial; };
      }
    }
    try {
      builder_.addCollider(collider, std::move(path), std::move(spin));
    } catch (const Error& e) {
      r_.fail(c, e.what());
    }
  }

  // A triangle-mesh collider from an OBJ file (relative to the scene file), scaled, then placed.
  Collider parseMeshCollider(const Node& c) {
    r_.allowOnly(c, {"type", "file", "position", "rotation", "scale", "cell_size", "max_cells", "padding", "friction",
                     "restitution", "path", "angular_velocity"});
    const std::string file = r_.resolve(r_.string(r_.child(c, "file")));
    Vec3 scale = Vec3::Ones();
    if (r_.has(c, "scale")) {
      const Node s = r_.child(c, "scale");
      if (s.json.is_array()) scale = r_.vec3(s);
      else scale = Vec3::Constant(r_.number(s, 0.0, std::numeric_limits<double>::infinity(), true));
      if (!(scale.array() > 0.0).all()) r_.fail(s, "scale factors must be > 0");
    }
    if (r_.has(c, "cell_size") && r_.has(c, "max_cells"))
      r_.fail(c, "give either \"cell_size\" or \"max_cells\", not both");
    SignedDistanceGridOptions options;
    const double inf = std::numeric_limits<double>::infinity();
    options.cellSize = r_.number(c, "cell_size", 0.0, 0.0, inf, true);
    if (r_.has(c, "max_cells"))
      options.maxCellsPerAxis = static_cast<int>(r_.integer(r_.child(c, "max_cells"), 1, 4096));
    options.padding = r_.number(c, "padding", -1.0, 0.0, inf);
    const Vec3 position = r_.vec3(c, "position", Vec3::Zero());
    const Quat q = r_.has(c, "rotation") ? rotation(r_.child(c, "rotation")) : Quat::Identity();
    // Mesh errors name the OBJ file; say which collider entry asked for it.
    try {
      return io::readMeshCollider(file, position, q, options, {}, scale);
    } catch (const Error& e) {
      r_.fail(c, e.what());
    }
  }

  const SceneObject& object(const Node& node) {
    const std::string name = r_.string(node);
    for (const SceneObject& o : scene_.objects)
      if (o.name == name) return o;
    std::string known;
    for (const SceneObject& o : scene_.objects) known += std::string(known.empty() ? "" : ", ") + o.name;
    r_.fail(node, "no object named '" + name + "' (objects: " + known + ")");
  }

  int objectIndex(const Node& node) {
    const SceneObject& o = object(node);
    return static_cast<int>(&o - scene_.objects.data());
  }

  ParticleIndex localParticle(const Node& node, const SceneObject& o) {
    const auto i = r_.integer(node, 0, static_cast<std::int64_t>(o.particleCount) - 1);
    return o.firstParticle + static_cast<ParticleIndex>(i);
  }

  // A particle reference: ["object", index] or {"object": name, "index": i}.
  ParticleIndex particleRef(const Node& node) {
    if (node.json.is_array()) {
      if (node.json.size() != 2) r_.fail(node, "expected [\"object\", index]");
      return localParticle(r_.element(node, 1), object(r_.element(node, 0)));
    }
    r_.allowOnly(node, {"object", "index"});
    return localParticle(r_.child(node, "index"), object(r_.child(node, "object")));
  }

  // A selection of an object's particles: {"index": i}, {"indices": [...]}, {"box": {"min", "max"}}
  // or {"all": true}. Selecting nothing is an error (it is almost always a mistake).
  std::vector<ParticleIndex> select(const Node& node, const SceneObject& o) {
    r_.allowOnly(node, {"index", "indices", "box", "all"});
    if (node.json.size() != 1) r_.fail(node, "expected exactly one of index, indices, box, all");
    std::vector<ParticleIndex> out;
    if (r_.has(node, "index")) out.push_back(localParticle(r_.child(node, "index"), o));
    if (r_.has(node, "indices")) {
      const Node list = r_.child(node, "indices");
      r_.array(list, 1);
      for (std::size_t i = 0; i < list.json.size(); ++i) out.push_back(localParticle(r_.element(list, i), o));
    }
    if (r_.has(node, "box")) {
      const Node box = r_.child(node, "box");
      r_.allowOnly(box, {"min", "max"});
      const Vec3 lo = r_.vec3(r_.child(box, "min"));
      const Vec3 hi = r_.vec3(r_.child(box, "max"));
      for (std::uint32_t k = 0; k < o.particleCount; ++k) {
        const Vec3& x = builder_.position(o.firstParticle + k);
        if ((x.array() >= lo.array()).all() && (x.array() <= hi.array()).all()) out.push_back(o.firstParticle + k);
      }
      if (out.empty()) r_.fail(box, "the box selects no particle of object '" + o.name + "'");
    }
    if (r_.has(node, "all")) {
      if (!r_.boolean(r_.child(node, "all"))) r_.fail(node, "\"all\" must be true");
      for (std::uint32_t k = 0; k < o.particleCount; ++k) out.push_back(o.firstParticle + k);
    }
    return out;
  }

  void checkName(const Node& node, const std::string& name) {
    if (name.empty()) r_.fail(node, "object names must not be empty");
    for (const SceneObject& o : scene_.objects)
      if (o.name == name) r_.fail(node, "duplicate object name '" + name + "'");
  }

  void parseBending(const Node& node, BendingModel& model, ConstraintParameters& params) {
    const Node b = node;
    const ConstraintParameters p = r_.material(b, {"model"});
    params = p;
    model = BendingModel::Isometric;
    if (r_.has(b, "model")) {
      const Node m = r_.child(b, "model");
      const std::string name = r_.string(m);
      if (name == "isometric") model = BendingModel::Isometric;
      else if (name == "dihedral") model = BendingModel::Dihedral;
      else if (name == "none") model = BendingModel::None;
      else r_.fail(m, "expected \"isometric\", \"dihedral\" or \"none\", got \"" + name + "\"");
    }
  }

  // Scale then translate a mesh: "transform": {"scale": s or [sx, sy, sz], "translate": [x, y, z]}.
  void transformMesh(const Node& o, std::vector<Vec3>& vertices) {
    if (!r_.has(o, "transform")) return;
    const Node t = r_.child(o, "transform");
    r_.allowOnly(t, {"scale", "translate"});
    Vec3 scale = Vec3::Ones();
    if (r_.has(t, "scale")) {
      const Node s = r_.child(t, "scale");
      if (s.json.is_array()) scale = r_.vec3(s);
      else scale = Vec3::Constant(r_.number(s, 0.0, std::numeric_limits<double>::infinity(), true));
      if (!(scale.array() > 0.0).all()) r_.fail(s, "scale factors must be > 0");
    }
    const Vec3 translate = r_.vec3(t, "translate", Vec3::Zero());
    for (Vec3& v : vertices) v = v.cwiseProduct(scale) + translate;
  }

  void parseObject(const Node& o) {
    const std::string type = r_.string(r_.child(o, "type"));
    const Node nameNode = r_.child(o, "name");
    const std::string name = r_.string(nameNode);
    checkName(nameNode, name);
    const auto before = familyCounts(builder_.model());
    GeneratedObject made;
    try {
      if (type == "cloth") made = parseCloth(o, name);
      else if (type == "rope") made = parseRope(o, name);
      else if (type == "softbody") made = parseSoftBody(o, name);
      else if (type == "balloon") made = parseBalloon(o, name);
      else if (type == "particles") made = parseParticles(o, name);
      else
        r_.fail(r_.child(o, "type"),
                "unknown object type '" + type + "' (expected cloth, rope, softbody, balloon or particles)");
    } catch (const Error& e) {
      // Errors from builders and mesh readers do not know the JSON path; add it.
      const std::string message = e.what();
      if (message.rfind(r_.source() + ":", 0) == 0) throw;
      r_.fail(o, message);
    }
    SceneObject so;
    so.name = name;
    so.firstParticle = made.firstParticle;
    so.particleCount = made.particleCount;
    so.constraintBegin = before;
    scene_.objects.push_back(so);
    scene_.topology.triangles.insert(scene_.topology.triangles.end(), made.triangles.begin(), made.triangles.end());
    scene_.topology.tets.insert(scene_.topology.tets.end(), made.tets.begin(), made.tets.end());
    if (type == "rope")
      for (std::uint32_t k = 0; k + 1 < made.particleCount; ++k)
        scene_.topology.lines.push_back({made.firstParticle + k, made.firstParticle + k + 1});
    SceneObject& added = scene_.objects.back();
    // Contact radius (thickness) of every particle of the object.
    if (r_.has(o, "particle_radius")) {
      const double radius = r_.number(r_.child(o, "particle_radius"), 0.0, 1e6);
      builder_.setParticleRadius(added.firstParticle, added.particleCount, radius);
    }
    // Pins and tethers belong to the object: parse them now that its particles exist.
    std::vector<ParticleIndex> pinned;
    if (r_.has(o, "pins")) {
      const Node pins = r_.child(o, "pins");
      r_.array(pins);
      for (std::size_t i = 0; i < pins.json.size(); ++i)
        for (ParticleIndex p : select(r_.element(pins, i), added)) {
          builder_.fixParticle(p);
          pinned.push_back(p);
        }
    }
    if (r_.has(o, "tethers")) {
      const Node t = r_.child(o, "tethers");
      const ConstraintParameters params = r_.material(t, {"slack", "anchors"});
      const double slack = r_.number(t, "slack", 1.0, 1.0, 1e6);
      std::vector<ParticleIndex> anchors = pinned;
      if (r_.has(t, "anchors")) {
        const Node a = r_.child(t, "anchors");
        r_.array(a, 1);
        anchors.clear();
        for (std::size_t i = 0; i < a.json.size(); ++i)
          for (ParticleIndex p : select(r_.element(a, i), added)) anchors.push_back(p);
      }
      if (anchors.empty()) r_.fail(t, "tethers need anchors: pin particles or give \"anchors\"");
      addTethers(builder_, anchors, added.firstParticle, added.particleCount, params, slack);
    }
    added.constraintEnd = familyCounts(builder_.model());
  }

  GeneratedObject parseCloth(const Node& o, const std::string& name) {
    r_.allowOnly(o, {"type", "name", "grid", "mesh", "transform", "mass", "stretch", "bending", "damping", "pins",
                     "tethers", "particle_radius", "self_collision"});
    if (r_.has(o, "grid") == r_.has(o, "mesh")) r_.fail(o, "a cloth needs exactly one of \"grid\" or \"mesh\"");
    const double mass = r_.number(r_.child(o, "mass"), 0.0, std::numeric_limits<double>::infinity(), true);
    const ConstraintParameters stretch =
        r_.has(o, "stretch") ? r_.material(r_.child(o, "stretch")) : ConstraintParameters{};
    BendingModel bending = BendingModel::None;
    ConstraintParameters bendingParams;
    if (r_.has(o, "bending")) parseBending(r_.child(o, "bending"), bending, bendingParams);
    const double damping = r_.number(o, "damping", 0.0, 0.0, 1.0);
    const bool selfCollision = r_.has(o, "self_collision") && r_.boolean(r_.child(o, "self_collision"));
    if (r_.has(o, "grid")) {
      const Node g = r_.child(o, "grid");
      r_.allowOnly(g, {"nodes", "size", "origin", "axis_x", "axis_y"});
      ClothGridDef def;
      def.name = name;
      const Node nodes = r_.child(g, "nodes");
      r_.array(nodes, 2);
      if (nodes.json.size() != 2) r_.fail(nodes, "expected [nodes_x, nodes_y]");
      def.nodesX = static_cast<int>(r_.integer(r_.element(nodes, 0), 2, 4096));
      def.nodesY = static_cast<int>(r_.integer(r_.element(nodes, 1), 2, 4096));
      const Node size = r_.child(g, "size");
      r_.array(size, 2);
      if (size.json.size() != 2) r_.fail(size, "expected [size_x, size_y] in m");
      def.sizeX = r_.number(r_.element(size, 0), 0.0, 1e6, true);
      def.sizeY = r_.number(r_.element(size, 1), 0.0, 1e6, true);
      def.origin = r_.vec3(g, "origin", def.origin);
      def.axisX = r_.vec3(g, "axis_x", def.axisX);
      def.axisY = r_.vec3(g, "axis_y", def.axisY);
      if (!(def.axisX.norm() > 0.0) || !(def.axisY.norm() > 0.0) ||
          !(def.axisX.cross(def.axisY).norm() > 1e-9 * def.axisX.norm() * def.axisY.norm()))
        r_.fail(g, "axis_x and axis_y must be non-zero and not parallel");
      def.axisX.normalize();
      def.axisY.normalize();
      def.totalMass = mass;
      def.stretch = stretch;
      def.bending = bending;
      def.bendingParams = bendingParams;
      def.dampingFactor = damping;
      def.selfCollision = selfCollision;
      return addClothGrid(builder_, def);
    }
    const Node meshNode = r_.child(o, "mesh");
    io::TriangleMesh mesh = io::readObj(r_.resolve(r_.string(meshNode)));
    transformMesh(o, mesh.vertices);
    ClothMeshDef def;
    def.name = name;
    def.totalMass = mass;
    def.stretch = stretch;
    def.bending = bending;
    def.bendingParams = bendingParams;
    def.dampingFactor = damping;
    def.selfCollision = selfCollision;
    return addClothMesh(builder_, mesh.vertices, mesh.triangles, def);
  }

  GeneratedObject parseRope(const Node& o, const std::string& name) {
    r_.allowOnly(o, {"type", "name", "start", "end", "particles", "mass", "stretch", "damping", "pins", "tethers",
                     "particle_radius"});
    ChainDef def;
    def.name = name;
    def.start = r_.vec3(r_.child(o, "start"));
    def.end = r_.vec3(r_.child(o, "end"));
    def.particles = static_cast<int>(r_.integer(r_.child(o, "particles"), 2, 10000000));
    def.particleMass =
        r_.number(r_.child(o, "mass"), 0.0, std::numeric_limits<double>::infinity(), true) / def.particles;
    def.fixStart = false;
    if (r_.has(o, "stretch")) def.stretch = r_.material(r_.child(o, "stretch"));
    def.dampingFactor = r_.number(o, "damping", 0.0, 0.0, 1.0);
    return addChain(builder_, def);
  }

  GeneratedObject parseSoftBody(const Node& o, const std::string& name) {
    r_.allowOnly(o, {"type", "name", "box", "mesh", "transform", "density", "volume", "edges", "damping", "pins",
                     "tethers", "particle_radius"});
    if (r_.has(o, "box") == r_.has(o, "mesh")) r_.fail(o, "a soft body needs exactly one of \"box\" or \"mesh\"");
    TetMeshDef def;
    def.name = name;
    def.density = r_.number(r_.child(o, "density"), 0.0, std::numeric_limits<double>::infinity(), true);
    if (r_.has(o, "volume")) def.volume = r_.material(r_.child(o, "volume"));
    if (r_.has(o, "edges")) {
      const Node e = r_.child(o, "edges");
      if (e.json.is_boolean()) def.addEdges = e.json.get<bool>();
      else def.edges = r_.material(e);
    }
    def.dampingFactor = r_.number(o, "damping", 0.0, 0.0, 1.0);
    if (r_.has(o, "box")) {
      const Node b = r_.child(o, "box");
      r_.allowOnly(b, {"cells", "size", "origin"});
      TetBoxDef box;
      box.name = name;
      const Node cells = r_.child(b, "cells");
      r_.array(cells, 3);
      if (cells.json.size() != 3) r_.fail(cells, "expected [cells_x, cells_y, cells_z]");
      box.cellsX = static_cast<int>(r_.integer(r_.element(cells, 0), 1, 1000));
      box.cellsY = static_cast<int>(r_.integer(r_.element(cells, 1), 1, 1000));
      box.cellsZ = static_cast<int>(r_.integer(r_.element(cells, 2), 1, 1000));
      const Node size = r_.child(b, "size");
      box.size = r_.vec3(size);
      if (!(box.size.array() > 0.0).all()) r_.fail(size, "sizes must be > 0 m");
      box.origin = r_.vec3(b, "origin", box.origin);
      box.density = def.density;
      box.volume = def.volume;
      box.edges = def.edges;
      box.addEdges = def.addEdges;
      box.dampingFactor = def.dampingFactor;
      return addTetBox(builder_, box);
    }
    io::TetMesh mesh = io::readTetMesh(r_.resolve(r_.string(r_.child(o, "mesh"))));
    transformMesh(o, mesh.vertices);
    return addTetMesh(builder_, mesh.vertices, mesh.tets, def);
  }

  GeneratedObject parseBalloon(const Node& o, const std::string& name) {
    r_.allowOnly(o, {"type", "name", "centre", "radius", "rings", "segments", "mass", "stretch", "pressure", "volume",
                     "damping", "pins", "tethers", "particle_radius"});
    BalloonDef def;
    def.name = name;
    def.centre = r_.vec3(o, "centre", def.centre);
    def.radius = r_.number(r_.child(o, "radius"), 0.0, 1e6, true);
    if (r_.has(o, "rings")) def.rings = static_cast<int>(r_.integer(r_.child(o, "rings"), 2, 4096));
    if (r_.has(o, "segments")) def.segments = static_cast<int>(r_.integer(r_.child(o, "segments"), 3, 4096));
    def.totalMass = r_.number(r_.child(o, "mass"), 0.0, std::numeric_limits<double>::infinity(), true);
    if (r_.has(o, "stretch")) def.stretch = r_.material(r_.child(o, "stretch"));
    def.pressure = r_.number(o, "pressure", 1.0, 0.0, 1e6);
    if (r_.has(o, "volume")) def.volume = r_.material(r_.child(o, "volume"));
    def.dampingFactor = r_.number(o, "damping", 0.0, 0.0, 1.0);
    return addBalloon(builder_, def);
  }

  GeneratedObject parseParticles(const Node& o, const std::string& name) {
    r_.allowOnly(o, {"type", "name", "positions", "velocities", "mass", "masses", "damping", "pins", "tethers",
                     "particle_radius"});
    const Node positions = r_.child(o, "positions");
    r_.array(positions, 1);
    const std::size_t n = positions.json.size();
    if (r_.has(o, "mass") == r_.has(o, "masses")) r_.fail(o, "give exactly one of \"mass\" (each) or \"masses\"");
    std::vector<double> masses(n);
    if (r_.has(o, "mass")) {
      masses.assign(n, r_.number(r_.child(o, "mass"), 0.0));
    } else {
      const Node list = r_.child(o, "masses");
      r_.array(list);
      if (list.json.size() != n) r_.fail(list, "expected " + std::to_string(n) + " masses, one per position");
      for (std::size_t i = 0; i < n; ++i) masses[i] = r_.number(r_.element(list, i), 0.0);
    }
    std::vector<Vec3> velocities(n, Vec3::Zero());
    if (r_.has(o, "velocities")) {
      const Node list = r_.child(o, "velocities");
      r_.array(list);
      if (list.json.size() != n) r_.fail(list, "expected " + std::to_string(n) + " velocities, one per position");
      for (std::size_t i = 0; i < n; ++i) velocities[i] = r_.vec3(r_.element(list, i));
    }
    GeneratedObject out;
    out.firstParticle = static_cast<ParticleIndex>(builder_.particleCount());
    out.particleCount = static_cast<std::uint32_t>(n);
    std::vector<ParticleIndex> members;
    for (std::size_t i = 0; i < n; ++i)
      members.push_back(builder_.addParticle(r_.vec3(r_.element(positions, i)), masses[i], velocities[i]));
    out.object = builder_.addObject(name, std::move(members), r_.number(o, "damping", 0.0, 0.0, 1.0));
    return out;
  }

  void parseConstraint(const Node& c) {
    const Node typeNode = r_.child(c, "type");
    const std::string type = r_.string(typeNode);
    const Node list = r_.child(c, "particles");
    r_.array(list);
    std::vector<ParticleIndex> p;
    for (std::size_t i = 0; i < list.json.size(); ++i) p.push_back(particleRef(r_.element(list, i)));
    auto need = [&](std::size_t count) {
      if (p.size() != count)
        r_.fail(list, "a " + type + " constraint needs exactly " + std::to_string(count) + " particles");
    };
    try {
      if (type == "distance") {
        const ConstraintParameters m = r_.material(c, {"type", "particles", "rest_length"});
        need(2);
        builder_.addDistance(p[0], p[1], m, r_.number(c, "rest_length", -1.0, 0.0, 1e9));
      } else if (type == "max_distance") {
        const ConstraintParameters m = r_.material(c, {"type", "particles", "max_length"});
        need(2);
        builder_.addMaxDistance(p[0], p[1], m, r_.number(c, "max_length", -1.0, 0.0, 1e9));
      } else if (type == "dihedral_bending") {
        const ConstraintParameters m = r_.material(c, {"type", "particles", "rest_angle"});
        need(4);
        builder_.addDihedralBending(p[0], p[1], p[2], p[3], m,
                                    r_.number(c, "rest_angle", std::numeric_limits<double>::quiet_NaN(), -4.0, 4.0));
      } else if (type == "isometric_bending") {
        const ConstraintParameters m = r_.material(c, {"type", "particles"});
        need(4);
        builder_.addIsometricBending(p[0], p[1], p[2], p[3], m);
      } else if (type == "tet_volume") {
        const ConstraintParameters m = r_.material(c, {"type", "particles"});
        need(4);
        builder_.addTetVolume(p[0], p[1], p[2], p[3], m);
      } else {
        r_.fail(typeNode, "unknown constraint type '" + type +
                              "' (expected distance, max_distance, dihedral_bending, isometric_bending or tet_volume)");
      }
    } catch (const Error& e) {
      const std::string message = e.what();
      if (message.rfind(r_.source() + ":", 0) == 0) throw;
      r_.fail(c, message);
    }
  }

  void parseAttachment(const Node& a) {
    const ConstraintParameters m = r_.material(a, {"object", "select", "target", "path", "rest_distance"});
    const SceneObject& o = object(r_.child(a, "object"));
    const std::vector<ParticleIndex> particles = select(r_.child(a, "select"), o);
    if (r_.has(a, "target") && r_.has(a, "path")) r_.fail(a, "give either \"target\" or \"path\", not both");
    const double rest = r_.number(a, "rest_distance", 0.0, 0.0, 1e9);
    if (r_.has(a, "path")) {
      // The selected particles move rigidly with the path: each keeps its offset from the path's
      // start position.
      const Node pathNode = r_.child(a, "path");
      const Vec3 start = parsePath(r_, pathNode, Vec3::Zero())(-std::numeric_limits<double>::infinity());
      for (ParticleIndex p : particles)
        builder_.addMovingAttachment(p, parsePath(r_, pathNode, builder_.position(p) - start), m, rest);
      return;
    }
    const bool fixedTarget = r_.has(a, "target");
    const Vec3 target = fixedTarget ? r_.vec3(r_.child(a, "target")) : Vec3::Zero();
    for (ParticleIndex p : particles) builder_.addAttachment(p, fixedTarget ? target : builder_.position(p), m, rest);
  }

  void parseKinematic(const Node& k) {
    r_.allowOnly(k, {"object", "select", "path"});
    const SceneObject& o = object(r_.child(k, "object"));
    const std::vector<ParticleIndex> particles = select(r_.child(k, "select"), o);
    const Node pathNode = r_.child(k, "path");
    const Vec3 start = parsePath(r_, pathNode, Vec3::Zero())(-std::numeric_limits<double>::infinity());
    for (ParticleIndex p : particles) builder_.addKinematic(p, parsePath(r_, pathNode, builder_.position(p) - start));
  }

  void parseProbe(const Node& p) {
    Probe probe;
    probe.name = r_.string(r_.child(p, "name"));
    for (const Probe& other : scene_.probes)
      if (other.name == probe.name) r_.fail(r_.child(p, "name"), "duplicate probe name '" + probe.name + "'");
    const Node typeNode = r_.child(p, "type");
    const std::string type = r_.string(typeNode);
    if (type == "particle") {
      r_.allowOnly(p, {"name", "type", "object", "index"});
      probe.kind = Probe::Kind::Particle;
      probe.particle = localParticle(r_.child(p, "index"), object(r_.child(p, "object")));
    } else if (type == "constraint_force") {
      r_.allowOnly(p, {"name", "type", "object", "family", "index"});
      probe.kind = Probe::Kind::ConstraintForce;
      const Node familyNode = r_.child(p, "family");
      const ConstraintFamily family = parseFamily(r_, familyNode);
      const int f = static_cast<int>(family);
      std::uint32_t begin = 0;
      std::uint32_t end = static_cast<std::uint32_t>(scene_.model->constraintCount(family));
      if (r_.has(p, "object")) {
        const SceneObject& o = object(r_.child(p, "object"));
        begin = o.constraintBegin[f];
        end = o.constraintEnd[f];
      }
      if (begin == end) r_.fail(familyNode, std::string("no ") + familyName(family) + " constraints to probe here");
      const auto index = r_.integer(r_.child(p, "index"), 0, static_cast<std::int64_t>(end - begin) - 1);
      probe.constraint = {family, begin + static_cast<std::uint32_t>(index)};
    } else if (type == "energy" || type == "momentum" || type == "centre_of_mass") {
      r_.allowOnly(p, {"name", "type", "object"});
      probe.kind = type == "energy"     ? Probe::Kind::Energy
                   : type == "momentum" ? Probe::Kind::Momentum
                                        : Probe::Kind::CentreOfMass;
      if (r_.has(p, "object")) probe.object = objectIndex(r_.child(p, "object"));
    } else if (type == "residual") {
      r_.allowOnly(p, {"name", "type"});
      probe.kind = Probe::Kind::Residual;
    } else if (type == "intersections") {
      r_.allowOnly(p, {"name", "type"});
      probe.kind = Probe::Kind::Intersections;
    } else {
      r_.fail(typeNode, "unknown probe type '" + type +
                            "' (expected particle, constraint_force, energy, momentum, centre_of_mass, residual or "
                            "intersections)");
    }
    scene_.probes.push_back(probe);
  }

  const SceneReader& r_;
  ModelBuilder builder_;
  Scene scene_;
};

// "line:column" of byte `offset` (0-based) in `text`, both 1-based.
std::string lineColumn(const std::string& text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  const std::size_t end = std::min(offset, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

// Offset of the first occurrence of number token `token` outside string literals, or npos.
std::size_t findNumberToken(const std::string& text, const std::string& token) {
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
      continue;
    }
    if (text.compare(i, token.size(), token) == 0 &&
        (i == 0 || std::string("[,: \t\r\n").find(text[i - 1]) != std::string::npos))
      return i;
  }
  return std::string::npos;
}

}  // namespace

Scene parseScene(const std::string& text, const std::string& source, const std::string& baseDirectory) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // Translate the byte offset into a line and column a person can find.
    // what() is "[json.exception.parse_error.101] parse error at line L, column C: syntax error while
    // parsing value - unexpected '}'; ..."; keep what follows " - " (the part after the first ": "
    // may itself contain ": " inside "last read: '...'").
    std::string detail = e.what();
    const auto colon = detail.find(": ");
    if (colon != std::string::npos) detail = detail.substr(colon + 2);
    const auto dash = detail.find(" - ");
    if (dash != std::string::npos) detail = detail.substr(dash + 3);
    throw Error(source + ":" + lineColumn(text, e.byte > 0 ? e.byte - 1 : 0) + ": JSON syntax error: " + detail);
  } catch (const Json::out_of_range& e) {
    // nlohmann reports a number too large for a double (1e999) as out_of_range without a position;
    // its message quotes the token, so find the token in the text.
    std::string token = e.what();
    const auto open = token.find('\'');
    const auto close = token.rfind('\'');
    token = open != std::string::npos && close > open ? token.substr(open + 1, close - open - 1) : std::string();
    const std::size_t at = token.empty() ? std::string::npos : findNumberToken(text, token);
    throw Error(source + (at == std::string::npos ? std::string() : ":" + lineColumn(text, at)) + ": number " +
                (token.empty() ? std::string() : token + " ") + "is out of range; expected a finite number");
  }
  SceneReader reader(source, baseDirectory);
  if (!root.is_object()) reader.fail(Node{root, ""}, "expected a JSON object at the top level");
  SceneLoader loader(reader);
  return loader.load(root);
}

Scene loadSceneFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a folder, expected a scene file (.json)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the scene file (does it exist and is it readable?)");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string base = std::filesystem::path(path).parent_path().string();
  return parseScene(buffer.str(), path, base);
}

}  // namespace pliant
