// pliant scenes [NAME]: list the built-in scenes, or print one as JSON.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "pliant/error.h"

namespace pliant::cli {
namespace {

int scenesCommand(const std::string& sceneToPrint) {
  if (!sceneToPrint.empty()) {
    const std::string text = pliant::builtinSceneText(sceneToPrint);
    if (text.empty()) throw pliant::Error("unknown built-in scene '" + sceneToPrint + "'");
    std::cout << text;
    return 0;
  }
  const std::vector<std::string> names = pliant::builtinSceneNames();
  std::size_t width = 0;
  for (const std::string& name : names) width = std::max(width, name.size());
  for (const std::string& name : names)
    std::cout << std::left << std::setw(static_cast<int>(width + 2)) << name << pliant::builtinSceneDescription(name)
              << '\n';
  return 0;
}

}  // namespace

Command addScenesCommand(CLI::App& app) {
  auto sceneToPrint = std::make_shared<std::string>();
  CLI::App* scenes = app.add_subcommand("scenes", "List the built-in scenes, or print one as JSON");
  scenes->add_option("name", *sceneToPrint, "Print this built-in scene's JSON");
  return {scenes, [sceneToPrint] { return scenesCommand(*sceneToPrint); }};
}

}  // namespace pliant::cli
