// pliant.Scene (scene files and the built-in scenes), probes, diagnostics as numbers and arrays,
// frame output and the benchmark measurement.
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common.h"
#include "pliant/bench/benchmark.h"
#include "pliant/geometry.h"
#include "pliant/io/input_file.h"
#include "pliant/io/output.h"
#include "pliant/io/probes.h"
#include "pliant/run/run.h"

namespace pliant::python {

namespace {

// A Scene with what rebuilds it: its JSON text, its name in messages and the folder its mesh paths
// are relative to (empty text: not from JSON, e.g. a benchmark curve scene).
struct SceneHandle {
  Scene scene;
  std::string text;
  std::string source;
  std::string baseDirectory;
};
using SceneHolder = std::shared_ptr<SceneHandle>;

// max_memory: None (half of the machine's memory), a number of bytes or a size such as "4G".
SceneLoadOptions loadOptions(const py::object& maxMemory, const std::string& function) {
  SceneLoadOptions options;
  if (maxMemory.is_none()) return options;
  if (py::isinstance<py::str>(maxMemory)) {
    options.maxMemoryBytes = parseMemorySize(maxMemory.cast<std::string>());
    return options;
  }
  const double bytes = toDouble(maxMemory, function + ": max_memory");
  if (!(bytes >= 1.0) || !(bytes < 1.8e19))
    throw py::value_error(function + ": max_memory must be a number of bytes >= 1 or a size such as '4G'");
  options.maxMemoryBytes = static_cast<std::uint64_t>(bytes);
  return options;
}

SceneHolder sceneFromText(const std::string& text, const std::string& source, const std::string& base,
                          const SceneLoadOptions& options = {}) {
  auto handle = std::make_shared<SceneHandle>();
  handle->scene = parseScene(text, source, base, options);
  handle->text = text;
  handle->source = source;
  handle->baseDirectory = base;
  return handle;
}

// As loadSceneFile: a regular file within the scene size limit, remembered as the first input file.
SceneHolder sceneFromFile(const std::string& path, const SceneLoadOptions& options = {}) {
  SceneHolder handle = sceneFromText(io::readInputFile(path, "a scene file (.json)", io::kMaxSceneFileBytes), path,
                                     std::filesystem::path(path).parent_path().string(), options);
  handle->scene.inputFiles.insert(handle->scene.inputFiles.begin(), path);
  return handle;
}

template <std::size_t K>
py::array topologyView(const std::vector<std::array<ParticleIndex, K>>& rows, py::handle owner) {
  if (rows.empty())
    return readOnly(py::array_t<std::uint32_t>(std::vector<py::ssize_t>{py::ssize_t{0}, static_cast<py::ssize_t>(K)}));
  return fieldView<std::uint32_t>(rows.data(), rows.size(), sizeof(rows[0]), K, owner);
}

const char* probeKindName(Probe::Kind kind) {
  switch (kind) {
    case Probe::Kind::Particle:
      return "particle";
    case Probe::Kind::ConstraintForce:
      return "constraint-force";
    case Probe::Kind::Energy:
      return "energy";
    case Probe::Kind::Momentum:
      return "momentum";
    case Probe::Kind::CentreOfMass:
      return "centre-of-mass";
    case Probe::Kind::Residual:
      return "residual";
    case Probe::Kind::Intersections:
      return "intersections";
    case Probe::Kind::Body:
      return "body";
    case Probe::Kind::BodyMomentum:
      return "body-momentum";
    case Probe::Kind::BodyEnergy:
      return "body-energy";
    case Probe::Kind::JointForce:
      return "joint-force";
  }
  return "unknown";
}

// Records a scene's probes into rows of numbers; keeps the scene alive.
struct PyProbeRecorder {
  explicit PyProbeRecorder(SceneHolder s) : scene(std::move(s)), recorder(scene->scene) {
    columns = recorder.columns();
  }
  SceneHolder scene;
  ProbeRecorder recorder;
  std::vector<std::string> columns;
  std::vector<double> values;  // rows one after another
};

// Runs a diagnostic that may call Python user constraint functions, raising what they raised.
template <class F>
auto withCallbacks(F&& f) {
  CallbackScope scope;
  auto result = f();
  if (scope.failed()) scope.raise();
  return result;
}

io::FrameFormat formatFor(const std::string& path, py::handle format) {
  std::string name;
  if (!format.is_none()) name = toString(format, "write_frame: format");
  else if (path.ends_with(".obj")) name = "obj";
  else if (path.ends_with(".ply")) name = "ply";
  else name = "vtk";
  if (name == "vtk") return io::FrameFormat::Vtk;
  if (name == "obj") return io::FrameFormat::Obj;
  if (name == "ply") return io::FrameFormat::Ply;
  throw py::value_error("write_frame: format must be 'vtk', 'obj' or 'ply', got '" + name + "'");
}

// The scene a run argument names, as `pliant run` reads it: None is the default built-in scene; a
// string names a file when one is there or it looks like a path (a '/' or a '.'), else a built-in
// scene. Sets `source` to what the CLI writes as summary.json's "source".
SceneHolder runSceneArgument(py::handle scene, std::string& source) {
  if (scene.is_none()) {
    const std::string name = builtinSceneNames().front();
    source = "builtin:" + name;
    return sceneFromText(builtinSceneText(name), source, "");
  }
  if (py::isinstance<SceneHandle>(scene)) {
    SceneHolder handle = scene.cast<SceneHolder>();
    source = handle->source;
    return handle;
  }
  const std::string argument = toString(scene, "run: scene");
  source = argument;
  std::error_code ec;
  const bool looksLikeFile = argument.find('/') != std::string::npos || argument.find('.') != std::string::npos;
  if (std::filesystem::exists(argument, ec) || looksLikeFile) {
    requireFile(argument);
    if (std::filesystem::is_directory(argument, ec))
      throw Error(argument + ": is a folder, expected a scene file (.json)");
    return sceneFromFile(argument);
  }
  makeBuiltinScene(argument);  // raises for an unknown name, listing the known ones
  return sceneFromText(builtinSceneText(argument), argument, "");
}

// Stops a run from its onFrame callback once the Python progress callback raised.
struct ProgressRaised {};

py::dict runReportDict(RunReport& r, const std::string& out) {
  py::dict d;
  d["completed"] = r.completed;
  d["failure"] = r.failure;
  d["first_frame"] = r.firstFrame;
  d["last_frame"] = r.lastFrame;
  d["state_hash"] = r.stateHash;
  d["final_state"] = py::cast(std::move(r.finalState));
  d["simulate_seconds"] = r.simulateSeconds;
  d["write_seconds"] = r.writeSeconds;
  d["ms_per_frame"] = r.msPerFrame;
  d["projections"] = r.projections;
  d["frames_written"] = r.framesWritten;
  d["viewer_frames"] = r.viewerFrames;
  d["viewer_frame_stride"] = r.viewerFrameStride;
  d["out"] = out;
  d["convergence_warning"] = r.convergenceWarning;
  d["summary"] =
      r.summaryJson.empty() ? py::object(py::none()) : py::module_::import("json").attr("loads")(r.summaryJson);
  return d;
}

}  // namespace

void bindScene(py::module_& m) {
  py::class_<io::Topology>(m, "Topology", R"doc(
What to draw of a state: triangles (m, 3), lines (m, 2) and tetrahedra (m, 4) over particle indices.)doc")
      .def(py::init([](py::object triangles, py::object lines, py::object tets) {
             io::Topology t;
             if (!triangles.is_none()) t.triangles = toIndexRows<3>(triangles, "Topology: triangles");
             if (!lines.is_none()) t.lines = toIndexRows<2>(lines, "Topology: lines");
             if (!tets.is_none()) t.tets = toIndexRows<4>(tets, "Topology: tets");
             return t;
           }),
           py::arg("triangles") = py::none(), py::arg("lines") = py::none(), py::arg("tets") = py::none(),
           "Topology(triangles=None, lines=None, tets=None)")
      .def_property_readonly(
          "triangles", [](py::object self) { return topologyView(self.cast<const io::Topology&>().triangles, self); },
          "(m, 3) uint32, read-only view.")
      .def_property_readonly(
          "lines", [](py::object self) { return topologyView(self.cast<const io::Topology&>().lines, self); },
          "(m, 2) uint32, read-only view.")
      .def_property_readonly(
          "tets", [](py::object self) { return topologyView(self.cast<const io::Topology&>().tets, self); },
          "(m, 4) uint32, read-only view.");

  py::class_<SceneHandle, SceneHolder>(m, "Scene", R"doc(
A scene: a Model with its solver settings, frame count, what to draw (topology) and what to
measure (probes). From load_scene (a JSON file), parse_scene, builtin_scene or benchmark_scene.
settings and frames may be changed (e.g. for a parameter study); the model is shared and
immutable. A scene from JSON pickles as its text (and settings), so scenes whose models hold paths
can still be sent to other processes.)doc")
      .def_property_readonly(
          "name", [](const SceneHandle& s) { return s.scene.name; }, "The scene's name.")
      .def_property_readonly(
          "description", [](const SceneHandle& s) { return s.scene.description; }, "One line on what it shows.")
      .def_property_readonly(
          "source", [](const SceneHandle& s) { return s.source; },
          "The file, 'builtin:<name>' or the source name given to parse_scene.")
      .def_property_readonly(
          "model", [](const SceneHandle& s) { return holdModel(s.scene.model); }, "The shared, immutable Model.")
      .def_property(
          "settings", [](SceneHandle& s) -> SolverSettings& { return s.scene.settings; },
          [](SceneHandle& s, const SolverSettings& settings) {
            settings.validate();
            s.scene.settings = settings;
          },
          py::return_value_policy::reference_internal, "The scene's SolverSettings (changes to it change the scene).")
      .def_property(
          "frames", [](const SceneHandle& s) { return s.scene.frames; },
          [](SceneHandle& s, py::object v) {
            const int frames = toInt(v, "Scene.frames");
            if (frames < 0) throw py::value_error("Scene.frames must be >= 0, got " + std::to_string(frames));
            s.scene.frames = frames;
          },
          "Steps of settings.time_step that a run takes by default.")
      .def_property(
          "probe_every_substep", [](const SceneHandle& s) { return s.scene.probeEverySubstep; },
          [](SceneHandle& s, py::object v) { s.scene.probeEverySubstep = toBool(v, "Scene.probe_every_substep"); },
          "Whether probes are recorded after every substep (Solver.substep_observer) instead of every frame.")
      .def_property_readonly(
          "topology", [](SceneHandle& s) -> io::Topology& { return s.scene.topology; },
          py::return_value_policy::reference_internal, "What to draw (read-only views).")
      .def_property_readonly(
          "objects",
          [](const SceneHandle& s) {
            py::list out;
            for (const SceneObject& o : s.scene.objects) {
              py::dict d;
              d["name"] = o.name;
              d["first_particle"] = o.firstParticle;
              d["particle_count"] = o.particleCount;
              py::dict constraints;
              for (int f = 0; f < kConstraintFamilyCount; ++f)
                if (o.constraintEnd[f] > o.constraintBegin[f])
                  constraints[py::str(familyKey(static_cast<ConstraintFamily>(f)))] =
                      py::make_tuple(o.constraintBegin[f], o.constraintEnd[f]);
              d["constraints"] = constraints;
              out.append(d);
            }
            return out;
          },
          "Where each object landed: dicts of name, first_particle, particle_count and constraints {family: (begin, "
          "end)}.")
      .def_property_readonly(
          "probes",
          [](const SceneHandle& s) {
            py::list out;
            for (const Probe& p : s.scene.probes) {
              py::dict d;
              d["name"] = p.name;
              d["kind"] = probeKindName(p.kind);
              if (p.kind == Probe::Kind::Particle) d["particle"] = p.particle;
              if (p.kind == Probe::Kind::ConstraintForce)
                d["constraint"] = py::make_tuple(familyKey(p.constraint.family), p.constraint.index);
              if (p.object >= 0) d["object"] = p.object;
              if (p.body >= 0) d["body"] = p.body;
              if (p.kind == Probe::Kind::JointForce) d["joint"] = p.joint;
              out.append(d);
            }
            return out;
          },
          "The probes the scene declares (dicts of name, kind and what they measure).")
      .def(
          "solver",
          [](const SceneHandle& s) {
            return py::module_::import("pliant").attr("Solver")(holdModel(s.scene.model), s.scene.settings);
          },
          "solver() -> Solver\n\nA Solver of the scene's model with its settings.")
      .def(
          "state", [](const SceneHandle& s) { return State::fromModel(*s.scene.model); },
          "state() -> State\n\nThe scene's initial state.")
      .def("__repr__",
           [](const SceneHandle& s) {
             return "<pliant.Scene '" + s.scene.name + "': " + std::to_string(s.scene.model->particleCount()) +
                    " particles, " + std::to_string(s.scene.frames) + " frames>";
           })
      .def(py::pickle(
          [](const SceneHandle& s) {
            if (s.text.empty())
              throw py::type_error("cannot pickle scene '" + s.scene.name +
                                   "': it was not made from JSON (a benchmark curve scene); send its name instead");
            py::object settings = py::cast(s.scene.settings);
            return py::make_tuple(s.text, s.source, s.baseDirectory, settings, s.scene.frames,
                                  s.scene.probeEverySubstep);
          },
          [](py::tuple t) {
            if (t.size() != 6) throw py::value_error("Scene: bad pickle state");
            SceneHolder h = sceneFromText(t[0].cast<std::string>(), t[1].cast<std::string>(), t[2].cast<std::string>());
            h->scene.settings = t[3].cast<SolverSettings>();
            h->scene.frames = t[4].cast<int>();
            h->scene.probeEverySubstep = t[5].cast<bool>();
            return h;
          }));

  m.def(
      "load_scene",
      [](py::object path, py::object maxMemory) {
        const std::string file = toString(path, "load_scene: path");
        const SceneLoadOptions options = loadOptions(maxMemory, "load_scene");
        requireFile(file);
        std::error_code ec;
        if (std::filesystem::is_directory(file, ec)) throw Error(file + ": is a folder, expected a scene file (.json)");
        return sceneFromFile(file, options);
      },
      py::arg("path"), py::kw_only(), py::arg("max_memory") = py::none(),
      "load_scene(path, *, max_memory=None) -> Scene\n\nLoads a scene file (JSON, docs/scene-format.md); mesh paths "
      "are relative to its folder. Errors name the file, the JSON path or line and what was expected. A scene "
      "estimated to need more memory than max_memory (bytes, or a size such as '4G'; None: half of this machine's "
      "memory) is refused before it is built, naming the field that asks most.");
  m.def(
      "parse_scene",
      [](py::object text, py::object source, py::object base, py::object maxMemory) {
        return sceneFromText(toString(text, "parse_scene: text"), toString(source, "parse_scene: source"),
                             toString(base, "parse_scene: base_directory"), loadOptions(maxMemory, "parse_scene"));
      },
      py::arg("text"), py::arg("source") = "<string>", py::arg("base_directory") = "", py::kw_only(),
      py::arg("max_memory") = py::none(),
      "parse_scene(text, source='<string>', base_directory='', *, max_memory=None) -> Scene\n\nA scene from JSON "
      "text (max_memory as load_scene's).");
  m.def(
      "builtin_scene",
      [](py::object name) {
        const std::string n = toString(name, "builtin_scene: name");
        makeBuiltinScene(n);  // raises for an unknown name, listing the known ones
        return sceneFromText(builtinSceneText(n), "builtin:" + n, "");
      },
      py::arg("name"), "builtin_scene(name) -> Scene\n\nA built-in scene (builtin_scene_names()).");
  m.def("builtin_scene_names", &builtinSceneNames, "builtin_scene_names() -> list[str]\n\nThe default scene first.");
  m.def(
      "builtin_scene_description", [](py::object name) { return builtinSceneDescription(toString(name, "name")); },
      py::arg("name"), "builtin_scene_description(name) -> str");
  m.def(
      "builtin_scene_text",
      [](py::object name) {
        const std::string n = toString(name, "builtin_scene_text: name");
        const std::string text = builtinSceneText(n);
        if (text.empty()) makeBuiltinScene(n);  // raises naming the known scenes
        return text;
      },
      py::arg("name"), "builtin_scene_text(name) -> str\n\nThe JSON of a built-in scene (scenes/<name>.json).");
  m.def(
      "benchmark_scene",
      [](py::object name) {
        const std::string n = toString(name, "benchmark_scene: name");
        auto handle = std::make_shared<SceneHandle>();
        handle->scene = makeBenchmarkScene(n);
        handle->text = builtinSceneText(n);  // empty for the curve scenes
        handle->source = handle->text.empty() ? "benchmark:" + n : "builtin:" + n;
        if (!handle->text.empty()) handle->scene = parseScene(handle->text, handle->source, "");
        return handle;
      },
      py::arg("name"),
      "benchmark_scene(name) -> Scene\n\nA benchmark scene (benchmark_scene_names()) or a built-in one, with the "
      "frame count `pliant bench` runs.");
  m.def("benchmark_scene_names", &benchmarkSceneNames, "benchmark_scene_names() -> list[str]");

  py::class_<PyProbeRecorder>(m, "ProbeRecorder", R"doc(
Records a scene's probes (Scene.probes) into rows of numbers: call record(state) each frame, then
read array (rows, columns) or write csv(), which is what `pliant run` writes as probes.csv.)doc")
      .def(py::init([](const SceneHolder& scene) { return std::make_unique<PyProbeRecorder>(scene); }),
           py::arg("scene"), "ProbeRecorder(scene)")
      .def_property_readonly(
          "columns", [](const PyProbeRecorder& r) { return r.columns; },
          "Column names: time, then each probe's (probes.csv's header).")
      .def(
          "record",
          [](PyProbeRecorder& r, py::object state) {
            const State& s = toState(state, "ProbeRecorder.record");
            if (s.position.size() != r.scene->scene.model->particleCount())
              throw py::value_error("ProbeRecorder.record: the state does not belong to the scene's model");
            const std::size_t before = r.values.size();
            withCallbacks([&] {
              r.recorder.values(s, r.values);
              return 0;
            });
            if (r.values.size() - before != r.columns.size()) r.values.resize(before);
          },
          py::arg("state"), "record(state)\n\nAppends one row for the state.")
      .def_property_readonly(
          "array",
          [](const PyProbeRecorder& r) {
            const auto cols = static_cast<py::ssize_t>(r.columns.size());
            const auto rows = static_cast<py::ssize_t>(r.values.size() / r.columns.size());
            py::array_t<double> out(std::vector<py::ssize_t>{rows, cols});
            if (!r.values.empty()) std::memcpy(out.mutable_data(), r.values.data(), r.values.size() * sizeof(double));
            return out;
          },
          "(rows, columns) float64, a copy of what was recorded.")
      .def(
          "csv",
          [](const PyProbeRecorder& r) {
            std::string out = r.recorder.header();
            std::vector<double> row;
            for (std::size_t i = 0; i < r.values.size(); i += r.columns.size()) {
              for (std::size_t c = 0; c < r.columns.size(); ++c) {
                char buffer[32];
                const auto end = std::to_chars(buffer, buffer + sizeof buffer, r.values[i + c]);
                if (c > 0) out.push_back(',');
                out.append(buffer, end.ptr);
              }
              out.push_back('\n');
            }
            return out;
          },
          "csv() -> str\n\nThe rows as probes.csv text.")
      .def(
          "clear", [](PyProbeRecorder& r) { r.values.clear(); }, "clear()\n\nForgets the rows recorded.")
      .def("__len__", [](const PyProbeRecorder& r) { return r.values.size() / r.columns.size(); });

  m.def(
      "energy",
      [](const ModelHolder& model, py::object state, const SolverSettings& settings) {
        const State& s = toState(state, "energy");
        const EnergyReport e = withCallbacks([&] { return computeEnergy(*model, s, settings); });
        py::dict d;
        d["kinetic"] = e.kinetic;
        d["gravitational"] = e.gravitational;
        d["elastic"] = e.elastic;
        d["elastic_from_positions"] = e.elasticFromPositions;
        d["total"] = e.total();
        return d;
      },
      py::arg("model"), py::arg("state"), py::arg("settings"),
      "energy(model, state, settings) -> dict\n\nKinetic, gravitational, elastic and total energy (J); elastic is sum "
      "1/2 alpha f^2 with f = lambda / h^2 of the last substep over compliant constraints (the energy of the forces "
      "applied), elastic_from_positions is sum C^2 / (2 alpha) (equal when the solve converged).");
  m.def(
      "momentum",
      [](const ModelHolder& model, py::object state, py::object particles) {
        const State& s = toState(state, "momentum");
        std::vector<ParticleIndex> subset;
        if (!particles.is_none()) {
          subset = toIndexArray(particles, "momentum: particles");
          for (ParticleIndex p : subset)
            if (p >= model->particleCount())
              throw py::value_error("momentum: particles: index " + std::to_string(p) + " out of range (model has " +
                                    std::to_string(model->particleCount()) + " particles)");
        }
        const MomentumReport r = computeMomentum(*model, s, particles.is_none() ? nullptr : &subset);
        auto vec = [](const Vec3& v) {
          py::array_t<double> a(3);
          for (int k = 0; k < 3; ++k) a.mutable_data()[k] = v[k];
          return a;
        };
        py::dict d;
        d["mass"] = r.mass;
        d["centre_of_mass"] = vec(r.centreOfMass);
        d["linear"] = vec(r.linear);
        d["angular"] = vec(r.angular);
        return d;
      },
      py::arg("model"), py::arg("state"), py::arg("particles") = py::none(),
      "momentum(model, state, particles=None) -> dict\n\nMass (kg), centre_of_mass (3,) m, linear (3,) kg m/s and "
      "angular (3,) kg m^2/s momentum about the origin, of the dynamic particles (or of `particles`).");
  m.def(
      "residual",
      [](const ModelHolder& model, py::object state, const SolverSettings& settings) {
        const State& s = toState(state, "residual");
        const ResidualReport r = withCallbacks([&] { return computeResidual(*model, s, settings); });
        py::dict d;
        d["max"] = r.max;
        d["rms"] = r.rms;
        d["relative"] = r.relative;
        d["strain"] = r.strain;
        d["count"] = r.count;
        d["worst"] =
            r.count > 0 ? py::object(py::make_tuple(familyKey(r.worst.family), r.worst.index)) : py::object(py::none());
        return d;
      },
      py::arg("model"), py::arg("state"), py::arg("settings"),
      "residual(model, state, settings) -> dict\n\nMax and rms of |C + alpha~ lambda| over the constraints (XPBD eq. "
      "9), their count and the worst (family, index), and the relative residual sqrt(sum r^2/alpha / sum C^2/alpha) "
      "over the compliant ones (0: converged), and the strain residual: the RMS displacement that would remove "
      "each residual over the constraint's size (far from converged when relative > 0.5 and strain > 0.01).");
  m.def(
      "constraint_values",
      [](const ModelHolder& model, py::object state, py::object family) {
        const State& s = toState(state, "constraint_values");
        const ConstraintFamily f = toFamily(family, "constraint_values: family");
        if (s.position.size() != model->particleCount())
          throw py::value_error("constraint_values: the state does not belong to the model");
        const std::size_t count = model->constraintCount(f);
        py::array_t<double> out(static_cast<py::ssize_t>(count));
        double* data = out.mutable_data();
        withCallbacks([&] {
          for (std::size_t i = 0; i < count; ++i)
            data[i] = constraintValue(*model, s, {f, static_cast<std::uint32_t>(i)});
          return 0;
        });
        return out;
      },
      py::arg("model"), py::arg("state"), py::arg("family"),
      "constraint_values(model, state, family) -> ndarray\n\nC of every constraint of the family (m,) at the state's "
      "positions.");
  m.def(
      "constraint_forces",
      [](const ModelHolder& model, py::object state, py::object family) {
        const State& s = toState(state, "constraint_forces");
        const ConstraintFamily f = toFamily(family, "constraint_forces: family");
        if (s.lambda.size() != model->totalConstraintCount())
          throw py::value_error("constraint_forces: the state does not belong to the model");
        const std::size_t count = model->constraintCount(f);
        py::array_t<double> out(static_cast<py::ssize_t>(count));
        for (std::size_t i = 0; i < count; ++i)
          out.mutable_data()[i] = constraintForce(*model, s, {f, static_cast<std::uint32_t>(i)});
        return out;
      },
      py::arg("model"), py::arg("state"), py::arg("family"),
      "constraint_forces(model, state, family) -> ndarray\n\nlambda / h^2 of every constraint of the family (m,): N "
      "for distances and attachments, N m for bending angles, Pa for volumes.");
  m.def(
      "constraint_force_vectors",
      [](const ModelHolder& model, py::object state, py::object family, py::object index) {
        const State& s = toState(state, "constraint_force_vectors");
        const ConstraintFamily f = toFamily(family, "constraint_force_vectors: family");
        const int i = toInt(index, "constraint_force_vectors: index");
        if (i < 0 || static_cast<std::size_t>(i) >= model->constraintCount(f))
          throw py::index_error("constraint_force_vectors: no " + familyKey(f) + " constraint " + std::to_string(i));
        if (s.position.size() != model->particleCount() || s.lambda.size() != model->totalConstraintCount())
          throw py::value_error("constraint_force_vectors: the state does not belong to the model");
        std::vector<ParticleIndex> particles;
        std::vector<Vec3> forces;
        withCallbacks([&] {
          constraintForceVectors(*model, s, {f, static_cast<std::uint32_t>(i)}, particles, forces);
          return 0;
        });
        py::array_t<std::int64_t> p(static_cast<py::ssize_t>(particles.size()));
        for (std::size_t k = 0; k < particles.size(); ++k) p.mutable_data()[k] = particles[k];
        return py::make_tuple(p, vec3Copy(forces));
      },
      py::arg("model"), py::arg("state"), py::arg("family"), py::arg("index"),
      "constraint_force_vectors(model, state, family, index) -> (particles, forces)\n\nThe force (N) the constraint "
      "puts on each of its particles, gradC_i lambda / h^2: particles (k,), forces (k, 3).");
  m.def(
      "count_intersecting_triangle_pairs",
      [](py::object positions, py::object triangles) {
        const std::vector<Vec3> x = toVec3Array(positions, "count_intersecting_triangle_pairs: positions");
        const auto t = toIndexRows<3>(triangles, "count_intersecting_triangle_pairs: triangles");
        for (const auto& row : t)
          for (ParticleIndex p : row)
            if (p >= x.size())
              throw py::value_error("count_intersecting_triangle_pairs: triangles: index " + std::to_string(p) +
                                    " out of range (" + std::to_string(x.size()) + " positions)");
        return countIntersectingTrianglePairs(x, t);
      },
      py::arg("positions"), py::arg("triangles"),
      "count_intersecting_triangle_pairs(positions, triangles) -> int\n\nPairs of triangles (not sharing a vertex) "
      "that pass through each other.");

  m.def(
      "write_frame",
      [](py::object path, py::object state, py::object topology, py::object format) {
        const std::string file = toString(path, "write_frame: path");
        const State& s = toState(state, "write_frame");
        io::Topology none;
        const io::Topology* t = &none;
        if (!topology.is_none()) {
          if (!py::isinstance<io::Topology>(topology))
            throw py::type_error("write_frame: topology must be a pliant.Topology (e.g. scene.topology) or None");
          t = &topology.cast<const io::Topology&>();
        }
        io::writeFrame(file, formatFor(file, format), *t, s);
      },
      py::arg("path"), py::arg("state"), py::arg("topology") = py::none(), py::arg("format") = py::none(),
      "write_frame(path, state, topology=None, format=None)\n\nOne frame as VTK (.vtk legacy, .vtu XML), OBJ or PLY, "
      "written atomically; the format follows the extension unless given.");

  m.def(
      "run_benchmark",
      [](const SceneHolder& scene, py::object threads, py::object frames, py::object stages) {
        const int t = toInt(threads, "run_benchmark: threads");
        const int f = toInt(frames, "run_benchmark: frames");
        const bool timeStages = toBool(stages, "run_benchmark: stages");
        if (t < 1 || f < 1) throw py::value_error("run_benchmark: threads and frames must be >= 1");
        if (holdsPythonCallables(*scene->scene.model))
          throw py::value_error("run_benchmark: the scene's model holds Python callbacks");
        BenchmarkResult r;
        {
          py::gil_scoped_release release;
          r = runBenchmark(scene->scene, t, f, timeStages);
        }
        py::dict d;
        d["scene"] = r.scene;
        d["threads"] = r.threads;
        d["frames"] = r.frames;
        d["ms_per_frame"] = r.msPerFrame;
        d["mean_strain"] = r.strain.mean;
        d["p99_strain"] = r.strain.p99;
        d["state_hash"] = r.stateHash;
        if (r.stagesTimed) d["stages"] = stageTimesDict(r.stages);
        return d;
      },
      py::arg("scene"), py::arg("threads"), py::arg("frames"), py::arg("stages") = false,
      "run_benchmark(scene, threads, frames, stages=False) -> dict\n\nWhat `pliant bench` measures for one row: "
      "the scene stepped from its initial state in C++, ms_per_frame of Solver::step, strain and state hash; with "
      "stages=True also `stages`, the seconds spent in each stage of the pipeline over the run (Solver.stage_times).");
  m.def(
      "run",
      [](py::object scene, py::object out, py::kwargs kwargs) {
        std::string source;
        SceneHolder handle = runSceneArgument(scene, source);
        RunOptions options;
        options.outputFolder = toString(out, "run: out");
        options.source = source;
        Keywords kw("run", kwargs);
        if (auto v = kw.take("frames"); v && !v->is_none()) {
          options.frames = toInt(*v, kw.field("frames"));
          if (options.frames < 0)
            throw py::value_error(kw.field("frames") + " must be >= 0 or None, got " + std::to_string(options.frames));
        }
        if (auto v = kw.take("format")) {
          const std::string name = toString(*v, kw.field("format"));
          if (name == "vtk") options.frameFormat = io::FrameFormat::Vtk;
          else if (name == "obj") options.frameFormat = io::FrameFormat::Obj;
          else if (name == "ply") options.frameFormat = io::FrameFormat::Ply;
          else if (name == "glb") options.frameFormat = io::FrameFormat::Glb;
          else throw py::value_error(kw.field("format") + " must be 'vtk', 'obj', 'ply' or 'glb', got '" + name + "'");
        }
        kw.set("write_frames", options.writeFrames, toBool);
        if (auto v = kw.take("every")) {
          options.frameEvery = toInt(*v, kw.field("every"));
          if (options.frameEvery < 1)
            throw py::value_error(kw.field("every") + " must be >= 1, got " + std::to_string(options.frameEvery));
        }
        if (auto v = kw.take("threads")) {
          options.threads = toInt(*v, kw.field("threads"));
          if (options.threads < 0)
            throw py::value_error(kw.field("threads") + " must be >= 0 (0: the current count), got " +
                                  std::to_string(options.threads));
        }
        if (auto v = kw.take("checkpoint_every")) {
          options.checkpointEvery = toInt(*v, kw.field("checkpoint_every"));
          if (options.checkpointEvery < 0)
            throw py::value_error(kw.field("checkpoint_every") + " must be >= 0, got " +
                                  std::to_string(options.checkpointEvery));
        }
        if (auto v = kw.take("checkpoint_at"); v && !v->is_none()) {
          if (!py::isinstance<py::sequence>(*v) || py::isinstance<py::str>(*v))
            throw py::type_error(kw.field("checkpoint_at") + " must be a sequence of frame numbers");
          for (py::handle item : *v) {
            const int frame = toInt(item, kw.field("checkpoint_at"));
            if (frame < 1) throw py::value_error(kw.field("checkpoint_at") + " frames must be >= 1");
            options.checkpointAt.push_back(frame);
          }
        }
        if (auto v = kw.take("resume"); v && !v->is_none()) {
          options.resumeFrom = toString(*v, kw.field("resume"));
          requireFile(options.resumeFrom);
        }
        if (auto v = kw.take("html"); v && !v->is_none()) options.htmlPage = toString(*v, kw.field("html"));
        if (auto v = kw.take("source"); v && !v->is_none()) options.source = toString(*v, kw.field("source"));
        py::object progress = py::none();
        if (auto v = kw.take("progress"); v && !v->is_none()) {
          if (!PyCallable_Check(v->ptr()))
            throw py::type_error(kw.field("progress") + " must be callable as progress(frame, first, last) or None");
          progress = *v;
        }
        kw.done();

        std::optional<py::error_already_set> progressError;
        if (!progress.is_none())
          options.onFrame = [&](int frame, int first, int last) {
            py::gil_scoped_acquire gil;
            try {
              progress(frame, first, last);
            } catch (py::error_already_set& e) {
              progressError.emplace(std::move(e));
              throw ProgressRaised{};
            }
          };
        CallbackScope scope;
        RunReport report;
        try {
          py::gil_scoped_release release;
          report = runScene(handle->scene, options);
        } catch (const ProgressRaised&) {
          progressError->restore();
          throw py::error_already_set();
        }
        if (scope.failed() && report.completed) scope.raise();
        if (!report.completed) {
          StepResult refusal = report.refusal;
          refusal.message = source + ": " + report.failure;
          const State atRefusal = report.finalState;
          py::dict d = runReportDict(report, options.outputFolder);
          try {
            raiseStepRefused(refusal, atRefusal, scope);
          } catch (py::error_already_set& e) {
            e.value().attr("report") = d;
            throw;
          }
        }
        return runReportDict(report, options.outputFolder);
      },
      py::arg("scene") = py::none(), py::arg("out") = "out",
      R"doc(run(scene=None, out='out', *, frames=None, format='vtk', write_frames=True, every=1, threads=0, checkpoint_every=0, checkpoint_at=None, resume=None, html=None, source=None, progress=None) -> dict

Runs a scene into the folder `out` as `pliant run` does (the same C++ function, pliant::runScene),
writing the same files: frames/ (vtk, obj or ply; the first, every `every`-th and the last; with
write_frames False no frames/ and, without html, viewer data of the first and last frame only),
scene.pvd, checkpoints/ (checkpoint_every, checkpoint_at), probes.csv,
final_state.csv, viewer-data.json, summary.json and, with html, the viewer page.

scene: a Scene, a scene file path or a built-in scene name (as the CLI reads its argument), or
None for the default built-in scene. frames: last frame (None: the scene's). threads: worker
threads for the run (0: the current count). resume: a checkpoint file to start from. source:
summary.json's "source" (default: the argument as given, or Scene.source). progress: called as
progress(frame, first, last) after every frame; an exception it raises stops the run (after
scene.pvd, probes.csv and summary.json, "status": "stopped", are written for the frames that exist)
and is raised again. manifest.json lists the files written; a rerun into `out` removes them first.

Returns a dict: completed, failure, first_frame, last_frame, state_hash, final_state (State),
simulate_seconds, write_seconds, ms_per_frame, projections, frames_written, viewer_frames,
viewer_frame_stride, out, convergence_warning (empty, or the sentence `pliant run` prints when the
solve was far from converged: summary["convergence"] has the details) and summary (summary.json as a
dict). The GIL is released while it runs.
A refused step raises StepRefused (its `report` attribute holds this dict); every output is still
written up to the last good frame, and summary.json says "status": "refused" with a "refusal" block.
Bad options raise ValueError/TypeError naming the field, before anything is written.)doc");
}

}  // namespace pliant::python
