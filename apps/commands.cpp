// Helpers the subcommands share.
#include "commands.h"

#include <filesystem>
#include <iomanip>
#include <sstream>
#include <system_error>

namespace fs = std::filesystem;

namespace pliant::cli {

pliant::Scene loadScene(const std::string& argument) {
  if (argument.empty()) return pliant::makeBuiltinScene(pliant::builtinSceneNames().front());
  std::error_code ec;
  const bool looksLikeFile = argument.find('/') != std::string::npos || argument.find('.') != std::string::npos;
  if (fs::exists(argument, ec) || looksLikeFile) return pliant::loadSceneFile(argument);
  return pliant::makeBuiltinScene(argument);
}

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

}  // namespace pliant::cli
