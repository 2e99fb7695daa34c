// Sweep files (docs/sweep.md): every field checked with its JSON pointer in the message, the base
// scene loaded and every parameter's pointer looked up in it, then the cases expanded (grid, zip or
// random samples) and each case's scene resolved, all before anything runs.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/output.h"
#include "pliant/io/probes.h"
#include "pliant/run/sweep.h"

namespace pliant::sweep {

namespace detail {
// Generated into the build tree from sweeps/*.json (src/run/CMakeLists.txt).
struct EmbeddedSweep {
  const char* name;
  const char* text;
};
extern const EmbeddedSweep kEmbeddedSweeps[];
extern const std::size_t kEmbeddedSweepCount;
}  // namespace detail

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// A sweep's random draws: SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014), written out so the samples are the same on every platform and
// standard library (std::uniform_real_distribution is not specified bit for bit).
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1), 53 bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}
  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    throw Error(source_ + ": " + (pointer.empty() ? "/" : pointer) + ": " + what);
  }
  // Refuses keys of `node` not in `known` (a misspelt key would otherwise be ignored silently).
  void only(const Json& node, const std::string& pointer, std::initializer_list<const char*> known) const {
    for (const auto& [key, value] : node.items()) {
      bool found = false;
      std::string list;
      for (const char* k : known) {
        found = found || key == k;
        list += (list.empty() ? "" : ", ") + std::string(k);
      }
      if (!found) fail(pointer + "/" + key, "unknown field; expected one of " + list);
    }
  }
  const Json& object(const Json& parent, const std::string& pointer, const char* key) const {
    if (!parent.contains(key)) fail(pointer + "/" + key, "missing; expected an object");
    const Json& node = parent.at(key);
    if (!node.is_object()) fail(pointer + "/" + key, "expected an object");
    return node;
  }
  std::string string(const Json& parent, const std::string& pointer, const char* key, bool required = true,
                     const std::string& fallback = "") const {
    if (!parent.contains(key)) {
      if (required) fail(pointer + "/" + key, "missing; expected a string");
      return fallback;
    }
    const Json& node = parent.at(key);
    if (!node.is_string() || node.get<std::string>().empty()) fail(pointer + "/" + key, "expected a non-empty string");
    return node.get<std::string>();
  }
  double number(const Json& parent, const std::string& pointer, const char* key) const {
    if (!parent.contains(key)) fail(pointer + "/" + key, "missing; expected a number");
    const Json& node = parent.at(key);
    if (!node.is_number() || !std::isfinite(node.get<double>())) fail(pointer + "/" + key, "expected a finite number");
    return node.get<double>();
  }
  std::int64_t integer(const Json& parent, const std::string& pointer, const char* key, std::int64_t min,
                       std::int64_t max) const {
    if (!parent.contains(key)) fail(pointer + "/" + key, "missing; expected a whole number");
    const Json& node = parent.at(key);
    const bool whole = node.is_number_integer() || (node.is_number_float() && std::isfinite(node.get<double>()) &&
                                                    std::floor(node.get<double>()) == node.get<double>());
    const double value = whole ? node.get<double>() : 0.0;
    if (!whole || value < static_cast<double>(min) || value > static_cast<double>(max))
      fail(pointer + "/" + key, "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                                    ", got " + node.dump());
    return static_cast<std::int64_t>(value);
  }
  bool flag(const Json& parent, const std::string& pointer, const char* key) const {
    if (!parent.contains(key)) return false;
    if (!parent.at(key).is_boolean()) fail(pointer + "/" + key, "expected true or false");
    return parent.at(key).get<bool>();
  }

 private:
  std::string source_;
};

