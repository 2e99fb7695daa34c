// Self-collision side by side (issue 14): Bullet's btSoftBody with self-collision switched on, and
// Pliant, on the cloth of `contact-fold-64` (a 1 m cloth of 64 x 64 nodes, 0.3 kg, standing on its
// lower edge on the ground: it collapses and folds onto itself), in one run.
//
// Bullet runs it as its users run a self-colliding cloth in a btSoftRigidDynamicsWorld:
// btSoftBodyHelpers::CreatePatch over Pliant's corners (one diagonal per quad; its nodes are
// checked to be Pliant's particles in Pliant's order), collisions SDF_RS + CL_SS + CL_SELF (Bullet's
// vertex-face soft-soft handler, VF_SS, skips a body against itself; self-collision goes through
// clusters; a second Bullet row runs without these flags, because in Bullet 3.24 they do nothing:
// its handler switches on the flags masked by SVSmask, which keeps CL_SELF, so CL_SS + CL_SELF
// matches no case), `--clusters` clusters (default 0: one per triangle, as Bullet's demos make them for a
// cloth), a collision margin of half Pliant's surface thickness (cluster pairs are kept apart by
// the sum of their margins: Pliant's thickness), link stiffness 1, `--iterations` position
// iterations (default 10, as for scene A), dynamic friction 0.3 (Pliant's surface friction), no
// bending constraints (Pliant's bending here is very soft, compliance 200), no damping, one
// stepSimulation of 1/60 s per frame; the ground is a static btStaticPlaneShape with Pliant's static
// friction of the ground (0.8).
// Single precision (Debian's build).
//
// Both meshes are checked with Pliant's own counter after every frame
// (countIntersectingTrianglePairs over each engine's own triangles, neighbours sharing a vertex
// skipped); the counting is not timed. Pliant runs the benchmark scene as it is, on one thread.
//
// Output: scene,threads,frames,ms_per_frame,mean_strain,p99_strain,state_hash,
// final_intersecting_pairs,max_intersecting_pairs,frames_with_intersections (CSV), and a summary
// on stderr.
//
// Usage: pliant_bullet_self_collision [--frames N] [--iterations N] [--clusters N]
//                                     [--deformable-frames N] [--deformable-stiffness K]
//                                     [--deformable-substeps N] [--csv FILE]
// --deformable-frames N adds a row of Bullet's deformable world over the first N frames (default 0:
// not run, since it takes minutes per frame on this cloth: see docs/performance.md).
// Bullet's deformable headers instantiate code that g++ 12 warns about (an array copy in
// btModifiedGramSchmidt); it is Bullet's, not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <BulletSoftBody/btDeformableBodySolver.h>
#include <BulletSoftBody/btDeformableGravityForce.h>
#include <BulletSoftBody/btDeformableMassSpringForce.h>
#include <BulletSoftBody/btDeformableMultiBodyConstraintSolver.h>
#include <BulletSoftBody/btDeformableMultiBodyDynamicsWorld.h>
#pragma GCC diagnostic pop
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bullet_harness.h"
#include "pliant/bench/benchmark.h"
#include "pliant/error.h"
#include "pliant/geometry.h"
#include "pliant/io/output.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace {

using namespace pliant::bench::bullet;

constexpr const char* kScene = "contact-fold-64";

struct Row {
  pliant::BenchmarkResult result;
  std::size_t finalIntersections = 0;
  std::size_t maxIntersections = 0;
  int framesWithIntersections = 0;
  double lowest = 0.0, highest = 0.0;  // m, the final mesh's extent in y (the ground is y = 0)

  void extent(const std::vector<pliant::Vec3>& positions) {
    lowest = highest = positions.empty() ? 0.0 : positions[0].y();
    for (const pliant::Vec3& p : positions) lowest = std::min(lowest, p.y()), highest = std::max(highest, p.y());
  }

  void count(std::size_t pairs) {
    finalIntersections = pairs;
    maxIntersections = std::max(maxIntersections, pairs);
    if (pairs > 0) ++framesWithIntersections;
  }
};

// The ground: Pliant's plane collider y = 0, with its static friction.
struct Ground {
  btStaticPlaneShape shape{btVector3(0, 1, 0), 0};
  btRigidBody body;

  explicit Ground(const pliant::Model& model) : body(constructionInfo(shape, model)) {}

