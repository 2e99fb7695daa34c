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

#include "pliant/colliders.h"
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

// A run recorded for glTF (frame_gltf.cpp): every written frame's time, each object's points per
// frame, each collider's pose per frame.
struct GltfRecording {
  struct Object {
    std::string name;
    std::size_t pointCount = 0;
    std::vector<float> positions;                 // m, x y z of every point, frame after frame
    std::vector<std::uint32_t> triangles, lines;  // indices into the object's points, 3 or 2 per cell
    bool chain = false;
    std::vector<std::array<float, 2>> uv;
  };
  struct Rigid {
    std::string name;
    std::vector<Vec3> vertices;  // m, in the collider's frame
    std::vector<std::array<std::uint32_t, 3>> triangles;
    std::vector<Vec3> translation;  // m, per frame
    std::vector<Quat> rotation;     // per frame
  };
  std::string name = "Pliant run";  // the glTF scene's
  std::vector<double> times;        // s
  std::vector<Object> objects;
  std::vector<Rigid> colliders;
};
// The .glb file of a recorded run: objects as meshes with one morph target per frame after the
// first and an animation of their weights; colliders as rigid nodes with animated poses.
std::string glbFile(const GltfRecording& run);

}  // namespace pliant::io::detail
