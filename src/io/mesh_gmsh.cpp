// Gmsh tet meshes (readGmsh): ASCII .msh files of versions 4.1 and 2.2.
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
// Gmsh (https://gmsh.info/doc/texinfo/gmsh.html#MSH-file-format, versions 4.1 and 2.2)

struct GmshTet {
  std::array<long long, 4> tags;
  std::size_t line;
};

class GmshReader {
 public:
  GmshReader(const std::string& path, const std::string& text) : in_(path, text, '\0') {}

  TetMesh read() {
    const std::string& path = in_.path();
    if (!in_.next()) throw Error(path + ": empty file; expected a Gmsh mesh starting with $MeshFormat");
    if (in_.size() != 1 || in_[0] != "$MeshFormat")
      in_.fail("found " + shown(in_[0]) + "; expected $MeshFormat on the first line (is this a Gmsh .msh file?)");
    readFormat();
    while (in_.next()) {
      if (in_.size() != 1 || in_[0].empty() || in_[0][0] != '$')
        in_.fail("found " + shown(in_[0]) + "; expected a section header such as $Nodes or $Elements");
      const std::string_view section = in_[0];
      if (section == "$MeshFormat") in_.fail("second $MeshFormat section; expected one");
      if (section == "$Nodes") {
        if (nodesLine_ != 0)
          in_.fail("second $Nodes section (the first is at line " + std::to_string(nodesLine_) + "); expected one");
        nodesLine_ = in_.line();
        version41_ ? readNodes41() : readNodes22();
      } else if (section == "$Elements") {
        if (elementsLine_ != 0)
          in_.fail("second $Elements section (the first is at line " + std::to_string(elementsLine_) +
                   "); expected one");
        elementsLine_ = in_.line();
        version41_ ? readElements41() : readElements22();
      } else {
        skipSection(section);
      }
    }
    if (nodesLine_ == 0) throw Error(path + ": no $Nodes section; expected the mesh's nodes");
    if (elementsLine_ == 0) throw Error(path + ": no $Elements section; expected the mesh's tetrahedra");
    if (tets_.empty()) failAt(path, elementsLine_, "empty mesh: no 4-node tetrahedra (element type 4) in $Elements");

    TetMesh mesh;
    mesh.vertices = std::move(vertices_);
    std::vector<std::size_t> lines;
    for (const GmshTet& t : tets_) {
      std::array<std::uint32_t, 4> tet{};
      for (int k = 0; k < 4; ++k) {
        const auto found = index_.find(t.tags[k]);
        if (found == index_.end())
          failAt(path, t.line,
                 "tetrahedron uses node tag " + std::to_string(t.tags[k]) + ", which $Nodes does not define");
        tet[k] = found->second;
      }
      mesh.tets.push_back(tet);
      lines.push_back(t.line);
    }
    orientTetsAt(mesh, path, &lines);
    return mesh;
  }

 private:
  void readFormat() {
    if (!in_.next()) in_.fail("file ends inside $MeshFormat; expected '<version> <file-type> <data-size>'");
    if (in_.size() != 3)
      in_.fail(std::to_string(in_.size()) +
               " values in $MeshFormat; expected '<version 2.2|4.1> <file-type 0> <data-size 8>'");
    const double version = in_.real(0, "a format version 2.2 or 4.1");
    const long long fileType = in_.integer(1, "a file type 0 (ASCII) or 1 (binary)");
    if (fileType == 1)
      in_.fail("binary .msh is not supported; save as ASCII (Gmsh: Mesh.Binary = 0, no -bin on the command line)");
    if (fileType != 0) in_.fail("file type " + shown(in_[1]) + "; expected 0 (ASCII)");
    if (version == 4.1) {
      version41_ = true;
    } else if (version != 2.2) {
      in_.fail("format version " + shown(in_[0]) + " is not supported; expected 2.2 or 4.1 (ASCII)");
    }
    in_.integer(2, "the data size 8");
    if (!in_.next()) in_.fail("file ends inside $MeshFormat; expected $EndMeshFormat");
    in_.expectWord("$EndMeshFormat", "to close $MeshFormat");
  }

  void skipSection(std::string_view section) {
    const std::string end = "$End" + std::string(section.substr(1));
    const std::size_t opened = in_.line();
    while (in_.next())
      if (in_[0] == end) return;
    in_.fail("file ends inside section " + shown(section) + " opened at line " + std::to_string(opened) +
             "; expected " + end);
  }

  // Ends a section: the next line must be `end`.
  void closeSection(const std::string& end, const std::string& what) {
    if (!in_.next()) in_.fail("file ends before " + end + "; expected it after " + what);
    in_.expectWord(end, "after " + what);
  }

  void nextOrFail(const std::string& what) {
    if (!in_.next()) in_.fail("file ends inside $" + section_ + "; expected " + what);
    if (in_[0].front() == '$') in_.fail("found " + shown(in_[0]) + "; expected " + what);
  }

