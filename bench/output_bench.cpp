// Frame output cost against simulation cost (issue: writing the frames of a 256 x 256 cloth must
// cost less than simulating them). Each benchmark writes one frame of a 256 x 256 cloth in one
// format into a temporary folder; compare with step/cloth256 (one simulated 1/60 s frame).
//   ./build/release/bench/pliant_bench --benchmark_filter='write/|step/cloth256/threads:1'
#include <benchmark/benchmark.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "pliant/builders.h"
#include "pliant/io/output.h"
#include "pliant/solver.h"

namespace pliant {
namespace {

constexpr int kNodes = 256;

struct ClothFrame {
  ModelPtr model;
  State state;
  io::Topology topology;
};

// A 256 x 256 cloth after a few steps, so positions and velocities are not grid-regular.
const ClothFrame& clothFrame() {
  static const ClothFrame frame = [] {
    ModelBuilder builder;
    ClothGridDef def;
    def.nodesX = kNodes;
    def.nodesY = kNodes;
    def.origin = Vec3(-0.5, 1.0, -0.5);
    def.stretch.compliance = 1e-7;
    const GeneratedObject cloth = addClothGrid(builder, def);
    builder.fixParticle(cloth.firstParticle);
    builder.fixParticle(cloth.firstParticle + kNodes - 1);
    ClothFrame f{builder.build(), {}, {}};
    f.state = State::fromModel(*f.model);
    f.topology.triangles = cloth.triangles;
    Solver solver(f.model, SolverSettings::smallSteps(10));
    for (int i = 0; i < 3; ++i)
      if (!solver.step(f.state).ok()) throw std::runtime_error("output_bench: the cloth step failed");
    return f;
  }();
  return frame;
}

void writeOneFrame(benchmark::State& bs, io::FrameFormat format, const char* extension,
                   io::VtuEncoding encoding = io::VtuEncoding::Zlib) {
  const ClothFrame& f = clothFrame();
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / "pliant_output_bench";
  std::filesystem::create_directories(folder);
  const std::string path = (folder / (std::string("frame") + extension)).string();
  for (auto _ : bs) io::writeFrame(path, format, f.topology, f.state, encoding);
  bs.counters["bytes"] = static_cast<double>(std::filesystem::file_size(path));
  std::filesystem::remove_all(folder);
}

BENCHMARK_CAPTURE(writeOneFrame, vtk, io::FrameFormat::Vtk, ".vtk")
    ->Name("write/cloth256/vtk")
    ->Unit(benchmark::kMillisecond);
// .vtu: zlib-compressed (the default) and raw appended data (--uncompressed).
BENCHMARK_CAPTURE(writeOneFrame, vtu, io::FrameFormat::Vtk, ".vtu")
    ->Name("write/cloth256/vtu")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(writeOneFrame, vtu_raw, io::FrameFormat::Vtk, ".vtu", io::VtuEncoding::Raw)
    ->Name("write/cloth256/vtu_raw")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(writeOneFrame, obj, io::FrameFormat::Obj, ".obj")
    ->Name("write/cloth256/obj")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(writeOneFrame, ply, io::FrameFormat::Ply, ".ply")
    ->Name("write/cloth256/ply")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pliant
