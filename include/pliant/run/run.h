// Running a scene into an output folder, as `pliant run` does: the scene is stepped frame by frame
// and its outputs are written to one folder. The CLI, the Python module and parameter sweeps share
// this function, so a run means the same thing everywhere.
//
// The folder receives (each file written atomically, see pliant/io/output.h):
//   frames/frame_NNNNNN*.{vtu,vtm,obj,ply}  frames (first, every `frameEvery`-th, last) unless writeFrames
//                                      is false: one part per object and per collider (io::FrameSeries,
//                                      pliant/io/output.h, says which files each format gets)
//   scene.pvd                          ParaView collection of the .vtu/.vtm frames (VTK format only)
//   scene.glb                          the whole run as one animated glTF 2.0 file (Glb format; no frames/ files)
//   checkpoints/frame_NNNNNN.ckpt      checkpoints asked for by checkpointEvery / checkpointAt
//   probes.csv                         the scene's probes, per frame or substep (when it has probes)
//   final_state.csv                    positions (m) and velocities (m/s) of the last state
//   viewer-data.json                   the frames for the viewer (pliant/viewer/viewer.h)
//   summary.json                       scene, settings, sizes, timings, final energy, residual and state hash,
//                                      the frame files' parts, count and total size ("outputs");
//                                      "status": "completed", "refused" (with a "refusal" block) or
//                                      "stopped" (with "error": a write failed, onFrame threw)
//   manifest.json                      every file above that this run wrote (pliant/io/manifest.h)
// and, when htmlPage is given, the self-contained viewer page. With writeFrames false there is no
// frames/ folder and no scene.pvd, and, unless a page is asked for, viewer-data.json holds the
// first and last frames only.
// Before anything is created, every output path is checked (src/run/run_outputs.h): the folder can
// be created or written, no output is a folder, and no output is one of the run's inputs (the
// scene's files, the checkpoint resumed from), and a manifest.json there is a run's. Then the files
// the previous run's manifest lists are removed (only those, and never an input of this run), so a
// rerun leaves no stale frames or scene.pvd; temporaries that killed runs left in the folders the
// run writes to are removed (io::removeStaleTemporaries); and every folder the run writes to (the
// page's included) is proved writable by creating a file in it.
// A run that stops early (a refused step, a write that fails, onFrame throwing) still writes
// scene.pvd, probes.csv, final_state.csv, viewer-data.json, the page, summary.json and
// manifest.json for the frames that exist, each attempted even if another fails; then a refusal
// is reported (RunReport::completed false) and an exception is rethrown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "pliant/io/output.h"
#include "pliant/io/scenes.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {

struct RunOptions {
  std::string outputFolder = "out";  // created when missing, with frames/ (and checkpoints/) inside
  int frames = -1;                   // last frame to simulate (a frame is one step of the scene's
                                     // timeStep); -1 = the scene's `frames`
  io::FrameFormat frameFormat = io::FrameFormat::Vtk;
  bool writeFrames = true;  // false: no frames/, no scene.pvd; without htmlPage 2 viewer frames
  io::VtuEncoding vtuEncoding = io::VtuEncoding::Zlib;  // how .vtu frames store their arrays
  bool colliderParts = true;                            // write each collider as a part of every frame
  int frameEvery = 1;             // write the first frame, every frameEvery-th after it and the last; >= 1
  int threads = 0;                // worker threads during the run (restored afterwards); 0 = the current count
  int checkpointEvery = 0;        // checkpoint at every frame that is a multiple of this; 0 = none
  std::vector<int> checkpointAt;  // and at these frames (>= 1)
  std::string resumeFrom;         // checkpoint file to start from; "" = the scene's initial state
  std::string htmlPage;           // also write the viewer page to this file; "" = none
  std::string source;             // where the scene came from, as summary.json's "source"; "" = the scene's name
  // Called with frame == firstFrame once the run is set up, then after every simulated frame
  // (e.g. for a progress display); may be empty.
  std::function<void(int frame, int firstFrame, int lastFrame)> onFrame;
};

struct RunReport {
  // False when a step was refused (a NaN, a runaway displacement or strain, a contact overflow, see
  // StepResult): `failure` says why, and the run stops at the last good frame. Every output is
  // still written up to that frame: frames and checkpoints as they came, then scene.pvd,
  // probes.csv, final_state.csv (the last good state), viewer-data.json, the page, and
  // summary.json with "status": "refused" and a "refusal" block (the refused frame, why, the
  // particle and constraint named).
  bool completed = false;
  std::string failure;
  StepResult refusal;  // the refused step's result (particle, constraint, contact) when !completed
  int firstFrame = 0;  // the run simulated frames firstFrame+1 .. lastFrame (firstFrame > 0 when resumed)
  int lastFrame = 0;
  State finalState;  // the state after the last simulated frame (or at the refused step)
  std::uint64_t stateHash = 0;
  double simulateSeconds = 0.0;   // s of wall-clock time in Solver::step
  double writeSeconds = 0.0;      // s of wall-clock time writing frames and checkpoints
  double msPerFrame = 0.0;        // ms of Solver::step per simulated frame
  std::uint64_t projections = 0;  // constraint projections of the run
  std::size_t framesWritten = 0;  // frame files
  std::size_t viewerFrames = 0;   // frames in viewer-data.json
  int viewerFrameStride = 1;      // 1 in viewerFrameStride frames kept for the viewer (size budget)
  std::string summaryJson;        // the text written to summary.json
  // Convergence of the constraint solve, checked after every simulated frame (computeResidual's
  // strain residual decides, farFromConverged in pliant/diagnostics.h): the worst values,
  // the frames far from converged as inclusive [first, last] stretches, and, when there are any,
  // one sentence saying so and what to change (also in summary.json's "convergence" section, for
  // the CLI's log and the viewer).
  double worstRelativeResidual = 0.0;
  double worstStrainResidual = 0.0;
  std::vector<std::pair<int, int>> unconvergedFrames;
  std::string convergenceWarning;
};

// Runs `scene` with `options` as described above. Throws pliant::Error, before writing anything,
// for bad options, an unreadable or crafted checkpoint or one beyond `frames`, an output path
// that cannot be written or is an input, or a manifest.json that is not a run's; and, after
// writing the end-of-run files, the first error that stopped it (an output that could not be
// written, what onFrame threw). A refused step is reported, not thrown.
RunReport runScene(const Scene& scene, const RunOptions& options);

}  // namespace pliant