  // The next of `total` records: a '$' line or the end of the file here means the section holds
  // fewer records than it declares.
  void nextRecord(const std::string& what, long long done, long long total) {
    const std::string count = " after " + std::to_string(done) + " of the " + std::to_string(total) + " " + what;
    if (!in_.next()) in_.fail("file ends inside $" + section_ + count);
    if (in_[0].front() == '$') in_.fail("found " + shown(in_[0]) + count + "; expected another");
  }

  void addNode(long long tag, std::size_t tagLine, const Vec3& x) {
    if (static_cast<long long>(vertices_.size()) >= kMaxVertices)
      in_.fail("more than " + std::to_string(kMaxVertices) + " nodes; too many");
    const auto [it, inserted] = index_.emplace(tag, static_cast<std::uint32_t>(vertices_.size()));
    if (!inserted)
      failAt(in_.path(), tagLine,
             "node tag " + std::to_string(tag) + " is defined twice (first at line " +
                 std::to_string(tagLines_[it->second]) + "); expected each tag once");
    vertices_.push_back(x);
    tagLines_.push_back(tagLine);
  }

  Vec3 coordinates(std::size_t firstToken) const {
    Vec3 x;
    for (int d = 0; d < 3; ++d)
      x[d] = in_.real(firstToken + static_cast<std::size_t>(d), std::string("the ") + "xyz"[d] + " coordinate");
    return x;
  }

  // $Nodes (2.2): <count>, then '<tag> <x> <y> <z>' per node.
  void readNodes22() {
    section_ = "Nodes";
    nextOrFail("the node count");
    if (in_.size() != 1) in_.fail(std::to_string(in_.size()) + " values; expected the node count alone");
    const long long count = in_.integer(0, 0, kMaxVertices, "a node count >= 0");
    for (long long i = 0; i < count; ++i) {
      nextRecord("nodes the section declares", i, count);
      if (in_.size() != 4)
        in_.fail(std::to_string(in_.size()) + " values on a node line; expected 4 '<tag> <x> <y> <z>'");
      const long long tag = in_.integer(0, 1, std::numeric_limits<long long>::max(), "a node tag >= 1");
      addNode(tag, in_.line(), coordinates(1));
    }
    closeSection("$EndNodes", "the " + std::to_string(count) + " nodes the section declares");
  }

  // $Elements (2.2): <count>, then '<tag> <type> <ntags> <tags...> <nodes...>' per element.
  void readElements22() {
    section_ = "Elements";
    nextOrFail("the element count");
    if (in_.size() != 1) in_.fail(std::to_string(in_.size()) + " values; expected the element count alone");
    const long long count = in_.integer(0, 0, std::numeric_limits<std::int64_t>::max(), "an element count >= 0");
    for (long long i = 0; i < count; ++i) {
      nextRecord("elements the section declares", i, count);
      if (in_.size() < 4)
        in_.fail(std::to_string(in_.size()) +
                 " values on an element line; expected '<tag> <type> <number of tags> <tags...> <nodes...>'");
      for (std::size_t k = 0; k < in_.size(); ++k) in_.integer(k, "integers on an element line");
      const long long type = in_.integer(1, "an element type");
      const long long tagCount =
          in_.integer(2, 0, static_cast<long long>(in_.size()) - 4, "a number of tags that leaves room for the nodes");
      if (type != 4) continue;  // only 4-node tetrahedra make the mesh
      const std::size_t firstNode = 3 + static_cast<std::size_t>(tagCount);
      if (in_.size() != firstNode + 4)
        in_.fail(std::to_string(in_.size() - firstNode) + " nodes for a tetrahedron (type 4); expected 4");
      GmshTet t{{}, in_.line()};
      for (std::size_t k = 0; k < 4; ++k) t.tags[k] = in_.integer(firstNode + k, "a node tag");
      tets_.push_back(t);
    }
    closeSection("$EndElements", "the " + std::to_string(count) + " elements the section declares");
  }

