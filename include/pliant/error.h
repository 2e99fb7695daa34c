// Errors raised at Pliant's API edge. The solver's inner loops never throw; bad parameters given
// to a builder or a loader throw pliant::Error with a message naming the field and what was expected.
#pragma once

#include <stdexcept>
#include <string>

namespace pliant {

// A number as a person writes it in a message: the shortest text that reads back to the same
// double ("0.1", "1e6", "1e-9", "-0.5"), where std::to_string prints six decimals ("0.000000" for
// 1e-9, "1000000.000000").
std::string formatNumber(double value);

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A failure of the machine rather than of the input: the disk is full, a write hit an I/O error or
// a file-size limit. The CLI exits 1 for it (internal or environment failure), 2 for other Errors.
class SystemError : public Error {
 public:
  explicit SystemError(const std::string& message) : Error(message) {}
};

}  // namespace pliant
