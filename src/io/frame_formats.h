// The frame writers of writeFrame, FrameSeries and writePvd (pliant/io/output.h), one file per
// format: each builds the whole file in one buffer; output.cpp and frame_series.cpp check the input
// and write it atomically.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pliant/io/output.h"
#include "pliant/state.h"

namespace pliant::io::detail {

// One part of a frame as the writers see it: points with their cells, the cells' indices less
// `base` pointing into `position` (an object: a range of the state's particles; a collider: its
// posed vertices, without velocity).
struct PartView {
  std::string_view name;
  std::span<const Vec3> position;  // m
  std::span<const Vec3> velocity;  // m/s, one per position, or empty (a collider)
  std::uint32_t base = 0;          // subtracted from every index below
  std::span<const std::array<ParticleIndex, 3>> triangles;
  std::span<const std::array<ParticleIndex, 2>> lines;
  std::span<const std::array<ParticleIndex, 4>> tets;
  bool chain = false;                        // the lines join the points in order (TopologyPart::chain)
  std::span<const std::array<float, 2>> uv;  // one per position, or empty
};

// Throws pliant::Error naming `path` when `topology` does not fit `state` (an index past the last
// particle, a part's cells outside its particles, mismatched arrays) (output.cpp).
void checkFrameInput(const std::string& path, const Topology& topology, const State& state);

// The view of part `p` of `topology` (its objects) over `state`.
PartView objectPart(const Topology& topology, const TopologyPart& p, const State& state);
// The whole topology as one part named "mesh".
PartView wholePart(const Topology& topology, const State& state);

// Legacy VTK 3.0 binary and VTK XML (.vtu) frames, a VTK multiblock (.vtm) naming its blocks'
// files, and whether a path names a .vtu file (frame_vtk.cpp).
std::string vtkLegacyFrame(const PartView& part, double time);
std::string vtkXmlFrame(const PartView& part, double time, VtuEncoding encoding);
std::string vtkMultiBlock(std::span<const std::string> names, std::span<const std::string> files);
bool endsWithVtu(const std::string& path);
// Wavefront OBJ text, one object ("o <name>") per part when there are several (frame_obj.cpp).
std::string objFrame(std::span<const PartView> parts, double time);
// Binary little-endian PLY of one part (frame_ply.cpp).
std::string plyFrame(const PartView& part, double time);

}  // namespace pliant::io::detail
