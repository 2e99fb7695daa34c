// Checks shared by Model::validate and the families' validate functions: each throws pliant::Error
// naming the entry (`where`), the field and what was expected.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "pliant/colliders.h"
#include "pliant/constraints.h"
#include "pliant/error.h"
#include "pliant/math.h"

namespace pliant::detail {

inline std::string describe(const char* what, std::size_t index) {
  return std::string(what) + " " + std::to_string(index);
}

inline void checkFinite(const Vec3& v, const std::string& where) {
  if (!v.allFinite()) throw Error(where + ": expected finite coordinates, got NaN or infinity");
}

inline void checkParameters(const ConstraintParameters& p, const std::string& where) {
  if (!std::isfinite(p.compliance) || p.compliance < 0.0)
    throw Error(where + ": compliance must be a finite number >= 0, got " + formatNumber(p.compliance));
  if (!std::isfinite(p.damping) || p.damping < 0.0)
    throw Error(where + ": damping must be a finite number >= 0, got " + formatNumber(p.damping));
  if (!(p.stiffness >= 0.0 && p.stiffness <= 1.0))
    throw Error(where + ": stiffness must be in [0, 1], got " + formatNumber(p.stiffness));
}

inline void checkIndex(ParticleIndex p, std::size_t count, const std::string& where) {
  if (p >= count)
    throw Error(where + ": particle index " + std::to_string(p) + " out of range (model has " + std::to_string(count) +
                " particles)");
}

inline void checkLength(double value, const std::string& where, const char* field) {
  if (!std::isfinite(value) || value < 0.0)
    throw Error(where + ": " + field + " must be a finite number >= 0, got " + std::to_string(value));
}

void checkMaterial(const ContactMaterial& material, const std::string& where);
void checkCollider(const Collider& collider, const std::string& where);

}  // namespace pliant::detail
