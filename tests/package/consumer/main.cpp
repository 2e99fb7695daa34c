// A consumer of the installed package: a rope pinned at one end falls from horizontal and swings
// (the core), and the built-in rope scene is stepped (the I/O layer's embedded scenes). Exits 0
// when the physics holds, 1 otherwise, saying what failed.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "pliant/pliant.h"

namespace {

int failures = 0;

void check(bool ok, const char* what, double value) {
  std::printf("%s %s: %.6g\n", ok ? "ok  " : "FAIL", what, value);
  if (!ok) ++failures;
}

}  // namespace

int main() {
  using namespace pliant;

  ModelBuilder builder;
  ChainDef rope;
  rope.particles = 21;  // 20 segments of 0.05 m
  rope.start = Vec3::Zero();
  rope.end = Vec3(1.0, 0.0, 0.0);
  rope.particleMass = 0.01;  // kg
  const GeneratedObject made = addChain(builder, rope);
  const ModelPtr model = builder.build();
  const ParticleIndex tip = made.firstParticle + made.particleCount - 1;

  const SolverSettings settings = SolverSettings::smallSteps(20);
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  const double energyBefore = computeEnergy(*model, state, settings).total();
  double lowestTip = 0.0;
  for (int frame = 0; frame < 60; ++frame) {  // 1 s: past the bottom of the first swing
    if (!solver.step(state).ok()) {
      std::printf("FAIL a step was refused\n");
      return 1;
    }
    lowestTip = std::min(lowestTip, state.position[tip].y());
  }
  const double energyAfter = computeEnergy(*model, state, settings).total();
  double longestSegment = 0.0;
  for (ParticleIndex p = made.firstParticle; p < tip; ++p)
    longestSegment = std::max(longestSegment, (state.position[p + 1] - state.position[p]).norm());

  // The pinned end stays; the rope hangs nearly inextensible (0.05 m segments, 2 % slack at most).
  check(state.position[made.firstParticle].norm() == 0.0, "pinned end moved (m)",
        state.position[made.firstParticle].norm());
  check(longestSegment < 0.051, "longest segment (m)", longestSegment);
  // Falling from horizontal, the tip swings down to nearly the rope's length below the pin.
  check(lowestTip < -0.8, "lowest tip height (m)", lowestTip);
  // XPBD only loses energy to its implicit damping: it never gains any.
  check(energyAfter <= energyBefore + 1e-9, "energy change (J)", energyAfter - energyBefore);

  // The I/O layer: the built-in rope scene, a few frames, a finite state.
  const Scene scene = makeBuiltinScene("rope");
  Solver sceneSolver(scene.model, scene.settings);
  State sceneState = State::fromModel(*scene.model);
  for (int frame = 0; frame < 10; ++frame)
    if (!sceneSolver.step(sceneState).ok()) ++failures;
  bool finite = true;
  for (const Vec3& x : sceneState.position) finite = finite && x.allFinite();
  check(finite, "built-in rope scene particles", static_cast<double>(sceneState.position.size()));

  return failures == 0 ? 0 : 1;
}
