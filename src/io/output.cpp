// Output writers: frames (legacy VTK, VTK XML .vtu, OBJ, PLY), ParaView collections and checkpoints.
//
// Every writer builds the whole file in one buffer (sized up front, numbers converted in one pass)
// and hands it to writeFileAtomically, which makes a single write() into a temporary file in the
// target folder and renames it into place. rename() within one file system is atomic on POSIX, so
// a reader sees either the old file or the complete new one, and a crash leaves at most a stray
// "*.tmp-*" file, never a truncated frame.
//
// Checkpoint layout (version 1, little-endian, every field 8-byte aligned):
//   0   char[8]  "PLIANTCK"
//   8   u32      format version (1)
//   12  u32      flags (0)
//   16  u64      particle count P
//   24  u64      multiplier count L (Model::totalConstraintCount)
//   32  u64      attachment count A
//   40  f64      time (s)
//   48  f64      lastSubstep (s)
//   56  u64      stepCount
//   64  u64      State::hash() of the saved state
//   72  f64[3P]  position, velocity, previousPosition, externalForce (each 3P), f64[L] lambda,
//                f64[3A] attachmentTarget
//   end u64      FNV-1a 64 over every preceding byte
// Doubles are stored as their bit patterns, so a restored state is bit-identical to the saved one.
#include "pliant/io/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <span>
#include <string_view>
#include <system_error>

#include "pliant/error.h"

