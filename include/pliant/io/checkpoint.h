// Checkpoints: the full State in a versioned binary file, so that a run can stop and resume with
// bit-identical results. Written atomically (pliant/io/output.h, writeFileAtomically).
#pragma once

#include <string>

#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant::io {

// Reading checks the magic, version, sizes against `model` and the checksum, and throws
// pliant::Error naming the file on any mismatch or truncation.
void writeCheckpoint(const std::string& path, const State& state);
State readCheckpoint(const std::string& path, const Model& model);

}  // namespace pliant::io
