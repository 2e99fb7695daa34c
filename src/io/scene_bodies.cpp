// Scene files: rigid bodies and the joints between them (pliant/bodies.h). Bodies name their shape
// as colliders do ("type" with the shape's fields), are placed by the shape frame's "position" and
// "rotation" ({"axis", "angle"}, as colliders), and kinematic ones move by a "path" and an
// "angular_velocity" spin, as kinematic colliders. Joints name their bodies by name, by index in
// "bodies" or as "world". Every field is checked in phase 1 naming its JSON pointer; the builder's
// own checks (mass properties, hulls, grids) run in phase 3 and name the entry that asked.
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
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

BodyShapeKind parseShapeType(const SceneReader& r, const Node& typeNode) {
  const std::string type = r.string(typeNode);
  if (type == "sphere") return BodyShapeKind::Sphere;
  if (type == "box") return BodyShapeKind::Box;
  if (type == "capsule") return BodyShapeKind::Capsule;
  if (type == "convex_hull") return BodyShapeKind::ConvexHull;
  if (type == "mesh") return BodyShapeKind::Mesh;
  r.fail(typeNode, "unknown body type '" + type + "' (expected sphere, box, capsule, convex_hull or mesh)");
}

}  // namespace

std::vector<Vec3> SceneLoader::bodyMeshVertices(const Node& b, io::TriangleMesh& mesh) {
  const std::string file = r_.resolve(r_.string(r_.child(b, "file")));
  Vec3 scale = Vec3::Ones();
  if (r_.has(b, "scale")) {
    const Node s = r_.child(b, "scale");
    if (s.json.is_array()) scale = r_.vec3(s);
    else scale = Vec3::Constant(r_.number(s, 0.0, std::numeric_limits<double>::infinity(), true));
    if (!(scale.array() > 0.0).all()) r_.fail(s, "scale factors must be > 0");
  }
  try {
    mesh = io::readObj(file);
  } catch (const Error& e) {
    r_.fail(r_.child(b, "file"), e.what());
  }
  for (Vec3& v : mesh.vertices) v = v.cwiseProduct(scale);
  return mesh.vertices;
}

