// Scene files: colliders (analytic shapes and meshes) and the contact settings.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "json_fields.h"
#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/io/mesh_io.h"
#include "scene_loader.h"

namespace pliant::scenefile {

void SceneLoader::parseSurfaceContact(const Node& sc) {
  r_.allowOnly(sc, {"enabled", "thickness", "friction", "restitution"});
  Model& model = builder_.model();
  const bool enabled = r_.has(sc, "enabled") ? r_.boolean(r_.child(sc, "enabled")) : true;
  if (enabled && !selfCollisionObjects_)
    r_.fail(sc, "no object has \"self_collision\": true, so surface contact has nothing to act on");
  surfaceContactEnabled_ = enabled;
  // The cloths' collision triangles exist once they are built (phase 3).
  queue([this, enabled] {
    Model& built = builder_.model();
    built.selfCollision = enabled && !built.collisionTriangles.empty();
  });
  model.surfaceThickness = r_.number(sc, "thickness", model.surfaceThickness, 0.0, 1e3, true);
  model.surfaceContactMaterial = contactMaterial(sc);
}

void SceneLoader::checkSurfaceThickness(const Node& top) {
  const Model& model = builder_.model();
  if (!model.selfCollision || !r_.has(top, "surface_contact")) return;
  const Node sc = r_.child(top, "surface_contact");
  if (!r_.has(sc, "thickness")) return;
  // A thickness of the size of the mesh makes every pair a contact (issue 12); Model::validate
  // refuses it too, this names the field.
  const double limit = surfaceThicknessLimit(model);
  if (model.surfaceThickness > limit)
    r_.fail(r_.child(sc, "thickness"),
            "is " + formatNumber(model.surfaceThickness) +
                " m, above the mean edge length of the self-colliding cloths' triangles, " + formatNumber(limit) +
                " m: every vertex would be in contact with its whole neighbourhood; expected at most that (keep it "
                "below about 0.7 of the shortest edge)");
}

void SceneLoader::checkParticleRadii(const Node& top) {
  const Model& model = builder_.model();
  if (!model.particleCollisions || model.particleRadius.empty()) return;
  // One model object per scene object, in file order; Model::validate refuses the same, this names
  // the field.
  std::size_t index = 0;
  r_.forEachElement(top, "objects", [&](const Node& o) {
    const std::size_t object = index++;
    if (object >= model.objects.size() || !r_.has(o, "particle_radius")) return;
    const double limit = particleRadiusLimit(model, object);
    const double radius = r_.number(r_.child(o, "particle_radius"), 0.0, 1e6);
    if (radius > limit)
      r_.fail(r_.child(o, "particle_radius"),
              "is " + std::to_string(radius) + " m, above the mean length of the object's links, " +
                  std::to_string(limit) +
                  " m: particles two links apart would overlap at rest and touch inside the object; expected at "
                  "most that (half the link length makes neighbours just touch)");
  });
}

ContactMaterial SceneLoader::contactMaterial(const Node& parent) {
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

Quat SceneLoader::rotation(const Node& node) {
  r_.allowOnly(node, {"axis", "angle"});
  const Node axisNode = r_.child(node, "axis");
  const Vec3 axis = r_.vec3(axisNode);
  if (!(axis.norm() > 0.0)) r_.fail(axisNode, "the rotation axis must not be zero");
  return Quat(Eigen::AngleAxisd(r_.number(r_.child(node, "angle")), axis.normalized()));
}

void SceneLoader::parseCollider(const Node& c) {
  const Node typeNode = r_.child(c, "type");
  const std::string type = r_.string(typeNode);
  const double inf = std::numeric_limits<double>::infinity();
  Collider collider;
  std::function<Collider()> makeMesh;  // a mesh collider's signed distance grid, built in phase 3
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
    r_.allowOnly(c,
                 {"type", "centre", "half_extents", "rotation", "friction", "restitution", "path", "angular_velocity"});
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
    makeMesh = parseMeshCollider(c);
    // Its pose as the built collider will have it (the path and spin below start from it).
    collider.pose.position = r_.vec3(c, "position", Vec3::Zero());
    collider.pose.rotation = r_.has(c, "rotation") ? rotation(r_.child(c, "rotation")) : Quat::Identity();
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
  const ContactMaterial material = collider.material;
  queue([this, c, collider, makeMesh, material, path, spin]() mutable {
    try {
      if (makeMesh) {
        collider = makeMesh();
        collider.material = material;
      }
      builder_.addCollider(collider, std::move(path), std::move(spin));
    } catch (const Error& e) {
      const std::string message = e.what();
      if (message.rfind(r_.source() + ":", 0) == 0) throw;
      r_.fail(c, message);
    }
  });
}

std::uint64_t gridNodeEstimate(const std::vector<Vec3>& vertices, const SignedDistanceGridOptions& options) {
  const double inf = std::numeric_limits<double>::infinity();
  Vec3 lo = Vec3::Constant(inf), hi = -lo;
  for (const Vec3& v : vertices) {
    lo = lo.cwiseMin(v);
    hi = hi.cwiseMax(v);
  }
  if (!(hi.array() > lo.array()).any()) return 0;
  const Vec3 extent = hi - lo;
  const double longest = extent.maxCoeff();
  double padding = options.padding >= 0.0 ? options.padding : 0.1 * longest;
  const double h = options.cellSize > 0.0 ? options.cellSize : (longest + 2.0 * padding) / options.maxCellsPerAxis;
  padding = std::max(padding, 2.0 * h);
  double nodes = 1.0;
  for (int k = 0; k < 3; ++k) nodes *= std::ceil((extent[k] + 2.0 * padding) / h) + 1.0;
  return static_cast<std::uint64_t>(std::min(nodes, static_cast<double>(kMaxSignedDistanceGridNodes)));
}

std::function<Collider()> SceneLoader::parseMeshCollider(const Node& c) {
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
  if (r_.has(c, "max_cells")) options.maxCellsPerAxis = static_cast<int>(r_.integer(r_.child(c, "max_cells"), 1, 4096));
  options.padding = r_.number(c, "padding", -1.0, 0.0, inf);
  const Vec3 position = r_.vec3(c, "position", Vec3::Zero());
  const Quat q = r_.has(c, "rotation") ? rotation(r_.child(c, "rotation")) : Quat::Identity();
  // The mesh is read now (mesh errors name the OBJ file; say which collider entry asked for it),
  // its grid built in phase 3: counted here the way the grid sizes itself (signed_distance_grid.cpp),
  // at most the grid limit, past which building it is refused anyway.
  auto mesh = std::make_shared<io::TriangleMesh>();
  try {
    *mesh = io::readObj(file);
  } catch (const Error& e) {
    r_.fail(c, e.what());
  }
  for (Vec3& v : mesh->vertices) v = v.cwiseProduct(scale);
  SceneSize size;
  size.other = mesh->vertices.size() + mesh->triangles.size();
  size.gridNodes = gridNodeEstimate(mesh->vertices, options);
  demands_.push_back({c.path + (r_.has(c, "cell_size")   ? "/cell_size"
                                : r_.has(c, "max_cells") ? "/max_cells"
                                                         : ""),
                      size});
  return [this, c, mesh, file, position, q, options] {
    try {
      return Collider::mesh(mesh->vertices, mesh->triangles, position, q, options, {}, file);
    } catch (const Error& e) {
      r_.fail(c, e.what());
    }
  };
}

}  // namespace pliant::scenefile