 private:
  static btRigidBody::btRigidBodyConstructionInfo constructionInfo(btStaticPlaneShape& plane,
                                                                   const pliant::Model& model) {
    btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, &plane);
    info.m_friction = btScalar(model.colliders.at(0).material.staticFriction);
    return info;
  }
};

// Bullet's patch over Pliant's cloth: its nodes must be Pliant's particles, in Pliant's order.
btSoftBody* makePatch(btSoftBodyWorldInfo& info, const pliant::Model& model) {
  const std::size_t n = model.particleCount();
  const auto side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(n))));
  if (side * side != n) throw pliant::Error("contact-fold-64 is expected to be a square grid");
  const auto& x = model.initialPosition;
  btSoftBody* cloth =
      btSoftBodyHelpers::CreatePatch(info, toBullet(x[0]), toBullet(x[side - 1]), toBullet(x[n - side]),
                                     toBullet(x[n - 1]), static_cast<int>(side), static_cast<int>(side), 0, true);
  for (std::size_t i = 0; i < n; ++i) {
    const btVector3& b = cloth->m_nodes[static_cast<int>(i)].m_x;
    if ((pliant::Vec3(b.x(), b.y(), b.z()) - x[i]).norm() > 1e-5) {
      delete cloth;
      throw pliant::Error("Bullet's patch node " + std::to_string(i) + " is not Pliant's particle " +
                          std::to_string(i));
    }
  }
  return cloth;
}

double totalMass(const pliant::Model& model) {
  double mass = 0.0;
  for (double m : model.mass) mass += m;
  return mass;
}

// Steps `world` (its cloth `cloth`) through `frames` frames with `stepFrame`, timing only the
// steps, and counts the intersecting pairs of Bullet's own triangles after every frame.
template <class StepFrame>
Row measure(const pliant::Model& model, btSoftBody* cloth, int frames, const std::string& name, StepFrame&& stepFrame) {
  const std::size_t n = model.particleCount();
  std::vector<std::array<pliant::ParticleIndex, 3>> faces;
  for (int f = 0; f < cloth->m_faces.size(); ++f) {
    std::array<pliant::ParticleIndex, 3> t{};
    for (int k = 0; k < 3; ++k)
      t[k] = static_cast<pliant::ParticleIndex>(cloth->m_faces[f].m_n[k] - &cloth->m_nodes[0]);
    faces.push_back(t);
  }
  Row row;
  std::vector<pliant::Vec3> positions(n);
  double seconds = 0.0;
  for (int frame = 0; frame < frames; ++frame) {
    const auto begin = std::chrono::steady_clock::now();
    stepFrame();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    for (std::size_t i = 0; i < n; ++i) {
      const btVector3& p = cloth->m_nodes[static_cast<int>(i)].m_x;
      positions[i] = pliant::Vec3(p.x(), p.y(), p.z());
    }
    row.count(pliant::countIntersectingTrianglePairs(positions, faces));
  }
  std::vector<double> strains;
  for (int l = 0; l < cloth->m_links.size(); ++l) {
    const btSoftBody::Link& link = cloth->m_links[l];
    const double length = (link.m_n[0]->m_x - link.m_n[1]->m_x).length();
    if (link.m_rl > 0) strains.push_back(std::abs(length / double(link.m_rl) - 1.0));
  }
  row.extent(positions);
  pliant::State final = pliant::State::fromModel(model);
  final.position = positions;
  row.result.scene = name + "/" + kScene;
  row.result.threads = 1;
  row.result.frames = frames;
  row.result.msPerFrame = 1e3 * seconds / frames;
  row.result.strain = pliant::strainStatistics(strains);
  row.result.stateHash = final.hash();
  return row;
}

Row runBullet(const pliant::Scene& scene, int frames, int iterations, int clusters, bool selfCollision) {
  const pliant::Model& model = *scene.model;
  BulletWorld bullet(scene.settings.gravity);
  btSoftRigidDynamicsWorld& world = bullet.world;
  btSoftBodyWorldInfo& info = world.getWorldInfo();

  Ground ground(model);
  world.addRigidBody(&ground.body);

  btSoftBody* cloth = makePatch(info, model);
  for (int m = 0; m < cloth->m_materials.size(); ++m) cloth->m_materials[m]->m_kLST = 1;
  cloth->m_cfg.piterations = iterations;
  cloth->m_cfg.kDP = 0;
  cloth->m_cfg.kDF = btScalar(0.3);
  cloth->m_cfg.collisions =
      selfCollision ? btSoftBody::fCollision::SDF_RS | btSoftBody::fCollision::CL_SS | btSoftBody::fCollision::CL_SELF
                    : int(btSoftBody::fCollision::SDF_RS);
  cloth->getCollisionShape()->setMargin(btScalar(0.5 * model.surfaceThickness));
  cloth->setTotalMass(btScalar(totalMass(model)), false);
  cloth->generateClusters(clusters);
  world.addSoftBody(cloth);

  const double dt = scene.settings.timeStep;
  Row row = measure(model, cloth, frames, selfCollision ? "bullet-cl-self" : "bullet-no-self",
                    [&] { world.stepSimulation(btScalar(dt), 1, btScalar(dt)); });
  world.removeSoftBody(cloth);
  delete cloth;
  world.removeRigidBody(&ground.body);
  return row;
}