void SceneLoader::parseBody(const Node& b) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t index = bodyNames_.size();
  std::vector<const char*> allowed = {"name",     "type",     "density",  "mass",        "motion",           "position",
                                      "rotation", "velocity", "friction", "restitution", "angular_velocity", "path"};
  const Node typeNode = r_.child(b, "type");
  BodyDefinition def;
  def.shape.kind = parseShapeType(r_, typeNode);
  switch (def.shape.kind) {
    case BodyShapeKind::Sphere:
      allowed.push_back("radius");
      break;
    case BodyShapeKind::Box:
      allowed.push_back("half_extents");
      break;
    case BodyShapeKind::Capsule:
      allowed.insert(allowed.end(), {"radius", "half_height"});
      break;
    case BodyShapeKind::ConvexHull:
      allowed.insert(allowed.end(), {"points", "file", "scale"});
      break;
    case BodyShapeKind::Mesh:
      allowed.insert(allowed.end(), {"file", "scale", "cell_size", "max_cells", "padding"});
      break;
    case BodyShapeKind::Plane:
      break;
  }
  r_.allowOnly(b, allowed);
  def.name = r_.has(b, "name") ? r_.string(r_.child(b, "name")) : "body_" + std::to_string(index);
  if (def.name.empty() || def.name == "world")
    r_.fail(r_.child(b, "name"), "expected a name other than \"\" and \"world\"");
  for (const std::string& other : bodyNames_)
    if (other == def.name)
      r_.fail(r_.has(b, "name") ? r_.child(b, "name") : b, "duplicate body name '" + def.name + "'");

  SceneSize size;
  size.bodies = 1;
  std::function<std::shared_ptr<const SignedDistanceGrid>()> makeGrid;  // a mesh's grid, built in phase 3
  switch (def.shape.kind) {
    case BodyShapeKind::Sphere:
      def.shape.radius = r_.number(r_.child(b, "radius"), 0.0, inf, true);
      break;
    case BodyShapeKind::Box: {
      const Node halfNode = r_.child(b, "half_extents");
      def.shape.halfExtents = r_.vec3(halfNode);
      if (!(def.shape.halfExtents.array() > 0.0).all()) r_.fail(halfNode, "half extents must be > 0 m");
      break;
    }
    case BodyShapeKind::Capsule:
      def.shape.radius = r_.number(r_.child(b, "radius"), 0.0, inf, true);
      def.shape.halfHeight = r_.number(r_.child(b, "half_height"), 0.0, inf);
      break;
    case BodyShapeKind::ConvexHull: {
      if (r_.has(b, "points") == r_.has(b, "file"))
        r_.fail(b, "give either \"points\" (an array of [x, y, z]) or \"file\" (an OBJ file), not both or neither");
      if (r_.has(b, "scale") && !r_.has(b, "file")) r_.fail(r_.child(b, "scale"), "\"scale\" goes with \"file\"");
      std::vector<Vec3> points;
      const Node where = r_.child(b, r_.has(b, "points") ? "points" : "file");
      if (r_.has(b, "points")) {
        r_.array(where, 4);
        for (std::size_t i = 0; i < where.json.size(); ++i) points.push_back(r_.vec3(r_.element(where, i)));
      } else {
        io::TriangleMesh mesh;
        points = bodyMeshVertices(b, mesh);
      }
      size.other += points.size();
      // Checked now (it is the points' count that limits it), so that a flat set of points is
      // reported before anything is built.
      try {
        def.shape.hull = std::make_shared<const ConvexHull>(buildConvexHull(points, "the convex hull"));
      } catch (const Error& e) {
        r_.fail(where, e.what());
      }
      break;
    }
    case BodyShapeKind::Mesh: {
      auto mesh = std::make_shared<io::TriangleMesh>();
      bodyMeshVertices(b, *mesh);
      if (r_.has(b, "cell_size") && r_.has(b, "max_cells"))
        r_.fail(b, "give either \"cell_size\" or \"max_cells\", not both");
      SignedDistanceGridOptions options;
      options.cellSize = r_.number(b, "cell_size", 0.0, 0.0, inf, true);
      if (r_.has(b, "max_cells"))
        options.maxCellsPerAxis = static_cast<int>(r_.integer(r_.child(b, "max_cells"), 1, 4096));
      options.padding = r_.number(b, "padding", -1.0, 0.0, inf);
      size.other += mesh->vertices.size() + mesh->triangles.size();
      size.gridNodes = gridNodeEstimate(mesh->vertices, options);
      const Node fileNode = r_.child(b, "file");
      const std::string source = r_.string(fileNode);
      makeGrid = [this, fileNode, mesh, options, source] {
        try {
          return std::make_shared<const SignedDistanceGrid>(
              SignedDistanceGrid::build(mesh->vertices, mesh->triangles, options, source));
        } catch (const Error& e) {
          r_.fail(fileNode, e.what());
        }
      };
      break;
    }
    case BodyShapeKind::Plane:
      break;
  }

  if (r_.has(b, "density") && r_.has(b, "mass")) r_.fail(b, "give either \"density\" or \"mass\", not both");
  def.density = r_.number(b, "density", def.density, 0.0, inf, true);
  def.mass = r_.number(b, "mass", 0.0, 0.0, inf, true);
  if (r_.has(b, "motion")) {
    const Node m = r_.child(b, "motion");
    const std::string motion = r_.string(m);
    if (motion == "dynamic") def.motion = BodyMotion::Dynamic;
    else if (motion == "static") def.motion = BodyMotion::Static;
    else if (motion == "kinematic") def.motion = BodyMotion::Kinematic;
    else r_.fail(m, "unknown motion '" + motion + "' (expected dynamic, static or kinematic)");
  }
  def.pose.position = r_.vec3(b, "position", Vec3::Zero());
  def.pose.rotation = r_.has(b, "rotation") ? rotation(r_.child(b, "rotation")) : Quat::Identity();
  def.material = contactMaterial(b);
  if (def.motion != BodyMotion::Kinematic && r_.has(b, "path"))
    r_.fail(r_.child(b, "path"), "only a kinematic body (\"motion\": \"kinematic\") follows a path");
  if (def.motion != BodyMotion::Dynamic && r_.has(b, "velocity"))
    r_.fail(r_.child(b, "velocity"), std::string("a ") + bodyMotionName(def.motion) +
                                         " body has no initial velocity (a kinematic one moves by \"path\")");
  if (def.motion == BodyMotion::Static && r_.has(b, "angular_velocity"))
    r_.fail(r_.child(b, "angular_velocity"), "a static body does not turn (a kinematic one spins by it)");
  def.velocity = r_.vec3(b, "velocity", Vec3::Zero());
  if (def.motion == BodyMotion::Dynamic) def.angularVelocity = r_.vec3(b, "angular_velocity", Vec3::Zero());
  if (def.motion == BodyMotion::Kinematic) {
    if (r_.has(b, "path")) {
      const Node pathNode = r_.child(b, "path");
      const Vec3 start = parsePath(r_, pathNode, Vec3::Zero())(-inf);
      def.path = parsePath(r_, pathNode, def.pose.position - start);
    }
    if (r_.has(b, "angular_velocity")) {
      // Constant angular velocity w from time 0 about the shape frame's origin, as colliders.
      const Vec3 omega = r_.vec3(r_.child(b, "angular_velocity"));
      const double rate = omega.norm();
      if (rate > 0.0) {
        const Vec3 axis = omega / rate;
        const Quat initial = def.pose.rotation;
        def.rotationPath = [axis, rate, initial](double t) {
          return Quat(Eigen::AngleAxisd(rate * t, axis)) * initial;
        };
      }
    }
  }
  bodyNames_.push_back(def.name);
  demands_.push_back({b.path, size});
  queue([this, b, def, makeGrid]() mutable {
    if (makeGrid) def.shape.grid = makeGrid();
    try {
      builder_.addBody(def);
    } catch (const Error& e) {
      r_.fail(b, e.what());
    }
  });
}

