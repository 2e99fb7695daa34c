// A cloth folded over itself and moved by script, for tests of the surface broad phase
// (tests/unit/surface_local_update_test.cpp, tests/determinism/contact_determinism_test.cpp): no
// solver, so that particles can be made to jump out of their boxes at will.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>

#include "pliant/builders.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant::testing {

// An n x n cloth of 10 mm edges (n = 24: 576 particles, so a local update takes at most two: one
// in 256), folded over itself along a wavy line with 3 mm between the layers; 4 mm thick. Its
// first corner is kinematic, drawn along x at 0.3 m/s.
inline ModelPtr foldedCloth(int n, State& state) {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = cloth.nodesY = n;
  cloth.sizeX = cloth.sizeY = 0.01 * n;
  cloth.selfCollision = true;
  const GeneratedObject object = addClothGrid(b, cloth);
  const Vec3 corner = b.model().initialPosition[object.firstParticle];
  b.addKinematic(object.firstParticle, [corner](double t) { return Vec3(corner + Vec3(0.3 * t, 0.0, 0.0)); });
  b.model().surfaceThickness = 0.004;
  ModelPtr model = b.build();
  state = State::fromModel(*model);
  for (ParticleIndex p = object.firstParticle; p < object.firstParticle + object.particleCount; ++p) {
    const Vec3 rest = model->initialPosition[p];
    const double fold = 0.005 * n + 0.01 * std::sin(30.0 * rest.z());
    if (rest.x() > fold)
      state.position[p] = Vec3(2.0 * fold - rest.x(), rest.y() + 0.003 + 0.05 * (rest.x() - fold), rest.z());
  }
  state.previousPosition = state.position;
  return model;
}

// Substep k's motion of a folded n x n cloth: every particle creeps up to 0.15 mm along each axis;
// at k % 3 == 1 two particles five rows apart in the grid (52 mm or more) jump towards each other,
// out of their boxes (which give a resting particle 2 mm of room) and beyond their triangles' old
// boxes, to end 4 mm apart: pairs no box held before, and contacts between the triangles of both;
// at k % 10 == 7 a quarter of the particles jump 7 mm each. Kinematic particles follow their paths
// (substeps of h s from time 0).
inline void moveByScript(const Model& model, double h, State& state, int n, int k, std::mt19937& random) {
  std::uniform_real_distribution<double> creep(-1.5e-4, 1.5e-4), unit(-1.0, 1.0);
  const std::size_t count = state.position.size();
  std::uniform_int_distribution<std::size_t> pick(0, count - 1);
  state.previousPosition = state.position;
  for (Vec3& x : state.position) x += Vec3(creep(random), creep(random), creep(random));
  if (k % 3 == 1) {
    const std::size_t p = pick(random), q = (p + 5 * static_cast<std::size_t>(n)) % count;
    const Vec3 towards = (state.position[q] - state.position[p]).normalized();
    const double apart = (state.position[q] - state.position[p]).norm();
    state.position[p] += 0.5 * (apart - 0.004) * towards;
    state.position[q] -= 0.5 * (apart - 0.004) * towards;
  }
  if (k % 10 == 7)
    for (std::size_t j = 0; j < count / 4; ++j) {
      const Vec3 direction(unit(random), unit(random), unit(random));
      state.position[pick(random)] += 0.007 * direction.normalized();
    }
  for (const KinematicParticle& kinematic : model.kinematicParticles) {
    state.previousPosition[kinematic.particle] = kinematic.path(k * h);
    state.position[kinematic.particle] = kinematic.path((k + 1) * h);
  }
}

}  // namespace pliant::testing
