// glTF 2.0 binary (.glb): a whole run in one file (FrameSeries with FrameFormat::Glb). Written here
// from the glTF 2.0 specification (Khronos): a 12-byte header, a JSON chunk and a BIN chunk.
//
// Each object is a mesh whose base positions are the first frame's and which has one morph target
// per later frame (its positions minus the base); an animation drives the mesh's weights so that at
// frame k's time only target k weighs 1: linear interpolation between two frames' weights is the
// linear interpolation of their positions. Colliders are rigid: a mesh in the collider's own frame,
// on a node whose translation and rotation are animated (or fixed, for a static collider).
// Importers (Blender's, assimp, game engines) turn morph targets into shape keys / blend shapes.
#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frame_formats.h"
#include "output_bytes.h"
#include "pliant/error.h"

namespace pliant::io::detail {

namespace {

using Json = nlohmann::json;

constexpr int kFloat = 5126, kUnsignedInt = 5125;
constexpr int kArrayBuffer = 34962, kElementArrayBuffer = 34963;

// The BIN chunk with its buffer views and accessors, each view 4-byte aligned.
class GltfBuffer {
 public:
  Json views = Json::array(), accessors = Json::array();
  std::string bytes;

  // A view of `count` tuples of `components` floats; returns the accessor's index.
  int floats(const std::vector<float>& data, int components, const char* type, bool bounds, int target = 0) {
    const std::size_t count = data.size() / static_cast<std::size_t>(components);
    const int view = addView(data.data(), data.size() * 4, target);
    Json a = {{"bufferView", view}, {"componentType", kFloat}, {"count", count}, {"type", type}};
    if (bounds) {
      // POSITION accessors must give their bounds (glTF 2.0, 3.6.2.4).
      std::vector<float> lo(static_cast<std::size_t>(components), std::numeric_limits<float>::infinity());
      std::vector<float> hi(static_cast<std::size_t>(components), -std::numeric_limits<float>::infinity());
      for (std::size_t i = 0; i < data.size(); ++i) {
        const std::size_t k = i % static_cast<std::size_t>(components);
        lo[k] = std::min(lo[k], data[i]);
        hi[k] = std::max(hi[k], data[i]);
      }
      if (count == 0) lo.assign(lo.size(), 0.0f), hi.assign(hi.size(), 0.0f);
      a["min"] = lo;
      a["max"] = hi;
    }
    accessors.push_back(a);
    return static_cast<int>(accessors.size() - 1);
  }
  int indices(const std::vector<std::uint32_t>& data) {
    const int view = addView(data.data(), data.size() * 4, kElementArrayBuffer);
    accessors.push_back(
        {{"bufferView", view}, {"componentType", kUnsignedInt}, {"count", data.size()}, {"type", "SCALAR"}});
    return static_cast<int>(accessors.size() - 1);
  }

