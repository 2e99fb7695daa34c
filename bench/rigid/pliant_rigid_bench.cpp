// Pliant's side of issue 17's rigid body speed comparison: the two scenes of bench/bullet/README.md
// (a pile of 1,000 boxes dropped onto the ground; a 100-link hinge chain) built from the numbers of
// bench/bullet/rigid_scenes.h, measured as bullet_rigid_bench.cpp measures Bullet, with the same CSV
// columns (engine = pliant). Needs no Bullet.
//
// Pliant as its users run it: SolverSettings::smallSteps (XPBD, one iteration per substep) with
// --substeps substeps per 1/60 s frame (default 20, as the built-in body scenes), one thread
// unless --threads says more (a large pile's contacts then run on the team), the default contact margin (5 mm),
// friction 0.5 static and dynamic, restitution 0.
//
// Output (CSV on stdout or --csv FILE):
//   scene,engine,bodies,frames,ms_per_frame,max_penetration_m,max_joint_error_m,drift_m
//   ms_per_frame       mean wall time of Solver::step per frame (steady clock)
//   max_penetration_m  largest overlap at the end of the last frame: pile, of any two boxes
//                      (collideShapes over every pair whose bounds meet) or a box and the ground,
//                      asleep or not; chain, of any body contact of the last substep
//   max_joint_error_m  chain: largest distance between a hinge's two pivot points over every frame
//   drift_m            as bullet_rigid_bench.cpp: pile, the largest displacement of a box over the
//                      last --rest-frames frames; chain, after the swing and 600 frames of damped
//                      settling, the largest displacement of a link over --rest-frames frames
//
// Solver options: --contact-passes N and --velocity-passes N (SolverSettings::bodyContactPasses,
// bodyVelocityPasses; 16 and 4 by default), --no-sleep (SolverSettings::sleeping off),
// --collide-per-step (SolverSettings::bodyCollisionPerSubstep false: contacts found once per step),
// --stack-scaling K (SolverSettings::bodyStackMassScaling, 1/m; 0 by default). The pile's
// line on stderr gives the settings, the bodies asleep and those off their place in the standing pile
// at the end (PileScene::offPlace: fallen off, or the pile collapsed) and the mean ms of each second;
// --trace adds the pile's motion each simulated second (kinetic energy, fastest box, top height);
// --frame-trace each frame's ms, awake boxes, body contacts of the last substep, and the fastest and
// fastest-turning boxes (what keeps the pile from sleeping).
// --layers N (1-10) builds the pile's lowest N layers only (100 N boxes; scene box-pile-1000 keeps
// its name), for quick studies of how a shorter stack settles. --threads N (default 1, as Bullet's
// btDiscreteDynamicsWorld runs on one): Pliant's threads (the pile's narrow phase and contact passes).
//
// Usage: pliant_rigid_bench [--frames N] [--rest-frames N] [--substeps N] [--contact-passes N]
//                           [--velocity-passes N] [--stack-scaling K] [--layers N] [--no-sleep]
//                           [--collide-per-step] [--trace]
//                           [--frame-trace] [--state-hash] [--threads N] [--csv FILE] [--scene pile|chain]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "../bench_options.h"
#include "../bullet/rigid_scenes.h"
#include "pliant/io/output.h"
#include "pliant/pliant.h"

