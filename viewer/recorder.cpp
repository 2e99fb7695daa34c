// Recording frames for the viewer: positions as float32 little-endian in base64, one string per
// frame, every `stride_`-th frame when all of them would pass the size budget.
#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "pliant/colliders.h"
#include "pliant/diagnostics.h"
#include "pliant/error.h"
#include "pliant/io/output.h"
#include "pliant/viewer/viewer.h"

namespace pliant::viewer {

namespace {

void appendLittleEndian32(std::string& out, std::uint32_t bits) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((bits >> shift) & 0xff));
}

// xyz of each point as little-endian float32, base64: the frames' and mesh colliders' format.
std::string pointsBase64(const std::vector<Vec3>& points) {
  std::string bytes;
  bytes.reserve(points.size() * 12);
  for (const Vec3& x : points)
    for (int k = 0; k < 3; ++k) appendLittleEndian32(bytes, std::bit_cast<std::uint32_t>(static_cast<float>(x[k])));
  return base64Encode(bytes);
}

std::string indicesBase64(const auto& cells) {
  std::string bytes;
  for (const auto& cell : cells)
    for (ParticleIndex p : cell) appendLittleEndian32(bytes, static_cast<std::uint32_t>(p));
  return base64Encode(bytes);
}

// The surface of a tet mesh (faces that belong to one tet only), for scenes that draw tets alone.
std::vector<std::array<ParticleIndex, 3>> tetSurface(const std::vector<std::array<ParticleIndex, 4>>& tets) {
  std::map<std::array<ParticleIndex, 3>, std::pair<int, std::array<ParticleIndex, 3>>> faces;
  for (const auto& t : tets) {
    const std::array<std::array<ParticleIndex, 3>, 4> local = {
        {{t[0], t[2], t[1]}, {t[0], t[1], t[3]}, {t[1], t[2], t[3]}, {t[0], t[3], t[2]}}};
    for (const auto& f : local) {
      auto key = f;
      std::sort(key.begin(), key.end());
      auto& entry = faces[key];
      ++entry.first;
      entry.second = f;
    }
  }
  std::vector<std::array<ParticleIndex, 3>> surface;
  for (const auto& [key, entry] : faces)
    if (entry.first == 1) surface.push_back(entry.second);
  return surface;
}

// One case per collider shape; a shape the viewer does not know is listed with its name only, and
// the page and the renderer skip it.
nlohmann::json colliderShapeJson(const Collider& c) {
  nlohmann::json j;
  j["shape"] = colliderShapeName(c.shape);
  switch (c.shape) {
    case ColliderShape::Plane:
      break;
    case ColliderShape::Sphere:
      j["radius"] = c.radius;
      break;
    case ColliderShape::Box:
      j["half_extents"] = {c.halfExtents.x(), c.halfExtents.y(), c.halfExtents.z()};
      break;
    case ColliderShape::Capsule:
      j["radius"] = c.radius;
      j["half_height"] = c.halfHeight;
      break;
    case ColliderShape::Mesh:
      // The closed mesh the distance grid was built from, in the collider's frame: float32 xyz
      // and uint32 triangle corners, base64 like the frames.
      if (c.grid) {
        j["vertices"] = pointsBase64(c.grid->vertices);
        j["triangles"] = indicesBase64(c.grid->triangles);
      } else {
        j["unsupported"] = true;
      }
      break;
    default:
      j["unsupported"] = true;
      break;
  }
  return j;
}

}  // namespace

