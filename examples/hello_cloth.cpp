// The README's example, compiled with the project so it cannot go stale: a cloth pinned at two
// corners, stepped with small-step XPBD, plus one user constraint written as a lambda.
#include <iostream>

#include "pliant/pliant.h"

int main() {
  using namespace pliant;

  ModelBuilder builder;
  ClothGridDef cloth;               // 32 x 32 nodes, 1 m x 1 m, horizontal
  cloth.stretch.compliance = 1e-7;  // m/N
  cloth.bending = BendingModel::Isometric;
  cloth.bendingParams.compliance = 0.5;  // 1/J
  GeneratedObject made = addClothGrid(builder, cloth);
  builder.fixParticle(made.firstParticle);  // pin two corners
  builder.fixParticle(made.firstParticle + cloth.nodesX - 1);

  // Keep the two free corners of the far edge at most 0.9 m apart (C = 0.9 - |a - b| >= 0).
  const ParticleIndex corners[2] = {made.firstParticle + cloth.nodesX * (cloth.nodesY - 1),
                                    made.firstParticle + cloth.nodesX * cloth.nodesY - 1};
  builder.addGeneric(
      [](std::span<const Vec3> x, std::span<Vec3> grad) {
        const Vec3 d = x[0] - x[1];
        const double length = d.norm();
        grad[0] = -d / length;
        grad[1] = d / length;
        return 0.9 - length;
      },
      corners, /*inequality=*/true, ConstraintParameters{.compliance = 1e-6});
  const ModelPtr model = builder.build();  // validated; throws pliant::Error naming a bad field

  SolverSettings settings = SolverSettings::smallSteps(10);  // XPBD, 10 substeps x 1 iteration
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  for (int frame = 0; frame < 120; ++frame) {
    StepResult result = solver.step(state);  // a refused step leaves the state untouched
    if (!result.ok()) {
      std::cerr << result.message << '\n';
      return 1;
    }
  }
  const EnergyReport energy = computeEnergy(*model, state, settings);
  std::cout << "after 2 s: kinetic energy " << energy.kinetic << " J, corner distance "
            << (state.position[corners[0]] - state.position[corners[1]]).norm() << " m, state hash " << std::hex
            << state.hash() << '\n';
  return 0;
}
