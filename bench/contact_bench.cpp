// Contact cost per frame (issue 4, item 7), on 1 and 2 threads, small steps with 15 substeps:
//
//   contact/sphere128/step/threads:N  a 1.6 m cloth of 128x128 nodes draped over a sphere on a ground plane:
//                            collider contacts with friction, and surface contact (self-collision,
//                            thickness 4 mm) on
//   contact/fold128/step/threads:N    a 1 m cloth of 128x128 nodes standing on its lower edge, collapsing
//                            onto itself on the ground: collider contacts and self-collision
//                            (thickness 3 mm), measured while it folds
//
// Each iteration is one Solver::step (one frame of 1/60 s) from the same warmed-up state (the
// scene stepped from rest to where contact is under way; restoring it is not timed), timed by the
// wall clock. Counters:
//   ms_per_frame         the whole step
//   contact_ms           the part spent on contact: the step minus the same step with every contact
//                        switched off (no colliders, no particle pairs, no surface contact), from
//                        the same state
//   contact_share        contact_ms / ms_per_frame: the collide and contact-projection stages
//   surface_candidates   candidate pairs of the surface broad phase; broad_phase_runs per step
//                        over every triangle, broad_phase_updates of a few particles' pairs
//   contacts             contacts of the last substep (collider + particle + surface)
// The label holds the state hash after the timed step, so a fast but different result shows.
//
// Reproduce (Release build): ./build/release/bench/pliant_bench --benchmark_filter=contact/
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace {

using namespace pliant;

constexpr int kNodes = 128;

struct ContactFixture {
  ModelPtr model;      // with contacts
  ModelPtr noContact;  // the same without any contact
  SolverSettings settings;
  State warm;  // where each timed step starts
};

SolverSettings contactSettings() { return SolverSettings::smallSteps(15); }

ModelPtr withoutContacts(const Model& model) {
  auto m = std::make_shared<Model>(model);
  m->colliders.clear();
  m->colliderPaths.clear();
  m->colliderRotationPaths.clear();
  m->particleCollisions = false;
  m->selfCollision = false;
  return m;
}

ContactFixture makeFixture(ModelPtr model, int warmFrames) {
  ContactFixture f;
  f.settings = contactSettings();
  f.model = std::move(model);
  f.noContact = withoutContacts(*f.model);
  Solver solver(f.model, f.settings);
  f.warm = State::fromModel(*f.model);
  if (!solver.run(f.warm, warmFrames).ok()) throw std::runtime_error("contact_bench: warm-up step refused");
  return f;
}

// A 128 x 128 self-colliding cloth with isometric bending, particle radius `radius` (m), surface
// thickness `thickness` (m), on a ground plane of material `ground`; `cloth` gives the
// size, placement, masses and materials.
ModelBuilder selfCollidingCloth(ClothGridDef cloth, double radius, double thickness, const ContactMaterial& ground) {
  ModelBuilder b;
  cloth.nodesX = cloth.nodesY = kNodes;
  cloth.bending = BendingModel::Isometric;
  cloth.selfCollision = true;
  const GeneratedObject c = addClothGrid(b, cloth);
  b.setParticleRadius(c.firstParticle, c.particleCount, radius);
  b.model().particleCollisions = false;  // the surface contact keeps the layers apart
  b.model().surfaceThickness = thickness;
  b.model().surfaceContactMaterial = {0.3, 0.3, 0.0};
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.0, 1.0, 0.0), ground));
  return b;
}

