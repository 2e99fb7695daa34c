// Soak (issue 12): a cloth resting on the ground for 10^6 substeps must stay where it came to rest
// and keep no energy. A 32 x 32 cloth, 0.5 m, 0.1 kg, with isometric bending and friction, is
// dropped 5 cm onto a plane; once every particle is slower than 1 mm/s the positions are recorded
// (the first rested state), and the run goes on to 10^6 substeps in all. Writes CSV (stdout, or
// --csv FILE; --substeps N for a shorter soak):
//   substeps,substeps_to_rest,drift_max_m,drift_rms_m,max_speed_m_s,kinetic_J,elastic_J,
//   elastic_from_positions_J,potential_change_J,relative_residual,contacts,wall_s,state_hash
// drift is the displacement from the first rested state (max and rms over particles), energies at
// the end (potential relative to the rested state; elastic as pliant/diagnostics.h defines it).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "pliant/builders.h"
#include "pliant/diagnostics.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace {

using namespace pliant;

double maxSpeed(const State& state) {
  double v = 0.0;
  for (const Vec3& u : state.velocity) v = std::max(v, u.norm());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  long long total = 1000000;
  std::string csvPath;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--substeps" && i + 1 < argc) total = std::max(1LL, std::atoll(argv[++i]));
    else if (arg == "--csv" && i + 1 < argc) csvPath = argv[++i];
    else {
      std::cerr << "usage: pliant_soak [--substeps N] [--csv FILE]\n";
      return 2;
    }
  }
  setThreadCount(1);  // a small cloth: one thread, and the same bits on any machine

  ModelBuilder builder;
  ClothGridDef def;
  def.nodesX = 32;
  def.nodesY = 32;
  def.sizeX = 0.5;
  def.sizeY = 0.5;
  def.origin = Vec3(-0.25, 0.055, -0.25);
  def.totalMass = 0.1;
  def.stretch = {1e-7, 0.0, 1.0};
  def.bending = BendingModel::Isometric;
  def.bendingParams = {0.5, 0.0, 1.0};
  def.dampingFactor = 0.01;
  const GeneratedObject cloth = addClothGrid(builder, def);
  builder.setParticleRadius(cloth.firstParticle, cloth.particleCount, 0.005);
  ContactMaterial ground;
  ground.staticFriction = 0.6;
  ground.dynamicFriction = 0.5;
  builder.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), ground));
  const ModelPtr model = builder.build();
  const SolverSettings settings = SolverSettings::smallSteps(15);
  Solver solver(model, settings);
  State state = State::fromModel(*model);

  const long long perStep = settings.substeps;
  long long done = 0;
  long long toRest = -1;
  std::vector<Vec3> rested;
  double restedPotential = 0.0;
  double driftMax = 0.0;
  const auto start = std::chrono::steady_clock::now();
  while (done + perStep <= total) {
    const StepResult result = solver.step(state);
    if (!result.ok()) {
      std::cerr << "pliant_soak: " << result.message << '\n';
      return 1;
    }
    done += perStep;
    if (toRest < 0) {
      if (maxSpeed(state) < 1e-3) {
        toRest = done;
        rested = state.position;
        restedPotential = computeEnergy(*model, state, settings).gravitational;
      }
      continue;
    }
    for (std::size_t i = 0; i < rested.size(); ++i)
      driftMax = std::max(driftMax, (state.position[i] - rested[i]).norm());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (toRest < 0) {
    std::cerr << "pliant_soak: the cloth did not come to rest in " << done << " substeps (max speed " << maxSpeed(state)
              << " m/s)\n";
    return 1;
  }
  double sum2 = 0.0;
  for (std::size_t i = 0; i < rested.size(); ++i) sum2 += (state.position[i] - rested[i]).squaredNorm();
  const EnergyReport e = computeEnergy(*model, state, settings);
  const ResidualReport r = computeResidual(*model, state, settings);
  std::ostringstream csv;
  csv.precision(6);
  csv << "substeps,substeps_to_rest,drift_max_m,drift_rms_m,max_speed_m_s,kinetic_J,elastic_J,"
         "elastic_from_positions_J,potential_change_J,relative_residual,contacts,wall_s,state_hash\n";
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, state.hash());
  csv << done << ',' << toRest << ',' << driftMax << ',' << std::sqrt(sum2 / static_cast<double>(rested.size())) << ','
      << maxSpeed(state) << ',' << e.kinetic << ',' << e.elastic << ',' << e.elasticFromPositions << ','
      << e.gravitational - restedPotential << ',' << r.relative << ',' << solver.lastContactCount() << ',' << wall
      << ',' << hash << '\n';
  if (csvPath.empty()) {
    std::cout << csv.str();
  } else {
    std::ofstream out(csvPath, std::ios::binary | std::ios::trunc);
    out << csv.str();
    if (!out) {
      std::cerr << "pliant_soak: cannot write " << csvPath << '\n';
      return 1;
    }
  }
  return 0;
}
