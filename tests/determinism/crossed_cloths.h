// Two crossed cloths for the threaded-contact determinism tests: square 1 m cloths of nodes x nodes,
// the first flat at height `lower`, the second turned 45 degrees about the vertical at `upper`, so
// that they overlap in a diamond; nearly inextensible (stretch compliance 1e-6), each particle of
// radius `radius` (m).
#pragma once

#include "pliant/builders.h"

namespace pliant {

inline void addCrossedCloths(ModelBuilder& b, int nodes, double lower, double upper, double radius,
                             bool selfCollision) {
  for (int k = 0; k < 2; ++k) {
    ClothGridDef cloth;
    cloth.nodesX = cloth.nodesY = nodes;
    cloth.sizeX = cloth.sizeY = 1.0;
    cloth.origin = k == 0 ? Vec3(-0.5, lower, -0.5) : Vec3(0.0, upper, -0.7071);
    if (k == 1) {
      cloth.axisX = Vec3(-1.0, 0.0, 1.0).normalized();
      cloth.axisY = Vec3(1.0, 0.0, 1.0).normalized();
    }
    cloth.stretch.compliance = 1e-6;
    cloth.selfCollision = selfCollision;
    const GeneratedObject c = addClothGrid(b, cloth);
    b.setParticleRadius(c.firstParticle, c.particleCount, radius);
  }
}

}  // namespace pliant
