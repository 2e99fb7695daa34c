// JSON helpers of the scene files: type names and positions in the text for messages.
#include "json_fields.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace pliant::scenefile {

std::string typeName(const Json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

std::string describeRange(double min, double max, bool exclusiveMin) {
  const bool hasMin = std::isfinite(min), hasMax = std::isfinite(max);
  if (hasMin && hasMax && !exclusiveMin) return "from " + formatNumber(min) + " to " + formatNumber(max);
  std::string text;
  if (hasMin) text = (exclusiveMin ? "greater than " : "of at least ") + formatNumber(min);
  if (hasMax) text += (hasMin ? " and at most " : "of at most ") + formatNumber(max);
  return text;
}

// "line:column" of byte `offset` (0-based) in `text`, both 1-based.
std::string lineColumn(const std::string& text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  const std::size_t end = std::min(offset, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

std::size_t findNumberToken(const std::string& text, const std::string& token) {
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
      continue;
    }
    if (text.compare(i, token.size(), token) == 0 &&
        (i == 0 || std::string("[,: \t\r\n").find(text[i - 1]) != std::string::npos))
      return i;
  }
  return std::string::npos;
}

}  // namespace pliant::scenefile
