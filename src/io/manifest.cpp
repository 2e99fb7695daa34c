// Run manifests (pliant/io/manifest.h). Removal walks each listed path one component at a time with
// openat(O_NOFOLLOW | O_DIRECTORY) from the output folder and unlinks with unlinkat on the last
// folder's descriptor, so that neither a "../" entry nor a symlink planted in the folder (to a
// folder or to a file) can make a run remove something outside it, even if the tree changes
// between a check and the removal.
#include "pliant/io/manifest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/output.h"

namespace pliant::io {

namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "pliant-run-manifest";
// A manifest lists file names of a few dozen bytes; 10^8 frames would be a few GiB, far past any run.
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{256} << 20;

std::vector<std::string> components(const std::string& relative) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = relative.find('/', start);
    parts.push_back(relative.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) return parts;
    start = slash + 1;
  }
}

// A descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// Opens the folder `parts[0..count)` below `root` without following a symlink; -1 when it is not
// a real folder there.
int openFolder(int root, const std::vector<std::string>& parts, std::size_t count) {
  int fd = ::dup(root);
  for (std::size_t i = 0; i < count && fd >= 0; ++i) {
    const int next = ::openat(fd, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    ::close(fd);
    fd = next;
  }
  return fd;
}

}  // namespace

bool isManifestPath(const std::string& relative) {
  if (relative.empty() || relative.front() == '/' || relative.find('\0') != std::string::npos) return false;
  for (const std::string& part : components(relative))
    if (part.empty() || part == "." || part == "..") return false;
  return true;
}

std::string OutputLog::file(const std::string& relative) {
  if (!isManifestPath(relative)) throw std::logic_error("OutputLog: '" + relative + "' is not a relative path");
  files_.insert(relative);
  return (fs::path(folder_) / relative).string();
}

void OutputLog::note(const std::string& path) {
  std::error_code ec;
  const fs::path folder = fs::absolute(fs::path(folder_) / "x", ec).lexically_normal().parent_path();
  const fs::path file = fs::absolute(path, ec).lexically_normal();
  const fs::path relative = file.lexically_relative(folder);
  if (isManifestPath(relative.generic_string())) files_.insert(relative.generic_string());
}

void OutputLog::write(const std::string& relative, const std::string& contents) {
  writeFileAtomically(file(relative), contents);
}

void OutputLog::writeManifest() const {
  nlohmann::ordered_json manifest;  // format first, for a person reading it
  manifest["format"] = kFormat;
  manifest["version"] = 1;
  manifest["files"] = nlohmann::ordered_json::array();
  for (const std::string& f : files_) manifest["files"].push_back(f);
  writeFileAtomically((fs::path(folder_) / kManifestFileName).string(), manifest.dump(1) + "\n");
}

std::vector<std::string> readManifest(const std::string& folder) {
  const fs::path path = fs::path(folder) / kManifestFileName;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return {};
  const std::string where = path.string();
  const std::string expected =
      "; expected the manifest.json a pliant run writes (remove the file, or choose another --out)";
  std::string text;
  {
    InputFile in(where, "a run manifest (manifest.json)", kMaxManifestBytes);
    text = in.readRest();
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error(where + ": not a JSON object" + expected);
  if (j.value("format", std::string()) != kFormat)
    throw Error(where + ": \"format\" is not \"" + kFormat + "\"" + expected);
  if (!j.contains("files") || !j["files"].is_array()) throw Error(where + ": no \"files\" list" + expected);
  std::vector<std::string> files;
  for (const auto& entry : j["files"]) {
    if (!entry.is_string()) throw Error(where + ": a \"files\" entry is " + entry.dump() + ", not a path" + expected);
    files.push_back(entry.get<std::string>());
  }
  return files;
}

std::size_t removeListedFiles(const std::string& folder, const std::vector<std::string>& listed,
                              const std::set<std::string>& keep) {
  const Fd root(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.fd < 0) return 0;
  std::size_t removed = 0;
  std::set<std::string> emptied;  // folders (relative) that held a removed file
  for (const std::string& entry : listed) {
    if (!isManifestPath(entry) || keep.count(entry) > 0) continue;
    const std::vector<std::string> parts = components(entry);
    const Fd parent(openFolder(root.fd, parts, parts.size() - 1));
    if (parent.fd < 0) continue;
    struct stat st {};
    if (::fstatat(parent.fd, parts.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::unlinkat(parent.fd, parts.back().c_str(), 0) != 0) continue;
    ++removed;
    for (std::size_t depth = parts.size() - 1; depth > 0; --depth) {
      std::string prefix = parts[0];
      for (std::size_t i = 1; i < depth; ++i) prefix += "/" + parts[i];
      emptied.insert(prefix);
    }
  }
  // Deepest first, so that a folder emptied of its folders goes too; rmdir of a folder that still
  // holds anything fails and leaves it.
  std::vector<std::string> folders(emptied.begin(), emptied.end());
  std::sort(folders.begin(), folders.end(), [](const std::string& a, const std::string& b) {
    return std::count(a.begin(), a.end(), '/') > std::count(b.begin(), b.end(), '/');
  });
  for (const std::string& f : folders) {
    const std::vector<std::string> parts = components(f);
    const Fd parent(openFolder(root.fd, parts, parts.size() - 1));
    if (parent.fd >= 0) (void)::unlinkat(parent.fd, parts.back().c_str(), AT_REMOVEDIR);
  }
  return removed;
}

}  // namespace pliant::io
