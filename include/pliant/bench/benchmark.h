// Benchmark scenes and their measurement, shared by `pliant bench`, the Google Benchmark suite and
// the Bullet comparison (bench/): what is run and how it is measured is defined once, here.
//
// A benchmark run steps a scene for a number of frames on a given number of threads and reports
// the wall-clock time per frame (Solver::step only; building the scene is not timed), the edge
// strain of the final state and its hash. Strain is |edge length / rest length - 1| over the
// model's distance constraints, which for a grid cloth are its structural and diagonal edges and
// for a tet body its tet edges; mean and 99th percentile (nearest rank) are reported.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pliant/io/scenes.h"

namespace pliant {

// Names of every benchmark scene: the built-in scenes made for benchmarking (scene A
// `cloth-100-2m`, scene B `cloth-100-10m-bending`), then the scaling curves: square cloths
// `cloth-grid-64` ... `cloth-grid-512` (nodes per side) and cantilever tet beams `tet-beam-1k`,
// `tet-beam-10k`, `tet-beam-100k` (number of tetrahedra, rounded), then contact workloads
// `contact-fold-64` and `contact-sphere-80` (the built-in cloth-fold and cloth-sphere scenes with
// 64x64 and 80x80 nodes) and `contact-drape-64`, `-128`, `-256` (cloth-sphere's cloth with
// self-collision, 3 mm thick, at 64^2 to 256^2 nodes: it falls onto the sphere and folds on the
// ground). `pliant bench` runs them all when no scene is named.
std::vector<std::string> benchmarkSceneNames();
// Builds a benchmark scene, or any built-in scene by name; throws pliant::Error for an unknown name.
// Its `frames` is what `pliant bench` runs by default: the scene's own for built-in scenes (600 for
// A and B), fewer for the large curve scenes so that the whole default run takes about a minute.
Scene makeBenchmarkScene(const std::string& name);

struct StrainStatistics {
  double mean = 0.0;  // dimensionless, mean of |l / l0 - 1| over the distance constraints
  double p99 = 0.0;   // dimensionless, 99th percentile (nearest rank)
};
// Mean and 99th percentile (nearest rank) of a list of strains |l / l0 - 1| (reordered in place);
// all zero for an empty list. edgeStrain and the Bullet comparison both summarise through it.
StrainStatistics strainStatistics(std::vector<double>& strains);
// Strain of every distance constraint of `model` at `positions` (constraints of rest length 0 are
// left out). All zero for a model without distance constraints.
StrainStatistics edgeStrain(const Model& model, const std::vector<Vec3>& positions);

struct BenchmarkResult {
  std::string scene;
  int threads = 1;
  int frames = 0;
  double msPerFrame = 0.0;  // ms of wall-clock time per Solver::step
  StrainStatistics strain;  // of the final state
  std::uint64_t stateHash = 0;
  bool stagesTimed = false;
  StageTimes stages;  // s, summed over the frames (Solver::stageTimes), when stagesTimed
};

// Steps `scene` from its initial state for `frames` frames on `threads` threads (restoring the
// previous thread count afterwards), timing the pipeline's stages too when `stages` is true (the
// clock reads add about 0.1 us per stage and substep to ms_per_frame). Throws pliant::Error when a
// step is refused.
BenchmarkResult runBenchmark(const Scene& scene, int threads, int frames, bool stages = false);

// CSV: the header line `scene,threads,frames,ms_per_frame,mean_strain,p99_strain,state_hash` and one
// row per result (hash as 16 hex digits), each ending in a newline. With `stages`, ten columns
// follow, each in ms per frame: the StageTimes fields (predict_ms, collider_contacts_ms,
// particle_contacts_ms, surface_contacts_ms, body_contacts_ms, constraints_ms,
// contact_projection_ms, velocities_ms, step_end_ms), then other_ms, what the step spent outside
// them (checking its result); a row of a result without stage times leaves them empty.
std::string benchmarkCsvHeader(bool stages = false);
std::string benchmarkCsvRow(const BenchmarkResult& result, bool stages = false);

}  // namespace pliant
