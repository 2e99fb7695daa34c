// What the side-by-side benchmark programs share whether or not they link Bullet: reading their
// numeric options and writing their CSV (to stdout, or atomically to a file).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pliant/io/output.h"

namespace pliant::bench {

// The integer value of `option` in [least, 1e6]; anything else ends the program with exit code 2.
inline int parseCount(const char* program, const char* option, const char* value, long least) {
  char* end = nullptr;
  const long v = value ? std::strtol(value, &end, 10) : 0;
  if (!value || *end != '\0' || v < least || v > 1000000) {
    std::fprintf(stderr, "%s: %s expects an integer >= %ld\n", program, option, least);
    std::exit(2);
  }
  return static_cast<int>(v);
}

// The positive, finite number value of `option`; anything else ends the program with exit code 2.
inline double parsePositive(const char* program, const char* option, const char* value) {
  char* end = nullptr;
  const double v = value ? std::strtod(value, &end) : 0.0;
  if (!value || *end != '\0' || !(v > 0.0) || !std::isfinite(v)) {
    std::fprintf(stderr, "%s: %s expects a positive number\n", program, option);
    std::exit(2);
  }
  return v;
}

// The CSV on stdout when `path` is empty, else into `path` (temporary file, then rename).
inline void writeCsv(const std::string& path, const std::string& csv) {
  if (path.empty()) std::fputs(csv.c_str(), stdout);
  else io::writeFileAtomically(path, csv);
}

}  // namespace pliant::bench
