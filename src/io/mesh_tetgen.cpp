// TetGen tet meshes (readTetGen): a .node file of vertices and a .ele file of tetrahedra.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
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

// ---------------------------------------------------------------------------------------------
// TetGen (https://wias-berlin.de/software/tetgen/fformats.html)

struct NodeRecord {
  std::uint32_t slot;  // index - first index
  std::size_t line;
  Vec3 x;
};

// Reads `path` (.node); returns the first index (0 or 1) the file uses.
long long readNodeFile(const std::string& path, std::vector<Vec3>& vertices) {
  const std::string text = readText(path, "a TetGen node file (.node)");
  LineReader in(path, text, '#');
  const std::string header = "the header '<nodes> <dimension 3> <attributes> <boundary markers 0|1>'";
  if (!in.next()) throw Error(path + ": empty file; expected " + header);
  if (in.size() > 4) in.fail(std::to_string(in.size()) + " numbers in the header; expected " + header);
  const long long count = in.integer(0, 0, kMaxVertices, "a node count from 0 to " + std::to_string(kMaxVertices));
  if (in.size() > 1 && in.integer(1, "the dimension 3") != 3)
    in.fail("dimension " + shown(in[1]) + "; expected 3 (a tetrahedral mesh)");
  const long long attributes = in.size() > 2 ? in.integer(2, 0, kMaxAttributes, "a number of attributes >= 0") : 0;
  const long long markers = in.size() > 3 ? in.integer(3, 0, 1, "a boundary marker flag 0 or 1") : 0;
  if (count == 0) in.fail("the header declares 0 nodes; expected at least 4 (the mesh is empty)");
  const std::size_t fields = static_cast<std::size_t>(4 + attributes + markers);
  const std::string recordForm = std::to_string(fields) + " numbers '<index> <x> <y> <z>" +
                                 (attributes > 0 ? " <" + std::to_string(attributes) + " attributes>" : std::string()) +
                                 (markers > 0 ? " <boundary marker>" : std::string()) + "'";

  std::vector<NodeRecord> records;
  long long first = 0;
  for (long long i = 0; i < count; ++i) {
    if (!in.next())
      in.fail("file ends after " + std::to_string(i) + " of the " + std::to_string(count) +
              " nodes the header declares");
    if (in.size() != fields) in.fail(std::to_string(in.size()) + " numbers on a node line; expected " + recordForm);
    const long long index = in.integer(0, "a node index");
    if (i == 0) {
      if (index != 0 && index != 1) in.fail("first node index " + shown(in[0]) + "; expected 0 or 1");
      first = index;
    }
    if (index < first || index - first >= count)
      in.fail("node index " + shown(in[0]) + " is out of range; expected " + std::to_string(first) + " to " +
              std::to_string(first + count - 1));
    NodeRecord r{static_cast<std::uint32_t>(index - first), in.line(), Vec3::Zero()};
    for (int d = 0; d < 3; ++d)
      r.x[d] = in.real(static_cast<std::size_t>(1 + d), std::string("the ") + "xyz"[d] + " coordinate");
    for (std::size_t k = 4; k < 4 + static_cast<std::size_t>(attributes); ++k) in.real(k, "an attribute value");
    if (markers > 0) in.integer(fields - 1, "an integer boundary marker");
    records.push_back(r);
  }
  if (in.next()) in.fail("unexpected data after the " + std::to_string(count) + " nodes the header declares");

  // `count` records were read, so these allocations are backed by the file's size.
  std::vector<std::size_t> lineOf(static_cast<std::size_t>(count), 0);
  vertices.assign(static_cast<std::size_t>(count), Vec3::Zero());
  for (const NodeRecord& r : records) {
    if (lineOf[r.slot] != 0)
      failAt(path, r.line,
             "node " + std::to_string(first + r.slot) + " is defined twice (first at line " +
                 std::to_string(lineOf[r.slot]) + "); expected each index once");
    lineOf[r.slot] = r.line;
    vertices[r.slot] = r.x;
  }
  return first;
}

void readEleFile(const std::string& path, std::size_t nodeCount, long long first,
                 std::vector<std::array<std::uint32_t, 4>>& tets, std::vector<std::size_t>& lines) {
  const std::string text = readText(path, "a TetGen element file (.ele)");
  LineReader in(path, text, '#');
  const std::string header = "the header '<tetrahedra> <nodes per tet 4|10> <attributes>'";
  if (!in.next()) throw Error(path + ": empty file; expected " + header);
  if (in.size() > 3) in.fail(std::to_string(in.size()) + " numbers in the header; expected " + header);
  const long long count = in.integer(0, 0, std::numeric_limits<std::int64_t>::max(), "a tetrahedron count >= 0");
  const long long perTet = in.size() > 1 ? in.integer(1, "4 or 10 nodes per tetrahedron") : 4;
  if (perTet != 4 && perTet != 10)
    in.fail(shown(in[1]) + " nodes per tetrahedron; expected 4 or 10 (10: quadratic, its first 4 are the corners)");
  const long long attributes = in.size() > 2 ? in.integer(2, 0, kMaxAttributes, "a number of attributes >= 0") : 0;
  if (count == 0) in.fail("the header declares 0 tetrahedra; expected at least one (the mesh is empty)");
  const std::size_t fields = static_cast<std::size_t>(1 + perTet + attributes);
  const long long last = first + static_cast<long long>(nodeCount) - 1;
  const std::string range = std::to_string(first) + " to " + std::to_string(last);

  for (long long i = 0; i < count; ++i) {
    if (!in.next())
      in.fail("file ends after " + std::to_string(i) + " of the " + std::to_string(count) +
              " tetrahedra the header declares");
    if (in.size() != fields)
      in.fail(std::to_string(in.size()) + " numbers on a tetrahedron line; expected " + std::to_string(fields) +
              " '<index> <" + std::to_string(perTet) + " node indices>" +
              (attributes > 0 ? " <" + std::to_string(attributes) + " attributes>" : std::string()) + "'");
    in.integer(0, "a tetrahedron index");
    std::array<std::uint32_t, 4> tet{};
    for (std::size_t k = 1; k <= static_cast<std::size_t>(perTet); ++k) {
      const long long node = in.integer(k, "a node index from " + range);
      if (node < first || node > last)
        in.fail("node index " + shown(in[k]) + " is out of range; expected " + range +
                " (the nodes of the .node file)");
      if (k <= 4) tet[k - 1] = static_cast<std::uint32_t>(node - first);
    }
    for (std::size_t k = 1 + static_cast<std::size_t>(perTet); k < fields; ++k) in.real(k, "an attribute value");
    tets.push_back(tet);
    lines.push_back(in.line());
  }
  if (in.next()) in.fail("unexpected data after the " + std::to_string(count) + " tetrahedra the header declares");
}

}  // namespace

TetMesh readTetGen(const std::string& path) {
  const std::string ext = lowerExtension(path);
  const std::string base = ext == ".node" || ext == ".ele" ? path.substr(0, path.size() - ext.size()) : path;
  const std::string nodePath = base + ".node";
  const std::string elePath = base + ".ele";
  TetMesh mesh;
  const long long first = readNodeFile(nodePath, mesh.vertices);
  std::vector<std::size_t> lines;
  readEleFile(elePath, mesh.vertices.size(), first, mesh.tets, lines);
  orientTetsAt(mesh, elePath, &lines);
  return mesh;
}

}  // namespace pliant::io
