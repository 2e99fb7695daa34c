// The files a run wrote into its output folder, listed in <folder>/manifest.json, so that the next
// run into that folder removes exactly them before it writes its own (issue 16: a rerun left 241
// old frames beside an 11-entry scene.pvd, and a scene.pvd beside OBJ frames after a switch).
//
// manifest.json: {"format": "pliant-run-manifest", "version": 1, "files": ["frames/frame_000000.vtu", ...]}
// with paths relative to the folder, '/'-separated. Only what a run wrote is listed (not the
// manifest itself, not a page written outside the folder); removal takes only listed regular files
// inside the folder, never follows a symlink, and leaves everything else alone.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace pliant::io {

inline constexpr const char* kManifestFileName = "manifest.json";

// The record of one run's output files. Every file a run writes goes through file() or write(),
// so that the manifest lists it; writers of new kinds of output join by doing the same.
class OutputLog {
 public:
  explicit OutputLog(std::string folder) : folder_(std::move(folder)) {}

  // The path to write `relative` (a path inside the folder: '/'-separated, no "..", not absolute)
  // at, recorded. Throws std::logic_error for a path that is not such a relative path.
  std::string file(const std::string& relative);
  // Records `path` (as given to a writer, e.g. an --html page) when it lies inside the folder;
  // a path outside it is not the folder's to clean, and is not recorded.
  void note(const std::string& path);
  // Writes `contents` atomically (writeFileAtomically) to `relative` in the folder, recorded.
  void write(const std::string& relative, const std::string& contents);

  const std::string& folder() const { return folder_; }
  // The recorded relative paths, sorted.
  const std::set<std::string>& files() const { return files_; }
  // Writes <folder>/manifest.json atomically, listing files().
  void writeManifest() const;

 private:
  std::string folder_;
  std::set<std::string> files_;
};

// The files listed by the manifest in `folder`; none when it has no manifest.json. Throws
// pliant::Error naming the file when manifest.json is not a run manifest (not JSON, another
// "format", an entry that is not a string), so that a run does not write over a file of the user's.
std::vector<std::string> readManifest(const std::string& folder);

// Whether `relative` is a path a manifest may list: not empty, not absolute, '/'-separated names
// with no "", "." or ".." among them.
bool isManifestPath(const std::string& relative);

// Removes the files `listed` (manifest entries) from `folder`: only entries that pass
// isManifestPath, only regular files reached through real folders (every component is opened with
// O_NOFOLLOW, so a symlink anywhere on the way is not followed), and not the paths in `keep`
// (relative, as listed). Folders left empty by the removal are removed too, up to `folder`
// itself. Returns how many files were removed; what cannot be removed is left where it is.
std::size_t removeListedFiles(const std::string& folder, const std::vector<std::string>& listed,
                              const std::set<std::string>& keep = {});

}  // namespace pliant::io
