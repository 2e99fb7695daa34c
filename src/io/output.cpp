// Output writers: frames (legacy VTK, VTK XML .vtu, OBJ, PLY), ParaView collections; one file per
// format (frame_vtk.cpp, frame_obj.cpp, frame_ply.cpp), checkpoints in checkpoint.cpp.
//
// Every writer builds the whole file in one buffer (sized up front, numbers converted in one pass)
// and hands it to writeFileAtomically, which makes a single write() into a temporary file in the
// target folder and renames it into place. rename() within one file system is atomic on POSIX, so
// a reader sees either the old file or the complete new one, and a crash leaves at most a stray
// "<name>.tmp-<pid>-<16 hex digits>" file, never a truncated frame; removeStaleTemporaries clears
// those. The temporary's name has 64 random bits and is created with O_CREAT | O_EXCL | O_NOFOLLOW,
// so a file or symlink planted under a name we could choose is never opened, let alone written
// through: the open fails with EEXIST and another name is drawn (issue 12 item 4).
#include "pliant/io/output.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "frame_formats.h"
#include "output_bytes.h"
#include "pliant/error.h"

namespace pliant::io {

using namespace detail;

// Frame checks: a file with an index past the end would crash the viewer, not us; refuse it here.
void detail::checkFrameInput(const std::string& path, const Topology& topology, const State& state) {
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
  for (const TopologyPart& part : topology.parts) {
    const std::string what = "frame '" + path + "': part '" + part.name + "'";
    if (std::uint64_t{part.firstParticle} + part.particleCount > n)
      throw Error(what + " ends at particle " + std::to_string(std::uint64_t{part.firstParticle} + part.particleCount) +
                  "; expected at most the particle count " + std::to_string(n));
    if (part.trianglesBegin > part.trianglesEnd || part.trianglesEnd > topology.triangles.size() ||
        part.linesBegin > part.linesEnd || part.linesEnd > topology.lines.size() || part.tetsBegin > part.tetsEnd ||
        part.tetsEnd > topology.tets.size())
      throw Error(what + ": a cell range lies outside the topology's arrays");
    if (!part.uv.empty() && part.uv.size() != part.particleCount)
      throw Error(what + " has " + std::to_string(part.uv.size()) +
                  " texture coordinates; expected one per particle (" + std::to_string(part.particleCount) + ")");
    const auto inside = [&](const char* kind, std::size_t begin, std::size_t end, const auto& cells) {
      for (std::size_t i = begin; i < end; ++i)
        for (ParticleIndex p : cells[i])
          if (p < part.firstParticle || p - part.firstParticle >= part.particleCount)
            throw Error(what + ": " + kind + " " + std::to_string(i) + " refers to particle " + std::to_string(p) +
                        ", which is not one of the part's");
    };
    inside("triangle", part.trianglesBegin, part.trianglesEnd, topology.triangles);
    inside("line", part.linesBegin, part.linesEnd, topology.lines);
    inside("tet", part.tetsBegin, part.tetsEnd, topology.tets);
    if (part.skin) {
      const SurfaceSkin& skin = *part.skin;
      if (skin.tets.size() != skin.weights.size())
        throw Error(what + ": its skin has " + std::to_string(skin.tets.size()) + " tets for " +
                    std::to_string(skin.weights.size()) + " vertices; expected one per vertex");
      for (std::size_t v = 0; v < skin.tets.size(); ++v)
        for (ParticleIndex p : skin.tets[v])
          if (p < part.firstParticle || p - part.firstParticle >= part.particleCount)
            throw Error(what + ": skin vertex " + std::to_string(v) + " follows particle " + std::to_string(p) +
                        ", which is not one of the part's");
      for (std::size_t i = 0; i < skin.triangles.size(); ++i)
        for (std::uint32_t v : skin.triangles[i])
          if (v >= skin.vertexCount())
            throw Error(what + ": skin triangle " + std::to_string(i) + " refers to skin vertex " + std::to_string(v) +
                        "; expected an index below " + std::to_string(skin.vertexCount()));
    }
  }
}

namespace {

// The machine's fault, not the path's (issue 12 item 13): a full disk or quota, an I/O error, a
// file-size limit. The CLI exits 1 for SystemError, 2 for other Errors.
[[noreturn]] void throwWriteError(int error, const std::string& message) {
  if (error == ENOSPC || error == EIO || error == EDQUOT || error == EFBIG) throw SystemError(message);
  throw Error(message);
}

}  // namespace

namespace {

constexpr std::string_view kTemporaryMark = ".tmp-";
constexpr std::size_t kTemporaryRandomDigits = 16;

std::atomic<std::uint64_t (*)()> randomSource{nullptr};

// 64 unpredictable bits for a temporary's name: from the kernel's generator, or (should it fail)
// a mix of a counter, the clock and the pid, which still differs between attempts.
std::uint64_t randomBits() {
  if (std::uint64_t(*source)() = randomSource.load()) return source();
  std::uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof bits)) return bits;
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t z = counter.fetch_add(1) ^
                    static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                    (static_cast<std::uint64_t>(::getpid()) << 32);
  // splitmix64's finaliser (Steele, Lea and Flood 2014) spreads the bits.
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The writer's pid when `name` is "<something>.tmp-<pid>-<16 hex digits>", else 0.
pid_t temporaryWriter(std::string_view name) {
  const std::size_t mark = name.rfind(kTemporaryMark);
  if (mark == std::string_view::npos || mark == 0) return 0;
  const std::string_view rest = name.substr(mark + kTemporaryMark.size());
  const std::size_t dash = rest.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash > 9 || rest.size() - dash - 1 != kTemporaryRandomDigits)
    return 0;
  pid_t pid = 0;
  for (char c : rest.substr(0, dash)) {
    if (c < '0' || c > '9') return 0;
    pid = pid * 10 + (c - '0');
  }
  for (char c : rest.substr(dash + 1))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
  return pid;
}

}  // namespace

