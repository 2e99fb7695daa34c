// Output writers. Every file is written to a temporary file in the same folder and renamed into
// place, so a reader (or a crash) never leaves a half-written file.
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

// Checkpoints: the full State in a versioned binary file. Reading checks the magic, version, sizes
// against `model` and throws pliant::Error naming the file on any mismatch or truncation.
void writeCheckpoint(const std::string& path, const State& state);
State readCheckpoint(const std::string& path, const Model& model);
// The same bytes in memory (to pickle or send a state): encodeCheckpoint gives what writeCheckpoint
// writes; decodeCheckpoint checks them as readCheckpoint does, naming `source` in errors, and checks
// the counts against `model` when one is given.
std::string encodeCheckpoint(const State& state);
State decodeCheckpoint(std::string_view bytes, const std::string& source, const Model* model = nullptr);

}  // namespace pliant::io
