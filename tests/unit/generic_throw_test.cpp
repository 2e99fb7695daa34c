// A user constraint function that throws must not end the program, on any thread count (the
// function runs inside the solver's parallel region when the model has a batch worth splitting):
// the step is refused, the state is left as it was, and the refusal names the constraint and what
// the function threw.
#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <string>

#include "pliant/builders.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

struct ThrowingScene {
  ModelPtr model;
  std::shared_ptr<int> calls = std::make_shared<int>(0);
};

// A pinned cloth large enough that its stretch batches are split across threads (block size 16),
// and one user constraint whose function throws from its `throwAt`-th call on.
ThrowingScene throwingScene(int throwAt) {
  ThrowingScene scene;
  ModelBuilder builder;
  ClothGridDef cloth;
  cloth.nodesX = 16;
  cloth.nodesY = 16;
  cloth.stretch.compliance = 1e-6;
  const GeneratedObject made = addClothGrid(builder, cloth);
  builder.fixParticle(made.firstParticle);
  const std::array<ParticleIndex, 2> pair = {made.firstParticle + 5, made.firstParticle + 40};
  std::shared_ptr<int> calls = scene.calls;
  builder.addGeneric(
      [calls, throwAt](std::span<const Vec3> x, std::span<Vec3> gradient) -> double {
        if (++*calls >= throwAt) throw std::runtime_error("boom from the user function");
        const Vec3 d = x[0] - x[1];
        gradient[0] = d.normalized();
        gradient[1] = -d.normalized();
        return d.norm() - 1.0;
      },
      pair, /*inequality=*/true, ConstraintParameters{});
  scene.model = builder.build();
  return scene;
}

TEST(GenericThrow, RefusesTheStepNamingTheConstraintOnEveryThreadCount) {
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    setThreadCount(threads);
    ThrowingScene scene = throwingScene(/*throwAt=*/12);
    SolverSettings settings = SolverSettings::smallSteps(4);
    settings.parallelBlockSize = 16;
    Solver solver(scene.model, settings);
    State state = State::fromModel(*scene.model);
    // The first steps call the function fewer than 12 times and pass.
    ASSERT_TRUE(solver.step(state).ok());
    ASSERT_TRUE(solver.step(state).ok());
    StepResult result;
    State before;
    for (int step = 0; step < 10; ++step) {
      before = state;
      result = solver.step(state);
      if (!result.ok()) break;
    }
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(state.hash(), before.hash()) << "a refused step must leave the state as it was";
    EXPECT_TRUE(result.hasConstraint);
    EXPECT_EQ(result.constraint.family, ConstraintFamily::Generic);
    EXPECT_EQ(result.constraint.index, 0u);
    EXPECT_NE(result.message.find("generic constraint 0"), std::string::npos) << result.message;
    EXPECT_NE(result.message.find("boom from the user function"), std::string::npos) << result.message;
  }
  setThreadCount(1);
}

}  // namespace
}  // namespace pliant
