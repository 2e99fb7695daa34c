// Shared by the end-to-end tests of the `pliant` executable: each test runs the binary in a fresh
// folder under the system temp folder (so relative paths land there), with stdout and stderr
// captured, and keeps the folder for inspection when it fails.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace pliant::cli_testing {

namespace fs = std::filesystem;

inline std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void writeFile(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

// `text` as one single-quoted word of a POSIX shell command.
inline std::string shellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct RunResult {
  int exitCode = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

class CliFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("pliant_cli_tests." + std::to_string(::getpid()));
    dir_ = root_ / (std::string(info->test_suite_name()) + "." + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "outputs kept in " << dir_ << '\n';
      return;
    }
    fs::remove_all(dir_);
    std::error_code ec;
    fs::remove(root_, ec);  // only succeeds once empty
  }

  // Runs `pliant ARGS` in the test's folder; with `timeoutSeconds` > 0 it is killed after that long
  // (exit code 124: for inputs that could hang it, where a hang is the bug).
  RunResult run(const std::string& args, int timeoutSeconds = 0) {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const std::string limit = timeoutSeconds > 0 ? "timeout -k 5 " + std::to_string(timeoutSeconds) + " " : "";
    const std::string command = "cd " + shellQuote(dir_.string()) + " && " + limit + shellQuote(PLIANT_CLI_PATH) + " " +
                                args + " >" + shellQuote(out.string()) + " 2>" + shellQuote(err.string()) +
                                " </dev/null";
    const int status = std::system(command.c_str());
    RunResult result;
    result.exitCode = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = readFile(out);
    result.err = readFile(err);
    fs::remove(out);
    fs::remove(err);
    return result;
  }

  fs::path path(const std::string& relative) const { return dir_ / relative; }

  fs::path root_;
  fs::path dir_;
};

}  // namespace pliant::cli_testing
