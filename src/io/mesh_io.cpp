// Mesh readers: the shared text parsing and tet orientation here, one file per format (mesh_obj.cpp,
// mesh_tetgen.cpp .node/.ele, mesh_gmsh.cpp .msh 2.2/4.1).
//
// Every reader goes through LineReader, a small tokenizer that knows the current line, so every
// error reads "<file>:<line>: <what was found>; expected <what>". Numbers are parsed with
// std::from_chars (no locale, no UB on huge values) and must be finite. Counts read from a header
// never size an allocation: records are collected as they are read, so a header that claims more
// than the file holds ends as "file ends after M of N ..." instead of exhausting memory.
#include "pliant/io/mesh_io.h"

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

#include "mesh_text.h"
#include "pliant/error.h"
#include "pliant/io/input_file.h"

namespace pliant::io {

namespace detail {
namespace {

// from_chars rejects a leading '+', which files do write.
std::string_view withoutPlus(std::string_view s) {
  if (s.size() > 1 && s.front() == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  return s;
}

double signedVolume(const std::vector<Vec3>& x, const std::array<std::uint32_t, 4>& t) {
  return (x[t[1]] - x[t[0]]).dot((x[t[2]] - x[t[0]]).cross(x[t[3]] - x[t[0]])) / 6.0;
}

}  // namespace

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
  return io::readInputFile(path, kind, io::kMaxMeshFileBytes);
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

}  // namespace detail

using namespace detail;

TetMesh readTetMesh(const std::string& path) {
  const std::string ext = lowerExtension(path);
  if (ext == ".node" || ext == ".ele") return readTetGen(path);
  if (ext == ".msh") return readGmsh(path);
  throw Error(path + ": unknown tetrahedral mesh extension " + shown(ext) +
              "; expected .node/.ele (TetGen) or .msh (Gmsh)");
}

void orientTets(TetMesh& mesh, const std::string& path) { orientTetsAt(mesh, path, nullptr); }

}  // namespace pliant::io
