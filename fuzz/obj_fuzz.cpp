// Fuzz target: io::readObj. The input is the .obj file.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace pliant;
  const std::string path = fuzz::writeScratchFile("input.obj", {reinterpret_cast<const char*>(data), size});
  io::TriangleMesh mesh;
  if (fuzz::expectOnlyPliantErrors("readObj", [&] { mesh = io::readObj(path); }))
    fuzz::checkTriangleMesh(mesh, "readObj");
  return 0;
}