 private:
  int addView(const void* data, std::size_t size, int target) {
    while (bytes.size() % 4 != 0) bytes += '\0';
    Json v = {{"buffer", 0}, {"byteOffset", bytes.size()}, {"byteLength", size}};
    if (target != 0) v["target"] = target;
    views.push_back(v);
    // Little-endian floats and integers: the host's bytes on a little-endian machine.
    const std::size_t at = bytes.size();
    bytes.resize(at + size);
    if constexpr (kLittleEndianHost) {
      if (size > 0) std::memcpy(bytes.data() + at, data, size);
    } else {
      const auto* words = static_cast<const std::uint32_t*>(data);
      for (std::size_t i = 0; i < size / 4; ++i) storeLittle32(bytes.data() + at + 4 * i, words[i]);
    }
    return static_cast<int>(views.size() - 1);
  }
};

void appendChunk(std::string& out, std::uint32_t type, std::string data, char pad) {
  while (data.size() % 4 != 0) data += pad;
  char header[8];
  storeLittle32(header, static_cast<std::uint32_t>(data.size()));
  storeLittle32(header + 4, type);
  out.append(header, 8);
  out += data;
}

}  // namespace

std::string glbFile(const GltfRecording& run) {
  GltfBuffer buffer;
  Json meshes = Json::array(), nodes = Json::array(), channels = Json::array(), samplers = Json::array();
  const std::size_t frames = run.times.size();
  if (frames == 0) throw Error("glTF: no frame was recorded");
  std::vector<float> times(run.times.begin(), run.times.end());
  const int timeAccessor = frames > 1 ? buffer.floats(times, 1, "SCALAR", true) : -1;
  const auto animate = [&](int node, const char* path, int output) {
    samplers.push_back({{"input", timeAccessor}, {"output", output}, {"interpolation", "LINEAR"}});
    channels.push_back({{"sampler", samplers.size() - 1}, {"target", {{"node", node}, {"path", path}}}});
  };

  for (const GltfRecording::Object& object : run.objects) {
    const std::size_t n = object.pointCount;
    const std::vector<float> base(object.positions.begin(), object.positions.begin() + 3 * n);
    Json attributes = {{"POSITION", buffer.floats(base, 3, "VEC3", true, kArrayBuffer)}};
    if (!object.uv.empty()) {
      std::vector<float> uv;
      for (const auto& t : object.uv) uv.insert(uv.end(), t.begin(), t.end());
      attributes["TEXCOORD_0"] = buffer.floats(uv, 2, "VEC2", false, kArrayBuffer);
    }
    Json targets = Json::array();
    for (std::size_t f = 1; f < frames; ++f) {
      std::vector<float> delta(3 * n);
      for (std::size_t i = 0; i < 3 * n; ++i) delta[i] = object.positions[3 * n * f + i] - base[i];
      targets.push_back({{"POSITION", buffer.floats(delta, 3, "VEC3", true, kArrayBuffer)}});
    }
    Json primitives = Json::array();
    const auto primitive = [&](const std::vector<std::uint32_t>& indices, int mode) {
      Json p = {{"attributes", attributes}, {"mode", mode}};
      if (!indices.empty()) p["indices"] = buffer.indices(indices);
      if (!targets.empty()) p["targets"] = targets;
      primitives.push_back(p);
    };
    // Triangles (mode 4), a rope as a line strip (3), other lines (1), or loose points (0).
    if (!object.triangles.empty()) primitive(object.triangles, 4);
    if (object.chain) primitive({}, 3);
    else if (!object.lines.empty()) primitive(object.lines, 1);
    if (primitives.empty()) primitive({}, 0);
    Json mesh = {{"name", object.name}, {"primitives", primitives}};
    if (!targets.empty()) mesh["weights"] = std::vector<float>(frames - 1, 0.0f);
    meshes.push_back(mesh);
    nodes.push_back({{"name", object.name}, {"mesh", meshes.size() - 1}});
    if (frames > 1) {
      // At frame f only target f (f >= 1) weighs 1; frame 0 is the base.
      std::vector<float> weights(frames * (frames - 1), 0.0f);
      for (std::size_t f = 1; f < frames; ++f) weights[f * (frames - 1) + (f - 1)] = 1.0f;
      animate(static_cast<int>(nodes.size() - 1), "weights", buffer.floats(weights, 1, "SCALAR", false));
    }
  }

  for (const GltfRecording::Rigid& rigid : run.colliders) {
    std::vector<float> vertices;
    for (const Vec3& v : rigid.vertices)
      for (int k = 0; k < 3; ++k) vertices.push_back(static_cast<float>(v[k]));
    std::vector<std::uint32_t> indices;
    for (const auto& t : rigid.triangles) indices.insert(indices.end(), t.begin(), t.end());
    Json p = {{"attributes", {{"POSITION", buffer.floats(vertices, 3, "VEC3", true, kArrayBuffer)}}}, {"mode", 4}};
    if (!indices.empty()) p["indices"] = buffer.indices(indices);
    meshes.push_back({{"name", rigid.name}, {"primitives", Json::array({p})}});
    const Vec3& t0 = rigid.translation.front();
    const Quat& q0 = rigid.rotation.front();
    nodes.push_back({{"name", rigid.name},
                     {"mesh", meshes.size() - 1},
                     {"translation", {t0.x(), t0.y(), t0.z()}},
                     {"rotation", {q0.x(), q0.y(), q0.z(), q0.w()}}});
    bool moves = false;
    for (std::size_t f = 1; f < frames; ++f)
      moves = moves || rigid.translation[f] != t0 || !rigid.rotation[f].coeffs().isApprox(q0.coeffs(), 0.0);
    if (!moves) continue;
    std::vector<float> translation, rotation;
    for (std::size_t f = 0; f < frames; ++f) {
      for (int k = 0; k < 3; ++k) translation.push_back(static_cast<float>(rigid.translation[f][k]));
      // glTF quaternions are (x, y, z, w); keep each on the side of the previous one so that the
      // interpolation takes the short way.
      Quat q = rigid.rotation[f];
      if (f > 0 && q.coeffs().dot(rigid.rotation[f - 1].coeffs()) < 0.0) q.coeffs() = -q.coeffs();
      for (double c : {q.x(), q.y(), q.z(), q.w()}) rotation.push_back(static_cast<float>(c));
    }
    animate(static_cast<int>(nodes.size() - 1), "translation", buffer.floats(translation, 3, "VEC3", false));
    animate(static_cast<int>(nodes.size() - 1), "rotation", buffer.floats(rotation, 4, "VEC4", false));
  }

  Json root;
  root["asset"] = {{"version", "2.0"}, {"generator", "Pliant"}};
  root["scene"] = 0;
  std::vector<int> roots(nodes.size());
  for (std::size_t i = 0; i < roots.size(); ++i) roots[i] = static_cast<int>(i);
  root["scenes"] = Json::array({{{"name", run.name}, {"nodes", roots}}});
  root["nodes"] = nodes;
  root["meshes"] = meshes;
  if (!channels.empty())
    root["animations"] = Json::array({{{"name", "simulation"}, {"channels", channels}, {"samplers", samplers}}});
  while (buffer.bytes.size() % 4 != 0) buffer.bytes += '\0';
  root["buffers"] = Json::array({{{"byteLength", buffer.bytes.size()}}});
  root["bufferViews"] = buffer.views;
  root["accessors"] = buffer.accessors;

  if (buffer.bytes.size() + root.dump().size() + 64 > std::numeric_limits<std::uint32_t>::max())
    throw Error("glTF: the run needs " + std::to_string(buffer.bytes.size()) +
                " bytes of data, more than the 4 GiB a .glb file holds; write fewer frames (--every)");
  std::string out(12, '\0');
  appendChunk(out, 0x4E4F534Au, root.dump(), ' ');    // "JSON", padded with spaces
  appendChunk(out, 0x004E4942u, buffer.bytes, '\0');  // "BIN\0"
  storeLittle32(out.data(), 0x46546C67u);             // "glTF"
  storeLittle32(out.data() + 4, 2);
  storeLittle32(out.data() + 8, static_cast<std::uint32_t>(out.size()));
  return out;
}

}  // namespace pliant::io::detail
