// Scene files: the objects (cloth, rope, soft body, balloon, particles, from generators or meshes)
// and references to their particles.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "json_fields.h"
#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/io/mesh_io.h"
#include "pliant/io/scenes.h"
#include "scene_loader.h"

namespace pliant::scenefile {

const SceneObject& SceneLoader::object(const Node& node) {
  const std::string name = r_.string(node);
  for (const SceneObject& o : scene_.objects)
    if (o.name == name) return o;
  std::string known;
  for (const SceneObject& o : scene_.objects) known += std::string(known.empty() ? "" : ", ") + o.name;
  r_.fail(node, "no object named '" + name + "' (objects: " + known + ")");
}

int SceneLoader::objectIndex(const Node& node) {
  const SceneObject& o = object(node);
  return static_cast<int>(&o - scene_.objects.data());
}

ParticleIndex SceneLoader::localParticle(const Node& node, const SceneObject& o) {
  const auto i = r_.integer(node, 0, static_cast<std::int64_t>(o.particleCount) - 1);
  return o.firstParticle + static_cast<ParticleIndex>(i);
}

ParticleIndex SceneLoader::particleRef(const Node& node) {
  if (node.json.is_array()) {
    if (node.json.size() != 2) r_.fail(node, "expected [\"object\", index]");
    return localParticle(r_.element(node, 1), object(r_.element(node, 0)));
  }
  r_.allowOnly(node, {"object", "index"});
  return localParticle(r_.child(node, "index"), object(r_.child(node, "object")));
}

std::vector<ParticleIndex> SceneLoader::select(const Node& node, const SceneObject& o) {
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

std::int64_t SceneLoader::checkSelection(const Node& node, const SceneObject& o) {
  r_.allowOnly(node, {"index", "indices", "box", "all"});
  if (node.json.size() != 1) r_.fail(node, "expected exactly one of index, indices, box, all");
  if (r_.has(node, "index")) {
    localParticle(r_.child(node, "index"), o);
    return 1;
  }
  if (r_.has(node, "indices")) {
    const Node list = r_.child(node, "indices");
    r_.array(list, 1);
    for (std::size_t i = 0; i < list.json.size(); ++i) localParticle(r_.element(list, i), o);
    return static_cast<std::int64_t>(list.json.size());
  }
  if (r_.has(node, "box")) {
    const Node box = r_.child(node, "box");
    r_.allowOnly(box, {"min", "max"});
    r_.vec3(r_.child(box, "min"));
    r_.vec3(r_.child(box, "max"));
    return -1;
  }
  if (!r_.boolean(r_.child(node, "all"))) r_.fail(node, "\"all\" must be true");
  return o.particleCount;
}

void SceneLoader::checkName(const Node& node, const std::string& name) {
  if (name.empty()) r_.fail(node, "object names must not be empty");
  for (const SceneObject& o : scene_.objects)
    if (o.name == name) r_.fail(node, "duplicate object name '" + name + "'");
}

void SceneLoader::parseBending(const Node& node, BendingModel& model, ConstraintParameters& params) {
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

void SceneLoader::transformMesh(const Node& o, std::vector<Vec3>& vertices) {
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

void SceneLoader::parseObject(const Node& o) {
  const std::string type = r_.string(r_.child(o, "type"));
  const Node nameNode = r_.child(o, "name");
  const std::string name = r_.string(nameNode);
  checkName(nameNode, name);
  ObjectPlan plan;
  try {
    if (type == "cloth") plan = parseCloth(o, name);
    else if (type == "rope") plan = parseRope(o, name);
    else if (type == "softbody") plan = parseSoftBody(o, name);
    else if (type == "balloon") plan = parseBalloon(o, name);
    else if (type == "particles") plan = parseParticles(o, name);
    else
      r_.fail(r_.child(o, "type"),
              "unknown object type '" + type + "' (expected cloth, rope, softbody, balloon or particles)");
  } catch (const Error& e) {
    // Errors from mesh readers do not know the JSON path; add it.
    const std::string message = e.what();
    if (message.rfind(r_.source() + ":", 0) == 0) throw;
    r_.fail(o, message);
  }
  SceneObject so;
  so.name = name;
  so.firstParticle = static_cast<ParticleIndex>(std::min<std::uint64_t>(particleTotal_, 0xffffffffu));
  so.particleCount = static_cast<std::uint32_t>(std::min<std::uint64_t>(plan.particles, 0xffffffffu));
  particleTotal_ += plan.particles;
  if (particleTotal_ > 0xffffffffu)
    throw Error(r_.source() + ": " + plan.sizeField + ": the scene would have " + std::to_string(particleTotal_) +
                " particles, more than the 4294967295 a model indexes");
  scene_.objects.push_back(so);
  const std::size_t index = scene_.objects.size() - 1;
  demands_.push_back({plan.sizeField, plan.size});
  // Contact radius (thickness) of every particle of the object.
  double radius = -1.0;
  if (r_.has(o, "particle_radius")) {
    radius = r_.number(r_.child(o, "particle_radius"), 0.0, 1e6);
    if (radius > 0.0) demands_.back().size.contactParticles = plan.particles;
  }
  // Pins and tethers belong to the object: checked now, made once its particles exist.
  std::int64_t pinCount = 0;  // -1: some chosen by a box
  if (r_.has(o, "pins")) {
    const Node pins = r_.child(o, "pins");
    r_.array(pins);
    for (std::size_t i = 0; i < pins.json.size(); ++i) {
      const std::int64_t n = checkSelection(r_.element(pins, i), so);
      pinCount = n < 0 || pinCount < 0 ? -1 : pinCount + n;
    }
  }
  bool tethers = false;
  ConstraintParameters tetherParams;
  double slack = 1.0;
  std::int64_t anchorCount = pinCount;
  if (r_.has(o, "tethers")) {
    tethers = true;
    const Node t = r_.child(o, "tethers");
    tetherParams = r_.material(t, {"slack", "anchors"});
    slack = r_.number(t, "slack", 1.0, 1.0, 1e6);
    if (r_.has(t, "anchors")) {
      const Node a = r_.child(t, "anchors");
      r_.array(a, 1);
      anchorCount = 0;
      for (std::size_t i = 0; i < a.json.size(); ++i) {
        const std::int64_t n = checkSelection(r_.element(a, i), so);
        anchorCount = n < 0 || anchorCount < 0 ? -1 : anchorCount + n;
      }
    } else if (!r_.has(o, "pins")) {
      r_.fail(t, "tethers need anchors: pin particles or give \"anchors\"");
    }
    // One tether per anchor and particle: counted now when the anchors are known by index, else
    // once the box has chosen them (phase 3, before they are made).
    if (anchorCount > 0) {
      SceneSize size;
      size.distances = static_cast<std::uint64_t>(anchorCount) * plan.particles;
      demands_.push_back({t.path, size});
    }
  }
  // Shape matching clusters over the object's particles, made once they exist.
  std::optional<ShapeMatchingBlock> shapeMatching;
  if (r_.has(o, "shape_matching")) {
    shapeMatching = parseShapeMatching(r_.child(o, "shape_matching"));
    SceneSize size;
    // One cluster: each particle once; overlapping blocks of cells: at most 8 times.
    size.clusterMembers = plan.particles * (shapeMatching->cellSize > 0.0 ? 8 : 1);
    demands_.push_back({o.path + "/shape_matching", size});
  }
  queue([this, o, index, plan, radius, tethers, tetherParams, slack, anchorCount, shapeMatching] {
    const auto before = familyCounts(builder_.model());
    GeneratedObject made;
    try {
      made = plan.generate();
    } catch (const Error& e) {
      // Errors from builders do not know the JSON path; add it.
      const std::string message = e.what();
      if (message.rfind(r_.source() + ":", 0) == 0) throw;
      r_.fail(o, message);
    }
    SceneObject& added = scene_.objects[index];
    if (made.firstParticle != added.firstParticle || made.particleCount != added.particleCount)
      throw std::logic_error("scene loader: object '" + added.name + "' has " + std::to_string(made.particleCount) +
                             " particles, counted " + std::to_string(added.particleCount));
    added.constraintBegin = before;
    io::Topology& topology = scene_.topology;
    io::TopologyPart part;
    part.name = added.name;
    part.firstParticle = added.firstParticle;
    part.particleCount = added.particleCount;
    part.trianglesBegin = topology.triangles.size();
    part.linesBegin = topology.lines.size();
    part.tetsBegin = topology.tets.size();
    topology.triangles.insert(topology.triangles.end(), made.triangles.begin(), made.triangles.end());
    topology.tets.insert(topology.tets.end(), made.tets.begin(), made.tets.end());
    if (plan.lines)
      for (std::uint32_t k = 0; k + 1 < made.particleCount; ++k)
        topology.lines.push_back({made.firstParticle + k, made.firstParticle + k + 1});
    part.trianglesEnd = topology.triangles.size();
    part.linesEnd = topology.lines.size();
    part.tetsEnd = topology.tets.size();
    part.chain = plan.lines;
    part.skin = made.skin;
    if (plan.uv) part.uv = plan.uv();
    topology.parts.push_back(std::move(part));
    if (radius >= 0.0) builder_.setParticleRadius(added.firstParticle, added.particleCount, radius);
    std::vector<ParticleIndex> pinned;
    if (r_.has(o, "pins")) {
      const Node pins = r_.child(o, "pins");
      for (std::size_t i = 0; i < pins.json.size(); ++i)
        for (ParticleIndex p : select(r_.element(pins, i), added)) {
          builder_.fixParticle(p);
          pinned.push_back(p);
        }
    }
    if (tethers) {
      const Node t = r_.child(o, "tethers");
      std::vector<ParticleIndex> anchors = pinned;
      if (r_.has(t, "anchors")) {
        const Node a = r_.child(t, "anchors");
        anchors.clear();
        for (std::size_t i = 0; i < a.json.size(); ++i)
          for (ParticleIndex p : select(r_.element(a, i), added)) anchors.push_back(p);
      }
      if (anchors.empty()) r_.fail(t, "tethers need anchors: pin particles or give \"anchors\"");
      if (anchorCount < 0) {
        // Anchors chosen by a box: their tethers are counted now, before they are made.
        SceneSize size;
        size.distances = static_cast<std::uint64_t>(anchors.size()) * added.particleCount;
        checkMemory(size, t.path);
      }
      addTethers(builder_, anchors, added.firstParticle, added.particleCount, tetherParams, slack);
    }
    if (shapeMatching) {
      std::vector<ParticleIndex> members(added.particleCount);
      for (std::uint32_t k = 0; k < added.particleCount; ++k) members[k] = added.firstParticle + k;
      const Node block = r_.child(o, "shape_matching");
      try {
        addShapeMatchingClusters(builder_, members, shapeMatching->cellSize, shapeMatching->settings, nullptr);
      } catch (const Error& e) {
        r_.fail(block, e.what());
      }
    }
    added.constraintEnd = familyCounts(builder_.model());
  });
}

SceneLoader::ObjectPlan SceneLoader::parseCloth(const Node& o, const std::string& name) {
  r_.allowOnly(o, {"type", "name", "grid", "mesh", "transform", "mass", "stretch", "bending", "damping", "pins",
                   "tethers", "particle_radius", "self_collision", "shape_matching"});
  if (r_.has(o, "grid") == r_.has(o, "mesh")) r_.fail(o, "a cloth needs exactly one of \"grid\" or \"mesh\"");
  const double mass = r_.number(r_.child(o, "mass"), 0.0, std::numeric_limits<double>::infinity(), true);
  const ConstraintParameters stretch =
      r_.has(o, "stretch") ? r_.material(r_.child(o, "stretch")) : ConstraintParameters{};
  BendingModel bending = BendingModel::None;
  ConstraintParameters bendingParams;
  if (r_.has(o, "bending")) parseBending(r_.child(o, "bending"), bending, bendingParams);
  const double damping = r_.number(o, "damping", 0.0, 0.0, 1.0);
  const bool selfCollision = r_.has(o, "self_collision") && r_.boolean(r_.child(o, "self_collision"));
  selfCollisionObjects_ = selfCollisionObjects_ || selfCollision;
  // Counts of a triangle mesh with `edges` edges of which `interior` are shared by two triangles.
  const auto meshSize = [&](std::uint64_t particles, std::uint64_t triangles, std::uint64_t edges,
                            std::uint64_t interior) {
    SceneSize size;
    size.particles = particles;
    size.triangles = triangles;
    size.distances = edges;
    size.bendings = bending == BendingModel::None ? 0 : interior;
    if (selfCollision) {
      size.collisionParticles = particles;
      size.collisionEdges = edges;
      size.collisionTriangles = triangles;
    }
    return size;
  };
  ObjectPlan plan;
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
    const std::uint64_t nx = static_cast<std::uint64_t>(def.nodesX), ny = static_cast<std::uint64_t>(def.nodesY);
    const std::uint64_t edges = (nx - 1) * ny + nx * (ny - 1) + (nx - 1) * (ny - 1);
    plan.particles = nx * ny;
    plan.size = meshSize(nx * ny, 2 * (nx - 1) * (ny - 1), edges, edges - 2 * (nx - 1) - 2 * (ny - 1));
    plan.sizeField = nodes.path;
    plan.generate = [this, def] { return addClothGrid(builder_, def); };
    // Particle (i, j) is number j nodesX + i (addClothGrid): u runs along axis_x, v along axis_y.
    plan.uv = [nx = def.nodesX, ny = def.nodesY] {
      std::vector<std::array<float, 2>> uv;
      uv.reserve(static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny));
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i)
          uv.push_back({static_cast<float>(static_cast<double>(i) / (nx - 1)),
                        static_cast<float>(static_cast<double>(j) / (ny - 1))});
      return uv;
    };
    return plan;
  }
  const Node meshNode = r_.child(o, "mesh");
  auto mesh = std::make_shared<io::TriangleMesh>(io::readObj(r_.resolve(r_.string(meshNode))));
  transformMesh(o, mesh->vertices);
  ClothMeshDef def;
  def.name = name;
  def.totalMass = mass;
  def.stretch = stretch;
  def.bending = bending;
  def.bendingParams = bendingParams;
  def.dampingFactor = damping;
  def.selfCollision = selfCollision;
  // Each triangle has three edges, an interior one shared by two: about 3/2 per triangle.
  const std::uint64_t triangles = mesh->triangles.size();
  plan.particles = mesh->vertices.size();
  plan.size = meshSize(plan.particles, triangles, (3 * triangles + 1) / 2, (3 * triangles + 1) / 2);
  plan.sizeField = meshNode.path;
  plan.generate = [this, mesh, def] { return addClothMesh(builder_, mesh->vertices, mesh->triangles, def); };
  // Particle k is vertex k of the mesh (addClothMesh): its texture coordinates are the vertex's.
  if (!mesh->texcoords.empty())
    plan.uv = [mesh] {
      std::vector<std::array<float, 2>> uv;
      for (const auto& t : mesh->texcoords) uv.push_back({static_cast<float>(t[0]), static_cast<float>(t[1])});
      return uv;
    };
  return plan;
}

SceneLoader::ObjectPlan SceneLoader::parseRope(const Node& o, const std::string& name) {
  r_.allowOnly(o, {"type", "name", "start", "end", "particles", "mass", "stretch", "damping", "pins", "tethers",
                   "particle_radius"});
  ChainDef def;
  def.name = name;
  def.start = r_.vec3(r_.child(o, "start"));
  def.end = r_.vec3(r_.child(o, "end"));
  const Node particles = r_.child(o, "particles");
  def.particles = static_cast<int>(r_.integer(particles, 2, 10000000));
  def.particleMass = r_.number(r_.child(o, "mass"), 0.0, std::numeric_limits<double>::infinity(), true) / def.particles;
  def.fixStart = false;
  if (r_.has(o, "stretch")) def.stretch = r_.material(r_.child(o, "stretch"));
  def.dampingFactor = r_.number(o, "damping", 0.0, 0.0, 1.0);
  ObjectPlan plan;
  plan.particles = static_cast<std::uint64_t>(def.particles);
  plan.size.particles = plan.particles;
  plan.size.distances = plan.particles - 1;
  plan.sizeField = particles.path;
  plan.lines = true;
  plan.generate = [this, def] { return addChain(builder_, def); };
  return plan;
}

// "shape_matching": {"mode": "rigid" | "linear", "beta", "preserve_volume", "cluster_size" (m; absent
// or 0: one cluster of the whole object), "compliance" (m/N), "damping" (N s/m), "stiffness"}.
SceneLoader::ShapeMatchingBlock SceneLoader::parseShapeMatching(const Node& n) {
  ShapeMatchingBlock block;
  block.settings.params = r_.material(n, {"mode", "beta", "preserve_volume", "cluster_size"});
  if (r_.has(n, "mode")) {
    const Node m = r_.child(n, "mode");
    const std::string mode = r_.string(m);
    if (mode == "rigid") block.settings.mode = ShapeMatchingMode::Rigid;
    else if (mode == "linear") block.settings.mode = ShapeMatchingMode::Linear;
    else r_.fail(m, "expected \"rigid\" or \"linear\", got \"" + mode + "\"");
  }
  const bool linear = block.settings.mode == ShapeMatchingMode::Linear;
  for (const char* key : {"beta", "preserve_volume"})
    if (r_.has(n, key) && !linear) r_.fail(r_.child(n, key), std::string("\"") + key + "\" needs \"mode\": \"linear\"");
  block.settings.beta = r_.number(n, "beta", block.settings.beta, 0.0, 1.0);
  if (r_.has(n, "preserve_volume")) block.settings.preserveVolume = r_.boolean(r_.child(n, "preserve_volume"));
  block.cellSize = r_.number(n, "cluster_size", 0.0, 0.0, 1e6);
  return block;
}

// "neo_hookean": {"youngs_modulus", "poisson_ratio"} or {"lame_mu", "lame_lambda"}, and "damping" (s).
NeoHookeanMaterial SceneLoader::parseNeoHookean(const Node& o) {
  if (r_.has(o, "volume") || r_.has(o, "edges"))
    r_.fail(r_.child(o, r_.has(o, "volume") ? "volume" : "edges"),
            "a soft body with a \"neo_hookean\" material has no \"volume\" or \"edges\" constraints");
  const Node n = r_.child(o, "neo_hookean");
  r_.allowOnly(n, {"youngs_modulus", "poisson_ratio", "lame_mu", "lame_lambda", "damping"});
  const bool engineering = r_.has(n, "youngs_modulus") || r_.has(n, "poisson_ratio");
  const bool lame = r_.has(n, "lame_mu") || r_.has(n, "lame_lambda");
  if (engineering == lame)
    r_.fail(n,
            "expected either \"youngs_modulus\" (Pa) and \"poisson_ratio\", or \"lame_mu\" and \"lame_lambda\" (Pa)");
  constexpr double kInf = std::numeric_limits<double>::infinity();
  NeoHookeanMaterial m;
  if (engineering) {
    m.youngsModulus = r_.number(r_.child(n, "youngs_modulus"), 0.0, kInf, true);
    const Node nu = r_.child(n, "poisson_ratio");
    m.poissonRatio = r_.number(nu);
    // 0.5 is incompressible: infinite hydrostatic stiffness.
    if (!(m.poissonRatio > -1.0 && m.poissonRatio < 0.5))
      r_.fail(nu, "expected a number > -1 and < 0.5 (0.5 is incompressible), got " + nu.json.dump());
  } else {
    const double mu = r_.number(r_.child(n, "lame_mu"), 0.0, kInf, true);
    const Node l = r_.child(n, "lame_lambda");
    const double lambda = r_.number(l, -2.0 / 3.0 * mu, kInf, true);
    m = NeoHookeanMaterial::fromLame(mu, lambda);
  }
  m.damping = r_.number(n, "damping", 0.0, 0.0, kInf);
  return m;
}

SceneLoader::ObjectPlan SceneLoader::parseSoftBody(const Node& o, const std::string& name) {
  r_.allowOnly(o, {"type", "name", "box", "mesh", "surface", "cell_size", "transform", "density", "volume", "edges",
                   "damping", "pins", "tethers", "particle_radius", "neo_hookean", "shape_matching"});
  if (int(r_.has(o, "box")) + int(r_.has(o, "mesh")) + int(r_.has(o, "surface")) != 1)
    r_.fail(o, "a soft body needs exactly one of \"box\", \"mesh\" (tets) or \"surface\" (a closed OBJ surface)");
  if (r_.has(o, "cell_size") && !r_.has(o, "surface"))
    r_.fail(r_.child(o, "cell_size"), "\"cell_size\" belongs to a soft body from a \"surface\"");
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
  if (r_.has(o, "neo_hookean")) def.neoHookean = parseNeoHookean(o);
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
    box.neoHookean = def.neoHookean;
    const auto cx = static_cast<std::uint64_t>(box.cellsX), cy = static_cast<std::uint64_t>(box.cellsY),
               cz = static_cast<std::uint64_t>(box.cellsZ);
    ObjectPlan plan;
    plan.particles = (cx + 1) * (cy + 1) * (cz + 1);
    plan.size.particles = plan.particles;
    plan.size.tets = 6 * cx * cy * cz;
    // Kuhn split: 7 edges per cell (3 axes, 3 face diagonals, 1 body diagonal) plus the far faces'.
    if (box.addEdges && !box.neoHookean)
      plan.size.distances = 7 * cx * cy * cz + 3 * ((cx + 1) * (cy + 1) + (cy + 1) * (cz + 1) + (cx + 1) * (cz + 1));
    plan.size.triangles = 4 * (cx * cy + cy * cz + cx * cz);
    plan.sizeField = cells.path;
    plan.generate = [this, box] { return addTetBox(builder_, box); };
    return plan;
  }
  if (r_.has(o, "surface")) return parseSurfaceSoftBody(o, def);
  const Node meshNode = r_.child(o, "mesh");
  auto mesh = std::make_shared<io::TetMesh>(io::readTetMesh(r_.resolve(r_.string(meshNode))));
  transformMesh(o, mesh->vertices);
  ObjectPlan plan;
  plan.particles = mesh->vertices.size();
  plan.size.particles = plan.particles;
  plan.size.tets = mesh->tets.size();
  // About 7 edges per vertex and one boundary triangle per tet at most.
  if (def.addEdges && !def.neoHookean)
    plan.size.distances = std::min<std::uint64_t>(7 * plan.particles, 6 * plan.size.tets);
  plan.size.triangles = plan.size.tets;
  plan.sizeField = meshNode.path;
  plan.generate = [this, mesh, def] { return addTetMesh(builder_, mesh->vertices, mesh->tets, def); };
  return plan;
}

