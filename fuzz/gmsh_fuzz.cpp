// Fuzz target: io::readGmsh (ASCII 2.2 and 4.1; binary files are refused). The input is the .msh file.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace pliant;
  const std::string path = fuzz::writeScratchFile("input.msh", {reinterpret_cast<const char*>(data), size});
  io::TetMesh mesh;
  if (fuzz::expectOnlyPliantErrors("readGmsh", [&] { mesh = io::readGmsh(path); }))
    fuzz::checkTetMesh(mesh, "readGmsh");
  return 0;
}