namespace pliant::io {

namespace {

// ---------------------------------------------------------------------------------------------
// Byte order helpers. Written with shifts so they are portable; compilers emit one bswap.

constexpr std::uint32_t swap32(std::uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0x0000ff00u) | ((v << 8) & 0x00ff0000u) | (v << 24);
}
constexpr std::uint64_t swap64(std::uint64_t v) {
  return (static_cast<std::uint64_t>(swap32(static_cast<std::uint32_t>(v))) << 32) |
         swap32(static_cast<std::uint32_t>(v >> 32));
}

constexpr bool kLittleEndianHost = std::endian::native == std::endian::little;

inline void storeBig32(char* dst, std::uint32_t v) {
  if constexpr (kLittleEndianHost) v = swap32(v);
  std::memcpy(dst, &v, 4);
}
inline void storeLittle32(char* dst, std::uint32_t v) {
  if constexpr (!kLittleEndianHost) v = swap32(v);
  std::memcpy(dst, &v, 4);
}
inline void storeLittle64(char* dst, std::uint64_t v) {
  if constexpr (!kLittleEndianHost) v = swap64(v);
  std::memcpy(dst, &v, 8);
}
inline std::uint32_t loadLittle32(const char* src) {
  std::uint32_t v;
  std::memcpy(&v, src, 4);
  if constexpr (!kLittleEndianHost) v = swap32(v);
  return v;
}
inline std::uint64_t loadLittle64(const char* src) {
  std::uint64_t v;
  std::memcpy(&v, src, 8);
  if constexpr (!kLittleEndianHost) v = swap64(v);
  return v;
}
inline std::uint32_t floatBits(double value) { return std::bit_cast<std::uint32_t>(static_cast<float>(value)); }

// Appends `bytes` zeroed bytes and returns where they start.
inline char* grow(std::string& out, std::size_t bytes) {
  const std::size_t old = out.size();
  out.resize(old + bytes);
  return out.data() + old;
}

// Shortest text that reads back to the same value (std::to_chars, round-trip exact).
template <class T>
void appendNumber(std::string& out, T value) {
  char text[64];
  const std::to_chars_result r = std::to_chars(text, text + sizeof text, value);
  out.append(text, r.ptr);
}

std::string systemMessage(int error) { return std::system_category().message(error); }

// FNV-1a, 64 bit, over bytes (the same function State::hash uses).
std::uint64_t fnv1a(const char* data, std::size_t size) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

// ---------------------------------------------------------------------------------------------
// Frame checks: a file with an index past the end would crash the viewer, not us; refuse it here.

void checkFrameInput(const std::string& path, const Topology& topology, const State& state) {
  const std::size_t n = state.position.size();
  if (state.velocity.size() != n)
    throw Error("frame '" + path + "': state has " + std::to_string(n) + " positions but " +
                std::to_string(state.velocity.size()) + " velocities; expected equal counts");
  // VTK and PLY store indices and counts as 32-bit signed integers.
  if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw Error("frame '" + path + "': " + std::to_string(n) + " particles exceed the 2^31-1 the formats allow");
  auto check = [&](const char* kind, std::size_t element, const auto& indices) {
    for (ParticleIndex p : indices)
      if (p >= n)
        throw Error("frame '" + path + "': " + kind + " " + std::to_string(element) + " refers to particle " +
                    std::to_string(p) + "; expected an index below the particle count " + std::to_string(n));
  };
  for (std::size_t i = 0; i < topology.triangles.size(); ++i) check("triangle", i, topology.triangles[i]);
  for (std::size_t i = 0; i < topology.lines.size(); ++i) check("line", i, topology.lines[i]);
  for (std::size_t i = 0; i < topology.tets.size(); ++i) check("tet", i, topology.tets[i]);
}

// ---------------------------------------------------------------------------------------------
// Cells shared by both VTK writers. Without any cell, each particle is drawn as a vertex cell:
// ParaView renders nothing for a grid that has points only.

struct VtkCells {
  bool vertexCells = false;
  std::size_t count = 0;  // cells
  std::size_t ints = 0;   // point indices over all cells
};

VtkCells vtkCells(const Topology& topology, std::size_t particles) {
  VtkCells c;
  const std::size_t tris = topology.triangles.size(), lines = topology.lines.size(), tets = topology.tets.size();
  c.vertexCells = tris + lines + tets == 0;
  c.count = c.vertexCells ? particles : tris + lines + tets;
  c.ints = c.vertexCells ? particles : 3 * tris + 2 * lines + 4 * tets;
  // Legacy VTK counts (ints + count) and XML offsets are 32-bit signed.
  if (c.ints + c.count > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw Error("frame: " + std::to_string(c.count) + " cells exceed what a VTK file with 32-bit indices can hold");
  return c;
}

// Calls cell(type, indices) for every cell in file order: vertices or triangles, lines, tets.
// VTK cell types: 1 vertex, 3 line, 5 triangle, 10 tetra.
template <class F>
void forEachCell(const Topology& topology, std::size_t particles, bool vertexCells, F&& cell) {
  if (vertexCells)
    for (std::size_t i = 0; i < particles; ++i) {
      const ParticleIndex p[1] = {static_cast<ParticleIndex>(i)};
      cell(1u, std::span<const ParticleIndex>(p));
    }
  for (const auto& t : topology.triangles) cell(5u, std::span<const ParticleIndex>(t));
  for (const auto& l : topology.lines) cell(3u, std::span<const ParticleIndex>(l));
  for (const auto& t : topology.tets) cell(10u, std::span<const ParticleIndex>(t));
}

// ---------------------------------------------------------------------------------------------
// Legacy VTK 3.0, BINARY: every number big-endian (the format's rule, whatever the host).

std::string vtkLegacyFrame(const Topology& topology, const State& state) {
  const std::size_t n = state.position.size();
  const VtkCells cells = vtkCells(topology, n);
  const std::size_t cellInts = cells.ints + cells.count;  // each cell: its size, then its indices

  std::string out;
  out.reserve(512 + 4 * (7 * n + cellInts + cells.count));
  out += "# vtk DataFile Version 3.0\nPliant frame, time ";
  appendNumber(out, state.time);
  out += " s\nBINARY\nDATASET UNSTRUCTURED_GRID\n";
  // ParaView reads a TIME field as the data set's time.
  out += "FIELD FieldData 1\nTIME 1 1 double\n";
  {
    std::uint64_t t = std::bit_cast<std::uint64_t>(state.time);
    if constexpr (kLittleEndianHost) t = swap64(t);
    std::memcpy(grow(out, 8), &t, 8);
  }
  out += "\nPOINTS ";
  appendNumber(out, n);
  out += " float\n";
  {
    char* dst = grow(out, 12 * n);
    for (const Vec3& p : state.position)
      for (int k = 0; k < 3; ++k, dst += 4) storeBig32(dst, floatBits(p[k]));
  }
  out += "\nCELLS ";
  appendNumber(out, cells.count);
  out += ' ';
  appendNumber(out, cellInts);
  out += '\n';
  {
    char* dst = grow(out, 4 * cellInts);
    forEachCell(topology, n, cells.vertexCells, [&dst](std::uint32_t, std::span<const ParticleIndex> indices) {
      storeBig32(dst, static_cast<std::uint32_t>(indices.size()));
      dst += 4;
      for (ParticleIndex p : indices) {
        storeBig32(dst, p);
        dst += 4;
      }
    });
  }
  out += "\nCELL_TYPES ";
  appendNumber(out, cells.count);
  out += '\n';
  {
    char* dst = grow(out, 4 * cells.count);
    forEachCell(topology, n, cells.vertexCells, [&dst](std::uint32_t type, std::span<const ParticleIndex>) {
      storeBig32(dst, type);
      dst += 4;
    });
  }
  out += "\nPOINT_DATA ";
  appendNumber(out, n);
  out += "\nVECTORS velocity float\n";
  {
    char* dst = grow(out, 12 * n);
    for (const Vec3& v : state.velocity)
      for (int k = 0; k < 3; ++k, dst += 4) storeBig32(dst, floatBits(v[k]));
  }
  out += "\nSCALARS speed float 1\nLOOKUP_TABLE default\n";
  {
    char* dst = grow(out, 4 * n);
    for (const Vec3& v : state.velocity) {
      storeBig32(dst, floatBits(v.norm()));
      dst += 4;
    }
  }
  out += '\n';
  return out;
}

// ---------------------------------------------------------------------------------------------
// VTK XML unstructured grid (.vtu), raw appended little-endian data with UInt64 block headers.
// ParaView's .pvd reader opens only XML data sets, so a collection must list .vtu frames.

std::string vtkXmlFrame(const Topology& topology, const State& state) {
  const std::size_t n = state.position.size();
  const VtkCells cells = vtkCells(topology, n);
  // Appended blocks in this order, each a u64 byte count followed by the bytes.
  const std::size_t sizes[6] = {12 * n, 4 * n, 12 * n, 4 * cells.ints, 4 * cells.count, cells.count};
  std::size_t offsets[6];
  std::size_t total = 0;
  for (int i = 0; i < 6; ++i) {
    offsets[i] = total;
    total += 8 + sizes[i];
  }
  std::string out;
  out.reserve(2048 + total);
  out +=
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
      "  <UnstructuredGrid>\n"
      "    <FieldData>\n"
      "      <DataArray type=\"Float64\" Name=\"TIME\" NumberOfTuples=\"1\" format=\"ascii\">";
  appendNumber(out, state.time);
  out += "</DataArray>\n    </FieldData>\n    <Piece NumberOfPoints=\"";
  appendNumber(out, n);
  out += "\" NumberOfCells=\"";
  appendNumber(out, cells.count);
  out += "\">\n      <PointData Vectors=\"velocity\" Scalars=\"speed\">\n";
  auto array = [&out, &offsets](const char* attributes, int block) {
    out += "        <DataArray ";
    out += attributes;
    out += " format=\"appended\" offset=\"";
    appendNumber(out, offsets[block]);
    out += "\"/>\n";
  };
  array("type=\"Float32\" Name=\"velocity\" NumberOfComponents=\"3\"", 0);
  array("type=\"Float32\" Name=\"speed\"", 1);
  out += "      </PointData>\n      <Points>\n";
  array("type=\"Float32\" Name=\"Points\" NumberOfComponents=\"3\"", 2);
  out += "      </Points>\n      <Cells>\n";
  array("type=\"Int32\" Name=\"connectivity\"", 3);
  array("type=\"Int32\" Name=\"offsets\"", 4);
  array("type=\"UInt8\" Name=\"types\"", 5);
  out += "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n  <AppendedData encoding=\"raw\">\n   _";
  char* dst = grow(out, total);
  auto blockHeader = [&dst, &sizes](int block) {
    storeLittle64(dst, sizes[block]);
    dst += 8;
  };
  blockHeader(0);
  for (const Vec3& v : state.velocity)
    for (int k = 0; k < 3; ++k, dst += 4) storeLittle32(dst, floatBits(v[k]));
  blockHeader(1);
  for (const Vec3& v : state.velocity) {
    storeLittle32(dst, floatBits(v.norm()));
    dst += 4;
  }
  blockHeader(2);
  for (const Vec3& p : state.position)
    for (int k = 0; k < 3; ++k, dst += 4) storeLittle32(dst, floatBits(p[k]));
  blockHeader(3);
  forEachCell(topology, n, cells.vertexCells, [&dst](std::uint32_t, std::span<const ParticleIndex> indices) {
    for (ParticleIndex p : indices) {
      storeLittle32(dst, p);
      dst += 4;
    }
  });
  blockHeader(4);
  std::uint32_t end = 0;  // offsets: the end of each cell in the connectivity array
  forEachCell(topology, n, cells.vertexCells, [&dst, &end](std::uint32_t, std::span<const ParticleIndex> indices) {
    end += static_cast<std::uint32_t>(indices.size());
    storeLittle32(dst, end);
    dst += 4;
  });
  blockHeader(5);
  forEachCell(topology, n, cells.vertexCells,
              [&dst](std::uint32_t type, std::span<const ParticleIndex>) { *dst++ = static_cast<char>(type); });
  out += "\n  </AppendedData>\n</VTKFile>\n";
  return out;
}

bool endsWithVtu(const std::string& path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".vtu";
}

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

void appendXmlEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Checkpoints.

constexpr char kCheckpointMagic[8] = {'P', 'L', 'I', 'A', 'N', 'T', 'C', 'K'};
constexpr std::uint32_t kCheckpointVersion = 1;
constexpr std::size_t kCheckpointHeaderSize = 72;
constexpr std::size_t kChecksumSize = 8;

std::uint64_t checkpointSize(std::uint64_t particles, std::uint64_t lambdas, std::uint64_t attachments) {
  return kCheckpointHeaderSize + 8 * (12 * particles + lambdas + 3 * attachments) + kChecksumSize;
}

[[noreturn]] void checkpointError(const std::string& path, const std::string& what) {
  throw Error("checkpoint '" + path + "': " + what);
}

}  // namespace

void writeFileAtomically(const std::string& path, const std::string& contents) {
  if (path.empty()) throw Error("output: cannot write a file with an empty path");
  // The pid keeps concurrent processes apart, the counter concurrent writers in one process.
  static std::atomic<std::uint64_t> counter{0};
  const std::string temp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int error = errno;
    throw Error("output: cannot write '" + path + "': cannot create the temporary file '" + temp +
                "': " + systemMessage(error));
  }
  int error = 0;
  const char* data = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  // close() reports deferred write errors (e.g. a full disk on a network file system).
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    throw Error("output: cannot write '" + path + "': " + systemMessage(error));
  }
}

