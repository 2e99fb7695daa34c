// Fuzz target: io::readCheckpoint against a small fixed model, and writeCheckpoint's round trip;
// the input's three modes are described in checkpoint_fuzz.h.
#include "checkpoint_fuzz.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

#include "fuzz_support.h"
#include "pliant/io/checkpoint.h"
#include "pliant/parallel.h"

namespace pliant::fuzz {
namespace {

constexpr const char* kSceneText = R"({
  "solver": {"substeps": 2, "iterations": 2},
  "objects": [
    {"type": "cloth", "name": "sheet", "grid": {"nodes": [3, 3], "size": [0.2, 0.2], "origin": [0, 1, 0]},
     "mass": 0.1, "stretch": {"compliance": 1e-6}, "bending": {"model": "dihedral", "compliance": 0.1},
     "pins": [{"index": 0}], "tethers": {"slack": 1.05}, "particle_radius": 0.01, "self_collision": true},
    {"type": "rope", "name": "rope", "start": [1, 1, 0], "end": [1.3, 1, 0], "particles": 4, "mass": 0.04,
     "particle_radius": 0.01},
    {"type": "softbody", "name": "block", "box": {"cells": [1, 1, 1], "size": [0.1, 0.1, 0.1], "origin": [2, 0.5, 0]},
     "density": 100, "volume": {"compliance": 1e-6}},
    {"type": "particles", "name": "beads", "positions": [[0, 0.2, 0], [0.03, 0.2, 0]], "mass": 0.01,
     "particle_radius": 0.02}
  ],
  "attachments": [
    {"object": "rope", "select": {"index": 0},
     "path": {"keyframes": [{"time": 0, "position": [1, 1, 0]}, {"time": 1, "position": [1, 1.5, 0]}]}},
    {"object": "block", "select": {"index": 0}, "compliance": 1e-4}
  ],
  "colliders": [
    {"type": "plane", "normal": [0, 1, 0], "friction": 0.3},
    {"type": "sphere", "centre": [0.1, 0.6, 0.1], "radius": 0.2, "angular_velocity": [0, 1, 0]}
  ],
  "particle_contact": {"enabled": true, "restitution": 0.2},
  "surface_contact": {"thickness": 0.005}
})";

// FNV-1a 64 (Fowler, Noll, Vo), the checksum output.h's checkpoint format ends with.
std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::string littleEndian(std::uint64_t value) {
  std::string out(8, '\0');
  for (int k = 0; k < 8; ++k) out[static_cast<std::size_t>(k)] = static_cast<char>(value >> (8 * k));
  return out;
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  if (!in) fail("cannot read back " + path);
  return out.str();
}

// The State's fields in checkpoint_fuzz.h's order, as 8-byte words.
template <class Visit>
void forEachWord(State& s, Visit&& visit) {
  visit(&s.time);
  visit(&s.lastSubstep);
  visit(&s.stepCount);
  for (std::vector<Vec3>* array : {&s.position, &s.velocity, &s.previousPosition, &s.externalForce})
    for (Vec3& v : *array)
      for (int k = 0; k < 3; ++k) visit(&v[k]);
  for (double& l : s.lambda) visit(&l);
  for (Vec3& v : s.attachmentTarget)
    for (int k = 0; k < 3; ++k) visit(&v[k]);
}

std::string stateWords(State s) {
  std::string out;
  forEachWord(s, [&](auto* word) { out.append(reinterpret_cast<const char*>(word), 8); });
  return out;
}

State stateFromWords(std::string_view words) {
  State s = State::fromModel(*checkpointScene().model);
  std::size_t at = 0;
  forEachWord(s, [&](auto* word) {
    if (at + 8 > words.size()) return;
    std::memcpy(word, words.data() + at, 8);
    at += 8;
  });
  return s;
}

bool sameBits(State a, State b) { return stateWords(std::move(a)) == stateWords(std::move(b)); }

// Reads `path`; on success checks the state against the model and, when `file` is the file's
// content, that writing the state again gives the same bytes; then steps it.
void readAndStep(const std::string& path, const std::string* file, const State* expected) {
  const Scene& scene = checkpointScene();
  State state;
  if (!expectOnlyPliantErrors("readCheckpoint", [&] { state = io::readCheckpoint(path, *scene.model); })) {
    if (expected != nullptr) fail("readCheckpoint refused the checkpoint writeCheckpoint just wrote");
    return;
  }
  const Model& model = *scene.model;
  const std::size_t n = model.particleCount();
  if (state.position.size() != n || state.velocity.size() != n || state.previousPosition.size() != n ||
      state.externalForce.size() != n || state.lambda.size() != model.totalConstraintCount() ||
      state.attachmentTarget.size() != model.attachments.size())
    fail("readCheckpoint returned a state whose sizes do not match the model");
  if (expected != nullptr && !sameBits(state, *expected)) fail("a checkpoint read back differs from the state written");
  if (file != nullptr) {
    const std::string again = (scratchFolder() / "again.ckpt").string();
    expectOnlyPliantErrors("writeCheckpoint", [&] { io::writeCheckpoint(again, state); });
    if (readBytes(again) != *file) fail("writing a checkpoint that was read gives different bytes");
  }
  stepOnce(scene.model, scene.settings, state, "checkpoint");
}

}  // namespace

const Scene& checkpointScene() {
  static const Scene scene = parseScene(kSceneText, "checkpoint_fuzz.cpp", "");
  return scene;
}

std::vector<std::pair<std::string, std::string>> checkpointSeeds() {
  const Scene& scene = checkpointScene();
  State rest = State::fromModel(*scene.model);
  State moved = rest;
  Solver solver(scene.model, scene.settings);
  for (int i = 0; i < 3; ++i)
    if (!solver.step(moved).ok()) fail("the checkpoint model does not step");
  std::vector<std::pair<std::string, std::string>> seeds;
  for (const auto& [name, state] : {std::pair<const char*, const State*>{"rest", &rest}, {"moved", &moved}}) {
    const std::string path = (scratchFolder() / "seed.ckpt").string();
    io::writeCheckpoint(path, *state);
    const std::string file = readBytes(path);
    seeds.emplace_back(std::string("seed-raw-") + name, std::string(1, '\0') + file);
    seeds.emplace_back(std::string("seed-sealed-") + name, std::string(1, '\1') + file.substr(0, file.size() - 8));
    seeds.emplace_back(std::string("seed-state-") + name, std::string(1, '\2') + stateWords(*state));
  }
  return seeds;
}

}  // namespace pliant::fuzz

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace pliant;
  static const bool once = [] {
    setThreadCount(1);
    return true;
  }();
  (void)once;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      const std::string file(rest);
      fuzz::readAndStep(fuzz::writeScratchFile("input.ckpt", file), &file, nullptr);
      break;
    }
    case 1: {
      const std::string file = std::string(rest) + fuzz::littleEndian(fuzz::fnv1a(rest));
      fuzz::readAndStep(fuzz::writeScratchFile("input.ckpt", file), &file, nullptr);
      break;
    }
    default: {
      const State state = fuzz::stateFromWords(rest);
      const std::string path = (fuzz::scratchFolder() / "input.ckpt").string();
      fuzz::removeScratchFile("input.ckpt");
      // The writer refuses a state the reader would refuse (a NaN, a frame counter past the
      // limit); one it writes must read back bit for bit.
      if (fuzz::expectOnlyPliantErrors("writeCheckpoint", [&] { io::writeCheckpoint(path, state); }))
        fuzz::readAndStep(path, nullptr, &state);
      break;
    }
  }
  return 0;
}