// A JSON pointer's text escaped as a key of a JSON pointer ("~" and "/"), for messages.
std::string escapedKey(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

// The most cases a sweep may expand to: far beyond a sweep anyone runs, small enough that a typo
// (a grid of 10^6 x 10^6) is refused before the cases are built.
constexpr std::int64_t kMaxCases = 1000000;

// One parameter's generator: its values (lists and ranges) or its random range.
struct Generator {
  std::vector<Json> values;  // lists and ranges
  bool random = false;
  double from = 0.0, to = 1.0;
  bool logScale = false;
  bool integer = false;
  Json draw(Random& rng) const {
    if (!random) return values[static_cast<std::size_t>(rng.next() % values.size())];
    const double u = rng.unit();
    double v = logScale ? from * std::pow(to / from, u) : from + u * (to - from);
    if (integer) return Json(static_cast<std::int64_t>(std::llround(v)));
    return Json(v);
  }
};

Json rangeValue(double v, bool integer) {
  if (integer) return Json(static_cast<std::int64_t>(std::llround(v)));
  return Json(v);
}

Generator readGenerator(const Reader& r, const Json& p, const std::string& at, bool randomCombine) {
  Generator g;
  g.integer = r.flag(p, at, "integer");
  int kinds = 0;
  for (const char* k : {"values", "linear", "log", "random"}) kinds += p.contains(k) ? 1 : 0;
  if (kinds != 1) r.fail(at, "expected exactly one of \"values\", \"linear\", \"log\" or \"random\"");
  if (p.contains("values")) {
    const Json& values = p.at("values");
    if (!values.is_array() || values.empty()) r.fail(at + "/values", "expected a non-empty array of values");
    if (g.integer) r.fail(at + "/integer", "applies to ranges and random draws; list the values as you want them");
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i].is_number_float() && !std::isfinite(values[i].get<double>()))
        r.fail(at + "/values/" + std::to_string(i), "expected a finite number");
      g.values.push_back(values[i]);
    }
    return g;
  }
  const bool isLog = p.contains("log");
  if (p.contains("linear") || isLog) {
    const std::string key = isLog ? "log" : "linear";
    const std::string where = at + "/" + key;
    const Json& range = p.at(key);
    if (!range.is_object()) r.fail(where, "expected an object {\"from\", \"to\", \"count\"}");
    r.only(range, where, {"from", "to", "count"});
    const double from = r.number(range, where, "from"), to = r.number(range, where, "to");
    const auto count = r.integer(range, where, "count", 1, kMaxCases);
    if (isLog && (from <= 0.0 || to <= 0.0))
      r.fail(where,
             "a log range needs positive \"from\" and \"to\", got " + formatNumber(from) + " and " + formatNumber(to));
    for (std::int64_t i = 0; i < count; ++i) {
      const double t = count > 1 ? static_cast<double>(i) / static_cast<double>(count - 1) : 0.0;
      double v;
      if (i == 0) v = from;
      else if (i == count - 1) v = to;  // the end exactly, not as rounded by the formula
      else if (isLog) v = std::pow(10.0, std::log10(from) + t * (std::log10(to) - std::log10(from)));
      else v = from + t * (to - from);
      g.values.push_back(rangeValue(v, g.integer));
    }
    return g;
  }
  const std::string where = at + "/random";
  if (!randomCombine) r.fail(where, "random draws need \"combine\": \"random\" (with \"samples\" and \"seed\")");
  const Json& range = p.at("random");
  if (!range.is_object()) r.fail(where, "expected an object {\"from\", \"to\", \"scale\"}");
  r.only(range, where, {"from", "to", "scale"});
  g.random = true;
  g.from = r.number(range, where, "from");
  g.to = r.number(range, where, "to");
  const std::string scale = r.string(range, where, "scale", false, "linear");
  if (scale != "linear" && scale != "log")
    r.fail(where + "/scale", "expected \"linear\" or \"log\", got \"" + scale + "\"");
  g.logScale = scale == "log";
  if (g.logScale && (g.from <= 0.0 || g.to <= 0.0))
    r.fail(where, "a log scale needs positive \"from\" and \"to\", got " + formatNumber(g.from) + " and " +
                      formatNumber(g.to));
  return g;
}

