// Output writers: frames (VTK, OBJ, PLY) and ParaView collections; checkpoints are in
// pliant/io/checkpoint.h. Every file is written to a temporary file in the same folder and renamed
// into place, so a reader (or a crash) never leaves a half-written file.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pliant/math.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant::io {

// Writes `contents` to `path` atomically (temporary file + rename). Throws pliant::Error.
void writeFileAtomically(const std::string& path, const std::string& contents);

// What to draw of a state: triangles, line segments and tetrahedra over particle indices.
struct Topology {
  std::vector<std::array<ParticleIndex, 3>> triangles;
  std::vector<std::array<ParticleIndex, 2>> lines;
  std::vector<std::array<ParticleIndex, 4>> tets;
};

enum class FrameFormat { Vtk, Obj, Ply };
// "vtk", "obj" or "ply".
const char* frameFormatName(FrameFormat format);

// Writes one frame. Vtk: an unstructured grid (points, triangles, lines, tets; point data velocity
// (m/s) and speed (m/s); field TIME (s)) as legacy VTK 3.0 binary, or as VTK XML with raw appended
// data when `path` ends in ".vtu". An empty topology draws every particle as a vertex cell.
// Obj: vertices (shortest text that reads back to the same float), triangles and lines ("l").
// Ply: binary little-endian; vertices with float x y z vx vy vz, triangle faces, lines as edges.
// Tets are written only to VTK; pass the surface triangles for OBJ and PLY.
// Throws pliant::Error naming `path` for an index past the last particle or mismatched arrays.
void writeFrame(const std::string& path, FrameFormat format, const Topology& topology, const State& state);

// ParaView collection (.pvd) listing frame files (paths relative to the .pvd) with their times (s);
// written atomically. ParaView's PVD reader opens only VTK XML files, so list .vtu frames: legacy
// .vtk frames load as a file series (File > Open on the numbered group) but not through a .pvd.
void writePvd(const std::string& path, const std::vector<std::pair<double, std::string>>& frames);

}  // namespace pliant::io
