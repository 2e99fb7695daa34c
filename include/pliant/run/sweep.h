// Parameter sweeps: one base scene run many times with some of its fields changed, as `pliant sweep`
// does (docs/sweep.md describes the sweep file, docs/sweep.schema.json is its schema).
//
// A sweep file names a base scene (a file or a built-in), the parameters to vary (each a JSON
// pointer into the scene, with a list of values, a linear or log range, or a random draw), how they
// combine into cases (grid: every combination; zip: the i-th value of each; random: `samples`
// draws from `seed`), and the metrics to collect per case (a summary.json field, a probe column's
// final value or statistic, the state hash, the time per frame).
//
// The output folder of a sweep:
//   sweep.json            the sweep file as read (the folder's identity: a rerun of another sweep into
//                         it is refused unless forced)
//   base/                 the base scene run for 0 frames: the summary.json whose fields metrics name
//   cases/NNNN/           one folder per case: scene.json (the resolved scene), the files of
//                         pliant::runScene (summary.json, probes.csv, final_state.csv, ...; no frames
//                         unless asked), and case.json, written last, which marks the case finished:
//                         {"scene_hash": "<16 hex>", "status": "...", "error": "..."}
//   results.csv           one row per case in case order: case, the parameters, the metrics,
//                         status, error; rewritten atomically as cases finish (pending rows say
//                         "pending"), so it is always readable
// A case is skipped when its case.json names the hash of the scene it would run now (FNV-1a 64 of
// its scene.json text) and a final status; its metrics are read again from its folder.
// Statuses: completed; refused (a step was refused, summary.json says which); failed (the case's
// scene was refused when loaded: bad parameters, recorded with the loader's message); error (the
// machine failed, e.g. disk full: rerun next time); pending (not run yet, or interrupted).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pliant/io/scenes.h"

