// VTK frames: legacy VTK 3.0 binary (big-endian by the format's rule) and VTK XML unstructured
// grids (.vtu), and ParaView collections (.pvd) of .vtu frames (writePvd, pliant/io/output.h).
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "frame_formats.h"
#include "output_bytes.h"
#include "pliant/error.h"

namespace pliant::io {

namespace detail {
namespace {

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

}  // namespace

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

}  // namespace detail

using namespace detail;

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

}  // namespace pliant::io
