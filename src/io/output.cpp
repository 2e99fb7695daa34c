// Output writers: frames (legacy VTK, VTK XML .vtu, OBJ, PLY), ParaView collections; one file per
// format (frame_vtk.cpp, frame_obj.cpp, frame_ply.cpp), checkpoints in checkpoint.cpp.
//
// Every writer builds the whole file in one buffer (sized up front, numbers converted in one pass)
// and hands it to writeFileAtomically, which makes a single write() into a temporary file in the
// target folder and renames it into place. rename() within one file system is atomic on POSIX, so
// a reader sees either the old file or the complete new one, and a crash leaves at most a stray
// "*.tmp-*" file, never a truncated frame.
#include "pliant/io/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <string>

#include "frame_formats.h"
#include "output_bytes.h"
#include "pliant/error.h"

namespace pliant::io {

using namespace detail;

namespace {

// Frame checks: a file with an index past the end would crash the viewer, not us; refuse it here.

void checkFrameInput(const std::string& path, const Topology& topology, const State& state) {
  const std::size_t n = state.position.size();
  if (state.velocity.size() != n)
    throw Error("frame '" + path + "': state has " + std::to_string(n) + " positions but " +
                std::to_string(state.velocity.size()) + " velocities; expected equal counts");
  // VTK and PLY store indices and counts as 32-bit signed integers.
  if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw Error("frame '" + path + "': " + std::to_string(n) + " particles exceed the 2^31-1 the formats allow");
  auto check = [&](const char* kind, std::size_t element, const auto& indices) {
    for (ParticleIndex p : indices)
      if (p >= n)
        throw Error("frame '" + path + "': " + kind + " " + std::to_string(element) + " refers to particle " +
                    std::to_string(p) + "; expected an index below the particle count " + std::to_string(n));
  };
  for (std::size_t i = 0; i < topology.triangles.size(); ++i) check("triangle", i, topology.triangles[i]);
  for (std::size_t i = 0; i < topology.lines.size(); ++i) check("line", i, topology.lines[i]);
  for (std::size_t i = 0; i < topology.tets.size(); ++i) check("tet", i, topology.tets[i]);
}

// The machine's fault, not the path's (issue 12 item 13): a full disk or quota, an I/O error, a
// file-size limit. The CLI exits 1 for SystemError, 2 for other Errors.
[[noreturn]] void throwWriteError(int error, const std::string& message) {
  if (error == ENOSPC || error == EIO || error == EDQUOT || error == EFBIG) throw SystemError(message);
  throw Error(message);
}

}  // namespace

void writeFileAtomically(const std::string& path, const std::string& contents) {
  if (path.empty()) throw Error("output: cannot write a file with an empty path");
  // The pid keeps concurrent processes apart, the counter concurrent writers in one process.
  static std::atomic<std::uint64_t> counter{0};
  const std::string temp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int error = errno;
    throwWriteError(error, "output: cannot write '" + path + "': cannot create the temporary file '" + temp +
                               "': " + systemMessage(error));
  }
  int error = 0;
  const char* data = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  // close() reports deferred write errors (e.g. a full disk on a network file system).
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    throwWriteError(error, "output: cannot write '" + path + "': " + systemMessage(error));
  }
}

const char* frameFormatName(FrameFormat format) {
  switch (format) {
    case FrameFormat::Vtk:
      return "vtk";
    case FrameFormat::Obj:
      return "obj";
    case FrameFormat::Ply:
      return "ply";
  }
  return "unknown";
}

void writeFrame(const std::string& path, FrameFormat format, const Topology& topology, const State& state) {
  checkFrameInput(path, topology, state);
  switch (format) {
    case FrameFormat::Vtk:
      writeFileAtomically(path, endsWithVtu(path) ? vtkXmlFrame(topology, state) : vtkLegacyFrame(topology, state));
      return;
    case FrameFormat::Obj:
      writeFileAtomically(path, objFrame(topology, state));
      return;
    case FrameFormat::Ply:
      writeFileAtomically(path, plyFrame(topology, state));
      return;
  }
  throw Error("frame '" + path + "': unknown frame format");
}

}  // namespace pliant::io