namespace pliant::sweep {

// One varied field of the scene.
struct Parameter {
  std::string pointer;  // JSON pointer into the scene, e.g. /objects/0/stretch/compliance
  std::string name;     // the results.csv column (default: the pointer)
};

// One metric collected per case, a column of results.csv.
struct Metric {
  enum class Source {
    Summary,       // the summary.json field at `pointer` (a number, string or boolean)
    Probe,         // probes.csv column `column` (e.g. "corner.y"), reduced by `statistic`
    StateHash,     // the final state hash (16 hex digits)
    TimePerFrame,  // ms of Solver::step per frame (a timing: differs between runs)
  };
  enum class Statistic { Final, Min, Max, Mean };
  std::string name;
  Source source = Source::Summary;
  std::string pointer;  // Summary
  std::string column;   // Probe
  Statistic statistic = Statistic::Final;
  // A wall-clock timing (TimePerFrame, or a summary field under /timings): the only columns that
  // differ between two runs of the same sweep.
  bool timing() const;
};

struct Case {
  std::size_t index = 0;
  std::vector<std::string> values;  // each parameter's value as JSON text, in parameter order
  std::string sceneJson;            // the resolved scene (scene.json), the base with the values set
  std::string sceneHash;            // FNV-1a 64 of sceneJson, 16 hex digits
};

struct Sweep {
  std::string file;           // the sweep file, as named in errors ("builtin:<name>" for a built-in)
  std::string name;           // "name" of the sweep file
  std::string description;    // "description" ("" when none)
  std::string base;           // the base scene: "builtin:<name>" or the scene file's path
  std::string baseDirectory;  // where the scene's mesh paths resolve (the base file's folder)
  std::string baseSceneJson;  // the base scene with the sweep's "set" fields applied
  std::string text;           // the sweep file's JSON as read, canonical (sorted keys): sweep.json
  std::vector<Parameter> parameters;
  std::vector<Metric> metrics;
  std::vector<Case> cases;
  SceneLoadOptions loadOptions;  // for every case's scene
};

// Reads a sweep file; every field is checked, the base scene loaded and every pointer looked up in
// it before anything runs. Throws pliant::Error naming the file, the JSON pointer of the field
// (e.g. /parameters/1/pointer) and what was expected.
Sweep loadSweepFile(const std::string& path, const SceneLoadOptions& options = {});
// The same from text: `source` names it in errors, `directory` resolves a relative base scene file.
Sweep parseSweep(const std::string& text, const std::string& source, const std::string& directory,
                 const SceneLoadOptions& options = {});

// Built-in sweeps (sweeps/*.json in the source tree, embedded): names, and the text of one ("" when
// unknown). Their base scenes are built-in scenes.
std::vector<std::string> builtinSweepNames();
std::string builtinSweepText(const std::string& name);

// What became of one case.
struct CaseResult {
  std::size_t index = 0;
  std::string status = "pending";    // completed, refused, failed, error, pending
  std::string error;                 // why, for refused, failed, error ("" otherwise)
  std::vector<std::string> metrics;  // one per Sweep::metrics, as written in results.csv ("" = none)
  // Completed, refused or failed: nothing a rerun would change.
  bool finished() const;
  // As one line of JSON and back (the form MPI ranks send results in). fromJson throws pliant::Error.
  std::string toJson() const;
  static CaseResult fromJson(const std::string& text);
};

// The set `flag` is checked between frames; when it becomes true a running case stops (its row
// stays pending) and no case starts. May be null.
using StopFlag = const std::atomic<bool>*;

// Held while a sweep writes into a folder: an exclusive lock (flock) on <folder>/sweep.lock, so a
// second sweep into the same folder is refused instead of running the same cases beside the first.
// Throws pliant::Error when another process holds it.
class FolderLock {
 public:
  explicit FolderLock(const std::string& folder);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

// Checks and prepares the output folder: creates it, or, when it exists, requires it to be empty
// or to hold this same sweep (its sweep.json equal to sweep.text); `force` lets it hold another
// sweep or other files (sweep.json is replaced; case folders are reused only where their scene
// hash matches). Checks every metric against the base scene (a probe column it has, a summary
// field its summary.json has: the base scene is run for 0 frames into <folder>/base), then writes
// sweep.json. Returns a result per case: finished cases with their status and metrics read back,
// the others pending. Throws pliant::Error before writing anything for a folder that is not this
// sweep's. With `lock` given, the folder's FolderLock is taken into it as soon as the folder
// exists, before anything is written (a sweep already running there is refused).
std::vector<CaseResult> prepareFolder(const Sweep& sweep, const std::string& folder, bool force,
                                      std::unique_ptr<FolderLock>* lock = nullptr);

// Runs case `index` into <folder>/cases/NNNN (one solver thread) and returns its result; never
// throws for a failure of the case itself (it becomes the result's status and error).
CaseResult runCase(const Sweep& sweep, std::size_t index, const std::string& folder, StopFlag stop = nullptr);

// results.csv: every case's row, in case order, rewritten atomically by write().
class ResultsTable {
 public:
  ResultsTable(const Sweep& sweep, std::string folder, std::vector<CaseResult> results);
  void record(const CaseResult& result);  // replaces the row of result.index
  void write() const;                     // <folder>/results.csv, atomically
  std::string csv() const;
  const std::vector<CaseResult>& results() const { return results_; }
  std::size_t count(const std::string& status) const;

 private:
  const Sweep* sweep_;
  std::string folder_;
  std::vector<CaseResult> results_;
};

// The cases still to run, in case order.
std::vector<std::size_t> pendingCases(const std::vector<CaseResult>& results);

// Progress of a running sweep: cases finished in this run and to go, failures (refused, failed or
// error) among all cases, and the seconds since it started.
struct Progress {
  std::size_t done = 0, total = 0, failed = 0;
  double elapsedSeconds = 0.0;
};

struct LocalOptions {
  int jobs = 1;  // cases at once, one thread each
  StopFlag stop = nullptr;
  // Called (from one thread at a time) after each case; may be empty.
  std::function<void(const Progress&)> onCase;
};

// Runs the pending cases of `table` on `jobs` threads, writing results.csv as cases finish (at most
// every quarter second, and once at the end). Each case runs on one solver thread.
void runLocally(const Sweep& sweep, const std::string& folder, ResultsTable& table, const LocalOptions& options);

}  // namespace pliant::sweep