Metric readMetric(const Reader& r, const Json& m, const std::string& at, const Scene& base) {
  if (!m.is_object()) r.fail(at, "expected an object");
  r.only(m, at, {"name", "summary", "probe", "statistic", "state_hash", "time_per_frame"});
  Metric metric;
  int kinds = 0;
  for (const char* k : {"summary", "probe", "state_hash", "time_per_frame"}) kinds += m.contains(k) ? 1 : 0;
  if (kinds != 1)
    r.fail(at,
           "expected exactly one of \"summary\" (a pointer), \"probe\" (a column), \"state_hash\" or "
           "\"time_per_frame\"");
  if (m.contains("summary")) {
    metric.source = Metric::Source::Summary;
    metric.pointer = r.string(m, at, "summary");
    try {
      (void)Json::json_pointer(metric.pointer);
    } catch (const Json::exception&) {
      r.fail(at + "/summary",
             "expected a JSON pointer into summary.json (e.g. /final_energy_J/total), got \"" + metric.pointer + "\"");
    }
    if (metric.pointer.empty()) r.fail(at + "/summary", "expected a pointer to one field, not the whole summary");
  } else if (m.contains("probe")) {
    metric.source = Metric::Source::Probe;
    metric.column = r.string(m, at, "probe");
    const std::vector<std::string> columns = ProbeRecorder(base).columns();
    bool found = false;
    std::string list;
    for (std::size_t c = 1; c < columns.size(); ++c) {  // not "time"
      found = found || columns[c] == metric.column;
      list += (list.empty() ? "" : ", ") + columns[c];
    }
    if (!found)
      r.fail(at + "/probe", "the base scene has no probe column \"" + metric.column + "\"; expected one of " +
                                (list.empty() ? std::string("(none: the scene has no probes)") : list));
    const std::string statistic = r.string(m, at, "statistic", false, "final");
    if (statistic == "final") metric.statistic = Metric::Statistic::Final;
    else if (statistic == "min") metric.statistic = Metric::Statistic::Min;
    else if (statistic == "max") metric.statistic = Metric::Statistic::Max;
    else if (statistic == "mean") metric.statistic = Metric::Statistic::Mean;
    else r.fail(at + "/statistic", "expected \"final\", \"min\", \"max\" or \"mean\", got \"" + statistic + "\"");
  } else {
    const char* key = m.contains("state_hash") ? "state_hash" : "time_per_frame";
    if (!m.at(key).is_boolean() || !m.at(key).get<bool>()) r.fail(at + "/" + key, "expected true");
    metric.source = m.contains("state_hash") ? Metric::Source::StateHash : Metric::Source::TimePerFrame;
  }
  if (m.contains("statistic") && metric.source != Metric::Source::Probe)
    r.fail(at + "/statistic", "applies to probe metrics only");
  std::string fallback = metric.source == Metric::Source::Summary     ? metric.pointer.substr(1)
                         : metric.source == Metric::Source::Probe     ? metric.column
                         : metric.source == Metric::Source::StateHash ? "state_hash"
                                                                      : "ms_per_frame";
  if (metric.source == Metric::Source::Probe && metric.statistic != Metric::Statistic::Final)
    fallback += m.at("statistic").get<std::string>() == "min"   ? ".min"
                : m.at("statistic").get<std::string>() == "max" ? ".max"
                                                                : ".mean";
  metric.name = r.string(m, at, "name", false, fallback);
  return metric;
}

}  // namespace

bool Metric::timing() const {
  return source == Source::TimePerFrame || (source == Source::Summary && pointer.rfind("/timings", 0) == 0);
}

std::vector<std::string> builtinSweepNames() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < detail::kEmbeddedSweepCount; ++i) names.emplace_back(detail::kEmbeddedSweeps[i].name);
  return names;
}

std::string builtinSweepText(const std::string& name) {
  for (std::size_t i = 0; i < detail::kEmbeddedSweepCount; ++i)
    if (name == detail::kEmbeddedSweeps[i].name) return detail::kEmbeddedSweeps[i].text;
  return {};
}

Sweep loadSweepFile(const std::string& path, const SceneLoadOptions& options) {
  const std::string text = io::readInputFile(path, "a sweep file (.json)", io::kMaxSceneFileBytes);
  return parseSweep(text, path, fs::path(path).parent_path().string(), options);
}

