// Checkpoints: the full State in a versioned binary file, so that a run can stop and resume with
// bit-identical results. Written atomically (pliant/io/output.h, writeFileAtomically).
#pragma once

#include <string>
#include <string_view>

#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant::io {

// Reading checks the magic, version, sizes against `model` and the checksum, and throws
// pliant::Error naming the file on any mismatch or truncation.
void writeCheckpoint(const std::string& path, const State& state);
State readCheckpoint(const std::string& path, const Model& model);
// The same bytes in memory (to pickle or send a state): encodeCheckpoint gives what writeCheckpoint
// writes; decodeCheckpoint checks them as readCheckpoint does, naming `source` in errors, and checks
// the counts against `model` when one is given.
std::string encodeCheckpoint(const State& state);
State decodeCheckpoint(std::string_view bytes, const std::string& source, const Model* model = nullptr);

}  // namespace pliant::io
