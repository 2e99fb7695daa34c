// The frames of a run as parts (FrameSeries, pliant/io/output.h): each object of the topology, each
// rigid body and each collider is its own named part, written in the layout its format allows (a VTK multiblock
// of .vtu files, named OBJ objects, one PLY per part). The colliders' and bodies' surfaces are
// tessellated once (ColliderSurfaces, BodySurfaces) and posed at each frame's time or state.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "frame_formats.h"
#include "pliant/colliders.h"
#include "pliant/error.h"
#include "pliant/rigid_shapes.h"

namespace pliant::io {

using namespace detail;

namespace detail {

PartView objectPart(const Topology& topology, const TopologyPart& p, const State& state) {
  PartView v;
  if (p.skin) {
    // A skinned part's points are its skin's, posed by FrameSeries (skinPart); no particle cells.
    v.name = p.name;
    v.triangles = p.skin->triangles;
    return v;
  }
  v.name = p.name;
  v.position = std::span<const Vec3>(state.position).subspan(p.firstParticle, p.particleCount);
  v.velocity = std::span<const Vec3>(state.velocity).subspan(p.firstParticle, p.particleCount);
  v.base = p.firstParticle;
  v.triangles = std::span(topology.triangles).subspan(p.trianglesBegin, p.trianglesEnd - p.trianglesBegin);
  v.lines = std::span(topology.lines).subspan(p.linesBegin, p.linesEnd - p.linesBegin);
  v.tets = std::span(topology.tets).subspan(p.tetsBegin, p.tetsEnd - p.tetsBegin);
  v.chain = p.chain;
  v.uv = p.uv;
  return v;
}

PartView wholePart(const Topology& topology, const State& state) {
  PartView v;
  v.name = "mesh";
  v.position = state.position;
  v.velocity = state.velocity;
  v.triangles = topology.triangles;
  v.lines = topology.lines;
  v.tets = topology.tets;
  // A single rope drawn whole is still one chain.
  v.chain = topology.parts.size() == 1 && topology.parts.front().chain;
  if (topology.parts.size() == 1 && topology.parts.front().particleCount == state.position.size())
    v.uv = topology.parts.front().uv;
  return v;
}

}  // namespace detail

namespace {

// Tessellation of the round colliders: a surface of revolution about the y axis through a profile
// of (radius, y) points from the top pole to the bottom pole (radius 0 at both).
constexpr int kSegments = 32;  // around the axis
constexpr int kHalfRings = 8;  // from a pole to the equator

void lathe(const std::vector<std::pair<double, double>>& profile, std::vector<Vec3>& vertices,
           std::vector<std::array<std::uint32_t, 3>>& triangles) {
  const auto ring = [&](std::size_t r) { return static_cast<std::uint32_t>(1 + (r - 1) * kSegments); };
  vertices.push_back(Vec3(0.0, profile.front().second, 0.0));
  for (std::size_t r = 1; r + 1 < profile.size(); ++r)
    for (int s = 0; s < kSegments; ++s) {
      const double phi = 2.0 * std::numbers::pi * s / kSegments;
      vertices.push_back(Vec3(profile[r].first * std::cos(phi), profile[r].second, profile[r].first * std::sin(phi)));
    }
  const auto bottom = static_cast<std::uint32_t>(vertices.size());
  vertices.push_back(Vec3(0.0, profile.back().second, 0.0));
  const std::size_t rings = profile.size() - 2;
  for (int s = 0; s < kSegments; ++s) {
    const auto a = static_cast<std::uint32_t>(s), b = static_cast<std::uint32_t>((s + 1) % kSegments);
    triangles.push_back({0, ring(1) + b, ring(1) + a});
    for (std::size_t r = 1; r < rings; ++r) {
      triangles.push_back({ring(r) + a, ring(r) + b, ring(r + 1) + b});
      triangles.push_back({ring(r) + a, ring(r + 1) + b, ring(r + 1) + a});
    }
    triangles.push_back({ring(rings) + a, ring(rings) + b, bottom});
  }
  // Outward (counter-clockwise seen from outside): the shape is convex about its centre at y = 0.
  for (auto& t : triangles) {
    const Vec3 n = (vertices[t[1]] - vertices[t[0]]).cross(vertices[t[2]] - vertices[t[0]]);
    if (n.dot(vertices[t[0]] + vertices[t[1]] + vertices[t[2]]) < 0.0) std::swap(t[1], t[2]);
  }
}

// Profile of a sphere of radius r whose hemispheres are `gap` apart (a capsule; 0: a sphere).
std::vector<std::pair<double, double>> roundProfile(double r, double gap) {
  std::vector<std::pair<double, double>> profile;
  for (int i = 0; i <= kHalfRings; ++i) {
    const double theta = 0.5 * std::numbers::pi * i / kHalfRings;
    profile.emplace_back(r * std::sin(theta), r * std::cos(theta) + 0.5 * gap);
  }
  for (int i = gap > 0.0 ? kHalfRings : kHalfRings + 1; i <= 2 * kHalfRings; ++i) {
    const double theta = 0.5 * std::numbers::pi * i / kHalfRings;
    profile.emplace_back(r * std::sin(theta), r * std::cos(theta) - 0.5 * gap);
  }
  profile.front().first = profile.back().first = 0.0;
  return profile;
}

}  // namespace

void tessellateRound(double radius, double halfHeight, std::vector<Vec3>& vertices,
                     std::vector<std::array<std::uint32_t, 3>>& triangles) {
  lathe(roundProfile(radius, 2.0 * halfHeight), vertices, triangles);
}

void tessellateBox(const Vec3& h, std::vector<Vec3>& vertices, std::vector<std::array<std::uint32_t, 3>>& triangles) {
  // Four vertices per face, so that each face keeps its own normal.
  for (int axis = 0; axis < 3; ++axis)
    for (double sign : {-1.0, 1.0}) {
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      const auto first = static_cast<std::uint32_t>(vertices.size());
      for (const auto& [a, b] : {std::pair{-1.0, -1.0}, {1.0, -1.0}, {1.0, 1.0}, {-1.0, 1.0}}) {
        Vec3 p;
        p[axis] = sign * h[axis];
        p[u] = a * h[u];
        p[v] = b * h[v];
        vertices.push_back(p);
      }
      // u x v is +axis: counter-clockwise seen from outside on the + face, reversed on the - face.
      if (sign > 0.0) {
        triangles.push_back({first, first + 1, first + 2});
        triangles.push_back({first, first + 2, first + 3});
      } else {
        triangles.push_back({first, first + 2, first + 1});
        triangles.push_back({first, first + 3, first + 2});
      }
    }
}

namespace {

// A file-name stem for each part: its name with characters other than letters, digits, '-' and
// '_' replaced by '_', made unique by a number.
std::vector<std::string> fileStems(const std::vector<std::string>& names) {
  std::vector<std::string> stems;
  for (const std::string& name : names) {
    std::string stem;
    for (char c : name) {
      const bool safe =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      stem += safe ? c : '_';
    }
    if (stem.empty()) stem = "part";
    std::string unique = stem;
    for (int k = 2; std::find(stems.begin(), stems.end(), unique) != stems.end(); ++k)
      unique = stem + "_" + std::to_string(k);
    stems.push_back(unique);
  }
  return stems;
}

std::string frameStem(int frame) {
  std::ostringstream name;
  name << "frame_" << std::setw(6) << std::setfill('0') << frame;
  return name.str();
}

}  // namespace

ColliderSurfaces::ColliderSurfaces(const Model& model, const Vec3& centre, double planeHalfSize) {
  for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
    const Collider& collider = model.colliders[c];
    names_.push_back(std::string(colliderShapeName(collider.shape)) + "_" + std::to_string(c));
    std::vector<Vec3> vertices;
    std::vector<std::array<std::uint32_t, 3>> triangles;
    switch (collider.shape) {
      case ColliderShape::Plane: {
        // The square about the point of the plane nearest the scene's centre, in the plane's frame
        // (y = 0) at its starting pose.
        const ColliderPose pose = colliderPose(model, c, 0.0);
        const Vec3 local = pose.rotation.conjugate() * (centre - pose.position);
        const double s = planeHalfSize;
        for (const auto& [a, b] : {std::pair{-1.0, -1.0}, {-1.0, 1.0}, {1.0, 1.0}, {1.0, -1.0}})
          vertices.push_back(Vec3(local.x() + a * s, 0.0, local.z() + b * s));
        triangles = {{0, 1, 2}, {0, 2, 3}};
        break;
      }
      case ColliderShape::Sphere:
        tessellateRound(collider.radius, 0.0, vertices, triangles);
        break;
      case ColliderShape::Capsule:
        tessellateRound(collider.radius, collider.halfHeight, vertices, triangles);
        break;
      case ColliderShape::Box:
        tessellateBox(collider.halfExtents, vertices, triangles);
        break;
      case ColliderShape::Mesh:
        if (collider.grid) {
          vertices = collider.grid->vertices;
          triangles = collider.grid->triangles;
        }
        break;
    }
    vertices_.push_back(std::move(vertices));
    triangles_.push_back(std::move(triangles));
  }
}

