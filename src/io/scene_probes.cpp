// Scene files: probes, what a run records per frame or substep.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "json_fields.h"
#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/io/mesh_io.h"
#include "scene_loader.h"

namespace pliant::scenefile {

void SceneLoader::parseProbe(const Node& p) {
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
    probe.constraint.family = parseFamily(r_, r_.child(p, "family"));
    if (r_.has(p, "object")) object(r_.child(p, "object"));
    // The index against the constraint count once the model is built (checkProbeIndices).
    r_.integer(r_.child(p, "index"), 0, std::numeric_limits<std::uint32_t>::max());
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
  } else if (type == "body") {
    r_.allowOnly(p, {"name", "type", "body"});
    probe.kind = Probe::Kind::Body;
    probe.body = bodyIndex(r_.child(p, "body"));
  } else if (type == "body_momentum" || type == "body_energy") {
    r_.allowOnly(p, {"name", "type", "body"});
    probe.kind = type == "body_momentum" ? Probe::Kind::BodyMomentum : Probe::Kind::BodyEnergy;
    if (r_.has(p, "body")) probe.body = bodyIndex(r_.child(p, "body"));
    else if (bodyNames_.empty()) r_.fail(p, "the scene has no bodies to probe; expected a \"bodies\" array");
  } else if (type == "joint_force") {
    r_.allowOnly(p, {"name", "type", "joint"});
    probe.kind = Probe::Kind::JointForce;
    probe.joint = jointRef(r_.child(p, "joint"));
  } else {
    r_.fail(typeNode, "unknown probe type '" + type +
                          "' (expected particle, constraint_force, energy, momentum, centre_of_mass, residual, "
                          "intersections, body, body_momentum, body_energy or joint_force)");
  }
  scene_.probes.push_back(probe);
}

void SceneLoader::checkProbeIndices(const Node& top) {
  std::size_t i = 0;
  r_.forEachElement(top, "probes", [&](const Node& p) {
    Probe& probe = scene_.probes[i++];
    if (probe.kind != Probe::Kind::ConstraintForce) return;
    const Node familyNode = r_.child(p, "family");
    const ConstraintFamily family = probe.constraint.family;
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
  });
}

}  // namespace pliant::scenefile