BodyIndex SceneLoader::bodyRef(const Node& node) {
  if (node.json.is_string()) {
    const std::string name = r_.string(node);
    if (name == "world") return kWorldBody;
    for (std::size_t i = 0; i < bodyNames_.size(); ++i)
      if (bodyNames_[i] == name) return static_cast<BodyIndex>(i);
    std::string known;
    for (const std::string& n : bodyNames_) known += (known.empty() ? "" : ", ") + n;
    r_.fail(node, "unknown body '" + name +
                      "' (expected \"world\" or one of the bodies: " + (known.empty() ? "none" : known) + ")");
  }
  if (node.json.is_number_integer()) {
    if (bodyNames_.empty()) r_.fail(node, "the scene has no bodies; expected \"world\"");
    return static_cast<BodyIndex>(r_.integer(node, 0, static_cast<std::int64_t>(bodyNames_.size()) - 1));
  }
  r_.fail(node, "expected a body name, an index into \"bodies\" or \"world\", got " + typeName(node.json));
}

void SceneLoader::parseJoint(const Node& j) {
  const double inf = std::numeric_limits<double>::infinity();
  const Node typeNode = r_.child(j, "type");
  const std::string type = r_.string(typeNode);
  JointDefinition def;
  if (type == "fixed") def.kind = JointKind::Fixed;
  else if (type == "spherical") def.kind = JointKind::Spherical;
  else if (type == "hinge") def.kind = JointKind::Hinge;
  else if (type == "prismatic") def.kind = JointKind::Prismatic;
  else if (type == "distance") def.kind = JointKind::Distance;
  else r_.fail(typeNode, "unknown joint type '" + type + "' (expected fixed, spherical, hinge, prismatic or distance)");
  std::vector<const char*> allowed = {"name", "type", "body_a", "body_b", "anchor", "compliance", "damping"};
  const bool hasAxis = def.kind != JointKind::Distance && def.kind != JointKind::Fixed;
  const bool hasLimits =
      def.kind == JointKind::Hinge || def.kind == JointKind::Spherical || def.kind == JointKind::Prismatic;
  if (hasAxis) allowed.push_back("axis");
  if (hasLimits) allowed.insert(allowed.end(), {"lower", "upper"});
  if (def.kind == JointKind::Spherical) allowed.push_back("swing_limit");
  if (def.kind == JointKind::Hinge) allowed.push_back("drive");
  if (def.kind == JointKind::Distance) allowed.insert(allowed.end(), {"anchor_b", "rest_length"});
  r_.allowOnly(j, allowed);
  const std::string name =
      r_.has(j, "name") ? r_.string(r_.child(j, "name")) : "joint_" + std::to_string(jointNames_.size());
  for (const std::string& other : jointNames_)
    if (other == name) r_.fail(r_.has(j, "name") ? r_.child(j, "name") : j, "duplicate joint name '" + name + "'");
  def.bodyA = bodyRef(r_.child(j, "body_a"));
  def.bodyB = bodyRef(r_.child(j, "body_b"));
  if (def.bodyA == def.bodyB)
    r_.fail(r_.child(j, "body_b"), "is the same as body_a; expected two different bodies (or one and \"world\")");
  def.anchor = r_.vec3(r_.child(j, "anchor"));
  if (def.kind == JointKind::Distance) {
    def.anchorB = r_.vec3(j, "anchor_b", def.anchor);
    def.restLength = r_.number(j, "rest_length", -1.0, 0.0, inf);
  }
  // A spherical joint's axis only sets where its twist is measured from (default x).
  if (hasAxis && (def.kind != JointKind::Spherical || r_.has(j, "axis"))) {
    const Node axisNode = r_.child(j, "axis");
    def.axis = r_.vec3(axisNode);
    if (!(def.axis.norm() > 0.0)) r_.fail(axisNode, "the axis must not be zero");
  }
  def.params.compliance = r_.number(j, "compliance", 0.0, 0.0, inf);
  def.params.damping = r_.number(j, "damping", 0.0, 0.0, inf);
  if (hasLimits) {
    // Angles for hinge and spherical (twist) joints in [-pi, pi] rad; offsets (m) for prismatic.
    const bool angular = def.kind != JointKind::Prismatic;
    const double bound = angular ? std::numbers::pi : inf;
    def.lower = r_.number(j, "lower", -inf, -bound, bound);
    def.upper = r_.number(j, "upper", inf, -bound, bound);
    if (r_.has(j, "lower") && r_.has(j, "upper") && def.lower > def.upper)
      r_.fail(r_.child(j, "upper"), "is below \"lower\" (" + formatNumber(def.lower) + "); expected upper >= lower");
  }
  if (def.kind == JointKind::Spherical && r_.has(j, "swing_limit"))
    def.swingLimit = r_.number(r_.child(j, "swing_limit"), 0.0, std::numbers::pi, true);
  if (def.kind == JointKind::Hinge && r_.has(j, "drive")) {
    const Node d = r_.child(j, "drive");
    r_.allowOnly(d, {"mode", "target", "compliance", "damping"});
    const Node modeNode = r_.child(d, "mode");
    const std::string mode = r_.string(modeNode);
    if (mode == "angle") def.drive = JointDrive::Angle;
    else if (mode == "speed") def.drive = JointDrive::Speed;
    else r_.fail(modeNode, "unknown drive mode '" + mode + "' (expected angle or speed)");
    def.driveTarget = r_.number(r_.child(d, "target"));
    def.driveParams.compliance = r_.number(d, "compliance", 0.0, 0.0, inf);
    def.driveParams.damping = r_.number(d, "damping", 0.0, 0.0, inf);
  }
  jointNames_.push_back(name);
  SceneSize size;
  size.joints = 1;
  demands_.push_back({j.path, size});
  queue([this, j, def] {
    try {
      builder_.addJoint(def);
    } catch (const Error& e) {
      r_.fail(j, e.what());
    }
  });
}

int SceneLoader::bodyIndex(const Node& node) {
  const BodyIndex body = bodyRef(node);
  if (body == kWorldBody) r_.fail(node, "expected a body of the scene, not \"world\"");
  return static_cast<int>(body);
}

std::uint32_t SceneLoader::jointRef(const Node& node) {
  if (node.json.is_string()) {
    const std::string name = r_.string(node);
    for (std::size_t i = 0; i < jointNames_.size(); ++i)
      if (jointNames_[i] == name) return static_cast<std::uint32_t>(i);
    std::string known;
    for (const std::string& n : jointNames_) known += (known.empty() ? "" : ", ") + n;
    r_.fail(node,
            "unknown joint '" + name + "' (expected one of the joints: " + (known.empty() ? "none" : known) + ")");
  }
  if (node.json.is_number_integer()) {
    if (jointNames_.empty()) r_.fail(node, "the scene has no joints; expected a \"joints\" array");
    return static_cast<std::uint32_t>(r_.integer(node, 0, static_cast<std::int64_t>(jointNames_.size()) - 1));
  }
  r_.fail(node, "expected a joint name or an index into \"joints\", got " + typeName(node.json));
}

}  // namespace pliant::scenefile
