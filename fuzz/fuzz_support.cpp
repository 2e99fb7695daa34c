#include "fuzz_support.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <system_error>

#include "pliant/geometry.h"

namespace pliant::fuzz {
namespace {

constexpr const char* kPrefix = "pliant-fuzz-";
constexpr const char* kOpenMpPrefix = "__KMP_REGISTERED_LIB_";

// Removes what processes that no longer exist left in `root`: our scratch folders, and the
// registration files (__KMP_REGISTERED_LIB_<pid>_<uid>) that Clang's OpenMP runtime makes in
// /dev/shm and removes only at a normal exit, which a crashing fuzzer (and every run of
// -minimize_crash) does not reach.
void removeLeftovers(const std::filesystem::path& root) {
  std::error_code ec;
  if (!std::filesystem::is_directory("/proc", ec)) return;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    std::string pid;
    if (name.rfind(kPrefix, 0) == 0) {
      pid = name.substr(std::strlen(kPrefix));
    } else if (name.rfind(kOpenMpPrefix, 0) == 0) {
      const std::size_t start = std::strlen(kOpenMpPrefix);
      const std::size_t end = name.rfind('_');
      if (end > start) pid = name.substr(start, end - start);
    } else {
      continue;
    }
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!std::filesystem::exists("/proc/" + pid, ec)) std::filesystem::remove_all(entry.path(), ec);
  }
}

std::filesystem::path& scratchPath() {
  static std::filesystem::path path;
  return path;
}

void removeScratchFolder() {
  std::error_code ec;
  if (!scratchPath().empty()) std::filesystem::remove_all(scratchPath(), ec);
}

std::filesystem::path makeScratchFolder() {
  std::error_code ec;
  std::filesystem::path root = "/dev/shm";
  if (!std::filesystem::is_directory(root, ec)) root = std::filesystem::temp_directory_path();
  removeLeftovers(root);
  const std::filesystem::path folder = root / (kPrefix + std::to_string(::getpid()));
  std::filesystem::remove_all(folder, ec);
  std::filesystem::create_directories(folder, ec);
  if (ec) fail("cannot create the scratch folder " + folder.string() + ": " + ec.message());
  scratchPath() = folder;
  std::atexit(removeScratchFolder);
  return folder;
}

double signedVolume6(const std::vector<Vec3>& x, const std::array<std::uint32_t, 4>& t) {
  return (x[t[1]] - x[t[0]]).dot((x[t[2]] - x[t[0]]).cross(x[t[3]] - x[t[0]]));
}

template <class T>
bool sameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

}  // namespace

const std::filesystem::path& scratchFolder() {
  static const std::filesystem::path folder = makeScratchFolder();
  return folder;
}

std::string writeScratchFile(const std::string& name, std::string_view bytes) {
  const std::filesystem::path path = scratchFolder() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail("cannot write the scratch file " + path.string());
  return path.string();
}

void removeScratchFile(const std::string& name) {
  std::error_code ec;
  std::filesystem::remove(scratchFolder() / name, ec);
}

bool verbose() {
  static const bool on = std::getenv("PLIANT_FUZZ_VERBOSE") != nullptr;
  return on;
}

void fail(const std::string& what) {
  std::fprintf(stderr, "pliant fuzz: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

void checkTriangleMesh(const io::TriangleMesh& mesh, const char* reader) {
  const std::string who = reader;
  if (mesh.vertices.empty() || mesh.triangles.empty()) fail(who + " returned an empty mesh instead of throwing");
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
    if (!mesh.vertices[v].allFinite()) fail(who + " returned non-finite vertex " + std::to_string(v));
  for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
    const auto& tri = mesh.triangles[t];
    for (std::uint32_t v : tri)
      if (v >= mesh.vertices.size())
        fail(who + " returned triangle " + std::to_string(t) + " with vertex " + std::to_string(v) + " of " +
             std::to_string(mesh.vertices.size()));
    if (tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2])
      fail(who + " returned triangle " + std::to_string(t) + " that repeats a vertex");
  }
}

void checkTetMesh(const io::TetMesh& mesh, const char* reader) {
  const std::string who = reader;
  if (mesh.vertices.empty() || mesh.tets.empty()) fail(who + " returned an empty mesh instead of throwing");
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
    if (!mesh.vertices[v].allFinite()) fail(who + " returned non-finite vertex " + std::to_string(v));
  for (std::size_t t = 0; t < mesh.tets.size(); ++t) {
    for (std::uint32_t v : mesh.tets[t])
      if (v >= mesh.vertices.size())
        fail(who + " returned tet " + std::to_string(t) + " with vertex " + std::to_string(v) + " of " +
             std::to_string(mesh.vertices.size()));
    // mesh_io.h: every tet has (x1-x0).((x2-x0)x(x3-x0)) > 0.
    const double volume6 = signedVolume6(mesh.vertices, mesh.tets[t]);
    if (!(volume6 > 0.0))
      fail(who + " returned tet " + std::to_string(t) + " of non-positive volume " + std::to_string(volume6 / 6.0));
  }
  // The surface of positive tets: every face index is a vertex of the mesh.
  for (const auto& face : boundaryTriangles(mesh.tets))
    for (std::uint32_t v : face)
      if (v >= mesh.vertices.size()) fail(who + ": boundaryTriangles returned vertex " + std::to_string(v));
}

void stepOnce(const ModelPtr& model, const SolverSettings& settings, State& state, const char* what) {
  std::optional<Solver> solver;
  if (!expectOnlyPliantErrors("Solver construction", [&] { solver.emplace(model, settings); })) return;
  const State before = state;
  StepResult result;
  expectOnlyPliantErrors("Solver::step", [&] { result = solver->step(state); });
  if (result.ok()) return;
  // solver.h: a refused step leaves `state` exactly as it was.
  const bool same = sameBytes(state.position, before.position) && sameBytes(state.velocity, before.velocity) &&
                    sameBytes(state.previousPosition, before.previousPosition) &&
                    sameBytes(state.externalForce, before.externalForce) && sameBytes(state.lambda, before.lambda) &&
                    sameBytes(state.attachmentTarget, before.attachmentTarget) &&
                    std::memcmp(&state.time, &before.time, sizeof(double)) == 0 &&
                    std::memcmp(&state.lastSubstep, &before.lastSubstep, sizeof(double)) == 0 &&
                    state.stepCount == before.stepCount;
  if (!same) fail(std::string(what) + ": a refused step (" + result.message + ") changed the state");
}

}  // namespace pliant::fuzz