const char* frameFormatName(FrameFormat format) {
  switch (format) {
    case FrameFormat::Vtk:
      return "vtk";
    case FrameFormat::Obj:
      return "obj";
    case FrameFormat::Ply:
      return "ply";
  }
  return "unknown";
}

void writeFrame(const std::string& path, FrameFormat format, const Topology& topology, const State& state) {
  checkFrameInput(path, topology, state);
  switch (format) {
    case FrameFormat::Vtk:
      writeFileAtomically(path, endsWithVtu(path) ? vtkXmlFrame(topology, state) : vtkLegacyFrame(topology, state));
      return;
    case FrameFormat::Obj:
      writeFileAtomically(path, objFrame(topology, state));
      return;
    case FrameFormat::Ply:
      writeFileAtomically(path, plyFrame(topology, state));
      return;
  }
  throw Error("frame '" + path + "': unknown frame format");
}

void writePvd(const std::string& path, const std::vector<std::pair<double, std::string>>& frames) {
  std::string out =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
      "  <Collection>\n";
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (!std::isfinite(frames[i].first))
      throw Error("collection '" + path + "': frame " + std::to_string(i) +
                  " has a non-finite time; expected a finite time in s");
    out += "    <DataSet timestep=\"";
    appendNumber(out, frames[i].first);
    out += "\" group=\"\" part=\"0\" file=\"";
    appendXmlEscaped(out, frames[i].second);
    out += "\"/>\n";
  }
  out += "  </Collection>\n</VTKFile>\n";
  writeFileAtomically(path, out);
}

