// Scene files: extra constraints between objects, attachments and kinematic (scripted) particles.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "json_fields.h"
#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/io/mesh_io.h"
#include "scene_loader.h"

namespace pliant::scenefile {

namespace {

// Builder errors ("attachment 3: ...") know neither the file nor the JSON path; add them.
template <class Build>
void namingBuilderErrors(const SceneReader& r, const Node& at, Build&& build) {
  try {
    build();
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.rfind(r.source() + ":", 0) == 0) throw;
    r.fail(at, message);
  }
}

}  // namespace

void SceneLoader::parseConstraint(const Node& c) {
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
  // Checked now, added in phase 3 (scene_loader.h).
  std::function<void()> add;
  if (type == "distance") {
    const ConstraintParameters m = r_.material(c, {"type", "particles", "rest_length"});
    need(2);
    const double rest = r_.number(c, "rest_length", -1.0, 0.0, 1e9);
    add = [this, p, m, rest] { builder_.addDistance(p[0], p[1], m, rest); };
  } else if (type == "max_distance") {
    const ConstraintParameters m = r_.material(c, {"type", "particles", "max_length"});
    need(2);
    const double length = r_.number(c, "max_length", -1.0, 0.0, 1e9);
    add = [this, p, m, length] { builder_.addMaxDistance(p[0], p[1], m, length); };
  } else if (type == "dihedral_bending") {
    const ConstraintParameters m = r_.material(c, {"type", "particles", "rest_angle"});
    need(4);
    const double angle = r_.number(c, "rest_angle", std::numeric_limits<double>::quiet_NaN(), -4.0, 4.0);
    add = [this, p, m, angle] { builder_.addDihedralBending(p[0], p[1], p[2], p[3], m, angle); };
  } else if (type == "isometric_bending") {
    const ConstraintParameters m = r_.material(c, {"type", "particles"});
    need(4);
    add = [this, p, m] { builder_.addIsometricBending(p[0], p[1], p[2], p[3], m); };
  } else if (type == "tet_volume") {
    const ConstraintParameters m = r_.material(c, {"type", "particles"});
    need(4);
    add = [this, p, m] { builder_.addTetVolume(p[0], p[1], p[2], p[3], m); };
  } else {
    r_.fail(typeNode, "unknown constraint type '" + type +
                          "' (expected distance, max_distance, dihedral_bending, isometric_bending or tet_volume)");
  }
  SceneSize size;
  size.other = 1;
  demands_.push_back({c.path, size});
  queue([this, c, add] {
    try {
      add();
    } catch (const Error& e) {
      // Builder errors (coincident particles, ...) do not know the JSON path; add it.
      const std::string message = e.what();
      if (message.rfind(r_.source() + ":", 0) == 0) throw;
      r_.fail(c, message);
    }
  });
}

void SceneLoader::parseAttachment(const Node& a) {
  // To a body: parsed once the bodies are (SceneLoader::load).
  if (r_.has(a, "body")) return;
  const ConstraintParameters m = r_.material(a, {"object", "select", "target", "path", "rest_distance"});
  const int objectAt = objectIndex(r_.child(a, "object"));
  const Node selection = r_.child(a, "select");
  const std::int64_t count = checkSelection(selection, scene_.objects[objectAt]);
  if (r_.has(a, "target") && r_.has(a, "path")) r_.fail(a, "give either \"target\" or \"path\", not both");
  const double rest = r_.number(a, "rest_distance", 0.0, 0.0, 1e9);
  SceneSize size;
  size.other = count < 0 ? scene_.objects[objectAt].particleCount : static_cast<std::uint64_t>(count);
  demands_.push_back({a.path, size});
  if (r_.has(a, "path")) {
    // The selected particles move rigidly with the path: each keeps its offset from the path's
    // start position.
    const Node pathNode = r_.child(a, "path");
    const Vec3 start = parsePath(r_, pathNode, Vec3::Zero())(-std::numeric_limits<double>::infinity());
    queue([this, a, objectAt, selection, pathNode, start, m, rest] {
      namingBuilderErrors(r_, a, [&] {
        for (ParticleIndex p : select(selection, scene_.objects[objectAt]))
          builder_.addMovingAttachment(p, parsePath(r_, pathNode, builder_.position(p) - start), m, rest);
      });
    });
    return;
  }
  const bool fixedTarget = r_.has(a, "target");
  const Vec3 target = fixedTarget ? r_.vec3(r_.child(a, "target")) : Vec3::Zero();
  queue([this, a, objectAt, selection, fixedTarget, target, m, rest] {
    namingBuilderErrors(r_, a, [&] {
      for (ParticleIndex p : select(selection, scene_.objects[objectAt]))
        builder_.addAttachment(p, fixedTarget ? target : builder_.position(p), m, rest);
    });
  });
}

void SceneLoader::parseBodyAttachment(const Node& a) {
  if (!r_.has(a, "body")) return;
  const ConstraintParameters m = r_.material(a, {"object", "select", "body", "rest_distance"});
  const int objectAt = objectIndex(r_.child(a, "object"));
  const Node selection = r_.child(a, "select");
  const std::int64_t count = checkSelection(selection, scene_.objects[objectAt]);
  const auto body = static_cast<BodyIndex>(bodyIndex(r_.child(a, "body")));
  const double rest = r_.number(a, "rest_distance", 0.0, 0.0, 1e9);
  SceneSize size;
  size.other = count < 0 ? scene_.objects[objectAt].particleCount : static_cast<std::uint64_t>(count);
  demands_.push_back({a.path, size});
  // Each selected particle is held at the body's material point where the particle starts.
  queue([this, a, objectAt, selection, body, m, rest] {
    namingBuilderErrors(r_, a, [&] {
      for (ParticleIndex p : select(selection, scene_.objects[objectAt]))
        builder_.addBodyAttachment(p, body, builder_.position(p), m, rest);
    });
  });
}

void SceneLoader::parseKinematic(const Node& k) {
  r_.allowOnly(k, {"object", "select", "path"});
  const int objectAt = objectIndex(r_.child(k, "object"));
  const Node selection = r_.child(k, "select");
  checkSelection(selection, scene_.objects[objectAt]);
  const Node pathNode = r_.child(k, "path");
  const Vec3 start = parsePath(r_, pathNode, Vec3::Zero())(-std::numeric_limits<double>::infinity());
  queue([this, k, objectAt, selection, pathNode, start] {
    namingBuilderErrors(r_, k, [&] {
      for (ParticleIndex p : select(selection, scene_.objects[objectAt]))
        builder_.addKinematic(p, parsePath(r_, pathNode, builder_.position(p) - start));
    });
  });
}

}  // namespace pliant::scenefile
