// Reading an input file (scene, mesh, checkpoint) safely: only a regular file is read, and only up
// to a size limit per kind, so /dev/zero, a FIFO or a folder given as an input is refused at once
// instead of being read until memory runs out or blocking forever (issue 12 item 6).
#pragma once

#include <cstdint>
#include <string>

namespace pliant::io {

// Size limits per kind of input (bytes); docs/reliability.md lists them.
constexpr std::uint64_t kMaxSceneFileBytes = std::uint64_t{64} << 20;  // scene JSON: 64 MiB
constexpr std::uint64_t kMaxMeshFileBytes = std::uint64_t{1} << 30;    // OBJ, TetGen, Gmsh: 1 GiB
// A run's own outputs read back by `pliant view` and `pliant render` (viewer-data.json, probes.csv,
// summary.json): 1 GiB, far above what a run writes (the viewer data keeps to a 40 MB frame budget).
constexpr std::uint64_t kMaxRunOutputFileBytes = std::uint64_t{1} << 30;
// Checkpoints have no fixed limit: a checkpoint's size follows from its model exactly
// (readCheckpoint refuses any other size before reading past the header).

// An input file opened for reading. The path is opened with O_NONBLOCK (so opening a FIFO cannot
// block) and the opened descriptor is checked with fstat (so what is checked is what is read, with
// no race between a check and the open): it must be a regular file of at most `maxBytes` bytes.
// Every failure throws pliant::Error naming `path` and what it is: `kind` says what was expected
// ("scene file", "mesh file", "checkpoint").
class InputFile {
 public:
  InputFile(const std::string& path, const std::string& kind, std::uint64_t maxBytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Size in bytes when opened (at most maxBytes).
  std::uint64_t size() const { return size_; }
  // Reads exactly `bytes` bytes into `out`; a file that ends sooner (cut while reading) throws.
  void read(char* out, std::uint64_t bytes);
  // Reads the rest of the file; a file that grew past maxBytes while reading throws.
  std::string readRest();

 private:
  std::string path_, kind_;
  std::uint64_t maxBytes_ = 0, size_ = 0, offset_ = 0;
  int fd_ = -1;
};

// The whole of a regular file of at most `maxBytes` bytes (see InputFile).
std::string readInputFile(const std::string& path, const std::string& kind, std::uint64_t maxBytes);

}  // namespace pliant::io
