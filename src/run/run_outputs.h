// The paths a run writes, checked before anything is simulated (issue 12 item 7): a bad --out or
// --html is bad input (pliant::Error naming the path, CLI exit 2), found before the run starts
// rather than as a filesystem error after it has simulated.
#pragma once

#include "pliant/io/scenes.h"
#include "pliant/run/run.h"

namespace pliant::detail {

// Checks, without creating anything, that the run can write all of its outputs:
//  - the output folder is a folder, or can be created (its nearest existing ancestor is a writable
//    folder), and is writable; so are frames/ and checkpoints/ when the run writes there;
//  - no fixed output file (summary.json, final_state.csv, viewer-data.json, probes.csv, scene.pvd)
//    is a folder;
//  - the HTML page, when asked for, is a file name in a writable folder (or the output folder);
//  - no output file (the page included) is one of the run's inputs (the scene's files, the
//    checkpoint resumed from), however spelt (the same file, by device and inode, when it exists).
// Throws pliant::Error naming the path and what was expected.
void checkRunOutputs(const Scene& scene, const RunOptions& options);

// Creates the output folder and the subfolders the run writes to (frames/ only when it writes
// frames), then removes the temporaries killed runs left there (io::removeStaleTemporaries).
// Throws pliant::Error naming the folder (SystemError when the disk is at fault).
void createRunFolders(const RunOptions& options);

}  // namespace pliant::detail
