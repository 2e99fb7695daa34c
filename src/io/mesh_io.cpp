// Mesh readers (OBJ, TetGen .node/.ele, Gmsh .msh 2.2/4.1) and tet-mesh orientation and surface.
//
// Every reader goes through LineReader, a small tokenizer that knows the current line, so every
// error reads "<file>:<line>: <what was found>; expected <what>". Numbers are parsed with
// std::from_chars (no locale, no UB on huge values) and must be finite. Counts read from a header
// never size an allocation: records are collected as they are read, so a header that claims more
// than the file holds ends as "file ends after M of N ..." instead of exhausting memory.
#include "pliant/io/mesh_io.h"

#include <tiny_obj_loader.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "pliant/error.h"

namespace pliant::io {
namespace {

// The tinyobjloader library must be the double build (tinyobjloader::tinyobjloader_double): its
// attrib_t layout depends on this macro and the linker cannot tell the two builds apart.
static_assert(std::is_same_v<tinyobj::real_t, double>, "compile with TINYOBJLOADER_USE_DOUBLE");

// Largest vertex count: indices are std::uint32_t and tinyobjloader stores them as int.
constexpr long long kMaxVertices = std::numeric_limits<std::int32_t>::max();
constexpr long long kMaxAttributes = 1'000'000;

std::string format(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

// A token as it appears in a message: clipped, and non-printable bytes shown as '?'.
std::string shown(std::string_view token) {
  constexpr std::size_t kMax = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < token.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    out += std::isprint(c) ? static_cast<char>(c) : '?';
  }
  if (token.size() > kMax) out += "...";
  out += "'";
  return out;
}

[[noreturn]] void failAt(const std::string& path, std::size_t line, const std::string& what) {
  throw Error(path + ":" + std::to_string(line) + ": " + what);
}

std::string lowerExtension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

std::string readText(const std::string& path, const std::string& kind) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a folder, expected " + kind);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open " + kind + " (does it exist and is it readable?)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error in " + kind);
  return text.str();
}

enum class Parsed { ok, notNumber, notFinite, outOfRange };

// from_chars rejects a leading '+', which files do write.
std::string_view withoutPlus(std::string_view s) {
  if (s.size() > 1 && s.front() == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  return s;
}

Parsed toReal(std::string_view token, double& out) {
  const std::string_view s = withoutPlus(token);
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out, std::chars_format::general);
  if (ec == std::errc::invalid_argument || ptr != end) return Parsed::notNumber;
  if (ec == std::errc::result_out_of_range) {
    // Overflow is an error; underflow (1e-400) is a legitimate way to write about zero.
    const std::string copy(s);
    out = std::strtod(copy.c_str(), nullptr);
    if (std::abs(out) == HUGE_VAL) return Parsed::notFinite;
  }
  return std::isfinite(out) ? Parsed::ok : Parsed::notFinite;
}

Parsed toInteger(std::string_view token, long long& out) {
  const std::string_view s = withoutPlus(token);
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out, 10);
  if (ec == std::errc::invalid_argument || ptr != end) return Parsed::notNumber;
  if (ec == std::errc::result_out_of_range) return Parsed::outOfRange;
  return Parsed::ok;
}

// Splits a text into lines and lines into whitespace-separated tokens; skips blank lines and, when
// `comment` is not '\0', everything from the comment character to the end of the line.
class LineReader {
 public:
  LineReader(std::string path, const std::string& text, char comment)
      : path_(std::move(path)), text_(text), comment_(comment) {}

  // Advances to the next line that has a token; false at the end of the file.
  bool next() {
    while (pos_ < text_.size()) {
      std::size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view row = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      if (row.find('\0') != std::string_view::npos) fail("binary data (a NUL byte) where text was expected");
      if (comment_ != '\0') row = row.substr(0, row.find(comment_));
      tokens_.clear();
      std::size_t i = 0;
      while (i < row.size()) {
        while (i < row.size() && isSpace(row[i])) ++i;
        const std::size_t start = i;
        while (i < row.size() && !isSpace(row[i])) ++i;
        if (i > start) tokens_.push_back(row.substr(start, i - start));
      }
      if (!tokens_.empty()) return true;
    }
    return false;
  }

  std::size_t line() const { return line_; }  // 1-based; after the end: the last line of the file
  const std::string& path() const { return path_; }
  std::size_t size() const { return tokens_.size(); }
  std::string_view operator[](std::size_t k) const { return tokens_[k]; }

  [[noreturn]] void fail(const std::string& what) const { failAt(path_, line_, what); }

  double real(std::size_t k, const std::string& expected) const {
    double value = 0.0;
    switch (toReal(tokens_[k], value)) {
      case Parsed::ok:
        return value;
      case Parsed::notFinite:
        fail(shown(tokens_[k]) + " is not a finite number; expected " + expected);
      default:
        fail(shown(tokens_[k]) + " is not a number; expected " + expected);
    }
  }

  long long integer(std::size_t k, const std::string& expected) const {
    long long value = 0;
    switch (toInteger(tokens_[k], value)) {
      case Parsed::ok:
        return value;
      case Parsed::outOfRange:
        fail(shown(tokens_[k]) + " is out of range; expected " + expected);
      default:
        fail(shown(tokens_[k]) + " is not an integer; expected " + expected);
    }
  }

  // An integer in [lo, hi].
  long long integer(std::size_t k, long long lo, long long hi, const std::string& expected) const {
    const long long value = integer(k, expected);
    if (value < lo || value > hi) fail(shown(tokens_[k]) + " is out of range; expected " + expected);
    return value;
  }

