// PLY frames, binary little-endian, one part per file.
#include <cstdint>
#include <string>

#include "frame_formats.h"
#include "output_bytes.h"

namespace pliant::io::detail {

// ---------------------------------------------------------------------------------------------
// PLY, binary little-endian: vertices (with velocity for an object), triangle faces. Lines are not
// written: PLY has no polyline, and the `edge` element some writers use is one that assimp and
// meshio do not read (they refuse or drop the file); a rope's PLY is its points, and the header
// says so. VTK and OBJ frames carry ropes as lines.

std::string plyFrame(const PartView& part, double time) {
  const std::size_t n = part.position.size();
  const std::size_t tris = part.triangles.size();
  const bool velocity = !part.velocity.empty();
  std::string out = "ply\nformat binary_little_endian 1.0\ncomment Pliant frame, time ";
  appendNumber(out, time);
  out += " s\n";
  if (!part.lines.empty())
    out += "comment its lines are not written (PLY has no polyline): see the VTK or OBJ frames\n";
  out += "element vertex ";
  appendNumber(out, n);
  out += "\nproperty float x\nproperty float y\nproperty float z\n";
  if (velocity) out += "property float vx\nproperty float vy\nproperty float vz\n";
  out += "element face ";
  appendNumber(out, tris);
  out += "\nproperty list uchar int vertex_indices\nend_header\n";
  char* dst = grow(out, (velocity ? 24 : 12) * n + 13 * tris);
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3& p = part.position[i];
    for (int k = 0; k < 3; ++k, dst += 4) storeLittle32(dst, floatBits(p[k]));
    if (!velocity) continue;
    const Vec3& v = part.velocity[i];
    for (int k = 0; k < 3; ++k, dst += 4) storeLittle32(dst, floatBits(v[k]));
  }
  for (const auto& t : part.triangles) {
    *dst++ = 3;
    for (ParticleIndex p : t) {
      storeLittle32(dst, p - part.base);
      dst += 4;
    }
  }
  return out;
}

}  // namespace pliant::io::detail
