// Scene A side by side: Bullet's btSoftBody and Pliant on the same cloth, in one run.
//
// The cloth is Pliant's built-in scene `cloth-100-2m` (100x100 nodes, 2 m x 2 m, horizontal at 2 m,
// 1 kg, pinned at the two corners of one edge): Bullet gets exactly its particles (positions,
// masses, the two pins) and one link per Pliant distance constraint (structural links plus one
// diagonal per quad), in the same order. Bullet runs as its users run cloth: a
// btSoftRigidDynamicsWorld, one stepSimulation of 1/60 s per frame, `--iterations` position
// iterations (default 10), link stiffness kLST = 1, no damping, single precision (Debian's default
// libbullet). Pliant runs the scene as shipped (small steps with tethers, see the scene file and
// docs/performance.md) through pliant::runBenchmark, on one thread and on two (Bullet's soft body
// solver has one). Threads are bound to cores first (pliant::pinThreadsToCores, as `pliant bench`
// does), so both run on the same, unmoving core.
//
// Output: the CSV of `pliant bench` (scene,threads,frames,ms_per_frame,mean_strain,p99_strain,
// state_hash) with rows `bullet/cloth-100-2m` and `pliant/cloth-100-2m` (threads 1 and 2), then a
// summary on stderr.
// Bullet's state_hash is State::hash of a state holding its final node positions, for run-to-run checks.
//
// Usage: pliant_bullet_bench [--frames N] [--iterations N] [--csv FILE]
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "pliant/benchmark.h"
#include "pliant/error.h"
#include "pliant/io/output.h"
#include "pliant/parallel.h"
#include "pliant/state.h"

