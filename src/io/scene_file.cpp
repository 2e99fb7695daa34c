// Scene files: JSON in, a Scene out. Every value is checked where it is read, and every error names
// the source, the JSON path (RFC 6901 style, e.g. /objects/0/stretch/compliance) and what was
// expected. Unknown fields are errors too: a typo must not silently fall back to a default.
// The format is documented in docs/scene-format.md and docs/scene.schema.json.
//
// SceneLoader (scene_loader.h) reads one block kind per file: the top level and the solver here,
// then scene_objects.cpp, scene_colliders.cpp, scene_constraints.cpp, scene_probes.cpp; JSON
// reading is json_fields.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "json_fields.h"
#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/scenes.h"
#include "scene_loader.h"

namespace pliant {

namespace scenefile {

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
                   "tet_volume, global_volume, generic, neo_hookean or shape_matching)");
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

Scene SceneLoader::load(const Json& root) {
  const Node top{root, ""};
  r_.allowOnly(top, {"$schema", "name", "description", "solver", "frames", "duration", "objects", "constraints",
                     "attachments", "kinematic", "colliders", "bodies", "joints", "particle_contact", "surface_contact",
                     "probes", "probe_every"});
  // Phase 1 (see scene_loader.h): every field, in file order; what builds is queued.
  if (r_.has(top, "name")) scene_.name = r_.string(r_.child(top, "name"));
  if (r_.has(top, "description")) scene_.description = r_.string(r_.child(top, "description"));
  parseSolver(top);
  // A scene has something to move: an object, or a rigid body.
  const bool hasBodies =
      r_.has(top, "bodies") && r_.child(top, "bodies").json.is_array() && !r_.child(top, "bodies").json.empty();
  r_.forEachElement(
      top, "objects", [&](const Node& o) { parseObject(o); }, hasBodies ? 0 : 1);
  r_.forEachElement(top, "constraints", [&](const Node& n) { parseConstraint(n); });
  r_.forEachElement(top, "attachments", [&](const Node& n) { parseAttachment(n); });
  r_.forEachElement(top, "kinematic", [&](const Node& n) { parseKinematic(n); });
  r_.forEachElement(top, "colliders", [&](const Node& n) { parseCollider(n); });
  r_.forEachElement(top, "bodies", [&](const Node& n) { parseBody(n); });
  r_.forEachElement(top, "joints", [&](const Node& n) { parseJoint(n); });
  r_.forEachElement(top, "attachments", [&](const Node& n) { parseBodyAttachment(n); });
  if (r_.has(top, "particle_contact")) {
    const Node pc = r_.child(top, "particle_contact");
    r_.allowOnly(pc, {"enabled", "friction", "restitution"});
    if (r_.has(pc, "enabled")) builder_.model().particleCollisions = r_.boolean(r_.child(pc, "enabled"));
    // As for surface_contact: a block asking for contacts that cannot happen is a mistake, not a no-op.
    // Objects are built later (phase 3); their demands say which have a radius.
    if (builder_.model().particleCollisions &&
        std::none_of(demands_.begin(), demands_.end(), [](const Demand& d) { return d.size.contactParticles > 0; }))
      r_.fail(pc,
              "no object has a \"particle_radius\" > 0, so particle contact has nothing to act on; expected "
              "\"particle_radius\" (m) on the objects that collide, or \"enabled\": false");
    builder_.model().particleContactMaterial = contactMaterial(pc);
  }
  particleContacts_ = builder_.model().particleCollisions;
  if (r_.has(top, "surface_contact")) parseSurfaceContact(r_.child(top, "surface_contact"));
  if (r_.has(top, "frames") && r_.has(top, "duration")) r_.fail(top, "give either 'frames' or 'duration', not both");
  constexpr std::int64_t kMaxFrames = kMaxSceneFrames;
  if (r_.has(top, "frames")) scene_.frames = static_cast<int>(r_.integer(r_.child(top, "frames"), 0, kMaxFrames));
  if (r_.has(top, "duration")) {
    const Node durationNode = r_.child(top, "duration");
    const double duration = r_.number(durationNode, 0.0, 1e9);
    // Checked as a double before the cast: a long duration over a short time step is more frames
    // than an int holds (issue 12).
    const double frames = std::ceil(duration / scene_.settings.timeStep - 1e-9);
    if (!(frames <= static_cast<double>(kMaxFrames)))
      r_.fail(durationNode,
              "is " + (frames < 1e18 ? std::to_string(static_cast<long long>(frames)) : formatNumber(frames)) +
                  " frames of solver.time_step " + formatNumber(scene_.settings.timeStep) + " s; expected at most " +
                  std::to_string(kMaxFrames) + " frames (a shorter duration or a longer time step)");
    scene_.frames = static_cast<int>(std::max(frames, 0.0));
  }
  r_.forEachElement(top, "probes", [&](const Node& n) { parseProbe(n); });
  if (r_.has(top, "probe_every")) {
    const Node every = r_.child(top, "probe_every");
    const std::string value = r_.string(every);
    if (value != "frame" && value != "substep") r_.fail(every, "expected \"frame\" or \"substep\"");
    scene_.probeEverySubstep = value == "substep";
  }
  // Phase 2: the memory the scene needs.
  checkMemory();
  // Phase 3: build, in file order, then what needs the built geometry.
  for (const auto& work : build_) work();
  build_.clear();
  checkSurfaceThickness(top);
  checkParticleRadii(top);
  try {
    scene_.model = builder_.build();
  } catch (const Error& e) {
    throw Error(r_.source() + ": " + e.what());
  }
  checkProbeIndices(top);
  scene_.inputFiles = r_.resolvedFiles();
  return std::move(scene_);
}

void SceneLoader::checkMemory(const SceneSize& extra, const std::string& extraField) const {
  std::vector<Demand> demands = demands_;
  if (!extraField.empty()) demands.push_back({extraField, extra});
  SceneSize total;
  for (Demand& d : demands) {
    // Contacts that are off need no scratch.
    if (!particleContacts_) d.size.contactParticles = 0;
    if (!surfaceContactEnabled_) d.size.collisionParticles = d.size.collisionEdges = d.size.collisionTriangles = 0;
    total += d.size;
  }
  // Indices of particles and constraints are 32-bit.
  constexpr std::uint64_t kMaxIndex = 0xffffffffu;
  const std::uint64_t constraints = total.distances + total.bendings + total.tets + total.other;
  if (total.particles > kMaxIndex || constraints > kMaxIndex) {
    const Demand* largest = &demands.front();
    for (const Demand& d : demands)
      if (d.size.particles + d.size.distances + d.size.bendings + d.size.tets >
          largest->size.particles + largest->size.distances + largest->size.bendings + largest->size.tets)
        largest = &d;
    throw Error(r_.source() + ": " + largest->field + ": the scene would have " + describeSize(total) +
                ", more than the 4294967295 particles or constraints a model indexes");
  }
  const double bytes = estimateBytes(total);
  if (bytes <= static_cast<double>(budget_)) return;
  const Demand* largest = &demands.front();
  for (const Demand& d : demands)
    if (estimateBytes(d.size) > estimateBytes(largest->size)) largest = &d;
  throw Error(r_.source() + ": " + largest->field + ": the scene needs an estimated " + formatBytes(bytes) +
              " of memory (this part " + formatBytes(estimateBytes(largest->size)) + ": " +
              describeSize(largest->size) + "), above the memory budget of " +
              formatBytes(static_cast<double>(budget_)) +
              " (by default half of this machine's memory; set it with --max-memory, or max_memory in Python)");
}

void SceneLoader::parseSolver(const Node& top) {
  if (!r_.has(top, "solver")) return;
  const Node s = r_.child(top, "solver");
  r_.allowOnly(s, {"mode",
                   "time_step",
                   "substeps",
                   "iterations",
                   "gravity",
                   "iteration_independent_stiffness",
                   "velocity_damping",
                   "max_displacement",
                   "divergence_factor",
                   "max_strain",
                   "contact_margin",
                   "max_depenetration_velocity",
                   "dynamic_friction",
                   "body_contact_passes",
                   "body_velocity_passes",
                   "body_stack_mass_scaling",
                   "body_collision_per_substep",
                   "sleeping",
                   "sleep_linear_speed",
                   "sleep_angular_speed",
                   "sleep_time"});
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
  if (!(out.gravity.stableNorm() <= kMaxGravity))
    r_.fail(r_.child(s, "gravity"), "magnitude " + formatNumber(out.gravity.stableNorm()) + " m/s^2 is above " +
                                        formatNumber(kMaxGravity) +
                                        " m/s^2 (10^5 g): no physical value for these bodies, and one that overflows "
                                        "positions within a few steps");
  if (r_.has(s, "iteration_independent_stiffness"))
    out.iterationIndependentStiffness = r_.boolean(r_.child(s, "iteration_independent_stiffness"));
  out.velocityDamping = r_.number(s, "velocity_damping", 0.0, 0.0, 1e6);
  out.maxDisplacementPerStep =
      r_.number(s, "max_displacement", out.maxDisplacementPerStep, 0.0, std::numeric_limits<double>::infinity(), true);
  const double inf = std::numeric_limits<double>::infinity();
  out.divergenceFactor = r_.number(s, "divergence_factor", out.divergenceFactor, 1.0, inf);
  out.maxStrain = r_.number(s, "max_strain", out.maxStrain, 0.0, inf, true);
  out.contactMargin = r_.number(s, "contact_margin", out.contactMargin, 0.0, 1e6);
  out.maxDepenetrationVelocity = r_.number(s, "max_depenetration_velocity", out.maxDepenetrationVelocity, 0.0,
                                           std::numeric_limits<double>::infinity(), true);
  if (r_.has(s, "body_contact_passes"))
    out.bodyContactPasses = static_cast<int>(r_.integer(r_.child(s, "body_contact_passes"), 1, 10000));
  if (r_.has(s, "body_velocity_passes"))
    out.bodyVelocityPasses = static_cast<int>(r_.integer(r_.child(s, "body_velocity_passes"), 1, 10000));
  out.bodyStackMassScaling = r_.number(s, "body_stack_mass_scaling", out.bodyStackMassScaling, 0.0, 1e3);
  if (r_.has(s, "body_collision_per_substep"))
    out.bodyCollisionPerSubstep = r_.boolean(r_.child(s, "body_collision_per_substep"));
  if (r_.has(s, "sleeping")) out.sleeping = r_.boolean(r_.child(s, "sleeping"));
  out.sleepLinearSpeed = r_.number(s, "sleep_linear_speed", out.sleepLinearSpeed, 0.0, 1e6);
  out.sleepAngularSpeed = r_.number(s, "sleep_angular_speed", out.sleepAngularSpeed, 0.0, 1e6);
  out.sleepTime = r_.number(s, "sleep_time", out.sleepTime, 0.0, 1e6, true);
  if (r_.has(s, "dynamic_friction")) {
    const Node where = r_.child(s, "dynamic_friction");
    const std::string value = r_.string(where);
    if (value != "position" && value != "velocity_pass")
      r_.fail(where, "expected \"position\" or \"velocity_pass\", got \"" + value + "\"");
    out.dynamicFrictionInVelocityPass = value == "velocity_pass";
  }
}

}  // namespace scenefile

using scenefile::findNumberToken;
using scenefile::Json;
using scenefile::lineColumn;
using scenefile::Node;
using scenefile::SceneLoader;
using scenefile::SceneReader;

Scene parseScene(const std::string& text, const std::string& source, const std::string& baseDirectory,
                 const SceneLoadOptions& options) {
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
  SceneLoader loader(reader, options.maxMemoryBytes > 0 ? options.maxMemoryBytes : defaultMemoryBudget());
  return loader.load(root);
}

Scene loadSceneFile(const std::string& path, const SceneLoadOptions& options) {
  const std::string text = io::readInputFile(path, "a scene file (.json)", io::kMaxSceneFileBytes);
  const std::string base = std::filesystem::path(path).parent_path().string();
  Scene scene = parseScene(text, path, base, options);
  scene.inputFiles.insert(scene.inputFiles.begin(), path);
  return scene;
}

}  // namespace pliant
