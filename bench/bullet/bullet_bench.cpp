// Scene A side by side: Bullet's btSoftBody and Pliant on the same cloth, in one run.
//
// The cloth is Pliant's built-in scene `cloth-100-2m` (100x100 nodes, 2 m x 2 m, horizontal at 2 m,
// 1 kg, pinned at the two corners of one edge, structural links plus one diagonal per quad).
// Bullet runs it twice, built two ways:
//   bullet/cloth-100-2m        as Bullet's users build a cloth: btSoftBodyHelpers::CreatePatch with
//                              the two corners of one edge fixed and one diagonal per quad (its own
//                              node and link order, and the faces it makes). The nodes are checked
//                              to be Pliant's particles, in Pliant's order, with Pliant's pins.
//   bullet-random/cloth-100-2m the same patch after btSoftBody::randomizeConstraints (Bullet's own
//                              remedy for the patch's link order, used in its demos; its shuffle is
//                              seeded, so the run is repeatable).
//   bullet-links/cloth-100-2m  exactly Pliant's particles, masses and pins and one link per Pliant
//                              distance constraint, in Pliant's colour order, and no faces. Bullet
//                              projects its links in list order, and an order in which consecutive
//                              links share no node runs fastest on it: the strictest yardstick.
// Both run as Bullet's users run cloth: a btSoftRigidDynamicsWorld, one stepSimulation of 1/60 s
// per frame, `--iterations` position iterations (default 10), link stiffness kLST = 1, no damping
// or air, single precision (Debian's default libbullet). Bullet's strain is over its own links.
// Pliant runs the scene as shipped (small steps with tethers, see the scene file and
// docs/performance.md) through pliant::runBenchmark, on one thread and on two (Bullet's soft body
// solver has one). Threads are bound to cores first (pliant::pinThreadsToCores, as `pliant bench`
// does), so both run on the same, unmoving core.
//
// Output: the CSV of `pliant bench` (scene,threads,frames,ms_per_frame,mean_strain,p99_strain,
// state_hash) with the two Bullet rows and `pliant/cloth-100-2m` (threads 1 and 2), then a summary
// on stderr with Pliant's time as a fraction of each Bullet build's.
// Bullet's state_hash is State::hash of a state holding its final node positions, for run-to-run checks.
//
// Usage: pliant_bullet_bench [--frames N] [--iterations N] [--csv FILE]
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bullet_harness.h"
#include "pliant/bench/benchmark.h"
#include "pliant/error.h"
#include "pliant/io/output.h"
#include "pliant/parallel.h"
#include "pliant/state.h"

namespace {

using namespace pliant::bench::bullet;

constexpr const char* kScene = "cloth-100-2m";

enum class BulletBuild { Patch, RandomizedPatch, PliantLinks };

std::vector<std::size_t> pinnedParticles(const pliant::Model& model) {
  std::vector<std::size_t> pins;
  for (std::size_t i = 0; i < model.particleCount(); ++i)
    if (model.inverseMass[i] == 0.0) pins.push_back(i);
  return pins;
}

// btSoftBodyHelpers::CreatePatch over the corners of Pliant's square grid, fixing corners 00 and
// 10. Throws unless its nodes are Pliant's particles in Pliant's order and its pins Pliant's pins,
// so that both engines simulate the same cloth.
btSoftBody* makePatchCloth(btSoftBodyWorldInfo& info, const pliant::Model& model) {
  const std::size_t n = model.particleCount();
  const auto side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(n))));
  const std::vector<std::size_t> pins = pinnedParticles(model);
  if (side * side != n || pins != std::vector<std::size_t>{0, side - 1})
    throw pliant::Error("scene A is expected to be a square grid pinned at nodes 0 and side - 1");
  const auto& x = model.initialPosition;
  btSoftBody* cloth = btSoftBodyHelpers::CreatePatch(info, toBullet(x[0]), toBullet(x[side - 1]), toBullet(x[n - side]),
                                                     toBullet(x[n - 1]), static_cast<int>(side), static_cast<int>(side),
                                                     1 + 2, /*gendiags=*/true);
  for (std::size_t i = 0; i < n; ++i) {
    const btVector3& b = cloth->m_nodes[static_cast<int>(i)].m_x;
    if ((pliant::Vec3(b.x(), b.y(), b.z()) - x[i]).norm() > 1e-5)
      throw pliant::Error("Bullet's patch node " + std::to_string(i) + " is not Pliant's particle " +
                          std::to_string(i));
  }
  return cloth;
}

// Pliant's particles, masses and pins, and one link per Pliant distance constraint in its order.
btSoftBody* makeLinkCloth(btSoftBodyWorldInfo& info, const pliant::Model& model) {
  const std::size_t n = model.particleCount();
  std::vector<btVector3> positions(n);
  std::vector<btScalar> masses(n);
  for (std::size_t i = 0; i < n; ++i) {
    positions[i] = toBullet(model.initialPosition[i]);
    masses[i] = model.inverseMass[i] == 0.0 ? btScalar(0) : btScalar(model.mass[i]);  // mass 0 pins a node
  }
  auto* cloth = new btSoftBody(&info, static_cast<int>(n), positions.data(), masses.data());
  btSoftBody::Material* material = cloth->appendMaterial();
  for (const pliant::DistanceConstraint& d : model.distances)
    cloth->appendLink(static_cast<int>(d.particles[0]), static_cast<int>(d.particles[1]), material);
  return cloth;
}

