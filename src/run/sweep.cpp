// Running a sweep's cases into its output folder (pliant/run/sweep.h): the folder's checks, one
// case, the results table, and the cases on a pool of threads. The MPI driver (apps/mpi) hands out
// the same cases across ranks and records results in the same table.
#include "pliant/run/sweep.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/manifest.h"
#include "pliant/io/output.h"
#include "pliant/run/run.h"

namespace pliant::sweep {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kCaseFileName = "case.json";

// Thrown from a run's onFrame when the stop flag is set: the case stops at that frame.
struct Stopped : std::runtime_error {
  Stopped() : std::runtime_error("interrupted") {}
};

// cases/NNNN: at least 4 digits, more when the sweep has more cases, so names sort in case order.
std::string caseName(const Sweep& sweep, std::size_t index) {
  std::size_t width = 4;
  for (std::size_t n = sweep.cases.size(); n >= 10000; n /= 10) ++width;
  std::string number = std::to_string(index);
  if (number.size() < width) number.insert(0, width - number.size(), '0');
  return "cases/" + number;
}
std::string caseFolder(const Sweep& sweep, const std::string& folder, std::size_t index) {
  return (fs::path(folder) / caseName(sweep, index)).string();
}

std::string readText(const fs::path& path, const char* kind) {
  return io::readInputFile(path.string(), kind, io::kMaxRunOutputFileBytes);
}

// A value of summary.json as a cell of the table.
std::string cell(const Json& value) {
  if (value.is_number()) return formatNumber(value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

// The statistic of probes.csv column `column`, from the case's folder.
std::string probeMetric(const fs::path& folder, const Metric& metric) {
  const std::string text = readText(folder / "probes.csv", "a run's probes.csv");
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw Error((folder / "probes.csv").string() + ": empty");
  std::size_t column = std::string::npos, k = 0;
  {
    std::istringstream header(line);
    std::string name;
    for (; std::getline(header, name, ','); ++k)
      if (name == metric.column) column = k;
  }
  if (column == std::string::npos)
    throw Error((folder / "probes.csv").string() + ": no column \"" + metric.column + "\"");
  double first = 0.0, last = 0.0, low = std::numeric_limits<double>::infinity(), high = -low, sum = 0.0;
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string value;
    for (std::size_t c = 0; c <= column && std::getline(row, value, ','); ++c) {
    }
    const double v = std::stod(value);
    if (rows == 0) first = v;
    (void)first;
    last = v;
    low = std::min(low, v);
    high = std::max(high, v);
    sum += v;
    ++rows;
  }
  if (rows == 0) return "";
  switch (metric.statistic) {
    case Metric::Statistic::Final:
      return formatNumber(last);
    case Metric::Statistic::Min:
      return formatNumber(low);
    case Metric::Statistic::Max:
      return formatNumber(high);
    case Metric::Statistic::Mean:
      return formatNumber(sum / static_cast<double>(rows));
  }
  return "";
}

// The metrics of a case that ran (completed or refused), read from its folder.
std::vector<std::string> readMetrics(const Sweep& sweep, const fs::path& folder) {
  std::vector<std::string> values;
  const Json summary = Json::parse(readText(folder / "summary.json", "a run's summary.json"));
  for (const Metric& metric : sweep.metrics) {
    switch (metric.source) {
      case Metric::Source::Summary: {
        const Json::json_pointer pointer(metric.pointer);
        values.push_back(summary.contains(pointer) ? cell(summary.at(pointer)) : std::string());
        break;
      }
      case Metric::Source::Probe:
        values.push_back(probeMetric(folder, metric));
        break;
      case Metric::Source::StateHash:
        values.push_back(summary.value("state_hash", ""));
        break;
      case Metric::Source::TimePerFrame:
        values.push_back(cell(summary.at("timings").at("ms_per_frame")));
        break;
    }
  }
  return values;
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Removes what a previous run of a case left (the files its manifest lists, its case.json), so a
// case that now fails before running shows no other run's summary.
void clearCase(const fs::path& folder) {
  std::error_code ec;
  fs::remove(folder / kCaseFileName, ec);
  try {
    io::removeListedFiles(folder.string(), io::readManifest(folder.string()));
  } catch (const Error&) {
    // Not a run's manifest: runScene refuses the folder and says so.
  }
  fs::remove(folder / io::kManifestFileName, ec);
}

}  // namespace

bool CaseResult::finished() const { return status == "completed" || status == "refused" || status == "failed"; }

std::string CaseResult::toJson() const {
  return Json{{"index", index}, {"status", status}, {"error", error}, {"metrics", metrics}}.dump();
}

CaseResult CaseResult::fromJson(const std::string& text) {
  try {
    const Json j = Json::parse(text);
    CaseResult result;
    result.index = j.at("index").get<std::size_t>();
    result.status = j.at("status").get<std::string>();
    result.error = j.at("error").get<std::string>();
    result.metrics = j.at("metrics").get<std::vector<std::string>>();
    return result;
  } catch (const Json::exception& e) {
    throw Error(std::string("a case result that is not one: ") + e.what());
  }
}

std::vector<CaseResult> prepareFolder(const Sweep& sweep, const std::string& folder, bool force,
                                      std::unique_ptr<FolderLock>* lock) {
  if (folder.empty()) throw Error("sweep: an empty output folder name");
  const fs::path root(folder);
  std::error_code ec;
  const auto status = fs::symlink_status(root, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(fs::status(root, ec)))
      throw Error(folder + ": exists and is not a folder; expected a sweep's output folder");
    const fs::path marker = root / "sweep.json";
    if (fs::exists(marker, ec)) {
      std::string previous;
      try {
        previous = Json::parse(readText(marker, "a sweep's sweep.json")).dump(2) + "\n";
      } catch (const Json::exception&) {
        previous.clear();
      }
      if (previous != sweep.text && !force)
        throw Error(folder + ": holds the results of another sweep (its sweep.json differs from " + sweep.file +
                    "); choose another --out, or pass --force to run this sweep there (cases whose scene is "
                    "unchanged are kept)");
    } else if (!fs::is_empty(root, ec) && !force) {
      throw Error(folder + ": exists, is not empty and holds no sweep.json; choose another --out, or pass --force");
    }
  }
  fs::create_directories(root / "cases", ec);
  if (ec) throw Error(folder + ": cannot create the output folder: " + ec.message());
  if (lock) *lock = std::make_unique<FolderLock>(folder);
  io::removeStaleTemporaries(folder);

  // The base scene at frame 0: every metric must find its field in its summary.json.
  {
    const Scene base = parseScene(sweep.baseSceneJson, sweep.base, sweep.baseDirectory, sweep.loadOptions);
    RunOptions options;
    options.outputFolder = (root / "base").string();
    options.frames = 0;
    options.writeFrames = false;
    options.threads = 1;
    options.source = sweep.base;
    const RunReport report = runScene(base, options);
    const Json summary = Json::parse(report.summaryJson);
    for (std::size_t i = 0; i < sweep.metrics.size(); ++i) {
      const Metric& metric = sweep.metrics[i];
      if (metric.source != Metric::Source::Summary) continue;
      const bool onlyWhenStopped = metric.pointer.rfind("/refusal", 0) == 0 || metric.pointer.rfind("/error", 0) == 0;
      if (!onlyWhenStopped && !summary.contains(Json::json_pointer(metric.pointer)))
        throw Error(sweep.file + ": /metrics/" + std::to_string(i) + "/summary: summary.json has no field " +
                    metric.pointer + " (see " + options.outputFolder + "/summary.json for the fields)");
    }
  }
  io::writeFileAtomically((root / "sweep.json").string(), sweep.text);

  std::vector<CaseResult> results(sweep.cases.size());
  for (std::size_t c = 0; c < sweep.cases.size(); ++c) {
    CaseResult& result = results[c];
    result.index = c;
    const fs::path caseDir = caseFolder(sweep, folder, c);
    if (!fs::exists(caseDir / kCaseFileName, ec)) continue;
    try {
      const Json record = Json::parse(readText(caseDir / kCaseFileName, "a sweep's case.json"));
      if (record.at("scene_hash").get<std::string>() != sweep.cases[c].sceneHash) continue;
      CaseResult previous;
      previous.index = c;
      previous.status = record.at("status").get<std::string>();
      previous.error = record.at("error").get<std::string>();
      if (!previous.finished()) continue;
      if (previous.status != "failed") previous.metrics = readMetrics(sweep, caseDir);
      else previous.metrics.assign(sweep.metrics.size(), std::string());
      result = previous;
    } catch (const std::exception&) {
      // Unreadable or from an older layout: the case runs again.
    }
  }
  return results;
}

FolderLock::FolderLock(const std::string& folder) {
  const std::string path = (fs::path(folder) / "sweep.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw Error(path + ": cannot open the sweep's lock file");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw Error(folder + ": another pliant sweep is running into this folder; wait for it, or choose another --out");
  }
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the empty file stays, harmless
}

CaseResult runCase(const Sweep& sweep, std::size_t index, const std::string& folder, StopFlag stop) {
  const Case& item = sweep.cases.at(index);
  CaseResult result;
  result.index = index;
  result.metrics.assign(sweep.metrics.size(), std::string());
  const fs::path dir = caseFolder(sweep, folder, index);
  const auto record = [&] {
    const Json caseFile{{"scene_hash", item.sceneHash}, {"status", result.status}, {"error", result.error}};
    io::writeFileAtomically((dir / kCaseFileName).string(), caseFile.dump(2) + "\n");
  };
  try {
    if (stop && stop->load()) return result;
    clearCase(dir);
    fs::create_directories(dir);
    io::writeFileAtomically((dir / "scene.json").string(), item.sceneJson);
    Scene scene;
    try {
      // Named relative to the sweep's folder, so the table reads the same whatever --out is.
      scene =
          parseScene(item.sceneJson, caseName(sweep, index) + "/scene.json", sweep.baseDirectory, sweep.loadOptions);
    } catch (const SystemError&) {
      throw;
    } catch (const Error& e) {
      // The parameters made a scene the loader refuses: the case failed, the sweep goes on.
      result.status = "failed";
      result.error = e.what();
      record();
      return result;
    }
    RunOptions options;
    options.outputFolder = dir.string();
    options.writeFrames = false;
    options.threads = 1;
    options.source = sweep.base;
    if (stop)
      options.onFrame = [stop](int, int, int) {
        if (stop->load()) throw Stopped();
      };
    const RunReport report = runScene(scene, options);
    result.status = report.completed ? "completed" : "refused";
    result.error = report.failure;
    result.metrics = readMetrics(sweep, dir);
    record();
  } catch (const Stopped&) {
    result = CaseResult{};
    result.index = index;
    result.metrics.assign(sweep.metrics.size(), std::string());
  } catch (const std::exception& e) {
    // A write failed or the folder is not usable: recorded, not marked finished, so a rerun tries again.
    result.status = "error";
    result.error = e.what();
  }
  return result;
}

ResultsTable::ResultsTable(const Sweep& sweep, std::string folder, std::vector<CaseResult> results)
    : sweep_(&sweep), folder_(std::move(folder)), results_(std::move(results)) {
  results_.resize(sweep.cases.size());
  for (std::size_t c = 0; c < results_.size(); ++c) {
    results_[c].index = c;
    results_[c].metrics.resize(sweep.metrics.size());
  }
}

void ResultsTable::record(const CaseResult& result) {
  CaseResult& row = results_.at(result.index);
  row = result;
  row.metrics.resize(sweep_->metrics.size());
}

std::string ResultsTable::csv() const {
  std::string out = "case";
  for (const Parameter& p : sweep_->parameters) out += "," + csvField(p.name);
  for (const Metric& m : sweep_->metrics) out += "," + csvField(m.name);
  out += ",status,error\n";
  for (const CaseResult& row : results_) {
    out += std::to_string(row.index);
    for (const std::string& value : sweep_->cases[row.index].values) {
      // A string value without its JSON quotes; numbers as JSON wrote them.
      const Json parsed = Json::parse(value);
      out += "," + csvField(parsed.is_string() ? parsed.get<std::string>() : value);
    }
    for (const std::string& value : row.metrics) out += "," + csvField(value);
    out += "," + row.status + "," + csvField(row.error) + "\n";
  }
  return out;
}

void ResultsTable::write() const { io::writeFileAtomically((fs::path(folder_) / "results.csv").string(), csv()); }

std::size_t ResultsTable::count(const std::string& status) const {
  return static_cast<std::size_t>(
      std::count_if(results_.begin(), results_.end(), [&](const CaseResult& r) { return r.status == status; }));
}

std::vector<std::size_t> pendingCases(const std::vector<CaseResult>& results) {
  std::vector<std::size_t> pending;
  for (const CaseResult& r : results)
    if (!r.finished()) pending.push_back(r.index);
  return pending;
}

void runLocally(const Sweep& sweep, const std::string& folder, ResultsTable& table, const LocalOptions& options) {
  if (options.jobs < 1) throw Error("sweep: jobs must be >= 1, got " + std::to_string(options.jobs));
  const std::vector<std::size_t> pending = pendingCases(table.results());
  std::mutex mutex;  // guards the table, `next`, the progress and the first exception
  std::size_t next = 0;
  Progress progress;
  progress.total = pending.size();
  const auto failures = [&] { return table.count("refused") + table.count("failed") + table.count("error"); };
  progress.failed = failures();
  const auto start = Clock::now();
  auto lastWrite = start;
  std::exception_ptr thrown;
  table.write();
  const auto worker = [&] {
    for (;;) {
      std::size_t index;
      {
        const std::lock_guard lock(mutex);
        if (next >= pending.size() || thrown || (options.stop && options.stop->load())) return;
        index = pending[next++];
      }
      const CaseResult result = runCase(sweep, index, folder, options.stop);
      const std::lock_guard lock(mutex);
      try {
        table.record(result);
        if (result.status != "pending") ++progress.done;
        progress.failed = failures();
        const auto now = Clock::now();
        progress.elapsedSeconds = std::chrono::duration<double>(now - start).count();
        if (now - lastWrite > std::chrono::milliseconds(250)) {
          table.write();
          lastWrite = now;
        }
        if (options.onCase) options.onCase(progress);
      } catch (...) {
        if (!thrown) thrown = std::current_exception();
      }
    }
  };
  const int threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(options.jobs), pending.size()));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  if (threads > 0) worker();
  for (std::thread& t : pool) t.join();
  table.write();
  if (thrown) std::rethrow_exception(thrown);
}

}  // namespace pliant::sweep