// Bullet's other soft body solver, the one whose self-collision works in 3.24: the deformable world
// (btDeformableMultiBodyDynamicsWorld, implicit backward Euler over Lagrangian forces, vertex-face
// self-contact VF_DD with setSelfCollision), set up as Bullet's own deformable cloth examples do:
// a mass-spring force (stiffness `stiffness` N/m per edge, damping 0.01, bending off as Pliant's is
// nearly none), gravity as a force, rigid contact SDF_RD with Pliant's ground friction, contact and
// kinetic hardness 1, `substeps` fixed substeps per 1/60 s frame (the examples use 1/240 s).
Row runBulletDeformable(const pliant::Scene& scene, int frames, double stiffness, int substeps) {
  const pliant::Model& model = *scene.model;
  btSoftBodyRigidBodyCollisionConfiguration collision;
  btCollisionDispatcher dispatcher(&collision);
  btDbvtBroadphase broadphase;
  btDeformableBodySolver deformableSolver;
  btDeformableMultiBodyConstraintSolver constraintSolver;
  constraintSolver.setDeformableSolver(&deformableSolver);
  btDeformableMultiBodyDynamicsWorld world(&dispatcher, &broadphase, &constraintSolver, &collision, &deformableSolver);
  const pliant::Vec3& g = scene.settings.gravity;
  world.setGravity(toBullet(g));
  btSoftBodyWorldInfo& info = world.getWorldInfo();
  info.m_gravity = world.getGravity();
  info.m_sparsesdf.setDefaultVoxelsz(0.25);
  info.m_sparsesdf.Reset();

  Ground ground(model);
  world.addRigidBody(&ground.body);

  btSoftBody* cloth = makePatch(info, model);
  cloth->getCollisionShape()->setMargin(btScalar(0.5 * model.surfaceThickness));
  cloth->setTotalMass(btScalar(totalMass(model)), false);
  cloth->m_cfg.kKHR = 1;
  cloth->m_cfg.kCHR = 1;
  cloth->m_cfg.kDF = btScalar(0.3);
  cloth->m_cfg.collisions = btSoftBody::fCollision::SDF_RD | btSoftBody::fCollision::VF_DD;
  cloth->setSelfCollision(true);
  world.addSoftBody(cloth);
  btDeformableMassSpringForce springs(btScalar(stiffness), btScalar(0.01), true);
  world.addForce(cloth, &springs);
  btDeformableGravityForce gravity(toBullet(g));
  world.addForce(cloth, &gravity);

  const double dt = scene.settings.timeStep;
  Row row = measure(model, cloth, frames, "bullet-deformable-self",
                    [&] { world.stepSimulation(btScalar(dt), substeps, btScalar(dt / substeps)); });
  world.removeSoftBody(cloth);
  delete cloth;
  world.removeRigidBody(&ground.body);
  return row;
}

