// Output writers: frames (VTK, OBJ, PLY) and ParaView collections; checkpoints are in
// pliant/io/checkpoint.h. Every file is written to a temporary file in the same folder and renamed
// into place, so a reader (or a crash) never leaves a half-written file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pliant/math.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant::io {

// Writes `contents` to `path` atomically: into a new temporary file "<path>.tmp-<pid>-<16 random hex
// digits>" in the same folder, created with O_CREAT | O_EXCL | O_NOFOLLOW (a name that exists, a
// planted symlink included, is never opened: another is drawn), then renamed over `path` (which
// replaces a symlink at `path` rather than writing through it). Throws pliant::Error naming `path`;
// pliant::SystemError when the machine is at fault (disk full, I/O error, file-size limit).
void writeFileAtomically(const std::string& path, const std::string& contents);

// Removes the temporaries that killed writers left in `folder` (not its subfolders): the regular
// files, owned by this user, named "<name>.tmp-<pid>-<16 hex digits>" whose <pid> is no running
// process. A temporary of a live process (this one included) is kept, so two runs into one folder
// do not remove each other's files. Returns how many were removed; a missing folder removes none.
std::size_t removeStaleTemporaries(const std::string& folder);

namespace detail {
// The temporary name writeFileAtomically tries for `path` with random bits `bits`:
// "<path>.tmp-<this pid>-<bits as 16 hex digits>".
std::string temporaryName(const std::string& path, std::uint64_t bits);
// For tests: draws the random bits of temporary names from `source` (nullptr: the kernel's
// generator again), so a test can plant files at the names the writer will choose.
void setTemporaryRandomSource(std::uint64_t (*source)());
}  // namespace detail

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
