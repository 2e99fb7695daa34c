// Wavefront OBJ frames (text): one object ("o <name>") per part, with per-vertex normals and texture
// coordinates where the part has them.
#include <algorithm>
#include <cmath>
#include <string>

#include "frame_formats.h"
#include "output_bytes.h"

namespace pliant::io::detail {

namespace {

// Area-weighted vertex normals of a part's triangles (the sum of the cross products of the
// triangles around a vertex, whose length is twice their area, normalised). A vertex of only
// degenerate triangles gets +z: a zero normal would read back as NaN in some importers.
void vertexNormals(const PartView& part, std::vector<Vec3>& normals) {
  normals.assign(part.position.size(), Vec3::Zero());
  for (const auto& t : part.triangles) {
    const Vec3& a = part.position[t[0] - part.base];
    const Vec3& b = part.position[t[1] - part.base];
    const Vec3& c = part.position[t[2] - part.base];
    const Vec3 n = (b - a).cross(c - a);
    for (ParticleIndex p : t) normals[p - part.base] += n;
  }
  for (Vec3& n : normals) {
    const double length = n.norm();
    n = length > 0.0 && std::isfinite(length) ? Vec3(n / length) : Vec3(0.0, 0.0, 1.0);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Wavefront OBJ: text, written with std::to_chars (shortest round-trip text of each float).

std::string objFrame(std::span<const PartView> parts, double time) {
  // Upper bounds per line: a float takes at most 15 characters ("-1.17549435e-38"), an index 10.
  constexpr std::size_t kVertexLine = 3 + 3 * 16 + 1;
  constexpr std::size_t kTexcoordLine = 3 + 2 * 16 + 1;
  constexpr std::size_t kFaceLine = 2 + 3 * (3 * 11 + 3) + 1;
  constexpr std::size_t kLineLine = 2 + 2 * 11 + 1;
  std::size_t bound = 0;
  for (const PartView& part : parts)
    bound += 4 + 2 * part.name.size() + part.position.size() * (2 * kVertexLine + kTexcoordLine) +
             part.triangles.size() * kFaceLine + part.lines.size() * kLineLine + 16;
  std::string out = "# Pliant frame, time ";
  appendNumber(out, time);
  out += " s\n";
  const std::size_t headerSize = out.size();
  out.resize(headerSize + bound);
  char* dst = out.data() + headerSize;
  char* const end = out.data() + out.size();
  auto number = [&dst, end](auto value) { dst = std::to_chars(dst, end, value).ptr; };
  auto text = [&dst](std::string_view s) { dst = std::copy(s.begin(), s.end(), dst); };
  auto vector = [&](const char* tag, const Vec3& v) {
    text(tag);
    for (int k = 0; k < 3; ++k) {
      *dst++ = ' ';
      number(static_cast<float>(v[k]));
    }
    *dst++ = '\n';
  };
  // Every vertex gets a texture coordinate when any part has them, and a normal when any part has
  // triangles, so that vt, vn and v lines pair one to one: meshio reads them as point data and
  // refuses a file whose counts differ. A part without UVs gets (0, 0); a vertex in no triangle +z.
  bool anyUv = false, anyNormal = false;
  for (const PartView& part : parts) {
    anyUv = anyUv || !part.uv.empty();
    anyNormal = anyNormal || !part.triangles.empty();
  }
  std::vector<Vec3> normals;
  std::size_t vertexBase = 1;  // OBJ indices count from 1 over the whole file
  for (const PartView& part : parts) {
    if (parts.size() > 1) {
      // An object name is the rest of the line: a line break in a name would end it early.
      text("o ");
      for (char c : part.name) *dst++ = c == '\n' || c == '\r' ? ' ' : c;
      *dst++ = '\n';
    }
    for (const Vec3& p : part.position) vector("v", p);
    if (anyUv)
      for (std::size_t i = 0; i < part.position.size(); ++i) {
        text("vt");
        for (int k = 0; k < 2; ++k) {
          *dst++ = ' ';
          number(part.uv.empty() ? 0.0f : part.uv[i][static_cast<std::size_t>(k)]);
        }
        *dst++ = '\n';
      }
    if (anyNormal) {
      vertexNormals(part, normals);
      for (const Vec3& n : normals) vector("vn", n);
    }
    for (const auto& t : part.triangles) {
      *dst++ = 'f';
      for (ParticleIndex p : t) {
        const std::size_t index = vertexBase + (p - part.base);
        *dst++ = ' ';
        number(index);
        *dst++ = '/';
        if (anyUv) number(index);
        *dst++ = '/';
        number(index);
      }
      *dst++ = '\n';
    }
    if (part.chain && !part.lines.empty()) {
      // A rope: one polyline through its points in order.
      *dst++ = 'l';
      for (std::size_t i = 0; i < part.position.size(); ++i) {
        *dst++ = ' ';
        number(vertexBase + i);
      }
      *dst++ = '\n';
    } else {
      for (const auto& l : part.lines) {
        *dst++ = 'l';
        for (ParticleIndex p : l) {
          *dst++ = ' ';
          number(vertexBase + (p - part.base));
        }
        *dst++ = '\n';
      }
    }
    vertexBase += part.position.size();
  }
  out.resize(static_cast<std::size_t>(dst - out.data()));
  return out;
}

}  // namespace pliant::io::detail
