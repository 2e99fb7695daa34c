// Text parsing shared by the mesh readers (mesh_obj.cpp, mesh_tetgen.cpp, mesh_gmsh.cpp): LineReader
// and the number, token and file helpers behind their "<file>:<line>: ...; expected ..." messages.
// Private to the I/O layer.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pliant/io/mesh_io.h"

namespace pliant::io::detail {

// Largest vertex count: indices are std::uint32_t and tinyobjloader stores them as int.
inline constexpr long long kMaxVertices = std::numeric_limits<std::int32_t>::max();
inline constexpr long long kMaxAttributes = 1'000'000;

// A number in a message (6 significant digits).
std::string format(double value);
// A token as it appears in a message: clipped, and non-printable bytes shown as '?'.
std::string shown(std::string_view token);
// Throws pliant::Error "<path>:<line>: <what>".
[[noreturn]] void failAt(const std::string& path, std::size_t line, const std::string& what);
// The extension of `path` in lower case, with its dot.
std::string lowerExtension(const std::string& path);
// The whole file; errors say that a `kind` (e.g. "an OBJ file (.obj)") was expected.
std::string readText(const std::string& path, const std::string& kind);

enum class Parsed { ok, notNumber, notFinite, outOfRange };

// from_chars with a leading '+' allowed; a real must be finite.
Parsed toReal(std::string_view token, double& out);
Parsed toInteger(std::string_view token, long long& out);

// Splits a text into lines and lines into whitespace-separated tokens; skips blank lines and, when
// `comment` is not '\0', everything from the comment character to the end of the line.
class LineReader {
 public:
  LineReader(std::string path, const std::string& text, char comment)
      : path_(std::move(path)), text_(text), comment_(comment) {}

  // Advances to the next line that has a token; false at the end of the file.
  bool next() {
    while (pos_ < text_.size()) {
      std::size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view row = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      if (row.find('\0') != std::string_view::npos) fail("binary data (a NUL byte) where text was expected");
      if (comment_ != '\0') row = row.substr(0, row.find(comment_));
      tokens_.clear();
      std::size_t i = 0;
      while (i < row.size()) {
        while (i < row.size() && isSpace(row[i])) ++i;
        const std::size_t start = i;
        while (i < row.size() && !isSpace(row[i])) ++i;
        if (i > start) tokens_.push_back(row.substr(start, i - start));
      }
      if (!tokens_.empty()) return true;
    }
    return false;
  }

  std::size_t line() const { return line_; }  // 1-based; after the end: the last line of the file
  const std::string& path() const { return path_; }
  std::size_t size() const { return tokens_.size(); }
  std::string_view operator[](std::size_t k) const { return tokens_[k]; }

  [[noreturn]] void fail(const std::string& what) const { failAt(path_, line_, what); }

  double real(std::size_t k, const std::string& expected) const {
    double value = 0.0;
    switch (toReal(tokens_[k], value)) {
      case Parsed::ok:
        return value;
      case Parsed::notFinite:
        fail(shown(tokens_[k]) + " is not a finite number; expected " + expected);
      default:
        fail(shown(tokens_[k]) + " is not a number; expected " + expected);
    }
  }

  long long integer(std::size_t k, const std::string& expected) const {
    long long value = 0;
    switch (toInteger(tokens_[k], value)) {
      case Parsed::ok:
        return value;
      case Parsed::outOfRange:
        fail(shown(tokens_[k]) + " is out of range; expected " + expected);
      default:
        fail(shown(tokens_[k]) + " is not an integer; expected " + expected);
    }
  }

  // An integer in [lo, hi].
  long long integer(std::size_t k, long long lo, long long hi, const std::string& expected) const {
    const long long value = integer(k, expected);
    if (value < lo || value > hi) fail(shown(tokens_[k]) + " is out of range; expected " + expected);
    return value;
  }

  // The current line must be exactly `word`.
  void expectWord(std::string_view word, const std::string& context) const {
    if (tokens_.size() != 1 || tokens_[0] != word)
      fail("found " + shown(tokens_[0]) + "; expected " + std::string(word) + " " + context);
  }

 private:
  static bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

  std::string path_;
  std::string_view text_;
  char comment_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
  std::vector<std::string_view> tokens_;
};

// orientTets; `lines` (optional) gives each tet's line in `path` for the messages.
void orientTetsAt(TetMesh& mesh, const std::string& path, const std::vector<std::size_t>* lines);

}  // namespace pliant::io::detail
