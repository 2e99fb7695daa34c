// pliant info FILE: print a scene's size (particles, constraints, frames).
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "pliant/constraints.h"

namespace pliant::cli {
namespace {

int printInfo(const std::string& file) {
  const pliant::Scene scene = loadScene(file);
  const pliant::Model& m = *scene.model;
  std::cout << "scene        " << scene.name << "\n"
            << "description  " << scene.description << "\n"
            << "solver       " << (scene.settings.mode == pliant::SolverMode::Xpbd ? "xpbd" : "pbd") << ", dt "
            << scene.settings.timeStep << " s, " << scene.settings.substeps << " substeps x "
            << scene.settings.iterations << " iterations\n"
            << "frames       " << scene.frames << " (" << scene.frames * scene.settings.timeStep << " s)\n"
            << "objects      " << scene.objects.size() << "\n";
  for (const pliant::SceneObject& o : scene.objects)
    std::cout << "  " << std::left << std::setw(16) << o.name << o.particleCount << " particles\n";
  std::cout << "particles    " << m.particleCount() << "\n";
  for (int f = 0; f < pliant::kConstraintFamilyCount; ++f) {
    const auto family = static_cast<pliant::ConstraintFamily>(f);
    if (m.constraintCount(family) > 0)
      std::cout << "  " << std::left << std::setw(18) << pliant::familyName(family) << m.constraintCount(family)
                << "\n";
  }
  std::cout << "constraints  " << m.totalConstraintCount() << "\n"
            << "triangles    " << scene.topology.triangles.size() << "\n"
            << "tets         " << scene.topology.tets.size() << "\n";
  if (m.bodyCount() + m.joints.size() > 0)
    std::cout << "bodies       " << m.bodyCount() << "\n"
              << "joints       " << m.joints.size() << "\n";
  std::cout << "probes       " << scene.probes.size() << "\n";
  return 0;
}

}  // namespace

Command addInfoCommand(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  CLI::App* info = app.add_subcommand("info", "Print a scene's size (particles, constraints, frames)");
  info->add_option("file", *file, "Scene file or built-in scene name")->required();
  return {info, [file] { return printInfo(*file); }};
}

}  // namespace pliant::cli
