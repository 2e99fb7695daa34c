// Cost of the constraint kernels and of a whole step, single thread, double precision.
//
//   project/<family>/<variant>   one pass over a whole family as Solver::advance makes it on one
//                                thread (batch by batch, Model::solveBatches: the SIMD kernel on
//                                independent batches), reported as ns_per_projection, timed by this
//                                thread's CPU clock. Variants: xpbd (compliant, no damping),
//                                xpbd_inorder (the same with the scalar kernel in index order, as
//                                before the plan existed), xpbd_damped (XPBD damping beta > 0),
//                                pbd (k = 1).
//   step/<scene>/threads:N       Solver::step on the 256x256 cloth (ms per step, wall clock), with
//                                and without the per-step safety check (checkSteps).
//
// Scenes: a 1 m cloth of 256x256 nodes (stretch, isometric or dihedral bending, tethers to both
// pins: max_distance) pinned at two corners, and a 40x20x20-cell tet box fixed at one end; small
// steps with 10 substeps.
// Every kernel pass starts from the same state: the scene warmed up for 20 steps under gravity,
// then predicted by one substep, so the constraints are violated as they are when the solver
// reaches them. The label holds a state hash (kernels: after one pass from that state; steps:
// after 5 steps from rest), so a change that is fast but alters the results shows up in the CSV.
//
// Reproduce (Release build, see bench/CMakeLists.txt):
//   ./build/bench/bench/pliant_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// CSV: add --benchmark_out=results.csv --benchmark_out_format=csv (Google Benchmark's own writer;
// the file starts with its context lines, the table with the line beginning "name,"). Every
// benchmark reports the same counters (ns_per_projection, projections per iteration), which the
// CSV writer requires.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "constraints/families.h"
#include "pliant/builders.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"
#include "solve_plan.h"

