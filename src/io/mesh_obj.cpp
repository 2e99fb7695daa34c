// Wavefront OBJ triangle meshes (readObj), checked line by line before tinyobjloader reads them.
#include <tiny_obj_loader.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mesh_text.h"
#include "pliant/error.h"
#include "pliant/io/mesh_io.h"

namespace pliant::io {

using namespace detail;

namespace {

// The tinyobjloader library must be the double build (tinyobjloader::tinyobjloader_double): its
// attrib_t layout depends on this macro and the linker cannot tell the two builds apart.
static_assert(std::is_same_v<tinyobj::real_t, double>, "compile with TINYOBJLOADER_USE_DOUBLE");

}  // namespace

// ---------------------------------------------------------------------------------------------
// OBJ. tinyobjloader reads the faces, but it turns a bad number into 0 and an out-of-range index
// into a warning (and indexes past its arrays when triangulating), so a first pass of our own
// checks every 'v' and 'f' line and hands tinyobjloader only those lines, rewritten in a plain
// form. Its decimal conversion is not correctly rounded (0.30000000000000004 -> 0.3000000000000001),
// so the coordinates returned are our own parse, checked against tinyobjloader's.
TriangleMesh readObj(const std::string& path) { return readObjText(readText(path, "an OBJ file (.obj)"), path); }

TriangleMesh readObjText(const std::string& text, const std::string& path) {
  LineReader in(path, text, '#');
  std::vector<Vec3> vertices;
  std::vector<std::size_t> faceLines;
  std::vector<std::pair<long long, std::size_t>> forward;  // positive indices beyond the vertices read so far
  std::string clean;
  char buffer[32];
  // Texture coordinates: the vt lines, and each face corner's (vertex, vt) as written (1-based,
  // relative ones resolved); used when every corner names one.
  std::vector<std::array<double, 2>> texcoords;
  std::vector<std::pair<long long, long long>> cornerTexcoords;
  bool everyCornerHasTexcoord = true;
  while (in.next()) {
    if (in[0] == "vt") {
      if (in.size() < 2 || static_cast<long long>(texcoords.size()) >= kMaxVertices) {
        everyCornerHasTexcoord = false;
        continue;
      }
      const double u = in.real(1, "the u texture coordinate");
      const double v = in.size() > 2 ? in.real(2, "the v texture coordinate") : 0.0;
      texcoords.push_back({u, v});
      continue;
    }
    if (in[0] == "v") {
      if (in.size() < 4)
        in.fail(std::to_string(in.size() - 1) + " numbers after 'v'; expected three coordinates 'v <x> <y> <z>'");
      if (in.size() > 8)
        in.fail(std::to_string(in.size() - 1) +
                " numbers after 'v'; expected 'v <x> <y> <z> [w]' or 'v <x> <y> <z> <r> <g> <b> [a]'");
      if (static_cast<long long>(vertices.size()) >= kMaxVertices)
        in.fail("more than " + std::to_string(kMaxVertices) + " vertices; too many");
      Vec3 x;
      for (int d = 0; d < 3; ++d)
        x[d] = in.real(static_cast<std::size_t>(1 + d), std::string("the ") + "xyz"[d] + " coordinate");
      for (std::size_t k = 4; k < in.size(); ++k) in.real(k, "a vertex weight or colour");
      vertices.push_back(x);
      clean += 'v';
      for (int d = 0; d < 3; ++d) {
        const auto written = std::to_chars(buffer, buffer + sizeof(buffer), x[d]);  // shortest exact form
        clean += ' ';
        clean.append(buffer, written.ptr);
      }
      clean += '\n';
    } else if (in[0] == "f") {
      if (in.size() < 4)
        in.fail(std::to_string(in.size() - 1) + " vertices in a face; expected at least three 'f <i> <j> <k> ...'");
      clean += 'f';
      std::vector<long long> used;
      for (std::size_t k = 1; k < in.size(); ++k) {
        // '<v>', '<v>/<vt>', '<v>//<vn>' or '<v>/<vt>/<vn>'; only <v> is used, the rest must be integers.
        const std::string_view corner = in[k];
        const std::string form = "a vertex reference '<v>', '<v>/<vt>', '<v>//<vn>' or '<v>/<vt>/<vn>'";
        std::array<std::string_view, 3> part;
        std::size_t parts = 0;
        std::size_t start = 0;
        while (true) {
          const std::size_t slash = corner.find('/', start);
          if (parts == 3) in.fail(shown(corner) + " has more than two '/'; expected " + form);
          part[parts++] =
              corner.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
          if (slash == std::string_view::npos) break;
          start = slash + 1;
        }
        long long value = 0;
        for (std::size_t p = 0; p < parts; ++p) {
          if (part[p].empty() && p == 1 && parts == 3) continue;  // '<v>//<vn>'
          if (toInteger(part[p], value) == Parsed::notNumber || part[p].empty())
            in.fail(shown(corner) + " is not " + form + " of integers");
        }
        long long v = 0;
        if (toInteger(part[0], v) == Parsed::ok && v == 0)
          in.fail("vertex index 0; OBJ indices start at 1 (or -1 for the last vertex)");
        if (toInteger(part[0], v) != Parsed::ok || v < -kMaxVertices || v > kMaxVertices)
          in.fail("vertex index " + shown(part[0]) + " is out of range; expected 1 to " +
                  std::to_string(vertices.size()) + " or -1 to -" + std::to_string(vertices.size()) + " (relative)");
        const long long defined = static_cast<long long>(vertices.size());
        if (v < 0) {
          if (-v > defined)
            in.fail("relative vertex index " + shown(part[0]) + " reaches before the first vertex; only " +
                    std::to_string(defined) + " are defined above this line");
          v = defined + v + 1;
        } else if (v > defined) {
          forward.emplace_back(v, in.line());
        }
        used.push_back(v);
        clean += ' ';
        clean += std::to_string(v);
        long long t = 0;
        const auto texcount = static_cast<long long>(texcoords.size());
        if (parts >= 2 && toInteger(part[1], t) == Parsed::ok && t != 0 && t >= -texcount && t <= texcount)
          cornerTexcoords.emplace_back(v, t < 0 ? texcount + t + 1 : t);
        else everyCornerHasTexcoord = false;
      }
      std::sort(used.begin(), used.end());
      const auto twice = std::adjacent_find(used.begin(), used.end());
      if (twice != used.end())
        in.fail("the face uses vertex " + std::to_string(*twice) + " twice; expected distinct vertices");
      clean += '\n';
      faceLines.push_back(in.line());
    }
    // Other statements (vn, g, o, s, usemtl, mtllib, l, p, ...) carry nothing a mesh needs.
  }
  if (vertices.empty()) throw Error(path + ": empty mesh: no vertices; expected 'v <x> <y> <z>' lines");
  if (faceLines.empty()) throw Error(path + ": empty mesh: no faces; expected 'f <i> <j> <k>' lines");
  for (const auto& [v, line] : forward)
    if (v > static_cast<long long>(vertices.size()))
      failAt(path, line,
             "vertex index " + std::to_string(v) + " is out of range; the file defines " +
                 std::to_string(vertices.size()) + " vertices");

  tinyobj::attrib_t attrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<tinyobj::material_t> materials;
  std::string warning;
  std::string error;
  std::istringstream stream(clean);
  // No material reader: materials are not needed. Polygons are fanned below, not by tinyobjloader.
  const bool ok = tinyobj::LoadObj(&attrib, &shapes, &materials, &warning, &error, &stream, nullptr, false, false);
  auto trimmed = [](std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
  };
  if (!ok || !error.empty()) throw Error(path + ": tinyobjloader: " + trimmed(error));
  if (!warning.empty()) throw Error(path + ": tinyobjloader: " + trimmed(warning));
  if (attrib.vertices.size() != 3 * vertices.size())
    throw Error(path + ": tinyobjloader read " + std::to_string(attrib.vertices.size() / 3) + " vertices; expected " +
                std::to_string(vertices.size()));
  for (std::size_t i = 0; i < vertices.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      const double theirs = attrib.vertices[3 * i + static_cast<std::size_t>(d)];
      if (!(std::abs(theirs - vertices[i][d]) <= 1e-12 * std::abs(vertices[i][d]) + 1e-300))
        throw Error(path + ": tinyobjloader read vertex " + std::to_string(i + 1) + " as " + format(theirs) +
                    "; expected " + format(vertices[i][d]));
    }

  TriangleMesh mesh;
  mesh.vertices = std::move(vertices);
  std::size_t face = 0;
  for (const tinyobj::shape_t& shape : shapes) {
    std::size_t offset = 0;
    for (const unsigned int corners : shape.mesh.num_face_vertices) {
      const std::size_t line = face < faceLines.size() ? faceLines[face] : 0;
      ++face;
      if (corners < 3 || offset + corners > shape.mesh.indices.size())
        failAt(path, line,
               "tinyobjloader returned a face with " + std::to_string(corners) + " vertices; expected at least three");
      std::vector<std::uint32_t> polygon;
      for (std::size_t k = 0; k < corners; ++k) {
        const int v = shape.mesh.indices[offset + k].vertex_index;
        if (v < 0 || static_cast<std::size_t>(v) >= mesh.vertices.size())
          failAt(path, line,
                 "tinyobjloader returned vertex index " + std::to_string(v) + "; expected 0 to " +
                     std::to_string(mesh.vertices.size() - 1));
        polygon.push_back(static_cast<std::uint32_t>(v));
      }
      offset += corners;
      for (std::size_t k = 1; k + 1 < polygon.size(); ++k)
        mesh.triangles.push_back({polygon[0], polygon[k], polygon[k + 1]});
    }
  }
  if (face != faceLines.size())
    throw Error(path + ": tinyobjloader read " + std::to_string(face) + " faces; expected " +
                std::to_string(faceLines.size()));
  // A vertex's texture coordinates are those of the first corner that uses it (a vertex on a UV
  // seam cannot take two: it is one particle); a vertex in no face gets (0, 0).
  if (everyCornerHasTexcoord && !texcoords.empty()) {
    mesh.texcoords.assign(mesh.vertices.size(), {0.0, 0.0});
    std::vector<bool> set(mesh.vertices.size(), false);
    for (const auto& [v, t] : cornerTexcoords) {
      const auto vertex = static_cast<std::size_t>(v - 1);
      if (vertex < set.size() && !set[vertex]) {
        set[vertex] = true;
        mesh.texcoords[vertex] = texcoords[static_cast<std::size_t>(t - 1)];
      }
    }
  }
  return mesh;
}

}  // namespace pliant::io