namespace {

// The checkpoint bytes of `state`; `path` names it in errors.
std::string checkpointBytes(const std::string& path, const State& state) {
  const std::size_t n = state.position.size();
  if (state.velocity.size() != n || state.previousPosition.size() != n || state.externalForce.size() != n)
    checkpointError(path, "state arrays disagree: " + std::to_string(n) + " positions, " +
                              std::to_string(state.velocity.size()) + " velocities, " +
                              std::to_string(state.previousPosition.size()) + " previous positions, " +
                              std::to_string(state.externalForce.size()) + " external forces; expected equal counts");
  const std::size_t lambdas = state.lambda.size();
  const std::size_t attachments = state.attachmentTarget.size();
  std::string out(checkpointSize(n, lambdas, attachments), '\0');
  char* dst = out.data();
  std::memcpy(dst, kCheckpointMagic, 8);
  storeLittle32(dst + 8, kCheckpointVersion);
  storeLittle32(dst + 12, 0);
  storeLittle64(dst + 16, n);
  storeLittle64(dst + 24, lambdas);
  storeLittle64(dst + 32, attachments);
  storeLittle64(dst + 40, std::bit_cast<std::uint64_t>(state.time));
  storeLittle64(dst + 48, std::bit_cast<std::uint64_t>(state.lastSubstep));
  storeLittle64(dst + 56, state.stepCount);
  storeLittle64(dst + 64, state.hash());
  dst += kCheckpointHeaderSize;
  auto putDouble = [&dst](double value) {
    storeLittle64(dst, std::bit_cast<std::uint64_t>(value));
    dst += 8;
  };
  for (const std::vector<Vec3>* array :
       {&state.position, &state.velocity, &state.previousPosition, &state.externalForce})
    for (const Vec3& v : *array)
      for (int k = 0; k < 3; ++k) putDouble(v[k]);
  for (double l : state.lambda) putDouble(l);
  for (const Vec3& v : state.attachmentTarget)
    for (int k = 0; k < 3; ++k) putDouble(v[k]);
  const std::size_t payload = static_cast<std::size_t>(dst - out.data());
  storeLittle64(dst, fnv1a(out.data(), payload));
  return out;
}

}  // namespace

