// Scenes: a Model with its solver settings, what to draw and what to measure. Built-in scenes are
// JSON scene files embedded in the library (the same files ship under scenes/); tests, benchmarks,
// examples and the CLI all build scenes here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pliant/io/output.h"
#include "pliant/model.h"
#include "pliant/solver.h"

namespace pliant {

// A named output the scene declares; the CLI writes one CSV column group per probe each frame
// (or each substep).
struct Probe {
  enum class Kind {
    Particle,         // columns .x .y .z (m) .vx .vy .vz (m/s)
    ConstraintForce,  // column .force: lambda/h^2 (N for distance-like constraints)
    Energy,           // columns .kinetic .gravitational .elastic .total (J)
    Momentum,         // columns .px .py .pz (kg m/s) .Lx .Ly .Lz (kg m^2/s, about the origin)
    CentreOfMass,     // columns .x .y .z (m)
    Residual,         // columns .max .rms (|C + alpha~ lambda|)
    Intersections,    // column .pairs: pairs of the scene's triangles (topology) that intersect, by
                      // countIntersectingTrianglePairs (pliant/geometry.h)
    // Rigid bodies (pliant/bodies.h), of the body frame (centre of mass):
    Body,          // columns .x .y .z (m) .qw .qx .qy .qz (body frame -> world) .vx .vy .vz (m/s)
                   // .wx .wy .wz (rad/s, world axes)
    BodyMomentum,  // columns .px .py .pz (kg m/s) .Lx .Ly .Lz (kg m^2/s, about the origin) of `body`,
                   // or of every dynamic body when body is -1
    BodyEnergy,    // columns .kinetic (translation and rotation) .gravitational (-m g.x) .total (J)
    JointForce,    // columns .fx .fy .fz (N) .tx .ty .tz (N m): what joint `joint` exerts on its body B
                   // (State::jointForce, jointTorque)
  };
  std::string name;
  Kind kind = Kind::Particle;
  ParticleIndex particle = 0;  // Particle
  ConstraintRef constraint;    // ConstraintForce
  int object = -1;             // Energy, Momentum, CentreOfMass: index in Model::objects, -1 = all
  int body = -1;               // Body, BodyMomentum, BodyEnergy: index in Model::bodies, -1 = all
  std::uint32_t joint = 0;     // JointForce: index in Model::joints
};

// Where each object of a scene landed in the model's arrays.
struct SceneObject {
  std::string name;
  ParticleIndex firstParticle = 0;
  std::uint32_t particleCount = 0;
  // Per family, the object's constraints are [constraintBegin[f], constraintEnd[f]).
  std::array<std::uint32_t, kConstraintFamilyCount> constraintBegin{};
  std::array<std::uint32_t, kConstraintFamilyCount> constraintEnd{};
};

// The most frames a run may have (frames are counted in an int): a scene's `frames` or `duration`,
// and the frame counter of a checkpoint to resume from, are refused past it.
constexpr int kMaxSceneFrames = 100000000;

struct Scene {
  std::string name;
  std::string description;
  ModelPtr model;  // built, shared
  SolverSettings settings;
  int frames = 300;       // steps of settings.timeStep to run by default
  io::Topology topology;  // what to draw
  std::vector<SceneObject> objects;
  std::vector<Probe> probes;
  bool probeEverySubstep = false;
  // The files the scene was read from, as the loader opened them: the scene file (when loaded by
  // loadSceneFile), then the meshes it names. A run refuses to write over any of them.
  std::vector<std::string> inputFiles;
};

// Names of the built-in scenes; the first is the default that `pliant run` shows.
std::vector<std::string> builtinSceneNames();
// One-line description of a built-in scene.
std::string builtinSceneDescription(const std::string& name);
// The embedded JSON text of a built-in scene (identical to scenes/<name>.json).
std::string builtinSceneText(const std::string& name);
// The text of a mesh file a built-in scene names, by its path relative to scenes/ (e.g.
// "meshes/bunny.obj", embedded with the scenes), or empty when there is none of that name.
std::string_view builtinMeshText(const std::string& path);
// Builds a built-in scene by name; throws pliant::Error for an unknown name (listing the known ones).
Scene makeBuiltinScene(const std::string& name);

// How a scene file is loaded. Every field of the file is checked first; then the memory the scene
// will need (its model, state, solver scratch at the contacts' bounds and the run's output
// buffers) is estimated from its fields and checked against maxMemoryBytes; only then is it built.
struct SceneLoadOptions {
  std::uint64_t maxMemoryBytes = 0;  // bytes; 0: defaultMemoryBudget()
};
// Half of the machine's physical memory (bytes).
std::uint64_t defaultMemoryBudget();
// A memory size as given on a command line: a number of bytes with an optional unit K, M, G or T
// (powers of 1024; "B" or "iB" may follow), e.g. "512M", "4G", "1.5G". Throws pliant::Error.
std::uint64_t parseMemorySize(const std::string& text);

// Loads a scene file (JSON, see docs/scene-format.md). Mesh paths are relative to the file's folder.
// Throws pliant::Error naming the file, the JSON path (e.g. /objects/0/stretch/compliance) or the
// line, and what was expected; a scene estimated to need more memory than the budget is refused
// naming the field that asks most (e.g. /objects/0/grid/nodes) and the estimate.
Scene loadSceneFile(const std::string& path, const SceneLoadOptions& options = {});
// Parses scene JSON text; `source` names it in errors, `baseDirectory` resolves mesh paths.
Scene parseScene(const std::string& text, const std::string& source, const std::string& baseDirectory,
                 const SceneLoadOptions& options = {});

}  // namespace pliant
