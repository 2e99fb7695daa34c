// The pliant command-line tool.
//   pliant run [SCENE] ...   simulate a scene file or a built-in scene (the default one when omitted)
//   pliant scenes [NAME]     list built-in scenes, or print one as JSON
//   pliant validate FILE     check a scene file without running it
//   pliant info FILE         print a scene's size
//   pliant view DIR          write the HTML viewer page of a run's output folder
//   pliant render DIR        write PNG images (or --video) of frames of a run's output folder
//   pliant sweep SWEEP --out DIR  run a parameter sweep (over MPI ranks when started by mpirun)
//   pliant bench             time the benchmark scenes on 1 and 2 threads, CSV to stdout or --csv
// Exit codes: 0 success, 2 bad input (scene, mesh, arguments), 1 internal failure (including a
// refused step). Progress goes to stderr, data to files.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "commands.h"
#include "pliant/error.h"

using namespace pliant::cli;

int main(int argc, char** argv) {
  CLI::App app{
      "Pliant: position-based simulation (PBD, XPBD, small-step XPBD).\n"
      "With no subcommand, runs the default built-in scene into ./out."};
  app.set_version_flag("--version", std::string("pliant ") + PLIANT_VERSION);
  app.require_subcommand(0, 1);

  // In this order in --help; with no subcommand, `run`.
  Command run = addRunCommand(app);
  const Command others[] = {addViewCommand(app),     addRenderCommand(app), addBenchCommand(app), addScenesCommand(app),
                            addValidateCommand(app), addInfoCommand(app),   addSweepCommand(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  try {
    for (const Command& command : others)
      if (*command.subcommand) return command.execute();
    return run.execute();
  } catch (const pliant::SystemError& e) {
    std::cerr << "pliant: " << e.what() << '\n';
    return kExitInternal;
  } catch (const pliant::Error& e) {
    std::cerr << "pliant: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "pliant: internal error: " << e.what() << '\n';
    return kExitInternal;
  }
}
