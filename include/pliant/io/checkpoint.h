// Checkpoints: the full State in a versioned binary file, so that a run can stop and resume with
// bit-identical results. Written atomically (pliant/io/output.h, writeFileAtomically).
#pragma once

#include <string>
#include <string_view>

#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant::io {

// Reading checks that the path is a regular file (not a FIFO, device or folder), the magic, version,
// sizes against `model` (before reading past the header, so the model bounds what is read) and the
// checksum; then every field as a scene file's: the frame counter within kMaxSceneFrames (scenes.h),
// time and last substep finite and >= 0, every array entry finite. Given the solver `settings` the
// state will be stepped with, time must also be stepCount x settings.timeStep and the last substep
// at most settings.timeStep. Throws pliant::Error naming the file and the field on any failure.
void writeCheckpoint(const std::string& path, const State& state);
State readCheckpoint(const std::string& path, const Model& model);
State readCheckpoint(const std::string& path, const Model& model, const SolverSettings& settings);
// The same bytes in memory (to pickle or send a state): encodeCheckpoint gives what writeCheckpoint
// writes; decodeCheckpoint checks them as readCheckpoint does, naming `source` in errors, and checks
// the counts against `model` when one is given.
std::string encodeCheckpoint(const State& state);
State decodeCheckpoint(std::string_view bytes, const std::string& source, const Model* model = nullptr);

}  // namespace pliant::io