// A soft body from a closed surface (issue 18): the surface is embedded in a grid of tets of side
// "cell_size" (embedSurface), which simulate; the surface is drawn as the object's skin.
SceneLoader::ObjectPlan SceneLoader::parseSurfaceSoftBody(const Node& o, const TetMeshDef& tets) {
  const Node surfaceNode = r_.child(o, "surface");
  const std::string file = r_.string(surfaceNode);
  // A built-in scene names its meshes relative to scenes/; they are embedded with it.
  const std::string_view builtin = r_.source().rfind("builtin:", 0) == 0 ? builtinMeshText(file) : std::string_view();
  const std::string shown = builtin.empty() ? r_.resolve(file) : "builtin:" + file;
  io::TriangleMesh mesh = builtin.empty() ? io::readObj(shown) : io::readObjText(std::string(builtin), shown);
  transformMesh(o, mesh.vertices);
  const Node cellNode = r_.child(o, "cell_size");
  const double cellSize = r_.number(cellNode, 0.0, 1e6, true);
  // The grid's cubes bound the kept ones: checked against the memory budget before it is made.
  Vec3 lo = mesh.vertices.front(), hi = lo;
  for (const Vec3& v : mesh.vertices) {
    lo = lo.cwiseMin(v);
    hi = hi.cwiseMax(v);
  }
  const std::uint64_t cells = embeddingGridCells(hi - lo, cellSize);
  const auto estimate = [&](std::uint64_t cubes, std::uint64_t nodes) {
    SceneSize size;
    size.particles = nodes;
    size.tets = 6 * cubes;
    // Kuhn split: 7 edges per cube and the far faces'; the tet boundary and the skin drawn.
    if (tets.addEdges && !tets.neoHookean) size.distances = 7 * cubes + 3 * nodes;
    size.triangles = 4 * cubes + mesh.triangles.size();
    size.other = 2 * cells + mesh.vertices.size();  // the grid's scratch, the skin table
    return size;
  };
  checkMemory(estimate(cells, embeddingGridCells(hi - lo + Vec3::Constant(cellSize), cellSize)), cellNode.path);
  std::shared_ptr<const SurfaceEmbedding> embedding;
  try {
    embedding = std::make_shared<const SurfaceEmbedding>(embedSurface(mesh.vertices, mesh.triangles, cellSize));
  } catch (const Error& e) {
    r_.fail(surfaceNode, shown + ": " + e.what());
  }
  SoftBodyFromSurfaceDef def;
  def.name = tets.name;
  def.cellSize = cellSize;
  def.density = tets.density;
  def.volume = tets.volume;
  def.edges = tets.edges;
  def.addEdges = tets.addEdges;
  def.dampingFactor = tets.dampingFactor;
  def.neoHookean = tets.neoHookean;
  ObjectPlan plan;
  plan.particles = embedding->nodes.size();
  plan.size = estimate(embedding->tets.size() / 6, plan.particles);
  plan.sizeField = cellNode.path;
  plan.generate = [this, embedding, def] { return addSoftBodyFromSurface(builder_, *embedding, def); };
  return plan;
}

