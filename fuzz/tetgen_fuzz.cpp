// Fuzz target: io::readTetGen over a .node/.ele pair cut from one input (tetgen_fuzz.h).
#include "tetgen_fuzz.h"

#include <cstring>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace pliant;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // memmem rather than find: libFuzzer intercepts it and learns the separator from the comparison.
  const void* at = memmem(input.data(), input.size(), fuzz::kTetGenSeparator.data(), fuzz::kTetGenSeparator.size());
  const std::size_t cut =
      at == nullptr ? input.size() : static_cast<std::size_t>(static_cast<const char*>(at) - input.data());
  const std::string path = fuzz::writeScratchFile("input.node", input.substr(0, cut));
  if (at == nullptr) fuzz::removeScratchFile("input.ele");
  else fuzz::writeScratchFile("input.ele", input.substr(cut + fuzz::kTetGenSeparator.size()));
  io::TetMesh mesh;
  if (fuzz::expectOnlyPliantErrors("readTetGen", [&] { mesh = io::readTetGen(path); }))
    fuzz::checkTetMesh(mesh, "readTetGen");
  return 0;
}
