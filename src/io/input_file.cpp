// Input files (pliant/io/input_file.h): open without blocking, check the opened descriptor, read
// within a size limit.
#include "pliant/io/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "output_bytes.h"
#include "pliant/error.h"

namespace pliant::io {

using detail::systemMessage;

namespace {

const char* fileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// A read error is the machine's fault (exit 1), a missing or unreadable path the input's (exit 2).
[[noreturn]] void throwReadError(int error, const std::string& message) {
  if (error == EIO) throw SystemError(message);
  throw Error(message);
}

}  // namespace

InputFile::InputFile(const std::string& path, const std::string& kind, std::uint64_t maxBytes)
    : path_(path), kind_(kind), maxBytes_(maxBytes) {
  if (path.empty()) throw Error("an empty path given; expected " + kind);
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one; O_NOCTTY:
  // a terminal given as input does not become our controlling terminal.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) {
    const int error = errno;
    throwReadError(error, path + ": cannot open: " + systemMessage(error) + " (expected " + kind + ")");
  }
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    const int error = errno;
    ::close(fd_);
    throwReadError(error, path + ": cannot examine: " + systemMessage(error) + " (expected " + kind + ")");
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw Error(path + ": is " + std::string(fileTypeName(info.st_mode)) + ", not a regular file; expected " + kind);
  }
  size_ = static_cast<std::uint64_t>(info.st_size);
  if (size_ > maxBytes) {
    ::close(fd_);
    throw Error(path + ": " + std::to_string(size_) + " bytes, more than the " + std::to_string(maxBytes) +
                " bytes allowed for " + kind);
  }
  // A regular file never blocks, but clear the flag so reads behave plainly.
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read(char* out, std::uint64_t bytes) {
  while (bytes > 0) {
    const ssize_t got = ::read(fd_, out, static_cast<std::size_t>(std::min<std::uint64_t>(bytes, 1u << 30)));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      throwReadError(error, path_ + ": read error at byte " + std::to_string(offset_) + ": " + systemMessage(error));
    }
    if (got == 0)
      throw Error(path_ + ": ended at byte " + std::to_string(offset_) + " while being read, expected " +
                  std::to_string(size_) + " bytes (was it cut by another program?)");
    out += got;
    bytes -= static_cast<std::uint64_t>(got);
    offset_ += static_cast<std::uint64_t>(got);
  }
}

std::string InputFile::readRest() {
  std::string text;
  text.resize(static_cast<std::size_t>(size_ > offset_ ? size_ - offset_ : 0));
  read(text.data(), text.size());
  // The file may have grown since fstat (another program appending): read on to its end, within
  // the limit, so the text is the whole file and no limit can be passed by growing it.
  char chunk[65536];
  for (;;) {
    const ssize_t got = ::read(fd_, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      throwReadError(error, path_ + ": read error: " + systemMessage(error));
    }
    if (got == 0) break;
    offset_ += static_cast<std::uint64_t>(got);
    if (offset_ > maxBytes_)
      throw Error(path_ + ": grew past the " + std::to_string(maxBytes_) + " bytes allowed for " + kind_ +
                  " while being read");
    text.append(chunk, static_cast<std::size_t>(got));
  }
  return text;
}

std::string readInputFile(const std::string& path, const std::string& kind, std::uint64_t maxBytes) {
  InputFile file(path, kind, maxBytes);
  return file.readRest();
}

}  // namespace pliant::io
