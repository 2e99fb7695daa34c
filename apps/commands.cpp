// Helpers the subcommands share.
#include "commands.h"

#include <charconv>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <sstream>
#include <system_error>

#include "pliant/error.h"

namespace fs = std::filesystem;

namespace pliant::cli {

pliant::SceneLoadOptions sceneLoadOptions(const std::string& maxMemory) {
  pliant::SceneLoadOptions options;
  if (!maxMemory.empty()) {
    try {
      options.maxMemoryBytes = pliant::parseMemorySize(maxMemory);
    } catch (const pliant::Error& e) {
      throw pliant::Error(std::string("--max-memory: ") + e.what());
    }
  }
  return options;
}

void addMaxMemoryOption(CLI::App* command, std::string& maxMemory) {
  command->add_option("--max-memory", maxMemory,
                      "Refuse scenes estimated to need more memory than this (e.g. 512M, 4G; default: half of this "
                      "machine's memory)");
}

pliant::Scene loadScene(const std::string& argument, const std::string& maxMemory) {
  const pliant::SceneLoadOptions options = sceneLoadOptions(maxMemory);
  if (argument.empty()) return pliant::makeBuiltinScene(pliant::builtinSceneNames().front());
  std::error_code ec;
  const bool looksLikeFile = argument.find('/') != std::string::npos || argument.find('.') != std::string::npos;
  if (fs::exists(argument, ec) || looksLikeFile) return pliant::loadSceneFile(argument, options);
  return pliant::makeBuiltinScene(argument);
}

CLI::Validator atLeast(int min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        constexpr int kMax = std::numeric_limits<int>::max();
        long long value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && end == text.data() + text.size() && value >= min && value <= kMax) return {};
        // An integer option; a larger value would not fit it.
        return "expected a whole number of at least " + std::to_string(min) + " (and at most " + std::to_string(kMax) +
               "), got " + (text.empty() ? std::string("nothing") : text);
      },
      "INT>=" + std::to_string(min));
}

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

}  // namespace pliant::cli
