// The pliant command-line tool: runs built-in scenes and writes their results.
// Exit codes: 0 success, 2 bad input, 1 internal failure (including a refused step).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pliant/pliant.h"

namespace fs = std::filesystem;

namespace {

constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

// Writes through a temporary file in the same folder and renames it into place, so a reader never
// sees a half-written file.
void writeAtomically(const fs::path& path, const std::string& contents) {
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw pliant::Error("cannot write '" + temporary.string() + "'");
    out << contents;
    out.flush();
    if (!out) throw pliant::Error("failed writing '" + temporary.string() + "'");
  }
  fs::rename(temporary, path);
}

std::string stateCsv(const pliant::State& state) {
  std::ostringstream out;
  out << std::setprecision(17);
  out << "particle,x,y,z,vx,vy,vz\n";
  for (std::size_t i = 0; i < state.position.size(); ++i) {
    const auto& x = state.position[i];
    const auto& v = state.velocity[i];
    out << i << ',' << x.x() << ',' << x.y() << ',' << x.z() << ',' << v.x() << ',' << v.y() << ','
        << v.z() << '\n';
  }
  return out.str();
}

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

struct RunOptions {
  std::string scene;
  std::string out = "out";
  int frames = -1;
  bool quiet = false;
};

int runScene(const RunOptions& options) {
  const std::string sceneName = options.scene.empty() ? pliant::builtinSceneNames().front() : options.scene;
  pliant::Scene scene = pliant::makeBuiltinScene(sceneName);
  const int frames = options.frames >= 0 ? options.frames : scene.frames;
  pliant::Solver solver(scene.model, scene.settings);
  pliant::State state = pliant::State::fromModel(scene.model);

  const auto start = std::chrono::steady_clock::now();
  std::uint64_t projections = 0;
  for (int frame = 0; frame < frames; ++frame) {
    const pliant::StepResult result = solver.step(state);
    if (!result.ok()) {
      std::cerr << "pliant: scene '" << sceneName << "': " << result.message << '\n';
      return kExitInternal;
    }
    projections += solver.lastProjectionCount();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const pliant::EnergyReport energy = pliant::computeEnergy(scene.model, state, scene.settings);
  const pliant::ResidualReport residual = pliant::computeResidual(scene.model, state, scene.settings);
  nlohmann::json summary;
  summary["scene"] = sceneName;
  summary["description"] = scene.description;
  summary["frames"] = frames;
  summary["time_s"] = state.time;
  summary["settings"] = {{"mode", scene.settings.mode == pliant::SolverMode::Xpbd ? "xpbd" : "pbd"},
                         {"time_step_s", scene.settings.timeStep},
                         {"substeps", scene.settings.substeps},
                         {"iterations", scene.settings.iterations}};
  summary["particles"] = scene.model.particleCount();
  nlohmann::json counts;
  for (int f = 0; f < pliant::kConstraintFamilyCount; ++f) {
    const auto family = static_cast<pliant::ConstraintFamily>(f);
    counts[pliant::familyName(family)] = scene.model.constraintCount(family);
  }
  summary["constraints"] = counts;
  summary["wall_time_s"] = seconds;
  summary["ms_per_frame"] = frames > 0 ? 1e3 * seconds / frames : 0.0;
  summary["ns_per_projection"] = projections > 0 ? 1e9 * seconds / static_cast<double>(projections) : 0.0;
  summary["final_energy_J"] = {{"kinetic", energy.kinetic},
                               {"gravitational", energy.gravitational},
                               {"elastic", energy.elastic},
                               {"total", energy.total()}};
  summary["final_residual"] = {{"max", residual.max}, {"rms", residual.rms}};
  summary["state_hash"] = hex(state.hash());

  const fs::path outDir(options.out);
  fs::create_directories(outDir);
  writeAtomically(outDir / "final_state.csv", stateCsv(state));
  writeAtomically(outDir / "summary.json", summary.dump(2) + "\n");
  if (!options.quiet) {
    std::cout << "scene " << sceneName << ": " << frames << " frames, " << scene.model.particleCount()
              << " particles, " << std::fixed << std::setprecision(2) << summary["ms_per_frame"].get<double>()
              << " ms/frame, state hash " << hex(state.hash()) << '\n'
              << "wrote " << (outDir / "summary.json").string() << " and "
              << (outDir / "final_state.csv").string() << '\n';
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Pliant: position-based simulation (PBD, XPBD, small-step XPBD)"};
  app.set_version_flag("--version", std::string("pliant ") + PLIANT_VERSION);
  app.require_subcommand(0, 1);

  RunOptions options;
  CLI::App* run = app.add_subcommand("run", "Simulate a built-in scene (the default scene when none is named)");
  run->add_option("scene", options.scene, "Built-in scene name (see `pliant scenes`)");
  run->add_option("--out", options.out, "Output folder")->capture_default_str();
  run->add_option("--frames", options.frames, "Number of frames (steps) to simulate")->check(CLI::NonNegativeNumber);
  run->add_flag("--quiet", options.quiet, "Print nothing on success");

  CLI::App* scenes = app.add_subcommand("scenes", "List the built-in scenes");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  try {
    if (*scenes) {
      for (const std::string& name : pliant::builtinSceneNames())
        std::cout << std::left << std::setw(10) << name << pliant::builtinSceneDescription(name) << '\n';
      return 0;
    }
    return runScene(options);  // `pliant` with no subcommand runs the default scene
  } catch (const pliant::Error& e) {
    std::cerr << "pliant: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "pliant: internal error: " << e.what() << '\n';
    return kExitInternal;
  }
}
