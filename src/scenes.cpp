#include "pliant/scenes.h"

#include <cmath>
#include <functional>

#include "pliant/builders.h"
#include "pliant/error.h"

namespace pliant {

namespace {

// A 1.5 m square cloth pinned at the two corners of one edge, falling from horizontal, with
// isometric bending and tethers that keep it from over-stretching (small steps).
Scene clothScene() {
  Scene s;
  s.name = "cloth";
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = 48;
  def.sizeX = def.sizeY = 1.5;
  def.origin = Vec3(-0.75, 1.5, -0.75);
  def.totalMass = 0.3;
  def.stretch.compliance = 1e-7;
  def.stretch.damping = 5.0;
  def.bending = BendingModel::Isometric;
  def.bendingParams.compliance = 0.2;
  const GeneratedObject cloth = addClothGrid(b, def);
  const ParticleIndex left = cloth.firstParticle;
  const ParticleIndex right = cloth.firstParticle + static_cast<ParticleIndex>(def.nodesX - 1);
  b.fixParticle(left);
  b.fixParticle(right);
  addTethers(b, {left, right}, cloth.firstParticle, cloth.particleCount, {}, 1.0);
  s.model = b.build();
  s.settings = SolverSettings::smallSteps(10);
  s.frames = 240;
  s.surface = cloth.triangles;
  return s;
}

// A 2 m rope of 40 segments fixed at one end, released horizontally: a swinging chain.
Scene ropeScene() {
  Scene s;
  s.name = "rope";
  ModelBuilder b;
  ChainDef def;
  def.particles = 41;
  def.start = Vec3(0.0, 2.0, 0.0);
  def.end = Vec3(2.0, 2.0, 0.0);
  def.particleMass = 0.01;
  def.stretch.compliance = 1e-8;
  const GeneratedObject rope = addChain(b, def);
  s.model = b.build();
  s.settings = SolverSettings::smallSteps(20);
  s.frames = 240;
  for (std::uint32_t k = 0; k + 1 < rope.particleCount; ++k)
    s.lines.push_back({rope.firstParticle + k, rope.firstParticle + k + 1});
  return s;
}

// A tetrahedral beam clamped at one end sagging under gravity.
Scene beamScene() {
  Scene s;
  s.name = "beam";
  ModelBuilder b;
  TetBoxDef def;
  def.cellsX = 16;
  def.cellsY = 2;
  def.cellsZ = 4;
  def.origin = Vec3(0.0, 1.0, -0.2);
  def.size = Vec3(2.0, 0.4, 0.4);
  def.density = 100.0;
  def.volume.compliance = 1e-7;
  def.edges.compliance = 1e-5;
  def.dampingFactor = 0.01;
  const GeneratedObject beam = addTetBox(b, def);
  for (std::uint32_t p = 0; p < beam.particleCount; ++p) {
    const ParticleIndex index = beam.firstParticle + p;
    if (b.position(index).x() < 1e-9) b.fixParticle(index);
  }
  s.model = b.build();
  s.settings = SolverSettings::smallSteps(20);
  s.frames = 240;
  s.surface = beam.triangles;
  return s;
}

// An inflated balloon (global volume, pressure 1.5) held by a one-sided tether to a fixed point.
Scene balloonScene() {
  Scene s;
  s.name = "balloon";
  ModelBuilder b;
  BalloonDef def;
  def.centre = Vec3(0.6, 1.2, 0.0);
  def.radius = 0.3;
  def.totalMass = 0.1;
  def.stretch.compliance = 1e-4;
  def.pressure = 1.5;
  def.volume.compliance = 0.0;
  const GeneratedObject balloon = addBalloon(b, def);
  const ParticleIndex anchor = b.addParticle(Vec3(0.0, 2.0, 0.0), 0.0);
  b.addMaxDistance(anchor, balloon.firstParticle, {}, 0.8);
  s.model = b.build();
  s.settings = SolverSettings::smallSteps(10);
  s.frames = 240;
  s.surface = balloon.triangles;
  return s;
}

struct Entry {
  const char* name;
  const char* description;
  std::function<Scene()> make;
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"cloth", "1.5 m cloth pinned at two corners, isometric bending, tethers (default)", clothScene},
      {"rope", "2 m rope fixed at one end, swinging", ropeScene},
      {"beam", "tetrahedral beam clamped at one end, sagging", beamScene},
      {"balloon", "pressurised balloon on a tether", balloonScene},
  };
  return entries;
}

}  // namespace

std::vector<std::string> builtinSceneNames() {
  std::vector<std::string> names;
  for (const Entry& e : registry()) names.emplace_back(e.name);
  return names;
}

std::string builtinSceneDescription(const std::string& name) {
  for (const Entry& e : registry())
    if (name == e.name) return e.description;
  return {};
}

Scene makeBuiltinScene(const std::string& name) {
  for (const Entry& e : registry())
    if (name == e.name) {
      Scene scene = e.make();
      scene.description = e.description;
      return scene;
    }
  std::string known;
  for (const Entry& e : registry()) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw Error("unknown scene '" + name + "' (built-in scenes: " + known + ")");
}

}  // namespace pliant
