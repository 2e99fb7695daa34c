// Pliant's side of issue 17's rigid body speed comparison: the two scenes of bench/bullet/README.md
// (a pile of 1,000 boxes dropped onto the ground; a 100-link hinge chain) built from the numbers of
// bench/bullet/rigid_scenes.h, measured as bullet_rigid_bench.cpp measures Bullet, with the same CSV
// columns (engine = pliant). Needs no Bullet.
//
// Pliant as its users run it: SolverSettings::smallSteps (XPBD, one iteration per substep) with
// --substeps substeps per 1/60 s frame (default 20, as the built-in body scenes), one thread
// (the bodies' contacts and joints are solved on one thread), the default contact margin (5 mm),
// friction 0.5 static and dynamic, restitution 0.
//
// Output (CSV on stdout or --csv FILE):
//   scene,engine,bodies,frames,ms_per_frame,max_penetration_m,max_joint_error_m,drift_m
//   ms_per_frame       mean wall time of Solver::step per frame (steady clock)
//   max_penetration_m  largest overlap of any body contact at the end of the last frame
//   max_joint_error_m  chain: largest distance between a hinge's two pivot points over every frame
//   drift_m            as bullet_rigid_bench.cpp: pile, the largest displacement of a box over the
//                      last --rest-frames frames; chain, after the swing and 600 frames of damped
//                      settling, the largest displacement of a link over --rest-frames frames
//
// Usage: pliant_rigid_bench [--frames N] [--rest-frames N] [--substeps N] [--csv FILE] [--scene pile|chain]
#include <algorithm>
#include <chrono>
#include <cmath>
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

SolverSettings settings(int substeps, double frameRate, double gravity) {
  SolverSettings s = SolverSettings::smallSteps(substeps, 1.0 / frameRate);
  s.gravity = Vec3(0.0, -gravity, 0.0);
  return s;
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

Row runPile(int frames, int restFrames, int substeps) {
  const ContactMaterial material{PileScene::kFriction, PileScene::kFriction, 0.0};
  ModelBuilder builder;
  builder.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), material));
  for (int i = 0; i < PileScene::kBoxCount; ++i) {
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
  Solver solver(model, settings(substeps, PileScene::kFrameRate, PileScene::kGravity));
  State state = State::fromModel(*model);
  Row row;
  row.scene = "box-pile-1000";
  row.bodies = PileScene::kBoxCount;
  row.frames = frames;
  double total = 0.0;
  std::vector<Vec3> rest;
  for (int f = 0; f < frames; ++f) {
    if (f == frames - restFrames) rest = state.bodyPosition;
    total += stepTimed(solver, state);
  }
  row.msPerFrame = total / frames;
  row.maxPenetration = maxPenetration(solver, state);
  for (std::size_t b = 0; b < rest.size(); ++b)
    row.drift = std::max(row.drift, (state.bodyPosition[b] - rest[b]).norm());
  return row;
}

Row runChain(int frames, int restFrames, int substeps) {
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
  Solver solver(model, settings(substeps, ChainScene::kFrameRate, ChainScene::kGravity));
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
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 600, restFrames = 60, substeps = 20;
  std::string csvPath, only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--frames" && value) frames = parseCount("pliant_rigid_bench", "--frames", value, 1), ++i;
    else if (arg == "--rest-frames" && value)
      restFrames = parseCount("pliant_rigid_bench", "--rest-frames", value, 0), ++i;
    else if (arg == "--substeps" && value) substeps = parseCount("pliant_rigid_bench", "--substeps", value, 1), ++i;
    else if (arg == "--csv" && value) csvPath = value, ++i;
    else if (arg == "--scene" && value) only = value, ++i;
    else {
      std::fprintf(stderr,
                   "Usage: pliant_rigid_bench [--frames N] [--rest-frames N] [--substeps N] [--csv FILE] [--scene "
                   "pile|chain]\nPliant on issue 17's rigid scenes (bench/bullet/README.md).\n");
      return arg == "--help" ? 0 : 2;
    }
  }
  if (restFrames > frames || (!only.empty() && only != "pile" && only != "chain")) {
    std::fprintf(stderr, "pliant_rigid_bench: expected 0 <= --rest-frames <= --frames, --scene pile|chain\n");
    return 2;
  }
  pliant::setThreadCount(1);
  std::vector<Row> rows;
  if (only.empty() || only == "pile") rows.push_back(runPile(frames, restFrames, substeps));
  if (only.empty() || only == "chain") rows.push_back(runChain(frames, restFrames, substeps));
  try {
    pliant::bench::writeCsv(csvPath, pliant::bench::rigid::csvText(rows, "pliant"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pliant_rigid_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