  // $Nodes (4.1): '<blocks> <nodes> <min tag> <max tag>', then per block
  // '<entity dim> <entity tag> <parametric> <nodes in block>', the block's tags, then its coordinates.
  void readNodes41() {
    section_ = "Nodes";
    nextOrFail("'<entity blocks> <nodes> <min tag> <max tag>'");
    if (in_.size() != 4)
      in_.fail(std::to_string(in_.size()) + " values; expected 4 '<entity blocks> <nodes> <min tag> <max tag>'");
    const long long blocks = in_.integer(0, 0, std::numeric_limits<std::int64_t>::max(), "a block count >= 0");
    const long long count = in_.integer(1, 0, kMaxVertices, "a node count >= 0");
    const long long minTag = in_.integer(2, "the smallest node tag");
    const long long maxTag = in_.integer(3, "the largest node tag");
    const std::size_t headerLine = in_.line();
    long long seen = 0;
    for (long long b = 0; b < blocks; ++b) {
      nextRecord("entity blocks the section declares", b, blocks);
      if (in_.size() != 4)
        in_.fail(std::to_string(in_.size()) +
                 " values; expected 4 '<entity dim> <entity tag> <parametric 0|1> <nodes in block>'");
      const long long dim = in_.integer(0, 0, 3, "an entity dimension 0 to 3");
      in_.integer(1, "an entity tag");
      const long long parametric = in_.integer(2, 0, 1, "parametric 0 or 1");
      const long long inBlock = in_.integer(
          3, 0, count - seen,
          "at most the " + std::to_string(count - seen) + " nodes left of the declared " + std::to_string(count));
      seen += inBlock;
      std::vector<std::pair<long long, std::size_t>> tags;  // grows with the lines actually read
      for (long long i = 0; i < inBlock; ++i) {
        nextRecord("node tags the block declares", i, inBlock);
        if (in_.size() != 1) in_.fail(std::to_string(in_.size()) + " values; expected one node tag per line");
        const long long tag = in_.integer(0, 1, std::numeric_limits<long long>::max(), "a node tag >= 1");
        if (tag < minTag || tag > maxTag)
          in_.fail("node tag " + shown(in_[0]) + " is outside " + std::to_string(minTag) + " to " +
                   std::to_string(maxTag) + " declared at line " + std::to_string(headerLine));
        tags.emplace_back(tag, in_.line());
      }
      const std::size_t values = 3 + (parametric == 1 ? static_cast<std::size_t>(dim) : 0);
      for (std::size_t i = 0; i < tags.size(); ++i) {
        const auto [tag, tagLine] = tags[i];
        nextRecord("coordinate lines the block needs", static_cast<long long>(i), inBlock);
        if (in_.size() != values)
          in_.fail(std::to_string(in_.size()) + " values; expected " + std::to_string(values) + " '<x> <y> <z>" +
                   (values > 3 ? " <parametric coordinates>" : "") + "'");
        for (std::size_t k = 3; k < values; ++k) in_.real(k, "a parametric coordinate");
        addNode(tag, tagLine, coordinates(0));
      }
    }
    if (seen != count)
      failAt(in_.path(), headerLine,
             "declares " + std::to_string(count) + " nodes but its blocks hold " + std::to_string(seen));
    closeSection("$EndNodes", "the " + std::to_string(blocks) + " node blocks the section declares");
  }

  // $Elements (4.1): '<blocks> <elements> <min tag> <max tag>', then per block
  // '<entity dim> <entity tag> <element type> <elements in block>' and '<tag> <nodes...>' per element.
  void readElements41() {
    section_ = "Elements";
    nextOrFail("'<entity blocks> <elements> <min tag> <max tag>'");
    if (in_.size() != 4)
      in_.fail(std::to_string(in_.size()) + " values; expected 4 '<entity blocks> <elements> <min tag> <max tag>'");
    const long long blocks = in_.integer(0, 0, std::numeric_limits<std::int64_t>::max(), "a block count >= 0");
    const long long count = in_.integer(1, 0, std::numeric_limits<std::int64_t>::max(), "an element count >= 0");
    in_.integer(2, "the smallest element tag");
    in_.integer(3, "the largest element tag");
    const std::size_t headerLine = in_.line();
    long long seen = 0;
    for (long long b = 0; b < blocks; ++b) {
      nextRecord("entity blocks the section declares", b, blocks);
      if (in_.size() != 4)
        in_.fail(std::to_string(in_.size()) +
                 " values; expected 4 '<entity dim> <entity tag> <element type> <elements in block>'");
      in_.integer(0, 0, 3, "an entity dimension 0 to 3");
      in_.integer(1, "an entity tag");
      const long long type = in_.integer(2, "an element type");
      const long long inBlock = in_.integer(
          3, 0, count - seen,
          "at most the " + std::to_string(count - seen) + " elements left of the declared " + std::to_string(count));
      seen += inBlock;
      for (long long i = 0; i < inBlock; ++i) {
        nextRecord("elements the block declares", i, inBlock);
        if (in_.size() < 2) in_.fail(std::to_string(in_.size()) + " values; expected '<element tag> <node tags...>'");
        for (std::size_t k = 0; k < in_.size(); ++k) in_.integer(k, "integer tags on an element line");
        if (type != 4) continue;  // only 4-node tetrahedra make the mesh
        if (in_.size() != 5) in_.fail(std::to_string(in_.size() - 1) + " nodes for a tetrahedron (type 4); expected 4");
        GmshTet t{{}, in_.line()};
        for (std::size_t k = 0; k < 4; ++k) t.tags[k] = in_.integer(1 + k, "a node tag");
        tets_.push_back(t);
      }
    }
    if (seen != count)
      failAt(in_.path(), headerLine,
             "declares " + std::to_string(count) + " elements but its blocks hold " + std::to_string(seen));
    closeSection("$EndElements", "the " + std::to_string(blocks) + " element blocks the section declares");
  }

  LineReader in_;
  bool version41_ = false;
  std::string section_;
  std::size_t nodesLine_ = 0;
  std::size_t elementsLine_ = 0;
  std::vector<Vec3> vertices_;
  std::vector<std::size_t> tagLines_;
  std::unordered_map<long long, std::uint32_t> index_;
  std::vector<GmshTet> tets_;
};

}  // namespace

TetMesh readGmsh(const std::string& path) {
  const std::string text = readText(path, "a Gmsh mesh (.msh)");
  return GmshReader(path, text).read();
}

}  // namespace pliant::io