std::string encodeCheckpoint(const State& state) { return checkpointBytes("state", state); }

void writeCheckpoint(const std::string& path, const State& state) {
  writeFileAtomically(path, checkpointBytes(path, state));
}

namespace {

struct CheckpointCounts {
  std::uint64_t particles = 0, lambdas = 0, attachments = 0;
  std::string text;
};

// Checks the header (its first `headerBytes` bytes, at most kCheckpointHeaderSize) of a checkpoint of
// `size` bytes: magic, version, flags, and that the counts fit the size exactly. Sizes first (a
// cut-off file is the common failure), then the checksum, then the model: once the checksum holds,
// a count mismatch really is a different model and not a damaged header.
CheckpointCounts checkCheckpointHeader(const char* header, std::size_t headerBytes, std::uint64_t size,
                                       const std::string& path) {
  constexpr std::uint64_t kMinimum = kCheckpointHeaderSize + kChecksumSize;
  if (headerBytes < 8 || std::memcmp(header, kCheckpointMagic, 8) != 0)
    checkpointError(path, "not a Pliant checkpoint; expected the file to start with \"PLIANTCK\"");
  if (size < kMinimum)
    checkpointError(path,
                    "truncated: " + std::to_string(size) + " bytes, expected at least " + std::to_string(kMinimum));
  const std::uint32_t version = loadLittle32(header + 8);
  if (version != kCheckpointVersion)
    checkpointError(
        path, "format version " + std::to_string(version) + ", expected version " + std::to_string(kCheckpointVersion));
  if (loadLittle32(header + 12) != 0) checkpointError(path, "unknown flags set in the header; expected 0");
  CheckpointCounts c;
  c.particles = loadLittle64(header + 16);
  c.lambdas = loadLittle64(header + 24);
  c.attachments = loadLittle64(header + 32);
  c.text = std::to_string(c.particles) + " particles, " + std::to_string(c.lambdas) + " constraint multipliers and " +
           std::to_string(c.attachments) + " attachments";
  if (c.particles > size || c.lambdas > size || c.attachments > size)
    checkpointError(path, "header claims " + c.text + ", more than a file of " + std::to_string(size) +
                              " bytes can hold (truncated or corrupted)");
  const std::uint64_t expected = checkpointSize(c.particles, c.lambdas, c.attachments);
  if (size < expected)
    checkpointError(
        path, "truncated: " + std::to_string(size) + " bytes, expected " + std::to_string(expected) + " for " + c.text);
  if (size > expected)
    checkpointError(path, std::to_string(size) + " bytes, expected " + std::to_string(expected) + " for " + c.text +
                              " (trailing data)");
  return c;
}

}  // namespace

