// Wavefront OBJ frames (text).
#include <string>

#include "frame_formats.h"
#include "output_bytes.h"

namespace pliant::io::detail {

// ---------------------------------------------------------------------------------------------
// Wavefront OBJ: text, written with std::to_chars (shortest round-trip text of each float).

std::string objFrame(const Topology& topology, const State& state) {
  const std::size_t n = state.position.size();
  // Upper bounds per line: a float takes at most 15 characters ("-1.17549435e-38"), an index 10.
  constexpr std::size_t kVertexLine = 2 + 3 * 16 + 1;
  constexpr std::size_t kFaceLine = 2 + 3 * 11 + 1;
  constexpr std::size_t kLineLine = 2 + 2 * 11 + 1;
  std::string out = "# Pliant frame, time ";
  appendNumber(out, state.time);
  out += " s\n";
  const std::size_t headerSize = out.size();
  out.resize(headerSize + n * kVertexLine + topology.triangles.size() * kFaceLine + topology.lines.size() * kLineLine);
  char* dst = out.data() + headerSize;
  char* const end = out.data() + out.size();
  auto number = [&dst, end](auto value) { dst = std::to_chars(dst, end, value).ptr; };
  for (const Vec3& p : state.position) {
    *dst++ = 'v';
    for (int k = 0; k < 3; ++k) {
      *dst++ = ' ';
      number(static_cast<float>(p[k]));
    }
    *dst++ = '\n';
  }
  for (const auto& t : topology.triangles) {
    *dst++ = 'f';
    for (ParticleIndex p : t) {
      *dst++ = ' ';
      number(p + 1);  // OBJ indices start at 1
    }
    *dst++ = '\n';
  }
  for (const auto& l : topology.lines) {
    *dst++ = 'l';
    for (ParticleIndex p : l) {
      *dst++ = ' ';
      number(p + 1);
    }
    *dst++ = '\n';
  }
  out.resize(static_cast<std::size_t>(dst - out.data()));
  return out;
}

}  // namespace pliant::io::detail
