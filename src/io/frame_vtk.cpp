// VTK frames: legacy VTK 3.0 binary (big-endian by the format's rule), VTK XML unstructured grids
// (.vtu), multiblocks (.vtm) of a frame's parts, and ParaView collections (.pvd) of .vtu or .vtm
// frames (writePvd, pliant/io/output.h).
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frame_formats.h"
#include "output_bytes.h"
#include "pliant/error.h"

namespace pliant::io {

namespace detail {
namespace {

// Cells shared by both VTK writers. Without any cell, each point is drawn as a vertex cell:
// ParaView renders nothing for a grid that has points only.

struct VtkCells {
  bool vertexCells = false;
  std::size_t count = 0;  // cells
  std::size_t ints = 0;   // point indices over all cells
};

VtkCells vtkCells(const PartView& part) {
  VtkCells c;
  const std::size_t points = part.position.size();
  const std::size_t tris = part.triangles.size(), lines = part.lines.size(), tets = part.tets.size();
  c.vertexCells = tris + lines + tets == 0;
  c.count = c.vertexCells ? points : tris + lines + tets;
  c.ints = c.vertexCells ? points : 3 * tris + 2 * lines + 4 * tets;
  // Legacy VTK counts (ints + count) and XML offsets are 32-bit signed.
  if (c.ints + c.count > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw Error("frame: " + std::to_string(c.count) + " cells exceed what a VTK file with 32-bit indices can hold");
  return c;
}

// Calls cell(type, indices) for every cell in file order: vertices or triangles, lines, tets, with
// indices into the part's points. VTK cell types: 1 vertex, 3 line, 5 triangle, 10 tetra.
template <class F>
void forEachCell(const PartView& part, bool vertexCells, F&& cell) {
  std::uint32_t local[4];
  const auto emit = [&](std::uint32_t type, std::span<const ParticleIndex> indices) {
    for (std::size_t k = 0; k < indices.size(); ++k) local[k] = indices[k] - part.base;
    cell(type, std::span<const std::uint32_t>(local, indices.size()));
  };
  if (vertexCells)
    for (std::size_t i = 0; i < part.position.size(); ++i) {
      const std::uint32_t p[1] = {static_cast<std::uint32_t>(i)};
      cell(1u, std::span<const std::uint32_t>(p));
    }
  for (const auto& t : part.triangles) emit(5u, t);
  for (const auto& l : part.lines) emit(3u, l);
  for (const auto& t : part.tets) emit(10u, t);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Legacy VTK 3.0, BINARY: every number big-endian (the format's rule, whatever the host).

std::string vtkLegacyFrame(const PartView& part, double time) {
  const std::size_t n = part.position.size();
  const VtkCells cells = vtkCells(part);
  const std::size_t cellInts = cells.ints + cells.count;  // each cell: its size, then its indices

  std::string out;
  out.reserve(512 + 4 * (7 * n + cellInts + cells.count));
  out += "# vtk DataFile Version 3.0\nPliant frame, time ";
  appendNumber(out, time);
  out += " s\nBINARY\nDATASET UNSTRUCTURED_GRID\n";
  // ParaView reads a TIME field as the data set's time.
  out += "FIELD FieldData 1\nTIME 1 1 double\n";
  {
    std::uint64_t t = std::bit_cast<std::uint64_t>(time);
    if constexpr (kLittleEndianHost) t = swap64(t);
    std::memcpy(grow(out, 8), &t, 8);
  }
  out += "\nPOINTS ";
  appendNumber(out, n);
  out += " float\n";
  {
    char* dst = grow(out, 12 * n);
    for (const Vec3& p : part.position)
      for (int k = 0; k < 3; ++k, dst += 4) storeBig32(dst, floatBits(p[k]));
  }
  out += "\nCELLS ";
  appendNumber(out, cells.count);
  out += ' ';
  appendNumber(out, cellInts);
  out += '\n';
  {
    char* dst = grow(out, 4 * cellInts);
    forEachCell(part, cells.vertexCells, [&dst](std::uint32_t, std::span<const std::uint32_t> indices) {
      storeBig32(dst, static_cast<std::uint32_t>(indices.size()));
      dst += 4;
      for (std::uint32_t p : indices) {
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
    forEachCell(part, cells.vertexCells, [&dst](std::uint32_t type, std::span<const std::uint32_t>) {
      storeBig32(dst, type);
      dst += 4;
    });
  }
  if (part.velocity.empty()) {
    out += '\n';
    return out;
  }
  out += "\nPOINT_DATA ";
  appendNumber(out, n);
  out += "\nVECTORS velocity float\n";
  {
    char* dst = grow(out, 12 * n);
    for (const Vec3& v : part.velocity)
      for (int k = 0; k < 3; ++k, dst += 4) storeBig32(dst, floatBits(v[k]));
  }
  out += "\nSCALARS speed float 1\nLOOKUP_TABLE default\n";
  {
    char* dst = grow(out, 4 * n);
    for (const Vec3& v : part.velocity) {
      storeBig32(dst, floatBits(v.norm()));
      dst += 4;
    }
  }
  out += '\n';
  return out;
}

// ---------------------------------------------------------------------------------------------
// VTK XML unstructured grid (.vtu), appended little-endian data with UInt64 headers, each array
// either raw (a byte count, then the bytes) or zlib-compressed the way VTK's vtkZLibDataCompressor
// reads it: the array cut into blocks of kZlibBlock bytes, each compressed on its own, after a
// header [block count, block size, size of the last block (0: a full one), compressed size of each
// block]. ParaView's .pvd reader opens only XML data sets, so a collection must list .vtu frames.

constexpr std::size_t kZlibBlock = 1 << 16;

// Appends one array of `size` bytes, produced by fill(dst) into a scratch buffer when compressing.
template <class Fill>
void appendArray(std::string& out, std::string& scratch, std::size_t size, VtuEncoding encoding, Fill&& fill) {
  if (encoding == VtuEncoding::Raw) {
    char* dst = grow(out, 8 + size);
    storeLittle64(dst, size);
    fill(dst + 8);
    return;
  }
  scratch.resize(size);
  fill(scratch.data());
  const std::size_t blocks = (size + kZlibBlock - 1) / kZlibBlock;
  const std::size_t header = out.size();
  grow(out, 8 * (3 + blocks));
  storeLittle64(out.data() + header, blocks);
  storeLittle64(out.data() + header + 8, kZlibBlock);
  storeLittle64(out.data() + header + 16, size % kZlibBlock);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t begin = b * kZlibBlock, length = std::min(kZlibBlock, size - begin);
    uLongf packed = compressBound(static_cast<uLong>(length));
    const std::size_t at = out.size();
    grow(out, packed);
    // Level 1: a cloth's floats hardly compress at any level, its connectivity compresses at all of
    // them, and level 6 costs about three times the time for a few percent (docs/performance.md).
    if (compress2(reinterpret_cast<Bytef*>(out.data() + at), &packed,
                  reinterpret_cast<const Bytef*>(scratch.data() + begin), static_cast<uLong>(length), 1) != Z_OK)
      throw SystemError("frame: zlib could not compress a " + std::to_string(length) + "-byte block");
    out.resize(at + packed);
    storeLittle64(out.data() + header + 8 * (3 + b), packed);
  }
}

std::string vtkXmlFrame(const PartView& part, double time, VtuEncoding encoding) {
  const std::size_t n = part.position.size();
  const VtkCells cells = vtkCells(part);
  const bool velocity = !part.velocity.empty();
  std::string out;
  out.reserve(2048 + (encoding == VtuEncoding::Raw ? 16 * n + 4 * cells.ints + 5 * cells.count + 48 : 0));
  out +=
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\"";
  if (encoding == VtuEncoding::Zlib) out += " compressor=\"vtkZLibDataCompressor\"";
  out +=
      ">\n"
      "  <UnstructuredGrid>\n"
      "    <FieldData>\n"
      "      <DataArray type=\"Float64\" Name=\"TIME\" NumberOfTuples=\"1\" format=\"ascii\">";
  appendNumber(out, time);
  out += "</DataArray>\n    </FieldData>\n    <Piece NumberOfPoints=\"";
  appendNumber(out, n);
  out += "\" NumberOfCells=\"";
  appendNumber(out, cells.count);
  out += "\">\n";
  // The arrays' offsets are known once the data is built: the header is written after it.
  std::string data, scratch;
  std::vector<std::size_t> offsets;
  const auto array = [&](std::size_t size, auto&& fill) {
    offsets.push_back(data.size());
    appendArray(data, scratch, size, encoding, fill);
  };
  if (velocity) {
    array(12 * n, [&](char* dst) {
      for (const Vec3& v : part.velocity)
        for (int k = 0; k < 3; ++k, dst += 4) storeLittle32(dst, floatBits(v[k]));
    });
    array(4 * n, [&](char* dst) {
      for (const Vec3& v : part.velocity) {
        storeLittle32(dst, floatBits(v.norm()));
        dst += 4;
      }
    });
  }
  array(12 * n, [&](char* dst) {
    for (const Vec3& p : part.position)
      for (int k = 0; k < 3; ++k, dst += 4) storeLittle32(dst, floatBits(p[k]));
  });
  array(4 * cells.ints, [&](char* dst) {
    forEachCell(part, cells.vertexCells, [&dst](std::uint32_t, std::span<const std::uint32_t> indices) {
      for (std::uint32_t p : indices) {
        storeLittle32(dst, p);
        dst += 4;
      }
    });
  });
  array(4 * cells.count, [&](char* dst) {
    std::uint32_t end = 0;  // offsets: the end of each cell in the connectivity array
    forEachCell(part, cells.vertexCells, [&dst, &end](std::uint32_t, std::span<const std::uint32_t> indices) {
      end += static_cast<std::uint32_t>(indices.size());
      storeLittle32(dst, end);
      dst += 4;
    });
  });
  array(cells.count, [&](char* dst) {
    forEachCell(part, cells.vertexCells,
                [&dst](std::uint32_t type, std::span<const std::uint32_t>) { *dst++ = static_cast<char>(type); });
  });
  std::size_t block = 0;
  auto declare = [&out, &offsets, &block](const char* attributes) {
    out += "        <DataArray ";
    out += attributes;
    out += " format=\"appended\" offset=\"";
    appendNumber(out, offsets[block++]);
    out += "\"/>\n";
  };
  if (velocity) {
    out += "      <PointData Vectors=\"velocity\" Scalars=\"speed\">\n";
    declare("type=\"Float32\" Name=\"velocity\" NumberOfComponents=\"3\"");
    declare("type=\"Float32\" Name=\"speed\"");
    out += "      </PointData>\n";
  }
  out += "      <Points>\n";
  declare("type=\"Float32\" Name=\"Points\" NumberOfComponents=\"3\"");
  out += "      </Points>\n      <Cells>\n";
  declare("type=\"Int32\" Name=\"connectivity\"");
  declare("type=\"Int32\" Name=\"offsets\"");
  declare("type=\"UInt8\" Name=\"types\"");
  out += "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n  <AppendedData encoding=\"raw\">\n   _";
  out += data;
  out += "\n  </AppendedData>\n</VTKFile>\n";
  return out;
}

std::string vtkMultiBlock(std::span<const std::string> names, std::span<const std::string> files) {
  std::string out =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"vtkMultiBlockDataSet\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
      "  <vtkMultiBlockDataSet>\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += "    <DataSet index=\"";
    appendNumber(out, i);
    out += "\" name=\"";
    out += escapeMarkup(names[i]);
    out += "\" file=\"";
    out += escapeMarkup(files[i]);
    out += "\"/>\n";
  }
  out += "  </vtkMultiBlockDataSet>\n</VTKFile>\n";
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
    out += escapeMarkup(frames[i].second);
    out += "\"/>\n";
  }
  out += "  </Collection>\n</VTKFile>\n";
  writeFileAtomically(path, out);
}

}  // namespace pliant::io
