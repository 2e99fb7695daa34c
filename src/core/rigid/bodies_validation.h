// Checks of the bodies and joints of a model, for Model::validate and ModelBuilder: each throws
// pliant::Error naming the body or joint, the field and what was expected.
#pragma once

#include <string>

#include "pliant/model.h"

namespace pliant::detail {

void checkJoint(const Model& model, const Joint& joint, const std::string& where);
void validateBodies(const Model& model);

}  // namespace pliant::detail
