// Stage 8 of the step pipeline (solver.h): momentum-conserving damping per object (seed 000).
#pragma once

#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant::detail {

// Removes a fraction object.dampingFactor of each particle's deviation from the object's rigid
// motion; linear and angular momentum are unchanged.
void dampObject(const Model& model, const SimObject& object, State& state);

}  // namespace pliant::detail