ViewerRecorder::ViewerRecorder(const Scene& scene, int firstFrame, int lastFrame, std::size_t frameBudgetBytes)
    : scene_(&scene), firstFrame_(firstFrame), lastFrame_(lastFrame), budget_(frameBudgetBytes) {
  points_ = scene.model->particleCount();
  for (const io::TopologyPart& part : scene.topology.parts)
    if (part.skin) points_ += part.skin->vertexCount();
  const std::size_t bytesPerFrame = (points_ * 12 + 2) / 3 * 4;
  const std::size_t frames = static_cast<std::size_t>(std::max(0, lastFrame - firstFrame)) + 1;
  if (bytesPerFrame > 0 && frames * bytesPerFrame > budget_) {
    // At most maxFrames kept: the ones on the stride plus the last one.
    const std::size_t maxFrames = std::max<std::size_t>(3, budget_ / bytesPerFrame);
    stride_ = std::max(1, static_cast<int>((frames - 1 + (maxFrames - 2) - 1) / (maxFrames - 2)));
  }
  colliderPoses_.resize(scene.model->colliders.size());
  bodyPoses_.resize(scene.model->bodyCount());
  jointAnchors_.resize(scene.model->joints.size());
}

bool ViewerRecorder::keeps(int frame) const {
  return frame >= firstFrame_ && frame <= lastFrame_ && ((frame - firstFrame_) % stride_ == 0 || frame == lastFrame_);
}

void ViewerRecorder::record(int frame, const State& state) {
  if (!keeps(frame)) return;
  if (points_ == state.position.size()) {
    positions_.push_back(pointsBase64(state.position));
  } else {
    // Skins after the particles, in part order (as json() numbers their triangles).
    drawn_.assign(state.position.begin(), state.position.end());
    for (const io::TopologyPart& part : scene_->topology.parts)
      if (part.skin) {
        const std::size_t first = drawn_.size();
        drawn_.resize(first + part.skin->vertexCount());
        part.skin->pose(state.position, std::span<Vec3>(drawn_).subspan(first));
      }
    positions_.push_back(pointsBase64(drawn_));
  }
  numbers_.push_back(frame);
  times_.push_back(state.time);
  for (std::uint32_t c = 0; c < colliderPoses_.size(); ++c) {
    const ColliderPose pose = colliderPose(*scene_->model, c, state.time);
    colliderPoses_[c].push_back({pose.position.x(), pose.position.y(), pose.position.z(), pose.rotation.x(),
                                 pose.rotation.y(), pose.rotation.z(), pose.rotation.w()});
  }
  const Model& model = *scene_->model;
  for (std::size_t b = 0; b < bodyPoses_.size(); ++b) {
    const ColliderPose pose = io::BodySurfaces::shapePose(model, state, b);
    bodyPoses_[b].push_back({pose.position.x(), pose.position.y(), pose.position.z(), pose.rotation.x(),
                             pose.rotation.y(), pose.rotation.z(), pose.rotation.w()});
  }
  for (std::size_t j = 0; j < jointAnchors_.size(); ++j) {
    const Joint& joint = model.joints[j];
    std::array<double, 6> anchors{};
    for (int k = 0; k < 2; ++k) {
      const BodyIndex b = joint.bodies[k];
      const Vec3 x = b == kWorldBody ? joint.localAnchor[k]
                                     : Vec3(state.bodyRotation[b] * joint.localAnchor[k] + state.bodyPosition[b]);
      for (int d = 0; d < 3; ++d) anchors[3 * k + d] = x[d];
    }
    jointAnchors_[j].push_back(anchors);
  }
}

void ViewerRecorder::recordResidual(int frame, double strain) {
  if (residuals_.empty()) firstResidualFrame_ = frame;
  else if (frame != firstResidualFrame_ + static_cast<int>(residuals_.size()))
    throw Error("viewer recorder: residuals must be recorded for consecutive frames");
  residuals_.push_back(strain);
}