const ContactFixture& sphereCloth() {
  static const ContactFixture fixture = [] {
    ClothGridDef cloth;
    cloth.sizeX = cloth.sizeY = 1.6;
    cloth.origin = Vec3(-0.8, 0.9, -0.8);
    cloth.totalMass = 0.4;
    cloth.stretch.compliance = 1e-7;
    cloth.stretch.damping = 2.0;
    cloth.bendingParams.compliance = 0.5;
    cloth.dampingFactor = 0.2;
    ModelBuilder b = selfCollidingCloth(cloth, 0.004, 0.004, {0.6, 0.5, 0.0});
    b.addCollider(Collider::sphere(Vec3(0.0, 0.4, 0.0), 0.4, {0.4, 0.3, 0.0}));
    // 40 frames: the cloth has landed on the sphere and its sides are falling past it.
    return makeFixture(b.build(), 40);
  }();
  return fixture;
}

const ContactFixture& foldCloth() {
  static const ContactFixture fixture = [] {
    ClothGridDef cloth;
    cloth.sizeX = cloth.sizeY = 1.0;
    cloth.origin = Vec3(-0.5, 0.02, 0.0);
    cloth.axisX = Vec3(1.0, 0.0, 0.0);
    cloth.axisY = Vec3(0.0, 0.999, 0.045).normalized();
    cloth.totalMass = 0.3;
    cloth.stretch.compliance = 1e-7;
    cloth.stretch.damping = 1.0;
    cloth.bendingParams.compliance = 200.0;
    cloth.dampingFactor = 0.1;
    ModelBuilder b = selfCollidingCloth(cloth, 0.002, 0.003, {0.8, 0.6, 0.0});
    // 55 frames: the cloth has buckled and is folding down onto itself.
    return makeFixture(b.build(), 55);
  }();
  return fixture;
}

std::string hexHash(std::uint64_t h) {
  char buffer[20];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(h));
  return buffer;
}

double timeStep(Solver& solver, State& state, bool& ok) {
  const auto begin = std::chrono::steady_clock::now();
  ok = solver.step(state).ok();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void contactStep(benchmark::State& bs, const ContactFixture& (*fixture)()) {
  const ContactFixture& f = fixture();
  setThreadCount(static_cast<int>(bs.range(0)));
  Solver solver(f.model, f.settings);
  Solver base(f.noContact, f.settings);
  State s = f.warm;
  bool ok = true;
  timeStep(solver, s, ok);  // sizes the solver's scratch
  double seconds = 0.0, baseSeconds = 0.0;
  std::size_t candidates = 0, contacts = 0;
  int runs = 0, updates = 0;
  for (auto _ : bs) {
    s = f.warm;
    const double elapsed = timeStep(solver, s, ok);
    if (!ok) {
      bs.SkipWithError("step refused");
      break;
    }
    bs.SetIterationTime(elapsed);
    seconds += elapsed;
    candidates = solver.lastSurfaceCandidateCount();
    contacts = solver.lastContactCount();
    runs = solver.lastSurfaceBroadPhaseRuns();
    updates = solver.lastSurfaceBroadPhaseUpdates();
    // The same step without contacts, untimed by the framework.
    s = f.warm;
    baseSeconds += timeStep(base, s, ok);
  }
  const double iterations = static_cast<double>(bs.iterations());
  const double ms = 1e3 * seconds / iterations;
  const double contactMs = ms - 1e3 * baseSeconds / iterations;
  bs.counters["ms_per_frame"] = ms;
  bs.counters["contact_ms"] = contactMs;
  bs.counters["contact_share"] = ms > 0.0 ? contactMs / ms : 0.0;
  bs.counters["surface_candidates"] = static_cast<double>(candidates);
  bs.counters["broad_phase_runs"] = runs;
  bs.counters["broad_phase_updates"] = updates;
  bs.counters["contacts"] = static_cast<double>(contacts);
  s = f.warm;
  timeStep(solver, s, ok);
  bs.SetLabel(hexHash(s.hash()));
}

BENCHMARK_CAPTURE(contactStep, sphere128, sphereCloth)
    ->Name("contact/sphere128/step")
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);
BENCHMARK_CAPTURE(contactStep, fold128, foldCloth)
    ->Name("contact/fold128/step")
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

}  // namespace
