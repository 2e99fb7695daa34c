// The frame writers of writeFrame and writePvd (pliant/io/output.h), one file per format: each
// builds the whole file in one buffer; output.cpp checks the input and writes it atomically.
#pragma once

#include <string>

#include "pliant/io/output.h"
#include "pliant/state.h"

namespace pliant::io::detail {

// Legacy VTK 3.0 binary and VTK XML (.vtu) frames, and whether a path names a .vtu file (frame_vtk.cpp).
std::string vtkLegacyFrame(const Topology& topology, const State& state);
std::string vtkXmlFrame(const Topology& topology, const State& state);
bool endsWithVtu(const std::string& path);
// Wavefront OBJ text (frame_obj.cpp).
std::string objFrame(const Topology& topology, const State& state);
// Binary little-endian PLY (frame_ply.cpp).
std::string plyFrame(const Topology& topology, const State& state);

}  // namespace pliant::io::detail
