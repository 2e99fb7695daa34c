// The checkpoint target's fixed model and its seed inputs (checkpoint_seeds.cpp writes them).
//
// Input: a mode byte, then the rest R.
//   mode % 3 == 0  R is the checkpoint file as it is.
//   mode % 3 == 1  R is a checkpoint without its trailing checksum; the target appends the right
//                  one, so that mutations reach the checks behind the checksum.
//   mode % 3 == 2  R gives the bits of a State of the fixed model (time, lastSubstep, stepCount,
//                  then position, velocity, previousPosition, externalForce, lambda and attachment
//                  targets, 8 bytes each; values past the end of R stay those of the state at
//                  rest); the target writes it with writeCheckpoint and, when the writer takes
//                  it (it refuses what the reader would), reads it back, which must give the
//                  same bits.
// Every state read back is stepped once, as `pliant run --resume` does.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pliant/io/scenes.h"

namespace pliant::fuzz {

// A small scene with every kind of per-particle state, multipliers of several families,
// attachments (fixed and moving), colliders, particle and surface contact.
const Scene& checkpointScene();

// Seed inputs of the three modes, as (file name, bytes).
std::vector<std::pair<std::string, std::string>> checkpointSeeds();

}  // namespace pliant::fuzz
