// Built-in scenes: the one scene library that tests, benchmarks, examples and the CLI share.
#pragma once

#include <string>
#include <vector>

#include "pliant/model.h"
#include "pliant/solver.h"

namespace pliant {

struct Scene {
  std::string name;
  std::string description;
  Model model;
  SolverSettings settings;
  int frames = 300;  // steps of settings.timeStep to run by default
  // Triangles to draw (global particle indices): cloth, surfaces of soft bodies.
  std::vector<std::array<ParticleIndex, 3>> surface;
  // Line segments to draw (ropes).
  std::vector<std::array<ParticleIndex, 2>> lines;
};

// Names of the built-in scenes; the first is the default.
std::vector<std::string> builtinSceneNames();
// One-line description of a built-in scene.
std::string builtinSceneDescription(const std::string& name);
// Builds a built-in scene by name; throws pliant::Error for an unknown name (listing the known ones).
Scene makeBuiltinScene(const std::string& name);

}  // namespace pliant
