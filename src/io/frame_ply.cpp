// PLY frames, binary little-endian.
#include <cstdint>
#include <string>

#include "frame_formats.h"
#include "output_bytes.h"

namespace pliant::io::detail {

// ---------------------------------------------------------------------------------------------
// PLY, binary little-endian: vertices with velocity, triangle faces, line edges.

std::string plyFrame(const Topology& topology, const State& state) {
  const std::size_t n = state.position.size();
  const std::size_t tris = topology.triangles.size();
  const std::size_t lines = topology.lines.size();
  std::string out = "ply\nformat binary_little_endian 1.0\ncomment Pliant frame, time ";
  appendNumber(out, state.time);
  out += " s\nelement vertex ";
  appendNumber(out, n);
  out +=
      "\nproperty float x\nproperty float y\nproperty float z\n"
      "property float vx\nproperty float vy\nproperty float vz\n"
      "element face ";
  appendNumber(out, tris);
  out += "\nproperty list uchar int vertex_indices\n";
  if (lines > 0) {
    out += "element edge ";
    appendNumber(out, lines);
    out += "\nproperty int vertex1\nproperty int vertex2\n";
  }
  out += "end_header\n";
  char* dst = grow(out, 24 * n + 13 * tris + 8 * lines);
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3& p = state.position[i];
    const Vec3& v = state.velocity[i];
    for (int k = 0; k < 3; ++k, dst += 4) storeLittle32(dst, floatBits(p[k]));
    for (int k = 0; k < 3; ++k, dst += 4) storeLittle32(dst, floatBits(v[k]));
  }
  for (const auto& t : topology.triangles) {
    *dst++ = 3;
    for (ParticleIndex p : t) {
      storeLittle32(dst, p);
      dst += 4;
    }
  }
  for (const auto& l : topology.lines)
    for (ParticleIndex p : l) {
      storeLittle32(dst, p);
      dst += 4;
    }
  return out;
}

}  // namespace pliant::io::detail
