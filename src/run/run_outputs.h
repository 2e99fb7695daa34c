// The paths a run writes, checked before anything is simulated (issue 12 item 7): a bad --out or
// --html is bad input (pliant::Error naming the path, CLI exit 2), found before the run starts
// rather than as a filesystem error after it has simulated.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "pliant/io/scenes.h"
#include "pliant/run/run.h"

namespace pliant::detail {

// Checks, without creating anything, that the run can write all of its outputs:
//  - the output folder is a folder, or can be created (its nearest existing ancestor is a writable
//    folder), and is writable; so are frames/ and checkpoints/ when the run writes there;
//  - no fixed output file (summary.json, final_state.csv, viewer-data.json, probes.csv, scene.pvd,
//    manifest.json) is a folder;
//  - the HTML page, when asked for, is a file name in a writable folder (so tried), or in the
//    output folder;
//  - no output file (the page included) is one of the run's inputs (the scene's files, the
//    checkpoint resumed from), however spelt (the same file, by device and inode, when it exists).
//  - a manifest.json already in the folder is a run manifest (io::readManifest).
// Returns what the previous run's manifest lists (below). Throws pliant::Error naming the path and
// what was expected.
struct PreviousOutputs {
  std::vector<std::string> listed;  // the previous run's files, relative to the output folder
  std::set<std::string> kept;       // of those, the run's own inputs (a checkpoint resumed from): kept
};
PreviousOutputs checkRunOutputs(const Scene& scene, const RunOptions& options);

// Removes the previous run's files (io::removeListedFiles, less `previous.kept`), creates the
// output folder and the subfolders the run writes to (frames/ only when it writes frames), and
// removes the temporaries killed runs left there (io::removeStaleTemporaries). Throws
// pliant::Error naming the folder (SystemError when the disk is at fault).
void createRunFolders(const RunOptions& options, const PreviousOutputs& previous);

}  // namespace pliant::detail
