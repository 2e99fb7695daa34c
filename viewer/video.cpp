// Videos of viewer data through Debian's ffmpeg: frames drawn by FrameRenderer are piped to
// `ffmpeg -f rawvideo -pix_fmt rgb24` (posix_spawn, stdin a pipe), which encodes H.264 into a
// temporary beside the target; the temporary is renamed into place only when ffmpeg exits 0.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pliant/error.h"
#include "pliant/io/output.h"
#include "pliant/viewer/viewer.h"

extern char** environ;

namespace fs = std::filesystem;

namespace pliant::viewer {

namespace {

// The first executable `name` in the folders of PATH, or "" when there is none.
std::string findOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream folders(path != nullptr ? path : "");
  std::string folder;
  while (std::getline(folders, folder, ':')) {
    if (folder.empty()) continue;
    const std::string candidate = folder + "/" + name;
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

// ffmpeg's muxer name for the extension of `file`, or "" for one it is not used with here.
std::string muxerOf(const fs::path& file) {
  std::string extension = file.extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension == ".mp4") return "mp4";
  if (extension == ".mov") return "mov";
  if (extension == ".mkv") return "matroska";
  return "";
}

// The last `count` lines of a text file (ffmpeg's messages), joined by "; ".
std::string lastLines(const std::string& file, std::size_t count) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : "; ") + lines[i];
  return out;
}

// While alive, a write to a pipe whose reader has gone fails with EPIPE instead of killing the process.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, &previous_);
  }
  ~IgnoreSigpipe() { ::sigaction(SIGPIPE, &previous_, nullptr); }
  IgnoreSigpipe(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;

 private:
  struct sigaction previous_ {};
};

// Writes all of `bytes` to `fd`; false when the reader has gone (or another write error).
bool writeAll(int fd, const std::vector<std::uint8_t>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string temporaryFor(const std::string& file) {
  std::random_device random;
  const std::uint64_t bits = (std::uint64_t(random()) << 32) ^ random();
  return io::detail::temporaryName(file, bits);
}

}  // namespace

void checkVideoTarget(const std::string& file) {
  const fs::path path(file);
  if (path.filename().empty()) throw Error(file + ": not a file name (expected a video file such as out.mp4)");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error(file + ": is a folder, expected a video file name");
  if (muxerOf(path).empty())
    throw Error(file + ": unknown video extension '" + path.extension().string() + "' (expected .mp4, .mov or .mkv)");
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::is_directory(parent, ec)) throw Error(file + ": folder " + parent.string() + " does not exist");
  if (::access(parent.c_str(), W_OK) != 0) throw Error(file + ": folder " + parent.string() + " is not writable");
  if (findOnPath("ffmpeg").empty())
    throw Error("ffmpeg was not found on PATH; it encodes the video (Debian: apt-get install ffmpeg)");
}

void writeVideo(const FrameRenderer& renderer, const std::string& file, double framesPerSecond,
                const std::function<void(std::size_t, std::size_t)>& onFrame) {
  checkVideoTarget(file);
  const RenderOptions& options = renderer.options();
  // H.264 in 4:2:0 halves the chroma both ways: it needs even sizes.
  if (options.width % 2 != 0 || options.height % 2 != 0)
    throw Error("video size must be even in both directions (H.264, 4:2:0), got " + std::to_string(options.width) +
                "x" + std::to_string(options.height));
  const std::size_t frames = renderer.frameCount();
  if (!(framesPerSecond >= 0.0) || framesPerSecond > 1000.0)
    throw Error("frames per second must be between 0 (the run's own pace) and 1000");
  if (framesPerSecond == 0.0) {
    // One second of video per simulated second: the recorded frames' mean spacing.
    const double span = frames > 1 ? renderer.frameTime(frames - 1) - renderer.frameTime(0) : 0.0;
    framesPerSecond = span > 0.0 ? double(frames - 1) / span : 30.0;
    framesPerSecond = std::clamp(framesPerSecond, 1.0, 240.0);
  }
  const std::string ffmpeg = findOnPath("ffmpeg");
  const std::string temporary = temporaryFor(file);
  const std::string log = temporaryFor(file + ".ffmpeg-log");
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.6g", framesPerSecond);
  const std::string size = std::to_string(options.width) + "x" + std::to_string(options.height);
  std::vector<std::string> arguments = {
      ffmpeg,        "-hide_banner", "-loglevel",  "error", "-nostats", "-f",     "rawvideo",    "-pix_fmt", "rgb24",
      "-video_size", size,           "-framerate", rate,    "-i",       "pipe:0", "-c:v",        "libx264",  "-pix_fmt",
      "yuv420p",     "-preset",      "medium",     "-crf",  "18",       "-f",     muxerOf(file), "-y",       temporary};
  if (muxerOf(file) != "matroska") arguments.insert(arguments.end() - 4, {"-movflags", "+faststart"});
  std::vector<char*> argv;
  for (std::string& a : arguments) argv.push_back(a.data());
  argv.push_back(nullptr);

  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0)
    throw SystemError(std::string("cannot create a pipe for ffmpeg: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[0], STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t child = -1;
  const int spawned = ::posix_spawn(&child, ffmpeg.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipeFds[0]);
  auto cleanUp = [&] {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    fs::remove(log, ignored);
  };
  if (spawned != 0) {
    ::close(pipeFds[1]);
    cleanUp();
    throw SystemError(ffmpeg + ": cannot start it: " + std::strerror(spawned));
  }

  bool fed = true;
  std::string drawError;
  {
    IgnoreSigpipe guard;
    try {
      for (std::size_t i = 0; i < frames && fed; ++i) {
        fed = writeAll(pipeFds[1], renderer.rgb(i));
        if (fed && onFrame) onFrame(i + 1, frames);
      }
    } catch (const std::exception& e) {
      drawError = e.what();
      fed = false;
    }
    ::close(pipeFds[1]);  // end of input: ffmpeg finishes the file
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const bool encoded = fed && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!encoded) {
    const std::string messages = lastLines(log, 3);
    cleanUp();
    if (!drawError.empty()) throw Error(file + ": " + drawError);
    const std::string how = WIFEXITED(status)     ? "exited with status " + std::to_string(WEXITSTATUS(status))
                            : WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                  : "failed";
    throw SystemError(file + ": ffmpeg " + how + (messages.empty() ? "" : " (" + messages + ")") +
                      "; no video was written");
  }
  std::error_code ec;
  fs::rename(temporary, file, ec);
  if (ec) {
    cleanUp();
    throw SystemError(file + ": cannot move the finished video into place: " + ec.message());
  }
  fs::remove(log, ec);
}

}  // namespace pliant::viewer