std::string detail::temporaryName(const std::string& path, std::uint64_t bits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string digits(kTemporaryRandomDigits, '0');
  for (std::size_t i = kTemporaryRandomDigits; i-- > 0; bits >>= 4) digits[i] = kHex[bits & 15];
  return path + std::string(kTemporaryMark) + std::to_string(::getpid()) + "-" + digits;
}

void detail::setTemporaryRandomSource(std::uint64_t (*source)()) { randomSource.store(source); }

void writeFileAtomically(const std::string& path, const std::string& contents) {
  if (path.empty()) throw Error("output: cannot write a file with an empty path");
  // O_EXCL fails on any existing name, a symlink included (dangling or not); O_NOFOLLOW says the
  // same for the last component in case a system honoured O_EXCL loosely. A name that exists is
  // somebody else's: draw another.
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = detail::temporaryName(path, randomBits());
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    const int error = errno;
    throwWriteError(error, "output: cannot write '" + path + "': cannot create a temporary file such as '" + temp +
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
  // rename() replaces `path` itself, a symlink there included: it never writes through one.
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    throwWriteError(error, "output: cannot write '" + path + "': " + systemMessage(error));
  }
}

std::size_t removeStaleTemporaries(const std::string& folder) {
  DIR* dir = ::opendir(folder.c_str());
  if (!dir) return 0;
  const int dirFd = ::dirfd(dir);
  std::size_t removed = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name(entry->d_name);
    const pid_t writer = temporaryWriter(name);
    if (writer <= 0 || writer == ::getpid()) continue;
    // Only our own regular files (lstat: a symlink is left alone, as is anything of another user),
    // and only when the process that was writing it is gone.
    struct stat info {};
    if (::fstatat(dirFd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) continue;
    if (::kill(writer, 0) == 0 || errno != ESRCH) continue;
    if (::unlinkat(dirFd, entry->d_name, 0) == 0) ++removed;
  }
  ::closedir(dir);
  return removed;
}

const char* frameFormatName(FrameFormat format) {
  switch (format) {
    case FrameFormat::Vtk:
      return "vtk";
    case FrameFormat::Obj:
      return "obj";
    case FrameFormat::Ply:
      return "ply";
    case FrameFormat::Glb:
      return "glb";
  }
  return "unknown";
}

void writeFrame(const std::string& path, FrameFormat format, const Topology& topology, const State& state,
                VtuEncoding encoding) {
  checkFrameInput(path, topology, state);
  const PartView whole = wholePart(topology, state);
  switch (format) {
    case FrameFormat::Vtk:
      writeFileAtomically(
          path, endsWithVtu(path) ? vtkXmlFrame(whole, state.time, encoding) : vtkLegacyFrame(whole, state.time));
      return;
    case FrameFormat::Obj:
      writeFileAtomically(path, objFrame(std::span<const PartView>(&whole, 1), state.time));
      return;
    case FrameFormat::Ply:
      writeFileAtomically(path, plyFrame(whole, state.time));
      return;
    case FrameFormat::Glb:
      throw Error("frame '" + path +
                  "': glTF holds a whole run, not one frame: write it with FrameSeries (pliant run --format glb)");
  }
  throw Error("frame '" + path + "': unknown frame format");
}

std::string escapeMarkup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::uint64_t hashBytes(std::string_view bytes) { return detail::fnv1a(bytes.data(), bytes.size()); }

}  // namespace pliant::io
