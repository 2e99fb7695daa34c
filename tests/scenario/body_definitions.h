// Body definitions shared by the rigid body scenario tests.
#pragma once

#include <string>

#include "pliant/pliant.h"

namespace pliant::test {

// A dynamic box of `mass` (kg) and half extents (m), centred at `centre` (m), unrotated.
inline BodyDefinition box(const Vec3& centre, const Vec3& halfExtents, double mass, const std::string& name = "box") {
  BodyDefinition def;
  def.name = name;
  def.shape.kind = BodyShapeKind::Box;
  def.shape.halfExtents = halfExtents;
  def.mass = mass;
  def.pose.position = centre;
  return def;
}

}  // namespace pliant::test