Row runPliant(const pliant::Scene& scene, int frames) {
  pliant::setThreadCount(1);
  pliant::Solver solver(scene.model, scene.settings);
  pliant::State state = pliant::State::fromModel(*scene.model);
  Row row;
  double seconds = 0.0;
  for (int frame = 0; frame < frames; ++frame) {
    const auto begin = std::chrono::steady_clock::now();
    const pliant::StepResult r = solver.step(state);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (!r.ok()) throw pliant::Error(std::string(kScene) + ": " + r.message);
    row.count(pliant::countIntersectingTrianglePairs(state.position, scene.topology.triangles));
  }
  row.extent(state.position);
  row.result.scene = std::string("pliant/") + kScene;
  row.result.threads = 1;
  row.result.frames = frames;
  row.result.msPerFrame = 1e3 * seconds / frames;
  row.result.strain = pliant::edgeStrain(*scene.model, state.position);
  row.result.stateHash = state.hash();
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 120, iterations = 10, clusters = 0, deformableSubsteps = 4, deformableFrames = 0;
  double deformableStiffness = 1e4;
  std::string csvPath;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--frames") frames = parseCount("pliant_bullet_self_collision", "--frames", value, 1), ++i;
    else if (arg == "--iterations")
      iterations = parseCount("pliant_bullet_self_collision", "--iterations", value, 1), ++i;
    else if (arg == "--clusters") clusters = parseCount("pliant_bullet_self_collision", "--clusters", value, 0), ++i;
    else if (arg == "--deformable-substeps")
      deformableSubsteps = parseCount("pliant_bullet_self_collision", "--deformable-substeps", value, 1), ++i;
    else if (arg == "--deformable-frames")
      deformableFrames = parseCount("pliant_bullet_self_collision", "--deformable-frames", value, 0), ++i;
    else if (arg == "--deformable-stiffness")
      deformableStiffness = parsePositive("pliant_bullet_self_collision", "--deformable-stiffness", value), ++i;
    else if (arg == "--csv" && value) csvPath = value, ++i;
    else if (arg == "--help" || arg == "-h") {
      std::printf(
          "Usage: pliant_bullet_self_collision [--frames N] [--iterations N] [--clusters N]\n"
          "       [--deformable-frames N (0: not run)] [--deformable-stiffness K (N/m, 1e4)]\n"
          "       [--deformable-substeps N (4)] [--csv FILE]\n"
          "Runs contact-fold-64 with Bullet's btSoftBody (cluster self-collision) and with Pliant on one thread;\n"
          "prints CSV with the intersecting triangle pairs of each engine's mesh.\n");
      return 0;
    } else {
      std::fprintf(stderr, "pliant_bullet_self_collision: unknown argument '%s' (see --help)\n", arg.c_str());
      return 2;
    }
  }
  try {
    const pliant::Scene scene = pliant::makeBenchmarkScene(kScene);
    pliant::setThreadCount(1);
    pliant::pinThreadsToCores();
    const Row bullet = runBullet(scene, frames, iterations, clusters, true);
    const Row bulletWithout = runBullet(scene, frames, iterations, clusters, false);
    const Row pliantRow = runPliant(scene, frames);
    std::vector<const Row*> rows = {&bullet, &bulletWithout, &pliantRow};
    Row deformable;
    if (deformableFrames > 0) {
      deformable = runBulletDeformable(scene, deformableFrames, deformableStiffness, deformableSubsteps);
      rows.insert(rows.begin() + 2, &deformable);
    }
    std::string csv = pliant::benchmarkCsvHeader();
    csv.pop_back();
    csv += ",final_intersecting_pairs,max_intersecting_pairs,frames_with_intersections\n";
    for (const Row* r : rows) {
      std::string line = pliant::benchmarkCsvRow(r->result);
      line.pop_back();
      csv += line + "," + std::to_string(r->finalIntersections) + "," + std::to_string(r->maxIntersections) + "," +
             std::to_string(r->framesWithIntersections) + "\n";
    }
    writeCsv(csvPath, csv);
    std::fprintf(stderr, "%s, %d frames, Bullet with %d iterations and %d clusters (0: one per triangle):\n", kScene,
                 frames, iterations, clusters);
    for (const Row* r : rows)
      std::fprintf(stderr,
                   "  %-36s %8.3f ms/frame, mean strain %.4f, intersecting pairs: %zu at the end, at most %zu, "
                   "in %d of %d frames; final y from %.4f to %.4f m\n",
                   r->result.scene.c_str(), r->result.msPerFrame, r->result.strain.mean, r->finalIntersections,
                   r->maxIntersections, r->framesWithIntersections, r->result.frames, r->lowest, r->highest);
    // Bullet 3.24 switches on `collisions & SVSmask`, which holds CL_SELF too: CL_SS + CL_SELF
    // matches no case and a body is never collided with itself. Say so when the flags changed nothing.
    if (bullet.result.stateHash == bulletWithout.result.stateHash)
      std::fprintf(stderr,
                   "  Bullet's self-collision flags changed nothing: the final state is bit-identical without them\n");
    return 0;
  } catch (const pliant::Error& e) {
    std::fprintf(stderr, "pliant_bullet_self_collision: %s\n", e.what());
    return 1;
  }
}
