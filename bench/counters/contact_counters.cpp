// Contact work counters of benchmark scenes, frame by frame (issue 14: how the cost of the drapes
// grows from 64^2 to 256^2): surface broad-phase runs in the step, the step's surface candidates
// (vertex-triangle plus edge-edge pairs kept by the broad phase), and the contacts of its last
// substep, by kind, the triangles in patches the broad phase skipped (normal cones), and its local
// updates in the step. Counts, not times: they are the same on any machine.
//
// Usage: pliant_contact_counters [--frames N] SCENE...   (CSV on stdout)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pliant/bench/benchmark.h"
#include "pliant/error.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

int main(int argc, char** argv) {
  int frames = 0;
  std::vector<std::string> scenes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--frames" && i + 1 < argc) {
      frames = std::atoi(argv[++i]);
      if (frames < 1) {
        std::fprintf(stderr, "pliant_contact_counters: --frames expects a positive integer\n");
        return 2;
      }
    } else if (arg == "--help" || arg == "-h") {
      std::printf("Usage: pliant_contact_counters [--frames N] SCENE...\n");
      return 0;
    } else {
      scenes.push_back(arg);
    }
  }
  try {
    pliant::setThreadCount(1);
    std::printf(
        "scene,particles,frame,broad_phase_runs,surface_candidates,surface_contacts,collider_contacts,skipped_"
        "triangles,broad_phase_updates\n");
    for (const std::string& name : scenes) {
      const pliant::Scene scene = pliant::makeBenchmarkScene(name);
      pliant::Solver solver(scene.model, scene.settings);
      pliant::State state = pliant::State::fromModel(*scene.model);
      const int count = frames > 0 ? frames : scene.frames;
      for (int frame = 1; frame <= count; ++frame) {
        const pliant::StepResult r = solver.step(state);
        if (!r.ok()) throw pliant::Error(name + ": " + r.message);
        std::printf("%s,%zu,%d,%d,%zu,%zu,%zu,%zu,%d\n", name.c_str(), scene.model->particleCount(), frame,
                    solver.lastSurfaceBroadPhaseRuns(), solver.lastSurfaceCandidateCount(),
                    solver.lastSurfaceContacts().size(), solver.lastColliderContacts().size(),
                    solver.lastSurfaceSkippedTriangles(), solver.lastSurfaceBroadPhaseUpdates());
      }
    }
    return 0;
  } catch (const pliant::Error& e) {
    std::fprintf(stderr, "pliant_contact_counters: %s\n", e.what());
    return 1;
  }
}
