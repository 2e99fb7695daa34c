// Benchmark scenes (the scaling curves are generated here; scenes A and B are built-in JSON scenes)
// and the measurement every benchmark front end shares.
#include "pliant/bench/benchmark.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/parallel.h"

namespace pliant {

namespace {

struct CurveScene {
  const char* name;
  enum class Kind { Cloth, TetBeam, NeoHookeanBeam } kind;
  int cells[3];  // cloth: nodes per side in [0]; beam: cells along x, y, z (6 tets per cell)
  int frames;    // default frames
};

// Default frames shrink with size so that each curve scene costs a few seconds at most.
constexpr CurveScene kCurveScenes[] = {
    {"cloth-grid-64", CurveScene::Kind::Cloth, {64, 0, 0}, 120},
    {"cloth-grid-128", CurveScene::Kind::Cloth, {128, 0, 0}, 60},
    {"cloth-grid-256", CurveScene::Kind::Cloth, {256, 0, 0}, 30},
    {"cloth-grid-512", CurveScene::Kind::Cloth, {512, 0, 0}, 8},
    {"tet-beam-1k", CurveScene::Kind::TetBeam, {12, 4, 4}, 120},    // 1152 tets
    {"tet-beam-10k", CurveScene::Kind::TetBeam, {26, 8, 8}, 30},    // 9984 tets
    {"tet-beam-100k", CurveScene::Kind::TetBeam, {64, 16, 16}, 8},  // 98304 tets
    // The same mesh of neo-Hookean tets (issue 18), beside today's volume + edges beam.
    {"neo-beam-100k", CurveScene::Kind::NeoHookeanBeam, {64, 16, 16}, 8},
};

const char* const kBuiltinBenchmarkScenes[] = {"cloth-100-2m", "cloth-100-10m-bending"};

// Contact workloads over many frames: built-in contact scenes with a finer cloth. Timing frames
// rather than one step (as the Google Benchmark contact fixtures do) averages over the steps that
// rerun the surface broad phase and those that do not.
struct ContactScene {
  const char* name;
  const char* builtin;  // the built-in scene it refines
  int nodes;            // cloth nodes per side
  int frames;           // default frames
  // > 0: self-collision switched on with this surface thickness (m), particle-particle contact
  // off; 0: the built-in scene's contacts as they are.
  double selfCollisionThickness = 0.0;
};
// The drapes: cloth-sphere's 1.6 m cloth with self-collision instead of particle contact, 3 mm
// thick (below half the 6.3 mm edge of the finest), the same thickness at every size so that only
// the resolution changes: it lands on the sphere at about frame 12, its sides reach the ground at
// about 30 and fold there. Large: the 256 one steps 65,536 particles.
constexpr ContactScene kContactScenes[] = {
    {"contact-fold-64", "cloth-fold", 64, 120},     // stands, collapses and folds onto itself
    {"contact-sphere-80", "cloth-sphere", 80, 90},  // drapes over a sphere onto the ground
    {"contact-drape-64", "cloth-sphere", 64, 60, 0.003},
    {"contact-drape-128", "cloth-sphere", 128, 60, 0.003},
    {"contact-drape-256", "cloth-sphere", 256, 60, 0.003},
};

const ContactScene* findContact(const std::string& name) {
  for (const ContactScene& c : kContactScenes)
    if (name == c.name) return &c;
  return nullptr;
}

Scene contactCurve(const ContactScene& curve) {
  nlohmann::json scene = nlohmann::json::parse(builtinSceneText(curve.builtin));
  scene["name"] = curve.name;
  scene["description"] = std::string(curve.builtin) + " with a " + std::to_string(curve.nodes) + "x" +
                         std::to_string(curve.nodes) + "-node cloth (contact benchmark)";
  scene["frames"] = curve.frames;
  scene["objects"][0]["grid"]["nodes"] = {curve.nodes, curve.nodes};
  if (curve.selfCollisionThickness > 0.0) {
    scene["description"] = std::string(curve.builtin) + " with a " + std::to_string(curve.nodes) + "x" +
                           std::to_string(curve.nodes) + "-node self-colliding cloth (contact benchmark)";
    scene["objects"][0]["self_collision"] = true;
    scene["objects"][0]["particle_radius"] = curve.selfCollisionThickness;
    scene["surface_contact"] = {{"thickness", curve.selfCollisionThickness}, {"friction", 0.3}};
    scene["particle_contact"] = {{"enabled", false}};
    scene["probes"] = nlohmann::json::array({{{"name", "intersections"}, {"type", "intersections"}}});
  }
  return parseScene(scene.dump(), curve.name, ".");
}

const CurveScene* findCurve(const std::string& name) {
  for (const CurveScene& c : kCurveScenes)
    if (name == c.name) return &c;
  return nullptr;
}

// A 2 m square cloth of n x n nodes and 1 kg pinned at the two corners of one edge, with the
// workload of the default built-in cloth: stiff stretch, isometric bending, tethers to the pins,
// small steps with 10 substeps.
Scene clothCurve(const CurveScene& curve) {
  Scene scene;
  scene.name = curve.name;
  const int n = curve.cells[0];
  scene.description = std::to_string(n) + "x" + std::to_string(n) +
                      "-node 2 m cloth pinned at two corners, isometric bending and tethers (scaling curve)";
  ModelBuilder builder;
  ClothGridDef def;
  def.nodesX = def.nodesY = n;
  def.sizeX = def.sizeY = 2.0;
  def.origin = Vec3(-1.0, 2.0, -1.0);
  def.totalMass = 1.0;
  def.stretch.compliance = 1e-8;
  def.bending = BendingModel::Isometric;
  def.bendingParams.compliance = 0.2;
  const GeneratedObject cloth = addClothGrid(builder, def);
  const ParticleIndex pins[2] = {cloth.firstParticle, cloth.firstParticle + static_cast<ParticleIndex>(n - 1)};
  for (ParticleIndex p : pins) builder.fixParticle(p);
  addTethers(builder, {pins[0], pins[1]}, cloth.firstParticle, cloth.particleCount, ConstraintParameters{});
  scene.model = builder.build();
  scene.settings = SolverSettings::smallSteps(10);
  scene.frames = curve.frames;
  scene.topology.triangles = cloth.triangles;
  return scene;
}

// A cantilever beam of cells[0] x cells[1] x cells[2] cells (6 tets each), 2 m x 0.5 m x 0.5 m,
// clamped at x = 0, with stiff volume and edge constraints and 10 substeps; or, for a neo-Hookean
// beam, E = 100 kPa and nu = 0.3 (stiff enough to hold, soft enough for 10 substeps to resolve
// the fastest wave of its 3 cm cells).
Scene tetBeamCurve(const CurveScene& curve) {
  Scene scene;
  scene.name = curve.name;
  ModelBuilder builder;
  TetBoxDef def;
  def.cellsX = curve.cells[0];
  def.cellsY = curve.cells[1];
  def.cellsZ = curve.cells[2];
  def.size = Vec3(2.0, 0.5, 0.5);
  def.origin = Vec3(0.0, 1.0, -0.25);
  def.density = 1000.0;
  def.volume.compliance = 1e-9;
  def.edges.compliance = 1e-8;
  const bool neoHookean = curve.kind == CurveScene::Kind::NeoHookeanBeam;
  if (neoHookean) {
    NeoHookeanMaterial material;
    material.youngsModulus = 1.0e5;
    material.poissonRatio = 0.3;
    def.neoHookean = material;
  }
  const GeneratedObject beam = addTetBox(builder, def);
  for (std::uint32_t k = 0; k < beam.particleCount; k += static_cast<std::uint32_t>(def.cellsX + 1))
    builder.fixParticle(beam.firstParticle + k);
  scene.model = builder.build();
  scene.description = std::to_string(beam.tets.size()) +
                      (neoHookean ? "-tet neo-Hookean cantilever beam (E 100 kPa, nu 0.3)" : "-tet cantilever beam") +
                      ", 2 m, clamped at one end (scaling curve)";
  scene.settings = SolverSettings::smallSteps(10);
  scene.frames = curve.frames;
  scene.topology.triangles = beam.triangles;
  scene.topology.tets = beam.tets;
  return scene;
}

}  // namespace

std::vector<std::string> benchmarkSceneNames() {
  std::vector<std::string> names(std::begin(kBuiltinBenchmarkScenes), std::end(kBuiltinBenchmarkScenes));
  for (const CurveScene& c : kCurveScenes) names.emplace_back(c.name);
  for (const ContactScene& c : kContactScenes) names.emplace_back(c.name);
  return names;
}

Scene makeBenchmarkScene(const std::string& name) {
  if (const CurveScene* curve = findCurve(name))
    return curve->kind == CurveScene::Kind::Cloth ? clothCurve(*curve) : tetBeamCurve(*curve);
  if (const ContactScene* contact = findContact(name)) return contactCurve(*contact);
  const std::vector<std::string> builtins = builtinSceneNames();
  if (std::find(builtins.begin(), builtins.end(), name) == builtins.end()) {
    std::string known;
    for (const std::string& n : benchmarkSceneNames()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown benchmark scene '" + name + "' (benchmark scenes: " + known +
                "; any built-in scene of `pliant scenes` also runs)");
  }
  return makeBuiltinScene(name);
}

StrainStatistics strainStatistics(std::vector<double>& strains) {
  StrainStatistics s;
  if (strains.empty()) return s;
  double sum = 0.0;
  for (double e : strains) sum += e;
  s.mean = sum / static_cast<double>(strains.size());
  // Nearest rank: the smallest value with at least 99% of the edges at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(strains.size())));
  const std::size_t index = std::max<std::size_t>(rank, 1) - 1;
  std::nth_element(strains.begin(), strains.begin() + static_cast<std::ptrdiff_t>(index), strains.end());
  s.p99 = strains[index];
  return s;
}

StrainStatistics edgeStrain(const Model& model, const std::vector<Vec3>& positions) {
  std::vector<double> strains;
  strains.reserve(model.distances.size());
  for (const DistanceConstraint& d : model.distances) {
    if (!(d.restLength > 0.0)) continue;
    const double length = (positions[d.particles[0]] - positions[d.particles[1]]).norm();
    strains.push_back(std::abs(length / d.restLength - 1.0));
  }
  return strainStatistics(strains);
}

BenchmarkResult runBenchmark(const Scene& scene, int threads, int frames, bool stages) {
  if (threads < 1) throw Error("benchmark: threads must be >= 1, got " + std::to_string(threads));
  if (frames < 1) throw Error("benchmark: frames must be >= 1, got " + std::to_string(frames));
  // Restores the caller's thread count however this returns.
  struct ThreadCountScope {
    int saved = threadCount();
    ~ThreadCountScope() { setThreadCount(saved); }
  } scope;
  setThreadCount(threads);
  BenchmarkResult result;
  result.scene = scene.name;
  result.threads = threads;
  result.frames = frames;
  Solver solver(scene.model, scene.settings);
  solver.setStageTiming(stages);
  State state = State::fromModel(*scene.model);
  double seconds = 0.0;
  for (int frame = 0; frame < frames; ++frame) {
    const auto begin = std::chrono::steady_clock::now();
    const StepResult r = solver.step(state);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (!r.ok()) throw Error("benchmark " + scene.name + ": " + r.message);
  }
  result.msPerFrame = 1e3 * seconds / frames;
  result.stagesTimed = stages;
  result.stages = solver.stageTimes();
  result.strain = edgeStrain(*scene.model, state.position);
  result.stateHash = state.hash();
  return result;
}

std::string benchmarkCsvHeader(bool stages) {
  std::string header = "scene,threads,frames,ms_per_frame,mean_strain,p99_strain,state_hash";
  if (stages) {
    for (const StageTimeField& field : stageTimeFields()) header += std::string(",") + field.name + "_ms";
    header += ",other_ms";
  }
  return header + "\n";
}

std::string benchmarkCsvRow(const BenchmarkResult& r, bool stages) {
  char line[512];
  std::snprintf(line, sizeof line, "%s,%d,%d,%.4f,%.6g,%.6g,%016llx", r.scene.c_str(), r.threads, r.frames,
                r.msPerFrame, r.strain.mean, r.strain.p99, static_cast<unsigned long long>(r.stateHash));
  std::string row = line;
  if (!stages) return row + "\n";
  if (!r.stagesTimed) return row + std::string(stageTimeFields().size() + 1, ',') + "\n";
  const double msPerFrame = r.frames > 0 ? 1e3 / r.frames : 0.0;  // s summed over the frames -> ms per frame
  auto add = [&](double ms) {
    std::snprintf(line, sizeof line, ",%.4f", ms);
    row += line;
  };
  for (const StageTimeField& field : stageTimeFields()) add(msPerFrame * (r.stages.*field.seconds));
  add(r.msPerFrame - msPerFrame * r.stages.total());  // other_ms: the rest of the step
  return row + "\n";
}

}  // namespace pliant
