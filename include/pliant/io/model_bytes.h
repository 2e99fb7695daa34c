// A built Model as bytes, e.g. to pickle it in Python or send it to another process: everything
// it holds except functions (kinematic and attachment paths, collider paths, user constraint
// functions), which cannot be written down. With the checkpoint bytes of a State
// (io::encodeCheckpoint) a receiver has all it needs to step on bit-identically.
#pragma once

#include <string>
#include <string_view>

#include "pliant/model.h"

namespace pliant::io {

// What of `model` holds functions ("" when nothing does), e.g. "2 kinematic particles, 1 generic
// constraint function": such a model cannot be encoded.
std::string describeModelFunctions(const Model& model);

// Versioned little-endian bytes with a checksum. Throws pliant::Error saying what holds functions
// when describeModelFunctions(model) is not empty.
std::string encodeModel(const Model& model);
// Decodes and validates (Model::validate) bytes of encodeModel; throws pliant::Error naming `source`
// and what is wrong (not a model, another version, truncated, corrupted, invalid contents).
Model decodeModel(std::string_view bytes, const std::string& source);

}  // namespace pliant::io
