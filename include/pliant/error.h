// Errors raised at Pliant's API edge. The solver's inner loops never throw; bad parameters given
// to a builder or a loader throw pliant::Error with a message naming the field and what was expected.
#pragma once

#include <stdexcept>
#include <string>

namespace pliant {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace pliant
