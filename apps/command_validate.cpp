// pliant validate FILE: check a scene file without running it.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"

namespace pliant::cli {
namespace {

int validateCommand(const std::string& file, const std::string& maxMemory) {
  const pliant::Scene scene = pliant::loadSceneFile(file, sceneLoadOptions(maxMemory));
  const pliant::Model& m = *scene.model;
  std::cout << file << ": ok (" << m.particleCount() << " particles, " << m.totalConstraintCount() << " constraints, ";
  if (m.bodyCount() + m.joints.size() > 0) std::cout << m.bodyCount() << " bodies, " << m.joints.size() << " joints, ";
  std::cout << scene.frames << " frames)\n";
  return 0;
}

}  // namespace

Command addValidateCommand(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto maxMemory = std::make_shared<std::string>();
  CLI::App* validate = app.add_subcommand("validate", "Check a scene file without running it");
  validate->add_option("file", *file, "Scene file")->required();
  addMaxMemoryOption(validate, *maxMemory);
  return {validate, [file, maxMemory] { return validateCommand(*file, *maxMemory); }};
}

}  // namespace pliant::cli