State decodeCheckpoint(std::string_view bytes, const std::string& path, const Model* model) {
  const char* header = bytes.data();
  const CheckpointCounts counts =
      checkCheckpointHeader(header, std::min<std::size_t>(bytes.size(), kCheckpointHeaderSize), bytes.size(), path);
  const std::uint64_t particles = counts.particles, lambdas = counts.lambdas, attachments = counts.attachments;
  const std::size_t payload = bytes.size() - kChecksumSize;
  const std::uint64_t stored = loadLittle64(bytes.data() + payload);
  if (fnv1a(bytes.data(), payload) != stored) checkpointError(path, "checksum mismatch; the file is corrupted");

  if (model && (particles != model->particleCount() || lambdas != model->totalConstraintCount() ||
                attachments != model->attachments.size()))
    checkpointError(path, "saved for a model with " + counts.text + "; expected " +
                              std::to_string(model->particleCount()) + " particles, " +
                              std::to_string(model->totalConstraintCount()) + " constraint multipliers and " +
                              std::to_string(model->attachments.size()) + " attachments (the model given)");

  State state;
  state.time = std::bit_cast<double>(loadLittle64(header + 40));
  state.lastSubstep = std::bit_cast<double>(loadLittle64(header + 48));
  state.stepCount = loadLittle64(header + 56);
  const char* src = bytes.data() + kCheckpointHeaderSize;
  auto getDouble = [&src]() {
    const double value = std::bit_cast<double>(loadLittle64(src));
    src += 8;
    return value;
  };
  auto getVectors = [&](std::vector<Vec3>& array, std::size_t count) {
    array.resize(count);
    for (Vec3& v : array)
      for (int k = 0; k < 3; ++k) v[k] = getDouble();
  };
  const auto n = static_cast<std::size_t>(particles);
  getVectors(state.position, n);
  getVectors(state.velocity, n);
  getVectors(state.previousPosition, n);
  getVectors(state.externalForce, n);
  state.lambda.resize(static_cast<std::size_t>(lambdas));
  for (double& l : state.lambda) l = getDouble();
  getVectors(state.attachmentTarget, static_cast<std::size_t>(attachments));
  // An end-to-end check of the decoding against the hash taken when the state was saved.
  if (state.hash() != loadLittle64(header + 64))
    checkpointError(path, "restored state hash differs from the saved one; expected a bit-identical state");
  return state;
}

State readCheckpoint(const std::string& path, const Model& model) {
  std::ifstream file(path, std::ios::binary);
  if (!file) checkpointError(path, "cannot open the file for reading: " + systemMessage(errno));
  file.seekg(0, std::ios::end);
  const std::streamoff end = file.tellg();
  file.seekg(0, std::ios::beg);
  if (end < 0 || !file) checkpointError(path, "cannot determine the file size");
  const auto size = static_cast<std::uint64_t>(end);
  // The header is checked before the rest is read, so a large file that is no checkpoint (or not
  // this one) is refused without reading it.
  std::string bytes(static_cast<std::size_t>(std::min<std::uint64_t>(size, kCheckpointHeaderSize)), '\0');
  file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file) checkpointError(path, "read error in the header");
  checkCheckpointHeader(bytes.data(), bytes.size(), size, path);
  bytes.resize(static_cast<std::size_t>(size));
  file.read(bytes.data() + kCheckpointHeaderSize, static_cast<std::streamsize>(size - kCheckpointHeaderSize));
  if (!file) checkpointError(path, "read error after the header");
  return decodeCheckpoint(bytes, path, &model);
}

}  // namespace pliant::io
