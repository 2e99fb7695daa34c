// Models for tests of the parallel solve plan and projection (tests/unit/solve_plan_test.cpp,
// tests/unit/projection_parts_test.cpp, tests/determinism/parallel_determinism_test.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

#include "pliant/builders.h"
#include "pliant/model.h"
#include "solve_plan.h"

namespace pliant::testing {

// A square cloth of `nodes` x `nodes` with isometric bending, pinned at the two corners of its
// first row, with tethers to both pins.
inline ModelPtr pinnedCloth(int nodes) {
  ModelBuilder b;
  ClothGridDef def;
  def.nodesX = def.nodesY = nodes;
  def.stretch.compliance = 1e-7;
  def.bending = BendingModel::Isometric;
  const GeneratedObject c = addClothGrid(b, def);
  const ParticleIndex pins[2] = {c.firstParticle, c.firstParticle + static_cast<ParticleIndex>(nodes - 1)};
  for (ParticleIndex p : pins) b.fixParticle(p);
  addTethers(b, {pins[0], pins[1]}, c.firstParticle, c.particleCount, ConstraintParameters{});
  return b.build();
}

// Each colour (independent batch of the plan for `blockSize`) of m's stretch, bending and tethers
// in random order: still a colour, but the threads' parts of it then share particles all over, not
// only where they meet.
inline void shuffleColours(Model& m, std::uint32_t blockSize, unsigned seed) {
  const detail::SolvePlan plan = detail::planSolve(m, blockSize);
  std::mt19937 random(seed);
  auto shuffle = [&](auto& array, ConstraintFamily family) {
    for (const detail::SolveBatch& batch : plan.batches[static_cast<int>(family)])
      if (batch.independent) std::shuffle(array.begin() + batch.begin, array.begin() + batch.end, random);
  };
  shuffle(m.distances, ConstraintFamily::Distance);
  shuffle(m.isometricBendings, ConstraintFamily::IsometricBending);
  shuffle(m.maxDistances, ConstraintFamily::MaxDistance);
}

}  // namespace pliant::testing