namespace {

constexpr const char* kScene = "cloth-100-2m";

pliant::BenchmarkResult runBullet(const pliant::Scene& scene, int frames, int iterations) {
  const pliant::Model& model = scene.model;
  auto collision = std::make_unique<btSoftBodyRigidBodyCollisionConfiguration>();
  auto dispatcher = std::make_unique<btCollisionDispatcher>(collision.get());
  auto broadphase = std::make_unique<btDbvtBroadphase>();
  auto constraintSolver = std::make_unique<btSequentialImpulseConstraintSolver>();
  auto world = std::make_unique<btSoftRigidDynamicsWorld>(dispatcher.get(), broadphase.get(), constraintSolver.get(),
                                                          collision.get());
  const pliant::Vec3 g = scene.settings.gravity;
  world->setGravity(btVector3(btScalar(g.x()), btScalar(g.y()), btScalar(g.z())));
  btSoftBodyWorldInfo& info = world->getWorldInfo();
  info.m_gravity = world->getGravity();
  info.m_broadphase = broadphase.get();
  info.m_dispatcher = dispatcher.get();
  info.air_density = 0;
  info.m_sparsesdf.Initialize();

  const std::size_t n = model.particleCount();
  std::vector<btVector3> positions(n);
  std::vector<btScalar> masses(n);
  for (std::size_t i = 0; i < n; ++i) {
    const pliant::Vec3& x = model.initialPosition[i];
    positions[i] = btVector3(btScalar(x.x()), btScalar(x.y()), btScalar(x.z()));
    masses[i] = model.inverseMass[i] == 0.0 ? btScalar(0) : btScalar(model.mass[i]);  // mass 0 pins a node
  }
  auto* cloth = new btSoftBody(&info, static_cast<int>(n), positions.data(), masses.data());
  btSoftBody::Material* material = cloth->appendMaterial();
  material->m_kLST = 1;
  material->m_kAST = 1;
  material->m_kVST = 1;
  for (const pliant::DistanceConstraint& d : model.distances)
    cloth->appendLink(static_cast<int>(d.particles[0]), static_cast<int>(d.particles[1]), material);
  cloth->m_cfg.piterations = iterations;
  cloth->m_cfg.kDP = 0;
  cloth->setTotalMass(btScalar(1.0), false);
  // setTotalMass resets every node's mass; pin the corners again.
  for (std::size_t i = 0; i < n; ++i)
    if (model.inverseMass[i] == 0.0) cloth->setMass(static_cast<int>(i), 0);
  world->addSoftBody(cloth);

  const double dt = scene.settings.timeStep;
  double seconds = 0.0;
  for (int frame = 0; frame < frames; ++frame) {
    const auto begin = std::chrono::steady_clock::now();
    world->stepSimulation(btScalar(dt), 1, btScalar(dt));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }
  // Bullet's final nodes as a Pliant state of the same model (the nodes are in particle order).
  pliant::State final = pliant::State::fromModel(model);
  for (std::size_t i = 0; i < n; ++i) {
    const btVector3& x = cloth->m_nodes[static_cast<int>(i)].m_x;
    final.position[i] = pliant::Vec3(x.x(), x.y(), x.z());
  }
  world->removeSoftBody(cloth);
  delete cloth;

  pliant::BenchmarkResult result;
  result.scene = std::string("bullet/") + kScene;
  result.threads = 1;
  result.frames = frames;
  result.msPerFrame = 1e3 * seconds / frames;
  result.strain = pliant::edgeStrain(model, final.position);
  result.stateHash = final.hash();
  return result;
}

int parsePositive(const char* option, const char* value) {
  char* end = nullptr;
  const long v = value ? std::strtol(value, &end, 10) : 0;
  if (!value || *end != '\0' || v < 1 || v > 1000000) {
    std::fprintf(stderr, "pliant_bullet_bench: %s expects a positive integer\n", option);
    std::exit(2);
  }
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 600, iterations = 10;
  std::string csvPath;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--frames") frames = parsePositive("--frames", value), ++i;
    else if (arg == "--iterations") iterations = parsePositive("--iterations", value), ++i;
    else if (arg == "--csv" && value) csvPath = value, ++i;
    else if (arg == "--help" || arg == "-h") {
      std::printf("Usage: pliant_bullet_bench [--frames N] [--iterations N] [--csv FILE]\n"
                  "Runs scene A (cloth-100-2m) with Bullet's btSoftBody and with Pliant; prints CSV.\n");
      return 0;
    } else {
      std::fprintf(stderr, "pliant_bullet_bench: unknown argument '%s' (see --help)\n", arg.c_str());
      return 2;
    }
  }
  try {
    const pliant::Scene scene = pliant::makeBenchmarkScene(kScene);
    pliant::setThreadCount(2);
    pliant::pinThreadsToCores();
    const pliant::BenchmarkResult bullet = runBullet(scene, frames, iterations);
    pliant::BenchmarkResult pliantResult = pliant::runBenchmark(scene, 1, frames);
    pliant::BenchmarkResult pliantTwo = pliant::runBenchmark(scene, 2, frames);
    pliantResult.scene = pliantTwo.scene = std::string("pliant/") + kScene;
    const std::string csv = pliant::benchmarkCsvHeader() + pliant::benchmarkCsvRow(bullet) +
                            pliant::benchmarkCsvRow(pliantResult) + pliant::benchmarkCsvRow(pliantTwo);
    if (csvPath.empty()) std::fputs(csv.c_str(), stdout);
    else pliant::io::writeFileAtomically(csvPath, csv);
    std::fprintf(stderr,
                 "scene A, %d frames: Bullet (%d iterations) %.3f ms/frame, mean strain %.4f, p99 %.4f; "
                 "Pliant %.3f ms/frame (2 threads %.3f), mean strain %.4f, p99 %.4f; Pliant/Bullet time %.3f "
                 "(2 threads %.3f)\n",
                 frames, iterations, bullet.msPerFrame, bullet.strain.mean, bullet.strain.p99, pliantResult.msPerFrame,
                 pliantTwo.msPerFrame, pliantResult.strain.mean, pliantResult.strain.p99,
                 pliantResult.msPerFrame / bullet.msPerFrame, pliantTwo.msPerFrame / bullet.msPerFrame);
    return 0;
  } catch (const pliant::Error& e) {
    std::fprintf(stderr, "pliant_bullet_bench: %s\n", e.what());
    return 1;
  }
}