namespace {

using pliant::BodyContact;
using pliant::BodyDefinition;
using pliant::BodyIndex;
using pliant::BodyShapeKind;
using pliant::Collider;
using pliant::ContactMaterial;
using pliant::JointDefinition;
using pliant::JointKind;
using pliant::kWorldBody;
using pliant::ModelBuilder;
using pliant::ModelPtr;
using pliant::Quat;
using pliant::Solver;
using pliant::SolverSettings;
using pliant::State;
using pliant::Vec3;
using pliant::bench::parseCount;
using pliant::bench::rigid::ChainScene;
using pliant::bench::rigid::PileScene;
using pliant::bench::rigid::Row;

// The solver options of the command line.
struct Options {
  int substeps = 20;
  int contactPasses = 16;
  int velocityPasses = 4;
  bool sleeping = true;
  bool collidePerSubstep = true;
  bool trace = false;         // --trace: the pile's motion each simulated second on stderr
  int layers = 10;            // --layers: the pile's lowest layers only (100 boxes each), for quick studies
  bool stateHash = false;     // --state-hash: FNV-1a of the final body poses on stderr (bit-identity checks)
  bool frameTrace = false;    // --frame-trace: the pile's frame, ms, awake boxes and body contacts, each frame
  double stackScaling = 0.0;  // --stack-scaling: SolverSettings::bodyStackMassScaling (1/m)
};

// FNV-1a 64 over the bodies' positions and rotations: equal hashes, the same bits.
void printStateHash(const char* scene, const State& state) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto add = [&](const double* values, std::size_t count) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(values);
    for (std::size_t i = 0; i < count * sizeof(double); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  };
  for (std::size_t b = 0; b < state.bodyPosition.size(); ++b) {
    add(state.bodyPosition[b].data(), 3);
    add(state.bodyRotation[b].coeffs().data(), 4);
  }
  std::fprintf(stderr, "%s state hash %016llx\n", scene, static_cast<unsigned long long>(hash));
}

SolverSettings settings(const Options& o, double frameRate, double gravity) {
  SolverSettings s = SolverSettings::smallSteps(o.substeps, 1.0 / frameRate);
  s.gravity = Vec3(0.0, -gravity, 0.0);
  s.bodyContactPasses = o.contactPasses;
  s.bodyVelocityPasses = o.velocityPasses;
  s.bodyStackMassScaling = o.stackScaling;
  s.sleeping = o.sleeping;
  s.bodyCollisionPerSubstep = o.collidePerSubstep;
  return s;
}

// The pile's deepest overlap (m) at the state's poses, found geometrically for every pair of boxes
// and every box on the ground (y = 0), so that sleeping boxes (which have no contacts) count too.
double pileOverlap(const pliant::Model& model, const State& state) {
  const std::size_t n = model.bodyCount();
  std::vector<Vec3> lower(n), upper(n);
  std::vector<pliant::ColliderPose> pose(n);
  double deepest = 0.0;
  for (std::size_t b = 0; b < n; ++b) {
    pose[b] = model.bodies[b].shapePose(state.bodyPosition[b], state.bodyRotation[b]);
    pliant::shapeBounds(model.bodies[b].shape, pose[b], 0.0, lower[b], upper[b]);
    const Vec3& e = model.bodies[b].shape.halfExtents;
    for (int c = 0; c < 8; ++c) {
      const Vec3 corner((c & 1 ? 1 : -1) * e.x(), (c & 2 ? 1 : -1) * e.y(), (c & 4 ? 1 : -1) * e.z());
      deepest = std::max(deepest, -(pose[b].position + pose[b].rotation * corner).y());
    }
  }
  pliant::ContactManifold manifold;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) {
      if (!((lower[a].array() <= upper[b].array()).all() && (lower[b].array() <= upper[a].array()).all())) continue;
      pliant::collideShapes(model.bodies[a].shape, pose[a], model.bodies[b].shape, pose[b], 0.0, manifold);
      for (int m = 0; m < manifold.count; ++m) {
        const pliant::ShapeContactPoint& p = manifold.points[m];
        deepest = std::max(deepest, -(p.pointB - p.pointA).dot(p.normal));
      }
    }
  return deepest;
}

// One frame, timed (ms); the run stops when Pliant refuses a step.
double stepTimed(Solver& solver, State& state) {
  const auto start = std::chrono::steady_clock::now();
  const pliant::StepResult r = solver.step(state);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!r.ok()) {
    std::fprintf(stderr, "pliant_rigid_bench: step refused: %s\n", r.message.c_str());
    std::exit(1);
  }
  return ms;
}

