// Fuzz target: parseScene (the scene JSON reader, which also builds the Model), then one Solver
// step of the parsed scene when it is small. The input is the scene text.
//
// Mesh paths resolve inside the scratch folder, which holds a copy of tests/data/meshes (as
// `meshes/`) and tests/data/scenes/meshes (as `scenes/meshes/`) with the scene's folder at
// `scenes/`, so the seeds' "meshes/square.obj" and "../meshes/sdf_cube.obj" load; an input naming
// any other file (an absolute path, or one that climbs out) is skipped, so that the fuzzer never
// reads the machine's files (/dev/zero would "hang" the reader by design).
//
// The scene format allows models far larger than one fuzz iteration can afford (a 4096 x 4096
// cloth, 10^7 rope particles, a 2^24-node signed distance grid): legitimate requests, not bugs.
// Inputs whose generators ask for more than kMaxParticles particles or a grid above kMaxGridNodes
// nodes are skipped before parsing, by a look at the JSON of our own; a parsed scene is stepped
// once only when it has at most kMaxStepParticles particles and substeps x iterations is at most
// kMaxStepPasses. Everything below those bounds is fuzzed in full.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "pliant/io/scenes.h"
#include "pliant/parallel.h"

namespace {

using Json = nlohmann::json;

constexpr double kMaxParticles = 4096;
constexpr double kMaxGridNodes = 40.0 * 40.0 * 40.0;
constexpr std::size_t kMaxStepParticles = 256;
constexpr long long kMaxStepPasses = 64;
// Longest side of the bounding box of the OBJ files under tests/data (m), for the grid estimate.
constexpr double kLongestFixtureSide = 2.0;

struct Fixtures {
  std::filesystem::path root;  // the scratch folder
  std::filesystem::path base;  // the scene's folder
};

const Fixtures& fixtures() {
  static const Fixtures f = [] {
    namespace fs = std::filesystem;
    Fixtures out{pliant::fuzz::scratchFolder(), pliant::fuzz::scratchFolder() / "scenes"};
    const fs::path data = PLIANT_FUZZ_DATA_DIR;
    std::error_code ec;
    fs::create_directories(out.base, ec);
    fs::copy(data / "meshes", out.root / "meshes", fs::copy_options::recursive | fs::copy_options::overwrite_existing,
             ec);
    if (ec) pliant::fuzz::fail("cannot copy " + (data / "meshes").string() + ": " + ec.message());
    fs::copy(data / "scenes" / "meshes", out.base / "meshes",
             fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    if (ec) pliant::fuzz::fail("cannot copy " + (data / "scenes" / "meshes").string() + ": " + ec.message());
    return out;
  }();
  return f;
}

const Json* member(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

double numberOr(const Json& j, const char* key, double fallback) {
  const Json* v = member(j, key);
  return v != nullptr && v->is_number() ? v->get<double>() : fallback;
}

// Product of (element + add) over an array of numbers; 0 when it is not one.
double product(const Json* array, double add) {
  if (array == nullptr || !array->is_array()) return 0.0;
  double p = 1.0;
  for (const Json& e : *array) p *= e.is_number() ? e.get<double>() + add : 0.0;
  return p;
}

std::string typeOf(const Json& j) {
  const Json* t = member(j, "type");
  return t != nullptr && t->is_string() ? t->get<std::string>() : std::string();
}

// Particles the scene's generators would make (an upper bound; meshes come from the small fixtures).
double estimatedParticles(const Json& root) {
  const Json* objects = member(root, "objects");
  if (objects == nullptr || !objects->is_array()) return 0.0;
  double total = 0.0;
  for (const Json& o : *objects) {
    const std::string type = typeOf(o);
    if (type == "cloth") {
      const Json* grid = member(o, "grid");
      if (grid != nullptr) total += product(member(*grid, "nodes"), 0.0);
    } else if (type == "rope") {
      total += numberOr(o, "particles", 0.0);
    } else if (type == "softbody") {
      const Json* box = member(o, "box");
      if (box != nullptr) total += product(member(*box, "cells"), 1.0);
    } else if (type == "balloon") {
      total += numberOr(o, "rings", 12.0) * numberOr(o, "segments", 24.0) + 2.0;
    } else if (type == "particles") {
      const Json* positions = member(o, "positions");
      if (positions != nullptr && positions->is_array()) total += static_cast<double>(positions->size());
    }
  }
  return total;
}

// Nodes of the largest signed distance grid a mesh collider would build (see SignedDistanceGrid::build).
double estimatedGridNodes(const Json& root) {
  const Json* colliders = member(root, "colliders");
  if (colliders == nullptr || !colliders->is_array()) return 0.0;
  double largest = 0.0;
  for (const Json& c : *colliders) {
    if (typeOf(c) != "mesh") continue;
    double scale = 1.0;
    if (const Json* s = member(c, "scale"); s != nullptr) {
      if (s->is_number()) scale = s->get<double>();
      else if (s->is_array())
        for (const Json& e : *s) scale = std::max(scale, e.is_number() ? e.get<double>() : 0.0);
    }
    const double side = kLongestFixtureSide * scale;
    double padding = numberOr(c, "padding", -1.0);
    if (padding < 0.0) padding = 0.1 * side;
    double cells = 0.0;
    if (member(c, "cell_size") != nullptr) {
      const double h = numberOr(c, "cell_size", 0.0);
      cells = (side + 2.0 * std::max(padding, 2.0 * h)) / h + 2.0;
    } else {
      cells = numberOr(c, "max_cells", 64.0) + 5.0;
    }
    largest = std::max(largest,
                       cells * cells * cells);  // NaN (h = 0) compares false and is let through: the reader refuses it
  }
  return largest;
}

// Whether every string of the document, taken as a path from the scene's folder, stays inside the
// scratch folder. Iterative: the document may nest as deep as the input is long.
bool pathsStayInside(const Json& root) {
  const Fixtures& f = fixtures();
  std::vector<const Json*> stack{&root};
  while (!stack.empty()) {
    const Json* j = stack.back();
    stack.pop_back();
    if (j->is_string()) {
      const std::filesystem::path p(j->get_ref<const std::string&>());
      if (p.is_absolute()) return false;
      const std::filesystem::path resolved = (f.base / p).lexically_normal();
      if (std::mismatch(f.root.begin(), f.root.end(), resolved.begin(), resolved.end()).first != f.root.end())
        return false;
    } else if (j->is_structured()) {
      for (const Json& child : *j) stack.push_back(&child);
    }
  }
  return true;
}

// Whether the input is within the bounds above; a document that does not parse is, the reader
// rejects it at once.
bool affordable(const std::string& text) {
  Json root;
  try {
    root = Json::parse(text, nullptr, false);
  } catch (const std::exception&) {
    return true;
  }
  if (root.is_discarded()) return true;
  return pathsStayInside(root) && !(estimatedParticles(root) > kMaxParticles) &&
         !(estimatedGridNodes(root) > kMaxGridNodes);
}

// What scenes.h promises of a parsed scene: objects, topology and probes refer to the model.
void checkScene(const pliant::Scene& scene) {
  using pliant::fuzz::fail;
  const pliant::Model& model = *scene.model;
  const std::size_t n = model.particleCount();
  for (const pliant::SceneObject& o : scene.objects) {
    if (std::size_t{o.firstParticle} + o.particleCount > n)
      fail("object '" + o.name + "' reaches past the model's particles");
    for (int f = 0; f < pliant::kConstraintFamilyCount; ++f)
      if (o.constraintBegin[f] > o.constraintEnd[f] ||
          o.constraintEnd[f] > model.constraintCount(static_cast<pliant::ConstraintFamily>(f)))
        fail("object '" + o.name + "' has a constraint range outside the model");
  }
  auto inRange = [&](const auto& cells, const char* what) {
    for (const auto& cell : cells)
      for (pliant::ParticleIndex p : cell)
        if (p >= n)
          fail(std::string("topology ") + what + " uses particle " + std::to_string(p) + " of " + std::to_string(n));
  };
  inRange(scene.topology.triangles, "triangle");
  inRange(scene.topology.lines, "line");
  inRange(scene.topology.tets, "tet");
  for (const pliant::Probe& probe : scene.probes) {
    if (probe.kind == pliant::Probe::Kind::Particle && probe.particle >= n)
      fail("probe '" + probe.name + "' names a missing particle");
    if (probe.kind == pliant::Probe::Kind::ConstraintForce &&
        probe.constraint.index >= model.constraintCount(probe.constraint.family))
      fail("probe '" + probe.name + "' names a missing constraint");
    if (probe.object < -1 || probe.object >= static_cast<int>(scene.objects.size()))
      fail("probe '" + probe.name + "' names a missing object");
  }
  if (scene.frames < 0) fail("negative frame count " + std::to_string(scene.frames));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  using namespace pliant;
  static const bool once = [] {
    setThreadCount(1);  // one core per fuzzer: -jobs/-workers scale out instead
    return true;
  }();
  (void)once;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!affordable(text)) return 0;
  Scene scene;
  if (!fuzz::expectOnlyPliantErrors("parseScene",
                                    [&] { scene = parseScene(text, "fuzz.json", fixtures().base.string()); }))
    return 0;
  checkScene(scene);
  const long long passes = static_cast<long long>(scene.settings.substeps) * scene.settings.iterations;
  if (scene.model->particleCount() <= kMaxStepParticles && passes <= kMaxStepPasses) {
    State state = State::fromModel(*scene.model);
    fuzz::stepOnce(scene.model, scene.settings, state, "scene");
  }
  return 0;
}