  // The current line must be exactly `word`.
  void expectWord(std::string_view word, const std::string& context) const {
    if (tokens_.size() != 1 || tokens_[0] != word)
      fail("found " + shown(tokens_[0]) + "; expected " + std::string(word) + " " + context);
  }

 private:
  static bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

  std::string path_;
  std::string_view text_;
  char comment_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
  std::vector<std::string_view> tokens_;
};

double signedVolume(const std::vector<Vec3>& x, const std::array<std::uint32_t, 4>& t) {
  return (x[t[1]] - x[t[0]]).dot((x[t[2]] - x[t[0]]).cross(x[t[3]] - x[t[0]])) / 6.0;
}

// orientTets; `lines` (optional) gives each tet's line in `path` for the messages.
void orientTetsAt(TetMesh& mesh, const std::string& path, const std::vector<std::size_t>* lines) {
  // A reader names the tet by its line; a caller without lines by its index.
  auto where = [&](std::size_t t) {
    if (lines != nullptr && t < lines->size()) return path + ":" + std::to_string((*lines)[t]) + ": tetrahedron";
    return path + ": tet " + std::to_string(t);
  };
  if (mesh.tets.empty()) throw Error(path + ": empty mesh: no tetrahedra");
  if (mesh.vertices.empty()) throw Error(path + ": empty mesh: no vertices");
  const std::size_t n = mesh.vertices.size();
  for (std::size_t t = 0; t < mesh.tets.size(); ++t)
    for (std::uint32_t v : mesh.tets[t])
      if (v >= n)
        throw Error(where(t) + " uses vertex " + std::to_string(v) + "; expected an index below " + std::to_string(n));

  Vec3 lo = mesh.vertices[0];
  Vec3 hi = mesh.vertices[0];
  for (const Vec3& x : mesh.vertices) {
    lo = lo.cwiseMin(x);
    hi = hi.cwiseMax(x);
  }
  const double boxVolume = (hi - lo).prod();
  if (!std::isfinite(boxVolume)) throw Error(path + ": coordinates too large (bounding box volume is not finite)");
  const double tiny = 1e-12 * boxVolume;

  std::vector<double> volume(mesh.tets.size());
  std::size_t positive = 0;
  for (std::size_t t = 0; t < mesh.tets.size(); ++t) {
    volume[t] = signedVolume(mesh.vertices, mesh.tets[t]);
    if (!std::isfinite(volume[t])) throw Error(where(t) + ": volume is not finite (coordinates too large)");
    if (!(std::abs(volume[t]) > 0.0) || std::abs(volume[t]) < tiny)
      throw Error(where(t) + " is degenerate (volume " + format(volume[t]) +
                  " m^3, below 1e-12 of the bounding box volume " + format(boxVolume) +
                  " m^3); expected four vertices not in one plane");
    if (volume[t] > 0.0) ++positive;
  }
  // A file whose tets all use the other vertex order is flipped as a whole; a tie keeps the file's sign.
  const std::size_t negative = mesh.tets.size() - positive;
  const bool flip = negative > positive;
  for (std::size_t t = 0; t < mesh.tets.size(); ++t)
    if ((volume[t] < 0.0) != flip)
      throw Error(where(t) + " is inverted (signed volume " + format(volume[t]) + " m^3, while " +
                  std::to_string(flip ? negative : positive) + " of the " + std::to_string(mesh.tets.size()) +
                  " tets have the opposite sign); expected the same vertex order as the others");
  if (flip)  // only after every check, so a throw leaves the mesh as it was
    for (auto& tet : mesh.tets) std::swap(tet[1], tet[2]);
}

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

// ---------------------------------------------------------------------------------------------
// OBJ. tinyobjloader reads the faces, but it turns a bad number into 0 and an out-of-range index
// into a warning (and indexes past its arrays when triangulating), so a first pass of our own
// checks every 'v' and 'f' line and hands tinyobjloader only those lines, rewritten in a plain
// form. Its decimal conversion is not correctly rounded (0.30000000000000004 -> 0.3000000000000001),
// so the coordinates returned are our own parse, checked against tinyobjloader's.
TriangleMesh readObj(const std::string& path) {
  const std::string text = readText(path, "an OBJ file (.obj)");
  LineReader in(path, text, '#');
  std::vector<Vec3> vertices;
  std::vector<std::size_t> faceLines;
  std::vector<std::pair<long long, std::size_t>> forward;  // positive indices beyond the vertices read so far
  std::string clean;
  char buffer[32];
  while (in.next()) {
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
      }
      std::sort(used.begin(), used.end());
      const auto twice = std::adjacent_find(used.begin(), used.end());
      if (twice != used.end())
        in.fail("the face uses vertex " + std::to_string(*twice) + " twice; expected distinct vertices");
      clean += '\n';
      faceLines.push_back(in.line());
    }
    // Other statements (vt, vn, g, o, s, usemtl, mtllib, l, p, ...) carry nothing a mesh needs.
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
  return mesh;
}

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

TetMesh readGmsh(const std::string& path) {
  const std::string text = readText(path, "a Gmsh mesh (.msh)");
  return GmshReader(path, text).read();
}

TetMesh readTetMesh(const std::string& path) {
  const std::string ext = lowerExtension(path);
  if (ext == ".node" || ext == ".ele") return readTetGen(path);
  if (ext == ".msh") return readGmsh(path);
  throw Error(path + ": unknown tetrahedral mesh extension " + shown(ext) +
              "; expected .node/.ele (TetGen) or .msh (Gmsh)");
}

void orientTets(TetMesh& mesh, const std::string& path) { orientTetsAt(mesh, path, nullptr); }

}  // namespace pliant::io