// The deepest overlap (m) of the last substep's body contacts at the state's poses.
double maxPenetration(const Solver& solver, const State& state) {
  double deepest = 0.0;
  for (const BodyContact& k : solver.lastBodyContacts()) {
    const Vec3 pA = state.bodyPosition[k.bodyA] + state.bodyRotation[k.bodyA] * k.localA;
    // A collider's point is in its own frame; the pile's only collider is the ground plane at the origin.
    const Vec3 pB =
        k.bodyB == kWorldBody ? k.localB : Vec3(state.bodyPosition[k.bodyB] + state.bodyRotation[k.bodyB] * k.localB);
    deepest = std::max(deepest, -(pB - pA).dot(k.normal));
  }
  return deepest;
}

Row runPile(int frames, int restFrames, const Options& options) {
  const ContactMaterial material{PileScene::kFriction, PileScene::kFriction, 0.0};
  ModelBuilder builder;
  builder.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), material));
  const int boxes = std::min(PileScene::kBoxCount, 100 * options.layers);
  for (int i = 0; i < boxes; ++i) {
    const PileScene::Box b = PileScene::box(i);
    BodyDefinition def;
    def.name = "box_" + std::to_string(i);
    def.shape.kind = BodyShapeKind::Box;
    def.shape.halfExtents = Vec3::Constant(PileScene::kHalfExtent);
    def.mass = PileScene::kMass;
    def.pose.position = Vec3(b.position[0], b.position[1], b.position[2]);
    def.pose.rotation = Quat(Eigen::AngleAxisd(b.yaw, Vec3::UnitY()));
    def.material = material;
    builder.addBody(def);
  }
  const ModelPtr model = builder.build();
  Solver solver(model, settings(options, PileScene::kFrameRate, PileScene::kGravity));
  State state = State::fromModel(*model);
  Row row;
  row.scene = "box-pile-1000";
  row.bodies = boxes;
  row.frames = frames;
  double total = 0.0, second = 0.0;
  std::vector<Vec3> rest;
  std::string seconds;
  for (int f = 0; f < frames; ++f) {
    if (f == frames - restFrames) rest = state.bodyPosition;
    const double ms = stepTimed(solver, state);
    total += ms;
    second += ms;
    if (options.frameTrace) {
      const auto awake = std::count_if(state.bodySleepIsland.begin(), state.bodySleepIsland.end(),
                                       [](std::int32_t island) { return island < 0; });
      // The fastest box's speed and the fastest turning one's rate: what keeps the pile awake.
      double fastest = 0.0, turning = 0.0;
      std::size_t fastBox = 0, turnBox = 0;
      for (std::size_t b = 0; b < state.bodyVelocity.size(); ++b) {
        if (state.bodyVelocity[b].norm() > fastest) fastest = state.bodyVelocity[b].norm(), fastBox = b;
        if (state.bodyAngularVelocity[b].norm() > turning) turning = state.bodyAngularVelocity[b].norm(), turnBox = b;
      }
      std::fprintf(stderr,
                   "frame %d: %.2f ms, %ld awake, %zu contacts, fastest box %zu %.3g m/s, turning box %zu %.3g "
                   "rad/s\n",
                   f + 1, ms, static_cast<long>(awake), solver.lastBodyContacts().size(), fastBox, fastest, turnBox,
                   turning);
    }
    if ((f + 1) % static_cast<int>(PileScene::kFrameRate) == 0 || f + 1 == frames) {
      const int count = f % static_cast<int>(PileScene::kFrameRate) + 1;
      seconds += " " + std::to_string(static_cast<int>(std::lround(second / count)));
      second = 0.0;
      if (options.trace) {
        pliant::bench::rigid::PileMotion motion;
        for (std::size_t b = 0; b < state.bodyPosition.size(); ++b)
          motion.add(state.bodyVelocity[b].norm(), state.bodyAngularVelocity[b].norm(), state.bodyPosition[b].y(),
                     !state.bodyAsleep(b));
        motion.print("pliant", (f + 1) / static_cast<int>(PileScene::kFrameRate));
      }
    }
  }
  row.msPerFrame = total / frames;
  row.maxPenetration = pileOverlap(*model, state);
  const auto asleep = std::count_if(state.bodySleepIsland.begin(), state.bodySleepIsland.end(),
                                    [](std::int32_t island) { return island >= 0; });
  int off = 0;
  for (int b = 0; b < boxes; ++b) {
    const Vec3& c = state.bodyPosition[static_cast<std::size_t>(b)];
    off += PileScene::offPlace(b, c.x(), c.y(), c.z());
  }
  std::fprintf(
      stderr,
      "pliant_rigid_bench pile: substeps %d, contact passes %d, velocity passes %d, stack mass scaling %g 1/m, "
      "sleeping %s, contacts found per %s; %ld of %d "
      "boxes asleep and %d off their place in the standing pile at the end; mean ms per frame in each second:%s\n",
      options.substeps, options.contactPasses, options.velocityPasses, options.stackScaling,
      options.sleeping ? "on" : "off", options.collidePerSubstep ? "substep" : "step", static_cast<long>(asleep), boxes,
      off, seconds.c_str());
  for (std::size_t b = 0; b < rest.size(); ++b)
    row.drift = std::max(row.drift, (state.bodyPosition[b] - rest[b]).norm());
  if (options.stateHash) printStateHash(row.scene.c_str(), state);
  return row;
}

