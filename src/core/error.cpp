// Numbers in error messages (pliant/error.h).
#include "pliant/error.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace pliant {

std::string formatNumber(double value) {
  char buffer[64];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, value);  // shortest round-trip form
  std::string text(buffer, written.ptr);
  // to_chars writes exponents as "e+06"; a person writes "e6".
  const auto e = text.find('e');
  if (e == std::string::npos) return text;
  std::string exponent = text.substr(e + 1);
  const bool negative = !exponent.empty() && exponent[0] == '-';
  if (!exponent.empty() && (exponent[0] == '+' || exponent[0] == '-')) exponent.erase(0, 1);
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return text.substr(0, e) + "e" + (negative ? "-" : "") + exponent;
}

}  // namespace pliant