void ColliderSurfaces::pose(const Model& model, std::size_t c, double time, std::vector<Vec3>& out) const {
  const ColliderPose pose = colliderPose(model, static_cast<std::uint32_t>(c), time);
  const Eigen::Matrix3d r = pose.rotation.toRotationMatrix();
  out.resize(vertices_[c].size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = r * vertices_[c][i] + pose.position;
}

BodySurfaces::BodySurfaces(const Model& model) {
  for (const RigidBody& body : model.bodies) {
    names_.push_back(body.name);
    std::vector<Vec3> vertices;
    std::vector<std::array<std::uint32_t, 3>> triangles;
    const BodyShape& shape = body.shape;
    switch (shape.kind) {
      case BodyShapeKind::Sphere:
        tessellateRound(shape.radius, 0.0, vertices, triangles);
        break;
      case BodyShapeKind::Capsule:
        tessellateRound(shape.radius, shape.halfHeight, vertices, triangles);
        break;
      case BodyShapeKind::Box:
        tessellateBox(shape.halfExtents, vertices, triangles);
        break;
      case BodyShapeKind::ConvexHull:
        if (shape.hull) {
          vertices = shape.hull->vertices;
          triangles = shape.hull->triangles;
        }
        break;
      case BodyShapeKind::Mesh:
        if (shape.grid) {
          vertices = shape.grid->vertices;
          triangles = shape.grid->triangles;
        }
        break;
      case BodyShapeKind::Plane:
        break;  // static bodies from colliders only; drawn as the collider
    }
    vertices_.push_back(std::move(vertices));
    triangles_.push_back(std::move(triangles));
  }
}

ColliderPose BodySurfaces::shapePose(const Model& model, const State& state, std::size_t b) {
  return model.bodies[b].shapePose(state.bodyPosition[b], state.bodyRotation[b]);
}

void BodySurfaces::pose(const Model& model, const State& state, std::size_t b, std::vector<Vec3>& out) const {
  const ColliderPose pose = shapePose(model, state, b);
  const Eigen::Matrix3d r = pose.rotation.toRotationMatrix();
  out.resize(vertices_[b].size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = r * vertices_[b][i] + pose.position;
}

namespace {

// The centre of the box around the particles and the non-plane colliders at the start, and its
// diagonal (at least 1 m): where a plane collider's square lies and its half side.
std::pair<Vec3, double> sceneExtent(const Model& model) {
  Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity()), hi = -lo;
  const auto include = [&](const Vec3& p, double r) {
    if (!p.allFinite()) return;
    lo = lo.cwiseMin(p - Vec3::Constant(r));
    hi = hi.cwiseMax(p + Vec3::Constant(r));
  };
  for (const Vec3& x : model.initialPosition) include(x, 0.0);
  for (const RigidBody& body : model.bodies) {
    Vec3 lower, upper;
    shapeBounds(body.shape, body.shapePose(body.initialPosition, body.initialRotation), 0.0, lower, upper);
    if (lower.allFinite() && upper.allFinite()) {
      include(lower, 0.0);
      include(upper, 0.0);
    }
  }
  for (std::uint32_t c = 0; c < model.colliders.size(); ++c) {
    const Collider& collider = model.colliders[c];
    const Vec3 at = colliderPose(model, c, 0.0).position;
    if (collider.shape == ColliderShape::Sphere) include(at, collider.radius);
    else if (collider.shape == ColliderShape::Capsule) include(at, collider.radius + collider.halfHeight);
    else if (collider.shape == ColliderShape::Box) include(at, collider.halfExtents.norm());
    else if (collider.shape == ColliderShape::Mesh && collider.grid)
      for (const Vec3& v : collider.grid->vertices) include(colliderPose(model, c, 0.0).rotation * v + at, 0.0);
  }
  if (!(lo.array() <= hi.array()).all()) return {Vec3::Zero(), 1.0};
  return {0.5 * (lo + hi), std::max(1.0, (hi - lo).norm())};
}

}  // namespace

FrameSeries::FrameSeries(std::string folder, const Model& model, const Topology& topology,
                         const FrameSeriesOptions& options)
    : folder_(std::move(folder)), model_(model), topology_(topology), options_(options) {
  // A model of bodies alone draws no empty particle mesh.
  if (topology.parts.empty() && (model.particleCount() > 0 || model.bodyCount() == 0)) {
    TopologyPart all;
    all.name = "mesh";
    all.particleCount = static_cast<std::uint32_t>(model.particleCount());
    all.trianglesEnd = topology.triangles.size();
    all.linesEnd = topology.lines.size();
    all.tetsEnd = topology.tets.size();
    whole_.parts.push_back(std::move(all));
  }
  if (options.colliders) {
    const auto [centre, halfSize] = sceneExtent(model);
    colliders_ = ColliderSurfaces(model, centre, halfSize);
    posed_.resize(colliders_.size());
  }
  bodies_ = BodySurfaces(model);
  posedBodies_.resize(bodies_.size());
  stems_ = fileStems(partNames());
  skinPosition_.resize(topology.parts.size());
  skinVelocity_.resize(topology.parts.size());
  for (std::size_t i = 0; i < topology.parts.size(); ++i)
    if (topology.parts[i].skin) {
      skinPosition_[i].resize(topology.parts[i].skin->vertexCount());
      skinVelocity_[i].resize(topology.parts[i].skin->vertexCount());
    }
  if (options.format == FrameFormat::Glb) {
    recording_ = std::make_unique<GltfRecording>();
    for (const TopologyPart& p : (topology.parts.empty() ? whole_ : topology).parts) {
      GltfRecording::Object o;
      o.name = p.name;
      if (p.skin) {
        o.pointCount = p.skin->vertexCount();
        for (const auto& t : p.skin->triangles) o.triangles.insert(o.triangles.end(), t.begin(), t.end());
        recording_->objects.push_back(std::move(o));
        continue;
      }
      o.pointCount = p.particleCount;
      for (std::size_t i = p.trianglesBegin; i < p.trianglesEnd; ++i)
        for (ParticleIndex q : topology.triangles[i]) o.triangles.push_back(q - p.firstParticle);
      for (std::size_t i = p.linesBegin; i < p.linesEnd; ++i)
        for (ParticleIndex q : topology.lines[i]) o.lines.push_back(q - p.firstParticle);
      o.chain = p.chain;
      o.uv = p.uv;
      recording_->objects.push_back(std::move(o));
    }
    // Bodies and colliders are rigid nodes alike, bodies first (the order of partNames).
    for (std::size_t b = 0; b < bodies_.size(); ++b)
      recording_->colliders.push_back({bodies_.name(b), bodies_.localVertices(b), bodies_.triangles(b), {}, {}});
    for (std::size_t c = 0; c < colliders_.size(); ++c)
      recording_->colliders.push_back(
          {colliders_.name(c), colliders_.localVertices(c), colliders_.triangles(c), {}, {}});
  }
}

FrameSeries::~FrameSeries() = default;

std::vector<std::string> FrameSeries::partNames() const {
  std::vector<std::string> names;
  for (const TopologyPart& p : (topology_.parts.empty() ? whole_ : topology_).parts) names.push_back(p.name);
  for (std::size_t b = 0; b < bodies_.size(); ++b) names.push_back(bodies_.name(b));
  for (std::size_t c = 0; c < colliders_.size(); ++c) names.push_back(colliders_.name(c));
  return names;
}

void FrameSeries::record(const std::string& relative, const std::string& contents) {
  writeFileAtomically((std::filesystem::path(folder_) / relative).string(), contents);
  files_.push_back(relative);
  bytes_ += contents.size();
}

void FrameSeries::write(int frame, const State& state) {
  const std::string stem = frameStem(frame);
  checkFrameInput((std::filesystem::path(folder_) / "frames" / stem).string(), topology_, state);
  if (recording_) {
    // Kept for scene.glb, written by finish().
    GltfRecording& r = *recording_;
    r.times.push_back(state.time);
    const auto& parts = (topology_.parts.empty() ? whole_ : topology_).parts;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].skin) {
        parts[i].skin->pose(state.position, skinPosition_[i]);
        for (const Vec3& x : skinPosition_[i])
          for (int d = 0; d < 3; ++d) r.objects[i].positions.push_back(static_cast<float>(x[d]));
        continue;
      }
      for (std::uint32_t k = 0; k < parts[i].particleCount; ++k)
        for (int d = 0; d < 3; ++d)
          r.objects[i].positions.push_back(static_cast<float>(state.position[parts[i].firstParticle + k][d]));
    }
    for (std::size_t b = 0; b < bodies_.size(); ++b) {
      const ColliderPose pose = BodySurfaces::shapePose(model_, state, b);
      r.colliders[b].translation.push_back(pose.position);
      r.colliders[b].rotation.push_back(pose.rotation);
    }
    for (std::size_t c = 0; c < colliders_.size(); ++c) {
      const ColliderPose pose = colliderPose(model_, static_cast<std::uint32_t>(c), state.time);
      r.colliders[bodies_.size() + c].translation.push_back(pose.position);
      r.colliders[bodies_.size() + c].rotation.push_back(pose.rotation);
    }
    times_.emplace_back(state.time, "scene.glb");
    return;
  }
  std::vector<PartView> parts;
  if (topology_.parts.empty()) {
    if (!whole_.parts.empty()) parts.push_back(wholePart(topology_, state));
  } else {
    for (std::size_t i = 0; i < topology_.parts.size(); ++i) {
      const TopologyPart& p = topology_.parts[i];
      PartView v = objectPart(topology_, p, state);
      if (p.skin) {
        // The skin follows its tets: x = sum_k w_k x_k, and so does its velocity.
        p.skin->pose(state.position, skinPosition_[i]);
        p.skin->pose(state.velocity, skinVelocity_[i]);
        v.position = skinPosition_[i];
        v.velocity = skinVelocity_[i];
      }
      parts.push_back(v);
    }
  }
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    bodies_.pose(model_, state, b, posedBodies_[b]);
    PartView v;
    v.name = bodies_.name(b);
    v.position = posedBodies_[b];
    v.triangles = bodies_.triangles(b);
    parts.push_back(v);
  }
  for (std::size_t c = 0; c < colliders_.size(); ++c) {
    colliders_.pose(model_, c, state.time, posed_[c]);
    PartView v;
    v.name = colliders_.name(c);
    v.position = posed_[c];
    v.triangles = colliders_.triangles(c);
    parts.push_back(v);
  }
  const std::string frames = "frames/";
  switch (options_.format) {
    case FrameFormat::Vtk: {
      if (parts.size() == 1) {
        record(frames + stem + ".vtu", vtkXmlFrame(parts.front(), state.time, options_.encoding));
        times_.emplace_back(state.time, frames + stem + ".vtu");
        return;
      }
      std::vector<std::string> names, files;
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string file = stem + "_" + stems_[i] + ".vtu";
        record(frames + file, vtkXmlFrame(parts[i], state.time, options_.encoding));
        names.emplace_back(parts[i].name);
        files.push_back(file);
      }
      record(frames + stem + ".vtm", vtkMultiBlock(names, files));
      times_.emplace_back(state.time, frames + stem + ".vtm");
      return;
    }
    case FrameFormat::Obj:
      record(frames + stem + ".obj", objFrame(parts, state.time));
      times_.emplace_back(state.time, frames + stem + ".obj");
      return;
    case FrameFormat::Ply:
      for (std::size_t i = 0; i < parts.size(); ++i)
        record(frames + stem + (parts.size() == 1 ? "" : "_" + stems_[i]) + ".ply", plyFrame(parts[i], state.time));
      times_.emplace_back(state.time, frames + stem + ".ply");
      return;
    case FrameFormat::Glb:
      return;  // recorded above
  }
}

void FrameSeries::finish() {
  std::string name;
  std::uint64_t size = 0;
  if (options_.format == FrameFormat::Vtk) {
    name = "scene.pvd";
    const std::filesystem::path path = std::filesystem::path(folder_) / name;
    writePvd(path.string(), times_);
    std::error_code ec;
    size = std::filesystem::file_size(path, ec);
    if (ec) size = 0;
  } else if (options_.format == FrameFormat::Glb && recording_ && !recording_->times.empty()) {
    name = "scene.glb";
    const std::string glb = glbFile(*recording_);
    writeFileAtomically((std::filesystem::path(folder_) / name).string(), glb);
    size = glb.size();
  } else {
    return;
  }
  // Counted once however often finish() is called: the new size replaces the previous one.
  if (std::find(files_.begin(), files_.end(), name) == files_.end()) files_.push_back(name);
  bytes_ = bytes_ - finishedBytes_ + size;
  finishedBytes_ = size;
}

}  // namespace pliant::io