Row runChain(int frames, int restFrames, const Options& options) {
  const double hx = ChainScene::kHalfLength, hw = ChainScene::kHalfWidth;
  const Vec3 pivot(ChainScene::kPivot[0], ChainScene::kPivot[1], ChainScene::kPivot[2]);
  ModelBuilder builder;
  for (int i = 0; i < ChainScene::kLinkCount; ++i) {
    const auto c = ChainScene::linkCentre(i);
    BodyDefinition def;
    def.name = "link_" + std::to_string(i);
    def.shape.kind = BodyShapeKind::Box;
    def.shape.halfExtents = Vec3(hx, hw, hw);
    def.mass = ChainScene::kMass;
    def.pose.position = Vec3(c[0], c[1], c[2]);
    builder.addBody(def);
  }
  // Hinges about z at the links' shared ends; the first link's free end hinged to the world.
  for (int i = 0; i < ChainScene::kLinkCount; ++i) {
    JointDefinition joint;
    joint.kind = JointKind::Hinge;
    joint.bodyA = i == 0 ? kWorldBody : static_cast<BodyIndex>(i - 1);
    joint.bodyB = static_cast<BodyIndex>(i);
    joint.anchor = pivot + Vec3(2.0 * hx * i, 0.0, 0.0);
    joint.axis = Vec3::UnitZ();
    builder.addJoint(joint);
  }
  const ModelPtr model = builder.build();
  Solver solver(model, settings(options, ChainScene::kFrameRate, ChainScene::kGravity));
  State state = State::fromModel(*model);
  const auto end = [&](int link, double side) {
    return Vec3(state.bodyPosition[link] + state.bodyRotation[link] * Vec3(side * hx, 0.0, 0.0));
  };
  const auto jointError = [&] {
    double worst = (end(0, -1.0) - pivot).norm();
    for (int i = 0; i + 1 < ChainScene::kLinkCount; ++i)
      worst = std::max(worst, (end(i, 1.0) - end(i + 1, -1.0)).norm());
    return worst;
  };
  Row row;
  row.scene = "hinge-chain-100";
  row.bodies = ChainScene::kLinkCount;
  row.frames = frames;
  double total = 0.0;
  for (int f = 0; f < frames; ++f) {
    total += stepTimed(solver, state);
    row.maxJointError = std::max(row.maxJointError, jointError());
  }
  row.msPerFrame = total / frames;
  row.maxPenetration = maxPenetration(solver, state);
  // Drift at rest, as Bullet's side: damped to rest hanging (velocities times 0.9 before each
  // frame), then left alone for restFrames.
  for (int f = 0; f < ChainScene::kSettleFrames; ++f) {
    for (std::size_t b = 0; b < state.bodyVelocity.size(); ++b) {
      state.bodyVelocity[b] *= 0.9;
      state.bodyAngularVelocity[b] *= 0.9;
    }
    stepTimed(solver, state);
  }
  const std::vector<Vec3> rest = state.bodyPosition;
  for (int f = 0; f < restFrames; ++f) stepTimed(solver, state);
  for (std::size_t b = 0; b < rest.size(); ++b)
    row.drift = std::max(row.drift, (state.bodyPosition[b] - rest[b]).norm());
  if (options.stateHash) printStateHash(row.scene.c_str(), state);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 600, restFrames = 60, threads = 1;
  Options options;
  std::string csvPath, only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--frames" && value) frames = parseCount("pliant_rigid_bench", "--frames", value, 1), ++i;
    else if (arg == "--rest-frames" && value)
      restFrames = parseCount("pliant_rigid_bench", "--rest-frames", value, 0), ++i;
    else if (arg == "--substeps" && value)
      options.substeps = parseCount("pliant_rigid_bench", "--substeps", value, 1), ++i;
    else if (arg == "--contact-passes" && value)
      options.contactPasses = parseCount("pliant_rigid_bench", "--contact-passes", value, 1), ++i;
    else if (arg == "--velocity-passes" && value)
      options.velocityPasses = parseCount("pliant_rigid_bench", "--velocity-passes", value, 1), ++i;
    else if (arg == "--layers" && value) options.layers = parseCount("pliant_rigid_bench", "--layers", value, 1), ++i;
    else if (arg == "--stack-scaling" && value)
      options.stackScaling = pliant::bench::parsePositive("pliant_rigid_bench", "--stack-scaling", value), ++i;
    else if (arg == "--no-sleep") options.sleeping = false;
    else if (arg == "--collide-per-step") options.collidePerSubstep = false;
    else if (arg == "--trace") options.trace = true;
    else if (arg == "--state-hash") options.stateHash = true;
    else if (arg == "--frame-trace") options.frameTrace = true;
    else if (arg == "--threads" && value) threads = parseCount("pliant_rigid_bench", "--threads", value, 1), ++i;
    else if (arg == "--csv" && value) csvPath = value, ++i;
    else if (arg == "--scene" && value) only = value, ++i;
    else {
      std::fprintf(stderr,
                   "Usage: pliant_rigid_bench [--frames N] [--rest-frames N] [--substeps N] [--contact-passes N] "
                   "[--velocity-passes N] [--stack-scaling K] [--layers N] [--no-sleep] [--collide-per-step] [--trace] "
                   "[--state-hash] "
                   "[--frame-trace] [--threads N] [--csv "
                   "FILE] [--scene pile|chain]\nPliant on issue 17's rigid "
                   "scenes (bench/bullet/README.md).\n");
      return arg == "--help" ? 0 : 2;
    }
  }
  if (restFrames > frames || (!only.empty() && only != "pile" && only != "chain")) {
    std::fprintf(stderr, "pliant_rigid_bench: expected 0 <= --rest-frames <= --frames, --scene pile|chain\n");
    return 2;
  }
  pliant::setThreadCount(threads);
  std::vector<Row> rows;
  if (only.empty() || only == "pile") rows.push_back(runPile(frames, restFrames, options));
  if (only.empty() || only == "chain") rows.push_back(runChain(frames, restFrames, options));
  try {
    pliant::bench::writeCsv(csvPath, pliant::bench::rigid::csvText(rows, "pliant"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pliant_rigid_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