std::string ViewerRecorder::json() const {
  const Scene& scene = *scene_;
  nlohmann::json j;
  j["format"] = "pliant-viewer";
  j["version"] = 1;
  j["scene"] = scene.name;
  j["description"] = scene.description;
  j["particles"] = points_;  // points per frame: the particles, then the skins' vertices
  j["time_step_s"] = scene.settings.timeStep;
  nlohmann::json frames;
  frames["first"] = firstFrame_;
  frames["last"] = lastFrame_;
  frames["stride"] = stride_;
  frames["budget_bytes"] = budget_;
  frames["numbers"] = numbers_;
  frames["times_s"] = times_;
  frames["positions"] = positions_;
  j["frames"] = std::move(frames);
  std::vector<std::array<ParticleIndex, 3>> triangles = scene.topology.triangles.empty() && !scene.topology.tets.empty()
                                                            ? tetSurface(scene.topology.tets)
                                                            : scene.topology.triangles;
  if (points_ != scene.model->particleCount()) {
    // A skinned object draws its skin (numbered after the particles) instead of its tet boundary.
    std::vector<char> skinned(scene.topology.triangles.size(), 0);
    std::vector<std::array<ParticleIndex, 3>> skins;
    auto next = static_cast<ParticleIndex>(scene.model->particleCount());
    for (const io::TopologyPart& part : scene.topology.parts) {
      if (!part.skin) continue;
      for (std::size_t i = part.trianglesBegin; i < part.trianglesEnd && i < skinned.size(); ++i) skinned[i] = 1;
      for (const auto& t : part.skin->triangles) skins.push_back({next + t[0], next + t[1], next + t[2]});
      next += static_cast<ParticleIndex>(part.skin->vertexCount());
    }
    triangles.clear();
    for (std::size_t i = 0; i < scene.topology.triangles.size(); ++i)
      if (!skinned[i]) triangles.push_back(scene.topology.triangles[i]);
    triangles.insert(triangles.end(), skins.begin(), skins.end());
  }
  j["topology"] = {{"triangles", indicesBase64(triangles)}, {"lines", indicesBase64(scene.topology.lines)}};
  nlohmann::json colliders = nlohmann::json::array();
  for (std::size_t c = 0; c < scene.model->colliders.size(); ++c) {
    const Collider& collider = scene.model->colliders[c];
    nlohmann::json entry = colliderShapeJson(collider);
    entry["kinematic"] = collider.kinematic();
    // A static collider has one pose; a kinematic one a pose per recorded frame.
    if (collider.kinematic()) entry["poses"] = colliderPoses_[c];
    else if (!colliderPoses_[c].empty()) entry["poses"] = {colliderPoses_[c].front()};
    else {
      const ColliderPose& p = collider.pose;
      entry["poses"] = {{p.position.x(), p.position.y(), p.position.z(), p.rotation.x(), p.rotation.y(), p.rotation.z(),
                         p.rotation.w()}};
    }
    colliders.push_back(std::move(entry));
  }
  j["colliders"] = std::move(colliders);
  // Rigid bodies: each one's triangles once, in its shape frame (base64 as the frames), and the
  // shape frame's pose per recorded frame ([x, y, z, qx, qy, qz, qw] as the colliders').
  const io::BodySurfaces surfaces(*scene.model);
  nlohmann::json bodies = nlohmann::json::array();
  for (std::size_t b = 0; b < surfaces.size(); ++b)
    bodies.push_back({{"name", surfaces.name(b)},
                      {"motion", bodyMotionName(scene.model->bodies[b].motion)},
                      {"vertices", pointsBase64(surfaces.localVertices(b))},
                      {"triangles", indicesBase64(surfaces.triangles(b))},
                      {"poses", bodyPoses_[b]}});
  j["bodies"] = std::move(bodies);
  // Joints: their kind, bodies (-1: the world) and both anchor points per recorded frame
  // ([xA, yA, zA, xB, yB, zB], m; apart only for a distance joint or one pulled open).
  nlohmann::json joints = nlohmann::json::array();
  for (std::size_t i = 0; i < scene.model->joints.size(); ++i) {
    const Joint& joint = scene.model->joints[i];
    const auto side = [](BodyIndex b) { return b == kWorldBody ? -1 : static_cast<std::int64_t>(b); };
    joints.push_back({{"type", jointKindName(joint.kind)},
                      {"bodies", {side(joint.bodies[0]), side(joint.bodies[1])}},
                      {"anchors", jointAnchors_[i]}});
  }
  j["joints"] = std::move(joints);
  if (!residuals_.empty())
    j["convergence"] = {
        {"first_frame", firstResidualFrame_}, {"strain_residual", residuals_}, {"threshold", kFarFromConvergedStrain}};
  return j.dump();
}

}  // namespace pliant::viewer