pliant::BenchmarkResult runBullet(const pliant::Scene& scene, int frames, int iterations, BulletBuild build) {
  const pliant::Model& model = *scene.model;
  BulletWorld bullet(scene.settings.gravity);
  btSoftBodyWorldInfo& info = bullet.world.getWorldInfo();
  btSoftBody* cloth = build == BulletBuild::PliantLinks ? makeLinkCloth(info, model) : makePatchCloth(info, model);
  if (build == BulletBuild::RandomizedPatch) cloth->randomizeConstraints();
  for (int m = 0; m < cloth->m_materials.size(); ++m) {
    cloth->m_materials[m]->m_kLST = 1;
    cloth->m_materials[m]->m_kAST = 1;
    cloth->m_materials[m]->m_kVST = 1;
  }
  cloth->m_cfg.piterations = iterations;
  cloth->m_cfg.kDP = 0;
  cloth->setTotalMass(btScalar(1.0), false);
  // setTotalMass resets every node's mass; pin the corners again.
  for (std::size_t i : pinnedParticles(model)) cloth->setMass(static_cast<int>(i), 0);
  bullet.world.addSoftBody(cloth);

  const double dt = scene.settings.timeStep;
  double seconds = 0.0;
  for (int frame = 0; frame < frames; ++frame) {
    const auto begin = std::chrono::steady_clock::now();
    bullet.world.stepSimulation(btScalar(dt), 1, btScalar(dt));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  }
  // Strain over Bullet's own links; its final nodes as a Pliant state (the nodes are in particle order).
  std::vector<double> strains;
  for (int l = 0; l < cloth->m_links.size(); ++l) {
    const btSoftBody::Link& link = cloth->m_links[l];
    const double length = (link.m_n[0]->m_x - link.m_n[1]->m_x).length();
    if (link.m_rl > 0) strains.push_back(std::abs(length / double(link.m_rl) - 1.0));
  }
  pliant::State final = pliant::State::fromModel(model);
  for (std::size_t i = 0; i < model.particleCount(); ++i) {
    const btVector3& x = cloth->m_nodes[static_cast<int>(i)].m_x;
    final.position[i] = pliant::Vec3(x.x(), x.y(), x.z());
  }
  bullet.world.removeSoftBody(cloth);
  delete cloth;

  pliant::BenchmarkResult result;
  const char* const prefix[] = {"bullet/", "bullet-random/", "bullet-links/"};
  result.scene = prefix[static_cast<int>(build)] + std::string(kScene);
  result.threads = 1;
  result.frames = frames;
  result.msPerFrame = 1e3 * seconds / frames;
  result.strain = pliant::strainStatistics(strains);
  result.stateHash = final.hash();
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 600, iterations = 10;
  std::string csvPath;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--frames") frames = parseCount("pliant_bullet_bench", "--frames", value, 1), ++i;
    else if (arg == "--iterations") iterations = parseCount("pliant_bullet_bench", "--iterations", value, 1), ++i;
    else if (arg == "--csv" && value) csvPath = value, ++i;
    else if (arg == "--help" || arg == "-h") {
      std::printf(
          "Usage: pliant_bullet_bench [--frames N] [--iterations N] [--csv FILE]\n"
          "Runs scene A (cloth-100-2m) with Bullet's btSoftBody (built by CreatePatch, and from Pliant's links)\n"
          "and with Pliant on 1 and 2 threads; prints CSV.\n");
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
    const pliant::BenchmarkResult patch = runBullet(scene, frames, iterations, BulletBuild::Patch);
    const pliant::BenchmarkResult random = runBullet(scene, frames, iterations, BulletBuild::RandomizedPatch);
    const pliant::BenchmarkResult links = runBullet(scene, frames, iterations, BulletBuild::PliantLinks);
    pliant::BenchmarkResult one = pliant::runBenchmark(scene, 1, frames);
    pliant::BenchmarkResult two = pliant::runBenchmark(scene, 2, frames);
    one.scene = two.scene = std::string("pliant/") + kScene;
    const pliant::BenchmarkResult* rows[] = {&patch, &random, &links, &one, &two};
    std::string csv = pliant::benchmarkCsvHeader();
    for (const pliant::BenchmarkResult* r : rows) csv += pliant::benchmarkCsvRow(*r);
    writeCsv(csvPath, csv);
    std::fprintf(stderr, "scene A, %d frames, Bullet with %d iterations:\n", frames, iterations);
    for (const pliant::BenchmarkResult* r : rows)
      std::fprintf(stderr, "  %-26s %d thread%s %7.3f ms/frame, mean strain %.4f, p99 %.4f\n", r->scene.c_str(),
                   r->threads, r->threads == 1 ? " " : "s", r->msPerFrame, r->strain.mean, r->strain.p99);
    for (const pliant::BenchmarkResult* bullet : {&patch, &random, &links})
      std::fprintf(stderr, "  Pliant's time / %s's: %.3f on 1 thread, %.3f on 2 threads\n", bullet->scene.c_str(),
                   one.msPerFrame / bullet->msPerFrame, two.msPerFrame / bullet->msPerFrame);
    return 0;
  } catch (const pliant::Error& e) {
    std::fprintf(stderr, "pliant_bullet_bench: %s\n", e.what());
    return 1;
  }
}
