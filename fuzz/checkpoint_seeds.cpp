// Writes the checkpoint target's seed inputs (checkpoint_fuzz.h) into a folder: the fuzz build's
// seed corpus, and the seeds kept in tests/data/fuzz/checkpoint.
// Usage: pliant_fuzz_checkpoint_seeds FOLDER
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "checkpoint_fuzz.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  try {
    std::filesystem::create_directories(argv[1]);
    for (const auto& [name, bytes] : pliant::fuzz::checkpointSeeds()) {
      std::ofstream out(std::filesystem::path(argv[1]) / name, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) throw std::runtime_error("cannot write " + (std::filesystem::path(argv[1]) / name).string());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pliant_fuzz_checkpoint_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
