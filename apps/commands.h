// The subcommands of the pliant tool, one file each (command_<name>.cpp): each registers its options
// on the CLI11 app and returns what to run when it is given. main.cpp parses and maps errors to exit
// codes: 0 success, 2 bad input (pliant::Error), 1 internal failure (including a refused step).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "pliant/io/scenes.h"

namespace pliant::cli {

constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

struct Command {
  CLI::App* subcommand = nullptr;  // true when given on the command line
  std::function<int()> execute;    // runs it; returns the exit code or throws
};

Command addRunCommand(CLI::App& app);       // pliant run [SCENE]
Command addViewCommand(CLI::App& app);      // pliant view DIR
Command addRenderCommand(CLI::App& app);    // pliant render DIR
Command addBenchCommand(CLI::App& app);     // pliant bench
Command addScenesCommand(CLI::App& app);    // pliant scenes [NAME]
Command addValidateCommand(CLI::App& app);  // pliant validate FILE
Command addInfoCommand(CLI::App& app);      // pliant info FILE
Command addSweepCommand(CLI::App& app);     // pliant sweep SWEEP --out DIR

// A scene argument is a file when it names one (or looks like one), else a built-in name; "" is
// the default built-in scene. `maxMemory` is the --max-memory option ("" = the default budget).
pliant::Scene loadScene(const std::string& argument, const std::string& maxMemory = "");
// The scene load options of a --max-memory value ("" = the default: half of the machine's memory).
pliant::SceneLoadOptions sceneLoadOptions(const std::string& maxMemory);
// Adds --max-memory to a subcommand.
void addMaxMemoryOption(CLI::App* command, std::string& maxMemory);
// Accepts a whole number from `min` to INT_MAX (the options are ints); otherwise says so in words ("expected a whole
// number of at least 1, got 0"), where CLI11's own range checks print the double limit in 300 digits.
CLI::Validator atLeast(int min);
// 16 hex digits, as state hashes are shown.
std::string hex(std::uint64_t value);

}  // namespace pliant::cli