namespace {

using namespace pliant;

constexpr int kClothNodes = 256;

enum class Variant { Xpbd, XpbdInOrder, XpbdDamped, Pbd };

// A model, the same model with XPBD damping switched on, and the state at which a pass starts.
struct Fixture {
  ModelPtr model;
  ModelPtr damped;  // the same with damping on every family
  State start;
  SolverSettings settings;
};

SolverSettings benchSettings() { return SolverSettings::smallSteps(10); }

ModelPtr clothModel(BendingModel bending) {
  ModelBuilder builder;
  ClothGridDef def;
  def.nodesX = kClothNodes;
  def.nodesY = kClothNodes;
  def.sizeX = 1.0;
  def.sizeY = 1.0;
  def.origin = Vec3(-0.5, 1.0, -0.5);
  def.totalMass = 1.0;
  def.stretch.compliance = 1e-7;
  def.bending = bending;
  def.bendingParams.compliance = 0.2;
  const GeneratedObject cloth = addClothGrid(builder, def);
  const ParticleIndex pins[2] = {cloth.firstParticle, cloth.firstParticle + kClothNodes - 1};
  for (ParticleIndex p : pins) builder.fixParticle(p);
  // Tethers as in the built-in cloth scene: without them one pass per substep cannot hold a cloth
  // 256 edges wide and it over-stretches, crumples and blows up within a few dozen steps.
  addTethers(builder, {pins[0], pins[1]}, cloth.firstParticle, cloth.particleCount, ConstraintParameters{});
  return builder.build();
}

ModelPtr tetBoxModel() {
  ModelBuilder builder;
  TetBoxDef def;
  def.cellsX = 40;
  def.cellsY = 20;
  def.cellsZ = 20;
  def.size = Vec3(2.0, 1.0, 1.0);
  def.volume.compliance = 1e-9;
  def.edges.compliance = 1e-8;
  const GeneratedObject box = addTetBox(builder, def);
  // Cantilever: the x = 0 face is fixed.
  for (std::uint32_t k = 0; k < box.particleCount; k += def.cellsX + 1) builder.fixParticle(box.firstParticle + k);
  return builder.build();
}

// The same box and cantilever with neo-Hookean tets (E 1 MPa, nu 0.3) instead of volume and edges.
ModelPtr neoHookeanBoxModel() {
  ModelBuilder builder;
  TetBoxDef def;
  def.cellsX = 40;
  def.cellsY = 20;
  def.cellsZ = 20;
  def.size = Vec3(2.0, 1.0, 1.0);
  NeoHookeanMaterial material;
  material.youngsModulus = 1.0e6;
  material.poissonRatio = 0.3;
  def.neoHookean = material;
  const GeneratedObject box = addTetBox(builder, def);
  for (std::uint32_t k = 0; k < box.particleCount; k += def.cellsX + 1) builder.fixParticle(box.firstParticle + k);
  return builder.build();
}

// The tet box's nodes with shape matching instead of volumes and edges: overlapping rigid clusters,
// one per block of 2 x 2 x 2 cells of one node spacing (8 particles each, each particle in up to 8),
// compliance 1e-6 m/N.
ModelPtr shapeMatchedBoxModel() {
  ModelBuilder builder;
  TetBoxDef def;
  def.cellsX = 40;
  def.cellsY = 20;
  def.cellsZ = 20;
  def.size = Vec3(2.0, 1.0, 1.0);
  def.volume.compliance = 1e-6;
  def.addEdges = false;
  const GeneratedObject box = addTetBox(builder, def);
  builder.model().tetVolumes.clear();
  std::vector<ParticleIndex> particles(box.particleCount);
  for (std::uint32_t k = 0; k < box.particleCount; ++k) particles[k] = box.firstParticle + k;
  ShapeMatchingSettings settings;
  settings.params.compliance = 1e-6;
  // Cells a little over the node spacing (0.05 m), so that rounding never splits a layer.
  addShapeMatchingClusters(builder, particles, 0.0501, settings, nullptr);
  for (std::uint32_t k = 0; k < box.particleCount; k += def.cellsX + 1) builder.fixParticle(box.firstParticle + k);
  return builder.build();
}

void setDamping(Model& model, double beta) {
  for (auto& c : model.distances) c.params.damping = beta;
  // Tethers are hard (compliance 0), and damping scales with compliance: give them the stretch's.
  for (auto& c : model.maxDistances) c.params = ConstraintParameters{1e-7, beta, 1.0};
  for (auto& c : model.dihedralBendings) c.params.damping = beta;
  for (auto& c : model.isometricBendings) c.params.damping = beta;
  for (auto& c : model.tetVolumes) c.params.damping = beta;
  // Neo-Hookean damping is beta = retardation time / compliance; beta 5 on the stiffest is ~1e-5 s.
  for (auto& c : model.neoHookeans) {
    c.deviatoric.damping = 1e-5 / c.deviatoric.compliance;
    c.hydrostatic.damping = 1e-5 / c.hydrostatic.compliance;
  }
  for (auto& c : model.shapeMatchings) c.params.damping = beta;
}

// Warms the model up and predicts one substep exactly as Solver::advance does (stages 1 and 3).
std::unique_ptr<Fixture> makeFixture(ModelPtr model, int warmupSteps) {
  auto f = std::make_unique<Fixture>();
  f->settings = benchSettings();
  f->model = std::move(model);
  auto damped = std::make_shared<Model>(*f->model);
  setDamping(*damped, 5.0);
  f->damped = damped;
  f->start = State::fromModel(*f->model);
  Solver solver(f->model, f->settings);
  for (int i = 0; i < warmupSteps; ++i)
    if (const StepResult r = solver.step(f->start); !r.ok())
      throw std::runtime_error("benchmark warm-up: " + r.message);
  State& s = f->start;
  const double h = f->settings.timeStep / f->settings.substeps;
  for (std::size_t i = 0; i < s.position.size(); ++i) {
    s.previousPosition[i] = s.position[i];
    if (f->model->inverseMass[i] == 0.0) continue;
    s.velocity[i] += h * f->settings.gravity;
    s.position[i] += h * s.velocity[i];
  }
  std::fill(s.lambda.begin(), s.lambda.end(), 0.0);
  return f;
}

const Fixture& isometricCloth() {
  static const auto f = makeFixture(clothModel(BendingModel::Isometric), 20);
  return *f;
}
const Fixture& dihedralCloth() {
  static const auto f = makeFixture(clothModel(BendingModel::Dihedral), 20);
  return *f;
}
const Fixture& tetBox() {
  static const auto f = makeFixture(tetBoxModel(), 20);
  return *f;
}
const Fixture& neoHookeanBox() {
  static const auto f = makeFixture(neoHookeanBoxModel(), 20);
  return *f;
}
const Fixture& shapeMatchedBox() {
  static const auto f = makeFixture(shapeMatchedBoxModel(), 20);
  return *f;
}

detail::SolveContext makeContext(const SolverSettings& settings, SolverMode mode, State& s) {
  // As Solver::advance sets it up.
  detail::SolveContext ctx;
  const double h = settings.timeStep / settings.substeps;
  ctx.mode = mode;
  ctx.h = h;
  ctx.invH = 1.0 / h;
  ctx.invH2 = 1.0 / (h * h);
  ctx.stiffnessExponent = 1.0;
  ctx.x = s.position.data();
  ctx.xPrev = s.previousPosition.data();
  ctx.w = nullptr;  // set by the caller from the model
  ctx.attachmentTarget = s.attachmentTarget.data();
  ctx.scratch = nullptr;
  ctx.multipliersFresh = true;  // every pass starts from lambda = 0, as a substep's first pass does
  return ctx;
}

// This thread's CPU time (s). Kernel passes are timed with it rather than the wall clock: the
// machines this runs on are shared, and time spent preempted is not time spent projecting.
double threadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double nanosecondsPer(double seconds, benchmark::IterationCount iterations, double perIteration) {
  if (iterations == 0 || perIteration == 0.0) return 0.0;
  return seconds * 1e9 / (static_cast<double>(iterations) * perIteration);
}

std::string hexHash(std::uint64_t hash) {
  char text[32];
  std::snprintf(text, sizeof text, "hash=%016llx", static_cast<unsigned long long>(hash));
  return text;
}

void projectFamily(benchmark::State& bs, const Fixture& (*fixture)(), ConstraintFamily family, Variant variant) {
  const Fixture& f = fixture();
  const Model& model = variant == Variant::XpbdDamped ? *f.damped : *f.model;
  const detail::SolvePlan plan = detail::planSolve(model, f.settings.parallelBlockSize);
  const SolverMode mode = variant == Variant::Pbd ? SolverMode::Pbd : SolverMode::Xpbd;
  const std::uint32_t count = detail::entryCount(model, family);  // tets, for a neo-Hookean box
  const auto familyIndex = static_cast<int>(family);
  const detail::FamilyKernels& kernels = detail::familyKernels(family);

  State s = f.start;
  detail::SolveContext ctx = makeContext(f.settings, mode, s);
  ctx.w = model.inverseMass.data();
  // Gradients of the families of any size (shape matching clusters), as the Solver sizes them.
  std::size_t members = 0, largest = 0;
  for (const ShapeMatchingConstraint& c : model.shapeMatchings) {
    members += c.memberCount;
    largest = std::max<std::size_t>(largest, c.memberCount);
  }
  std::vector<Vec3> scratch(largest);
  ctx.scratch = &scratch;
  ctx.lambda = s.lambda.data() + model.lambdaOffset[familyIndex];

  // One pass: batch by batch as the solver does on one thread, or the plain in-order loop.
  auto pass = [&] {
    if (variant == Variant::XpbdInOrder) {
      kernels.project(model, ctx, 0, count);
      return;
    }
    for (const detail::SolveBatch& b : plan.batches[familyIndex]) {
      if (b.independent) kernels.projectIndependent(model, ctx, b.begin, b.end);
      else kernels.project(model, ctx, b.begin, b.end);
    }
  };
  double seconds = 0.0;
  for (auto _ : bs) {
    // Every pass starts from the same state; restoring it is not timed (no allocation: same sizes).
    s.position = f.start.position;
    s.lambda = f.start.lambda;
    const double begin = threadSeconds();
    pass();
    benchmark::ClobberMemory();
    const double elapsed = threadSeconds() - begin;
    bs.SetIterationTime(elapsed);
    seconds += elapsed;
  }
  bs.counters["ns_per_projection"] = nanosecondsPer(seconds, bs.iterations(), count);
  bs.counters["projections"] = count;
  if (family == ConstraintFamily::ShapeMatching)
    bs.counters["ns_per_particle"] = nanosecondsPer(seconds, bs.iterations(), static_cast<double>(members));

  s.position = f.start.position;
  s.lambda = f.start.lambda;
  pass();
  bs.SetLabel(hexHash(s.hash()));
}

// Hash of the state after a fixed number of steps from rest, the same for any thread count.
std::uint64_t stepHash(const Fixture& f, const SolverSettings& settings) {
  Solver solver(f.model, settings);
  State s = State::fromModel(*f.model);
  if (!solver.run(s, 5).ok()) return 0;
  return s.hash();
}

void stepCloth(benchmark::State& bs, bool checkSteps) {
  const Fixture& f = isometricCloth();
  SolverSettings settings = f.settings;
  settings.checkSteps = checkSteps;
  setThreadCount(static_cast<int>(bs.range(0)));
  Solver solver(f.model, settings);
  State s = State::fromModel(*f.model);
  // One step outside the loop sizes the solver's backup state.
  if (!solver.step(s).ok()) bs.SkipWithError("step refused");
  double seconds = 0.0;
  for (auto _ : bs) {
    const auto begin = std::chrono::steady_clock::now();
    const bool ok = solver.step(s).ok();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    bs.SetIterationTime(elapsed);
    seconds += elapsed;
    if (!ok) {
      bs.SkipWithError("step refused");
      break;
    }
  }
  // Whole step divided by all projections in it (includes prediction, velocities, check).
  const auto projections = static_cast<double>(solver.lastProjectionCount());
  bs.counters["ns_per_projection"] = nanosecondsPer(seconds, bs.iterations(), projections);
  bs.counters["projections"] = projections;
  bs.SetLabel(hexHash(stepHash(f, settings)));
}

struct FamilyCase {
  const char* name;
  ConstraintFamily family;
  const Fixture& (*fixture)();
};

struct VariantCase {
  const char* name;
  Variant variant;
};

void registerBenchmarks() {
  const FamilyCase families[] = {
      {"distance", ConstraintFamily::Distance, isometricCloth},
      {"max_distance", ConstraintFamily::MaxDistance, isometricCloth},  // the cloth's tethers
      {"isometric_bending", ConstraintFamily::IsometricBending, isometricCloth},
      {"dihedral_bending", ConstraintFamily::DihedralBending, dihedralCloth},
      {"tet_volume", ConstraintFamily::TetVolume, tetBox},
      {"neo_hookean", ConstraintFamily::NeoHookean, neoHookeanBox},  // per tet (two constraints)
      // per cluster (ns_per_particle: per member of a cluster)
      {"shape_matching", ConstraintFamily::ShapeMatching, shapeMatchedBox},
  };
  const VariantCase variants[] = {{"xpbd", Variant::Xpbd},
                                  {"xpbd_inorder", Variant::XpbdInOrder},
                                  {"xpbd_damped", Variant::XpbdDamped},
                                  {"pbd", Variant::Pbd}};
  for (const FamilyCase& fc : families)
    for (const VariantCase& vc : variants) {
      const std::string name = std::string("project/") + fc.name + "/" + vc.name;
      benchmark::RegisterBenchmark(name.c_str(), projectFamily, fc.fixture, fc.family, vc.variant)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  benchmark::RegisterBenchmark("step/cloth256", stepCloth, true)
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("step/cloth256_nocheck", stepCloth, false)
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  registerBenchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