Sweep parseSweep(const std::string& text, const std::string& source, const std::string& directory,
                 const SceneLoadOptions& options) {
  const Reader r(source);
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& e) {
    std::string detail = e.what();
    const auto dash = detail.find(" - ");
    if (dash != std::string::npos) detail = detail.substr(dash + 3);
    throw Error(source + ": JSON syntax error: " + detail);
  }
  if (!root.is_object()) r.fail("", "expected a JSON object at the top level");
  r.only(root, "",
         {"$schema", "name", "description", "scene", "set", "parameters", "combine", "samples", "seed", "metrics"});
  Sweep sweep;
  sweep.file = source;
  sweep.text = root.dump(2) + "\n";
  sweep.loadOptions = options;
  sweep.name = r.string(root, "", "name");
  sweep.description = root.contains("description") ? r.string(root, "", "description") : std::string();

  // The base scene: a built-in or a file (relative to the sweep file's folder).
  const Json& scene = r.object(root, "", "scene");
  r.only(scene, "/scene", {"builtin", "file"});
  if (scene.contains("builtin") == scene.contains("file"))
    r.fail("/scene", "expected exactly one of \"builtin\" (a built-in scene's name) or \"file\" (a scene file)");
  std::string baseText;
  if (scene.contains("builtin")) {
    const std::string name = r.string(scene, "/scene", "builtin");
    baseText = builtinSceneText(name);
    if (baseText.empty()) {
      std::string known;
      for (const std::string& n : builtinSceneNames()) known += (known.empty() ? "" : ", ") + n;
      r.fail("/scene/builtin", "unknown built-in scene '" + name + "'; expected one of " + known);
    }
    sweep.base = "builtin:" + name;
  } else {
    const std::string file = r.string(scene, "/scene", "file");
    const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : fs::path(directory) / file;
    try {
      baseText = io::readInputFile(path.string(), "a scene file (.json)", io::kMaxSceneFileBytes);
    } catch (const Error& e) {
      r.fail("/scene/file", e.what());
    }
    sweep.base = path.string();
    sweep.baseDirectory = path.parent_path().string();
  }
  // The base scene must load as it is: its own errors name its file.
  const Scene baseScene = parseScene(baseText, sweep.base, sweep.baseDirectory, options);
  Json base = Json::parse(baseText);

  const auto requirePointer = [&](const std::string& pointer, const std::string& at) {
    Json::json_pointer p;
    try {
      p = Json::json_pointer(pointer);
    } catch (const Json::exception&) {
      r.fail(at,
             "expected a JSON pointer into the scene (e.g. /objects/0/stretch/compliance), got \"" + pointer + "\"");
    }
    if (pointer.empty()) r.fail(at, "expected a pointer to one field of the scene, not the whole scene");
    bool present = false;
    try {
      present = base.contains(p);
    } catch (const Json::exception&) {
      present = false;
    }
    if (!present)
      r.fail(at, "the base scene " + sweep.base + " has no field " + pointer +
                     " (a sweep sets fields that exist; add it to the base scene with its default)");
    return p;
  };

  // Fixed settings applied to every case.
  if (root.contains("set")) {
    const Json& set = root.at("set");
    if (!set.is_object()) r.fail("/set", "expected an object of JSON pointer: value");
    for (const auto& [pointer, value] : set.items())
      base[requirePointer(pointer, "/set/" + escapedKey(pointer))] = value;
  }

  sweep.baseSceneJson = base.dump(2) + "\n";
  const std::string combine = r.string(root, "", "combine", false, "grid");
  if (combine != "grid" && combine != "zip" && combine != "random")
    r.fail("/combine", "expected \"grid\", \"zip\" or \"random\", got \"" + combine + "\"");
  const bool random = combine == "random";
  if (random) {
    (void)r.integer(root, "", "samples", 1, kMaxCases);
    (void)r.integer(root, "", "seed", 0, std::numeric_limits<std::int64_t>::max());
  } else {
    for (const char* k : {"samples", "seed"})
      if (root.contains(k)) r.fail(std::string("/") + k, "applies to \"combine\": \"random\" only");
  }

  if (!root.contains("parameters") || !root.at("parameters").is_array() || root.at("parameters").empty())
    r.fail("/parameters", "expected a non-empty array of parameters");
  std::vector<Generator> generators;
  std::vector<Json::json_pointer> pointers;
  std::set<std::string> names;
  const Json& parameters = root.at("parameters");
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const std::string at = "/parameters/" + std::to_string(i);
    const Json& p = parameters[i];
    if (!p.is_object()) r.fail(at, "expected an object");
    r.only(p, at, {"pointer", "name", "values", "linear", "log", "random", "integer"});
    Parameter parameter;
    parameter.pointer = r.string(p, at, "pointer");
    pointers.push_back(requirePointer(parameter.pointer, at + "/pointer"));
    for (const Parameter& other : sweep.parameters)
      if (other.pointer == parameter.pointer) r.fail(at + "/pointer", "varied twice: " + parameter.pointer);
    parameter.name = r.string(p, at, "name", false, parameter.pointer);
    if (!names.insert(parameter.name).second) r.fail(at + "/name", "a second column named \"" + parameter.name + "\"");
    generators.push_back(readGenerator(r, p, at, random));
    sweep.parameters.push_back(parameter);
  }

  if (!root.contains("metrics") || !root.at("metrics").is_array())
    r.fail("/metrics", "expected an array of metrics (may be empty)");
  const Json& metrics = root.at("metrics");
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string at = "/metrics/" + std::to_string(i);
    sweep.metrics.push_back(readMetric(r, metrics[i], at, baseScene));
    const std::string& name = sweep.metrics.back().name;
    if (!names.insert(name).second || name == "case" || name == "status" || name == "error")
      r.fail(at + "/name", "a second column named \"" + name + "\" (case, status and error are taken)");
  }

  // The cases: each a tuple of values, one per parameter.
  std::vector<std::vector<Json>> tuples;
  if (combine == "grid") {
    std::int64_t total = 1;
    for (std::size_t i = 0; i < generators.size(); ++i) {
      total *= static_cast<std::int64_t>(generators[i].values.size());
      if (total > kMaxCases) r.fail("/parameters", "the grid has more than " + std::to_string(kMaxCases) + " cases");
    }
    // The last parameter varies fastest (as nested loops over the parameters in order).
    for (std::int64_t c = 0; c < total; ++c) {
      std::vector<Json> tuple(generators.size());
      std::int64_t rest = c;
      for (std::size_t i = generators.size(); i-- > 0;) {
        const auto n = static_cast<std::int64_t>(generators[i].values.size());
        tuple[i] = generators[i].values[static_cast<std::size_t>(rest % n)];
        rest /= n;
      }
      tuples.push_back(std::move(tuple));
    }
  } else if (combine == "zip") {
    const std::size_t n = generators.front().values.size();
    for (std::size_t i = 1; i < generators.size(); ++i)
      if (generators[i].values.size() != n)
        r.fail("/parameters/" + std::to_string(i), "\"zip\" needs as many values as parameter 0's " +
                                                       std::to_string(n) + ", got " +
                                                       std::to_string(generators[i].values.size()));
    for (std::size_t c = 0; c < n; ++c) {
      std::vector<Json> tuple;
      for (const Generator& g : generators) tuple.push_back(g.values[c]);
      tuples.push_back(std::move(tuple));
    }
  } else {
    Random rng(static_cast<std::uint64_t>(root.at("seed").get<std::int64_t>()));
    const auto samples = root.at("samples").get<std::int64_t>();
    for (std::int64_t c = 0; c < samples; ++c) {
      std::vector<Json> tuple;
      for (const Generator& g : generators) tuple.push_back(g.draw(rng));
      tuples.push_back(std::move(tuple));
    }
  }

  for (std::size_t c = 0; c < tuples.size(); ++c) {
    Json resolved = base;
    Case item;
    item.index = c;
    for (std::size_t i = 0; i < pointers.size(); ++i) {
      resolved[pointers[i]] = tuples[c][i];
      item.values.push_back(tuples[c][i].dump());
    }
    item.sceneJson = resolved.dump(2) + "\n";
    item.sceneHash = hex(io::hashBytes(item.sceneJson));
    sweep.cases.push_back(std::move(item));
  }
  return sweep;
}

}  // namespace pliant::sweep
