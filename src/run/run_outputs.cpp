// Output paths of a run (run_outputs.h).
#include "run_outputs.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "pliant/error.h"
#include "pliant/io/manifest.h"
#include "pliant/io/output.h"
#include "pliant/viewer/viewer.h"

namespace pliant::detail {

namespace {

namespace fs = std::filesystem;

// glTF holds the whole run in scene.glb: no frames/ folder.
bool wantsFrameFolder(const RunOptions& options) {
  return options.writeFrames && options.frameFormat != io::FrameFormat::Glb;
}

bool wantsCheckpoints(const RunOptions& options) {
  return options.checkpointEvery > 0 || !options.checkpointAt.empty();
}

// Creates and removes a file in `folder`, named as a temporary (so removeStaleTemporaries clears it
// should the process die in between). Throws what writing there would throw.
void proveWritable(const fs::path& folder, const std::string& what) {
  std::uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, 0) != static_cast<ssize_t>(sizeof bits))
    bits = static_cast<std::uint64_t>(::getpid());
  const std::string probe = io::detail::temporaryName((folder / ".write-check").string(), bits);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    if (error == EEXIST) return;  // a name taken by chance: the folder takes files
    const std::string message =
        what + " '" + folder.string() + "': cannot create a file in it: " + std::generic_category().message(error);
    if (error == ENOSPC || error == EIO || error == EDQUOT) throw SystemError(message);
    throw Error(message);
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

// A folder the run will write into: an existing writable folder, or one that can be created.
void checkFolder(const fs::path& folder, const std::string& what) {
  std::error_code ec;
  const fs::file_status status = fs::status(folder, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      throw Error(what + " '" + folder.string() +
                  "' exists and is not a folder; expected a folder (or a path to create one)");
    if (::access(folder.c_str(), W_OK | X_OK) != 0) throw Error(what + " '" + folder.string() + "' is not writable");
    proveWritable(folder, what);
    return;
  }
  // Missing: the nearest existing ancestor must be a writable folder.
  fs::path ancestor = folder.has_parent_path() ? folder.parent_path() : fs::path(".");
  while (!ancestor.empty() && !fs::exists(fs::status(ancestor, ec))) ancestor = ancestor.parent_path();
  if (ancestor.empty()) ancestor = ".";
  if (!fs::is_directory(fs::status(ancestor, ec)))
    throw Error(what + " '" + folder.string() + "' cannot be created: '" + ancestor.string() + "' is not a folder");
  if (::access(ancestor.c_str(), W_OK | X_OK) != 0)
    throw Error(what + " '" + folder.string() + "' cannot be created: folder '" + ancestor.string() +
                "' is not writable");
  proveWritable(ancestor, what + " '" + folder.string() + "' cannot be created:");
}

// Whether two paths name the same file: by device and inode when both exist, else by their
// absolute, normalised spelling (a file that does not exist yet can only clash by name).
bool sameFile(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  // "/x" appended so that a trailing separator ("out/" and "out") makes no difference.
  return (fs::absolute(a, ec) / "x").lexically_normal() == (fs::absolute(b, ec) / "x").lexically_normal();
}

}  // namespace

PreviousOutputs checkRunOutputs(const Scene& scene, const RunOptions& options) {
  if (options.outputFolder.empty()) throw Error("output folder: an empty path; expected a folder name");
  const fs::path outDir(options.outputFolder);
  checkFolder(outDir, "output folder");
  if (wantsFrameFolder(options)) checkFolder(outDir / "frames", "frame folder");
  if (wantsCheckpoints(options)) checkFolder(outDir / "checkpoints", "checkpoint folder");

  std::vector<fs::path> outputs = {outDir / "summary.json", outDir / "final_state.csv", outDir / viewer::kDataFileName,
                                   outDir / io::kManifestFileName};
  if (!scene.probes.empty()) outputs.push_back(outDir / "probes.csv");
  if (scene.model->bodyCount() > 0) outputs.push_back(outDir / "final_bodies.csv");
  if (options.writeFrames && options.frameFormat == io::FrameFormat::Vtk) outputs.push_back(outDir / "scene.pvd");
  if (options.writeFrames && options.frameFormat == io::FrameFormat::Glb) outputs.push_back(outDir / "scene.glb");
  std::error_code ec;
  for (const fs::path& file : outputs)
    if (fs::is_directory(file, ec))
      throw Error("output file '" + file.string() + "' is a folder; the run writes a file there");

  const std::string& html = options.htmlPage;
  if (!html.empty()) {
    const fs::path page(html);
    // Its folder is created with the output folder when it is that folder (however it is spelt).
    const bool inOutput = fs::absolute(page.parent_path() / "x", ec).lexically_normal() ==
                          fs::absolute(outDir / "x", ec).lexically_normal();
    if (inOutput) {
      if (page.filename().empty()) throw Error(html + ": not a file name");
      if (fs::is_directory(page, ec)) throw Error(html + ": is a folder, expected an HTML file name");
    } else {
      viewer::checkWritable(html);
      proveWritable(page.parent_path().empty() ? fs::path(".") : page.parent_path(), "--html '" + html + "': folder");
    }
    // Nor a folder the run is about to create.
    for (const fs::path& folder : {outDir, outDir / "frames", outDir / "checkpoints"})
      if (sameFile(page, folder)) throw Error(html + ": is a folder of the run's output, expected an HTML file name");
    for (const fs::path& file : outputs)
      if (sameFile(page, file))
        throw Error("--html '" + html + "' is the run's own output file '" + file.string() +
                    "'; expected another name");
    outputs.push_back(page);
  }

  std::vector<std::string> inputs = scene.inputFiles;
  if (!options.resumeFrom.empty()) inputs.push_back(options.resumeFrom);
  for (const fs::path& file : outputs)
    for (const std::string& input : inputs)
      if (sameFile(file, input))
        throw Error("output file '" + file.string() + "' is the input file '" + input +
                    "'; the run would overwrite its input (choose another --out or --html)");
  if (!html.empty() && !viewer::pageAvailable()) viewer::buildPage("{}", "");  // throws, saying how to get it

  // What the previous run into this folder wrote, to be removed before this one writes; never one
  // of this run's inputs (a checkpoint of that run resumed from).
  PreviousOutputs previous;
  if (fs::is_directory(outDir, ec)) previous.listed = io::readManifest(outDir.string());
  for (const std::string& file : previous.listed)
    for (const std::string& input : inputs)
      if (io::isManifestPath(file) && sameFile(outDir / file, input)) previous.kept.insert(file);
  return previous;
}

void createRunFolders(const RunOptions& options, const PreviousOutputs& previous) {
  const fs::path outDir(options.outputFolder);
  if (!previous.listed.empty()) io::removeListedFiles(outDir.string(), previous.listed, previous.kept);
  std::vector<fs::path> folders = {outDir};
  if (wantsFrameFolder(options)) folders.push_back(outDir / "frames");
  if (wantsCheckpoints(options)) folders.push_back(outDir / "checkpoints");
  for (const fs::path& folder : folders) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) {
      const int error = ec.value();
      const std::string message = "cannot create the folder '" + folder.string() + "': " + ec.message();
      if (error == ENOSPC || error == EIO || error == EDQUOT) throw SystemError(message);
      throw Error(message);
    }
    io::removeStaleTemporaries(folder.string());
  }
}

}  // namespace pliant::detail