SceneLoader::ObjectPlan SceneLoader::parseBalloon(const Node& o, const std::string& name) {
  r_.allowOnly(o, {"type", "name", "centre", "radius", "rings", "segments", "mass", "stretch", "pressure", "volume",
                   "damping", "pins", "tethers", "particle_radius", "shape_matching"});
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
  const auto rings = static_cast<std::uint64_t>(def.rings), segments = static_cast<std::uint64_t>(def.segments);
  ObjectPlan plan;
  plan.particles = 2 + (rings - 1) * segments;
  plan.size.particles = plan.particles;
  plan.size.triangles = 2 * 2 * rings * segments;  // drawn, and the volume constraint's
  plan.size.distances = 3 * rings * segments;
  plan.sizeField = o.path + (r_.has(o, "rings") ? "/rings" : r_.has(o, "segments") ? "/segments" : "");
  plan.generate = [this, def] { return addBalloon(builder_, def); };
  return plan;
}

SceneLoader::ObjectPlan SceneLoader::parseParticles(const Node& o, const std::string& name) {
  r_.allowOnly(o, {"type", "name", "positions", "velocities", "mass", "masses", "damping", "pins", "tethers",
                   "particle_radius", "shape_matching"});
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
  std::vector<Vec3> points(n);
  for (std::size_t i = 0; i < n; ++i) points[i] = r_.vec3(r_.element(positions, i));
  const double damping = r_.number(o, "damping", 0.0, 0.0, 1.0);
  ObjectPlan plan;
  plan.particles = n;
  plan.size.particles = n;
  plan.sizeField = positions.path;
  plan.generate = [this, name, points = std::move(points), masses = std::move(masses),
                   velocities = std::move(velocities), damping] {
    GeneratedObject out;
    out.firstParticle = static_cast<ParticleIndex>(builder_.particleCount());
    out.particleCount = static_cast<std::uint32_t>(points.size());
    std::vector<ParticleIndex> members;
    for (std::size_t i = 0; i < points.size(); ++i)
      members.push_back(builder_.addParticle(points[i], masses[i], velocities[i]));
    out.object = builder_.addObject(name, std::move(members), damping);
    return out;
  };
  return plan;
}

}  // namespace pliant::scenefile
