// Shared by the fuzz targets (fuzz/*_fuzz.cpp): a scratch folder of the process's own for the
// files the readers read, and the checks that turn a broken promise of a reader into an abort,
// which libFuzzer (or the replay test, fuzz/replay_main.cpp) reports as a crash.
//
// What counts as a finding: a sanitizer report, a crash, a hang, unbounded memory, an exception
// other than pliant::Error escaping a reader (the headers promise pliant::Error naming the file
// for every bad input), or a successful read that breaks what the header documents about its
// result (indices in range, finite coordinates, positive tets, a bit-identical checkpoint).
#pragma once

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <typeinfo>

#include "pliant/error.h"
#include "pliant/io/mesh_io.h"
#include "pliant/solver.h"

// The entry point every target defines; libFuzzer's main calls it, and so does the replay driver.
extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size);

namespace pliant::fuzz {

// A folder of this process's own, created on first use and removed at exit: under /dev/shm when
// it exists (no disk traffic at thousands of files per second), else the system's temporary folder.
// What processes that died left there (a crash ends a fuzzer without running exit handlers) is
// removed on the way: their scratch folders and Clang OpenMP's registration files.
const std::filesystem::path& scratchFolder();

// Writes `bytes` to scratchFolder() / `name` (replacing it) and returns the file's path.
std::string writeScratchFile(const std::string& name, std::string_view bytes);
// Removes scratchFolder() / `name` if it exists.
void removeScratchFile(const std::string& name);

// Prints "pliant fuzz: <what>" to stderr and aborts.
[[noreturn]] void fail(const std::string& what);

// Whether PLIANT_FUZZ_VERBOSE is set: then expectOnlyPliantErrors prints what each call gave (to
// see what the readers make of an input: `PLIANT_FUZZ_VERBOSE=1 pliant_fuzz_replay_obj FILE`).
bool verbose();

// Runs `read`. pliant::Error is the documented answer to bad input and is ignored; any other
// exception breaks the promise and fails. Returns true when `read` returned normally.
template <class Read>
bool expectOnlyPliantErrors(const char* reader, Read&& read) {
  try {
    read();
    if (verbose()) std::fprintf(stderr, "  %s: ok\n", reader);
    return true;
  } catch (const pliant::Error& e) {
    if (verbose()) std::fprintf(stderr, "  %s: pliant::Error: %s\n", reader, e.what());
    return false;
  } catch (const std::exception& e) {
    fail(std::string(reader) + " threw " + typeid(e).name() + " instead of pliant::Error: " + e.what());
  }
}

// What mesh_io.h promises of a successful read; fails naming `reader` otherwise.
void checkTriangleMesh(const io::TriangleMesh& mesh, const char* reader);
void checkTetMesh(const io::TetMesh& mesh, const char* reader);

// One Solver step of `state`, as `pliant run` takes it: construction may refuse the model or the
// settings with pliant::Error; a refused step must leave the state as it was (solver.h).
void stepOnce(const ModelPtr& model, const SolverSettings& settings, State& state, const char* what);

}  // namespace pliant::fuzz
