// pliant.SolverSettings and pliant.Solver: step() releases the GIL while C++ steps; a refused step
// raises pliant.StepRefused naming the particle and the constraint (or contact); a Python callback
// that raised during the step is that exception's __cause__.
#include <chrono>
#include <cmath>

#include "common.h"
#include "pliant/parallel.h"

namespace pliant::python {

PyObject* kStepRefusedType = nullptr;

namespace {
std::string describeError(py::error_already_set& e) {
  return py::str(e.type().attr("__name__")).cast<std::string>() + ": " + py::str(e.value()).cast<std::string>();
}

}  // namespace

[[noreturn]] void raiseStepRefused(const StepResult& r, const State& state, CallbackScope& scope) {
  std::string message = r.message;
  if (scope.failed()) message += "; a Python callback raised " + describeError(scope.error());
  py::object type = py::reinterpret_borrow<py::object>(kStepRefusedType);
  py::object exc = type(message);
  exc.attr("status") = r.status == StepStatus::ExcessiveDisplacement ? "excessive-displacement"
                       : r.status == StepStatus::ExcessiveStrain     ? "excessive-strain"
                       : r.status == StepStatus::ContactOverflow     ? "contact-overflow"
                                                                     : "non-finite";
  exc.attr("step") = state.stepCount + 1;
  exc.attr("time") = state.time;
  exc.attr("particle") = r.particle >= 0 ? py::object(py::int_(r.particle)) : py::object(py::none());
  exc.attr("constraint") =
      r.hasConstraint ? py::object(py::make_tuple(familyKey(r.constraint.family), r.constraint.index)) : py::none();
  exc.attr("collider") =
      r.hasContact && r.contactCollider >= 0 ? py::object(py::int_(r.contactCollider)) : py::object(py::none());
  exc.attr("contact_particle") =
      r.hasContact && r.contactCollider < 0 ? py::object(py::int_(r.contactParticle)) : py::object(py::none());
  exc.attr("surface_contact") =
      r.hasSurfaceContact
          ? py::object(py::make_tuple(
                r.surfaceContactKind == SurfaceContact::Kind::VertexTriangle ? "vertex-triangle" : "edge-edge",
                py::make_tuple(r.surfaceContactParticles[0], r.surfaceContactParticles[1], r.surfaceContactParticles[2],
                               r.surfaceContactParticles[3])))
          : py::object(py::none());
  if (scope.failed()) PyException_SetCause(exc.ptr(), scope.error().value().inc_ref().ptr());
  PyErr_SetObject(type.ptr(), exc.ptr());
  throw py::error_already_set();
}

namespace {

std::string modeName(SolverMode mode) { return mode == SolverMode::Pbd ? "pbd" : "xpbd"; }

SolverMode toMode(py::handle value, const std::string& field) {
  const std::string name = toString(value, field);
  if (name == "pbd" || name == "PBD") return SolverMode::Pbd;
  if (name == "xpbd" || name == "XPBD") return SolverMode::Xpbd;
  throw py::value_error(field + ": unknown solver mode '" + name + "' (expected 'pbd' or 'xpbd')");
}

// Applies keyword fields to `s` (each named in errors as "<function>: <field>").
void applySettings(SolverSettings& s, const std::string& function, const py::kwargs& kwargs) {
  Keywords kw(function, kwargs);
  kw.set("mode", s.mode, toMode);
  kw.set("time_step", s.timeStep, toDouble);
  kw.set("substeps", s.substeps, toInt);
  kw.set("iterations", s.iterations, toInt);
  kw.set("gravity", s.gravity, toVec3);
  if (auto v = kw.take("iteration_independent_stiffness"))
    s.iterationIndependentStiffness = toBool(*v, kw.field("iteration_independent_stiffness"));
  kw.set("velocity_damping", s.velocityDamping, toDouble);
  if (auto v = kw.take("max_displacement_per_step"))
    s.maxDisplacementPerStep = toDouble(*v, kw.field("max_displacement_per_step"));
  kw.set("divergence_factor", s.divergenceFactor, toDouble);
  kw.set("max_strain", s.maxStrain, toDouble);
  kw.set("check_steps", s.checkSteps, toBool);
  kw.set("contact_margin", s.contactMargin, toDouble);
  if (auto v = kw.take("max_depenetration_velocity"))
    s.maxDepenetrationVelocity = toDouble(*v, kw.field("max_depenetration_velocity"));
  if (auto v = kw.take("parallel_block_size")) {
    const int block = toInt(*v, kw.field("parallel_block_size"));
    if (block < 1)
      throw py::value_error(kw.field("parallel_block_size") + " must be >= 1, got " + std::to_string(block));
    s.parallelBlockSize = static_cast<std::uint32_t>(block);
  }
  if (auto v = kw.take("dynamic_friction_in_velocity_pass"))
    s.dynamicFrictionInVelocityPass = toBool(*v, kw.field("dynamic_friction_in_velocity_pass"));
  kw.set("body_contact_passes", s.bodyContactPasses, toInt);
  kw.set("body_velocity_passes", s.bodyVelocityPasses, toInt);
  kw.set("body_stack_mass_scaling", s.bodyStackMassScaling, toDouble);
  kw.set("body_collision_per_substep", s.bodyCollisionPerSubstep, toBool);
  kw.set("sleeping", s.sleeping, toBool);
  kw.set("sleep_linear_speed", s.sleepLinearSpeed, toDouble);
  kw.set("sleep_angular_speed", s.sleepAngularSpeed, toDouble);
  kw.set("sleep_time", s.sleepTime, toDouble);
  kw.done();
  s.validate();
}

py::dict settingsDict(const SolverSettings& s) {
  py::dict d;
  d["mode"] = modeName(s.mode);
  d["time_step"] = s.timeStep;
  d["substeps"] = s.substeps;
  d["iterations"] = s.iterations;
  d["gravity"] = py::make_tuple(s.gravity.x(), s.gravity.y(), s.gravity.z());
  d["iteration_independent_stiffness"] = s.iterationIndependentStiffness;
  d["velocity_damping"] = s.velocityDamping;
  d["max_displacement_per_step"] = s.maxDisplacementPerStep;
  d["divergence_factor"] = s.divergenceFactor;
  d["max_strain"] = s.maxStrain;
  d["check_steps"] = s.checkSteps;
  d["contact_margin"] = s.contactMargin;
  d["max_depenetration_velocity"] = s.maxDepenetrationVelocity;
  d["parallel_block_size"] = s.parallelBlockSize;
  d["dynamic_friction_in_velocity_pass"] = s.dynamicFrictionInVelocityPass;
  d["body_contact_passes"] = s.bodyContactPasses;
  d["body_velocity_passes"] = s.bodyVelocityPasses;
  d["body_stack_mass_scaling"] = s.bodyStackMassScaling;
  d["body_collision_per_substep"] = s.bodyCollisionPerSubstep;
  d["sleeping"] = s.sleeping;
  d["sleep_linear_speed"] = s.sleepLinearSpeed;
  d["sleep_angular_speed"] = s.sleepAngularSpeed;
  d["sleep_time"] = s.sleepTime;
  return d;
}

// The Solver as Python holds it. `busy` (read and written with the GIL held) refuses a second step
// or an edit while one runs, from another thread or from the solver's own observer.
struct PySolver {
  PySolver(const ModelHolder& model, const SolverSettings& settings)
      : solver(model, settings), pythonColliderPaths(holdsPythonColliderPaths(*model)) {}
  Solver solver;
  bool busy = false;
  bool pythonColliderPaths = false;
  py::object observer = py::none();
  py::object steppingState = py::none();  // the State being stepped, for the observer
  std::optional<py::error_already_set> observerError;

  void checkIdle(const char* what) const {
    if (busy)
      throw std::runtime_error(std::string("Solver.") + what +
                               ": the solver is stepping (from another thread, or this is its own substep observer)");
  }
  void installObserver() {
    if (observer.is_none()) {
      solver.setSubstepObserver({});
      return;
    }
    solver.setSubstepObserver([this](const State&) {
      py::gil_scoped_acquire gil;
      if (observerError) return;
      try {
        observer(steppingState);
      } catch (py::error_already_set& e) {
        observerError.emplace(std::move(e));
      }
    });
  }
};

// Marks the solver busy for one step and clears the observer's state afterwards.
class StepGuard {
 public:
  StepGuard(PySolver& s, py::object state) : s_(s) {
    s_.checkIdle("step");
    s_.busy = true;
    s_.steppingState = std::move(state);
  }
  ~StepGuard() {
    s_.busy = false;
    s_.steppingState = py::none();
  }

 private:
  PySolver& s_;
};

// One step, the GIL released while C++ runs. A refused step leaves the state as it was.
void stepOnce(PySolver& s, const py::object& stateObject, State& state) {
  StepGuard guard(s, stateObject);
  // A Python collider path that raised leaves no trace in the state (its NaN pose finds no
  // contact), so the step is undone from a copy; paths of particles and attachments refuse it.
  std::optional<State> backup;
  if (s.pythonColliderPaths) backup = state;
  CallbackScope scope;
  StepResult result;
  {
    py::gil_scoped_release release;
    result = s.solver.step(state);
  }
  if (!result.ok()) raiseStepRefused(result, state, scope);
  if (scope.failed()) {
    if (backup) state = *backup;
    StepResult refused;
    refused.status = StepStatus::NonFinite;
    refused.message =
        "step " + std::to_string(state.stepCount + 1) + " at t = " + std::to_string(state.time) + " s refused";
    raiseStepRefused(refused, state, scope);
  }
  if (s.observerError) {
    py::error_already_set e = std::move(*s.observerError);
    s.observerError.reset();
    e.restore();
    throw py::error_already_set();
  }
}

py::dict contactArrays(const std::vector<Contact>& contacts) {
  const auto n = static_cast<py::ssize_t>(contacts.size());
  py::array_t<std::int64_t> particle(n), other(n), collider(n);
  py::array_t<double> lambda(n), normalVelocity(n);
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    particle.mutable_data()[i] = contacts[i].particle;
    other.mutable_data()[i] = contacts[i].collider >= 0 ? -1 : static_cast<std::int64_t>(contacts[i].other);
    collider.mutable_data()[i] = contacts[i].collider;
    lambda.mutable_data()[i] = contacts[i].lambda;
    normalVelocity.mutable_data()[i] = contacts[i].normalVelocity;
  }
  py::dict d;
  d["particle"] = particle;
  d["other"] = other;
  d["collider"] = collider;
  d["lambda"] = lambda;
  d["normal_velocity"] = normalVelocity;
  return d;
}

int traverseSolver(PyObject* self, visitproc visit, void* arg) {
  // Instances whose C++ object is not constructed yet hold nothing to visit.
  try {
    auto& s = py::cast<PySolver&>(py::handle(self));
    Py_VISIT(s.observer.ptr());
    Py_VISIT(s.steppingState.ptr());
  } catch (const py::cast_error&) {
  }
#if PY_VERSION_HEX >= 0x03090000
  Py_VISIT(Py_TYPE(self));
#endif
  return 0;
}

int clearSolver(PyObject* self) {
  try {
    auto& s = py::cast<PySolver&>(py::handle(self));
    s.observer = py::none();
    s.installObserver();
  } catch (const py::cast_error&) {
  }
  return 0;
}

}  // namespace

void bindSolver(py::module_& m) {
  py::class_<SolverSettings>(m, "SolverSettings", R"doc(
Solver settings. Keywords: mode='xpbd' | 'pbd', time_step=1/60 (s, one step), substeps=1,
iterations=1 (Gauss-Seidel passes per substep), gravity=(0, -9.81, 0) (m/s^2),
iteration_independent_stiffness=False (PBD), velocity_damping=0 (1/s), divergence_factor=10 (a move
past 10 x (model extent + speed dt + acceleration dt^2) refuses the step), max_strain=100 (a distance
constraint past 101 x its rest length refuses it), max_displacement_per_step=inf (m; an absolute
bound as well), check_steps=True, contact_margin=0.005 (m),
max_depenetration_velocity=3 (m/s), parallel_block_size=512, dynamic_friction_in_velocity_pass=False,
body_contact_passes=16, body_velocity_passes=4 (rigid bodies' contact passes),
body_stack_mass_scaling=0 (1/m; > 0: the lower body of each touching pair solved as heavier by
exp(k d) in the contact passes, so tall stacks rest at fewer passes),
body_collision_per_substep=True (False: rigid bodies' contacts found once per step), sleeping=True,
sleep_linear_speed=0.05 (m/s), sleep_angular_speed=0.05 (rad/s), sleep_time=0.5 (s): islands of
bodies slower than both for sleep_time sleep until touched or their state is set.
Invalid values raise pliant.Error naming the field.)doc")
      .def(py::init([](py::kwargs kw) {
             SolverSettings s;
             applySettings(s, "SolverSettings", kw);
             return s;
           }),
           "SolverSettings(**fields)")
      .def_static(
          "pbd",
          [](py::kwargs kw) {
            SolverSettings s;
            s.mode = SolverMode::Pbd;
            applySettings(s, "SolverSettings.pbd", kw);
            return s;
          },
          "pbd(**fields) -> SolverSettings\n\nPosition-based dynamics (Mueller et al. 2007): stiffness per constraint.")
      .def_static(
          "xpbd",
          [](py::kwargs kw) {
            SolverSettings s;
            s.mode = SolverMode::Xpbd;
            applySettings(s, "SolverSettings.xpbd", kw);
            return s;
          },
          "xpbd(**fields) -> SolverSettings\n\nExtended PBD (Macklin et al. 2016): compliance and damping.")
      .def_static(
          "small_steps",
          [](py::object substeps, py::object timeStep, py::kwargs kw) {
            SolverSettings s = SolverSettings::smallSteps(toInt(substeps, "SolverSettings.small_steps: substeps"),
                                                          toDouble(timeStep, "SolverSettings.small_steps: time_step"));
            applySettings(s, "SolverSettings.small_steps", kw);
            return s;
          },
          py::arg("substeps"), py::arg("time_step") = 1.0 / 60.0,
          "small_steps(substeps, time_step=1/60, **fields) -> SolverSettings\n\nXPBD with `substeps` substeps of one "
          "iteration each (Macklin et al. 2019).")
      .def_property(
          "mode", [](const SolverSettings& s) { return modeName(s.mode); },
          [](SolverSettings& s, py::object v) { s.mode = toMode(v, "SolverSettings.mode"); }, "'pbd' or 'xpbd'.")
      .def_property(
          "time_step", [](const SolverSettings& s) { return s.timeStep; },
          [](SolverSettings& s, py::object v) { s.timeStep = toDouble(v, "SolverSettings.time_step"); }, "s")
      .def_property(
          "substeps", [](const SolverSettings& s) { return s.substeps; },
          [](SolverSettings& s, py::object v) { s.substeps = toInt(v, "SolverSettings.substeps"); },
          "Substeps per step, >= 1.")
      .def_property(
          "iterations", [](const SolverSettings& s) { return s.iterations; },
          [](SolverSettings& s, py::object v) { s.iterations = toInt(v, "SolverSettings.iterations"); },
          "Gauss-Seidel passes per substep, >= 1.")
      .def_property(
          "gravity",
          [](const SolverSettings& s) {
            py::array_t<double> g(3);
            for (int k = 0; k < 3; ++k) g.mutable_data()[k] = s.gravity[k];
            return g;
          },
          [](SolverSettings& s, py::object v) { s.gravity = toVec3(v, "SolverSettings.gravity"); }, "m/s^2 (a copy)")
      .def_property(
          "iteration_independent_stiffness", [](const SolverSettings& s) { return s.iterationIndependentStiffness; },
          [](SolverSettings& s, py::object v) {
            s.iterationIndependentStiffness = toBool(v, "SolverSettings.iteration_independent_stiffness");
          },
          "PBD: use k' = 1 - (1 - k)^(1/iterations).")
      .def_property(
          "velocity_damping", [](const SolverSettings& s) { return s.velocityDamping; },
          [](SolverSettings& s, py::object v) { s.velocityDamping = toDouble(v, "SolverSettings.velocity_damping"); },
          "1/s")
      .def_property(
          "max_displacement_per_step", [](const SolverSettings& s) { return s.maxDisplacementPerStep; },
          [](SolverSettings& s, py::object v) {
            s.maxDisplacementPerStep = toDouble(v, "SolverSettings.max_displacement_per_step");
          },
          "m")
      .def_property(
          "divergence_factor", [](const SolverSettings& s) { return s.divergenceFactor; },
          [](SolverSettings& s, py::object v) { s.divergenceFactor = toDouble(v, "SolverSettings.divergence_factor"); },
          "Relative divergence bound, >= 1 (inf: none): a particle moving further in a step than this times the "
          "model's extent plus its speed and acceleration terms refuses the step.")
      .def_property(
          "max_strain", [](const SolverSettings& s) { return s.maxStrain; },
          [](SolverSettings& s, py::object v) { s.maxStrain = toDouble(v, "SolverSettings.max_strain"); },
          "A distance constraint longer than (1 + max_strain) x its rest length refuses the step (inf: none).")
      .def_property(
          "check_steps", [](const SolverSettings& s) { return s.checkSteps; },
          [](SolverSettings& s, py::object v) { s.checkSteps = toBool(v, "SolverSettings.check_steps"); },
          "Refuse steps that produce NaN/Inf, move a particle past the divergence bounds or overstretch a distance "
          "constraint.")
      .def_property(
          "contact_margin", [](const SolverSettings& s) { return s.contactMargin; },
          [](SolverSettings& s, py::object v) { s.contactMargin = toDouble(v, "SolverSettings.contact_margin"); }, "m")
      .def_property(
          "max_depenetration_velocity", [](const SolverSettings& s) { return s.maxDepenetrationVelocity; },
          [](SolverSettings& s, py::object v) {
            s.maxDepenetrationVelocity = toDouble(v, "SolverSettings.max_depenetration_velocity");
          },
          "m/s")
      .def_property(
          "parallel_block_size", [](const SolverSettings& s) { return s.parallelBlockSize; },
          [](SolverSettings& s, py::object v) {
            const int block = toInt(v, "SolverSettings.parallel_block_size");
            if (block < 1) throw py::value_error("SolverSettings.parallel_block_size must be >= 1");
            s.parallelBlockSize = static_cast<std::uint32_t>(block);
          },
          "Fewest constraints a thread is given of a batch split across threads, >= 1.")
      .def_property(
          "dynamic_friction_in_velocity_pass", [](const SolverSettings& s) { return s.dynamicFrictionInVelocityPass; },
          [](SolverSettings& s, py::object v) {
            s.dynamicFrictionInVelocityPass = toBool(v, "SolverSettings.dynamic_friction_in_velocity_pass");
          },
          "Dynamic friction in the velocity pass (Mueller et al. 2020, eq. 30) instead of the position solve.")
      .def_property(
          "body_contact_passes", [](const SolverSettings& s) { return s.bodyContactPasses; },
          [](SolverSettings& s, py::object v) { s.bodyContactPasses = toInt(v, "SolverSettings.body_contact_passes"); },
          "Gauss-Seidel passes over the rigid bodies' contacts per iteration, >= 1.")
      .def_property(
          "body_velocity_passes", [](const SolverSettings& s) { return s.bodyVelocityPasses; },
          [](SolverSettings& s, py::object v) {
            s.bodyVelocityPasses = toInt(v, "SolverSettings.body_velocity_passes");
          },
          "Passes of the rigid bodies' contact velocity pass, >= 1.")
      .def_property(
          "body_stack_mass_scaling", [](const SolverSettings& s) { return s.bodyStackMassScaling; },
          [](SolverSettings& s, py::object v) {
            s.bodyStackMassScaling = toDouble(v, "SolverSettings.body_stack_mass_scaling");
          },
          "1/m, >= 0: the lower body of each touching pair solved as heavier by exp(k d) in the contact passes "
          "(d: its depth below the upper one); 0: off.")
      .def_property(
          "body_collision_per_substep", [](const SolverSettings& s) { return s.bodyCollisionPerSubstep; },
          [](SolverSettings& s, py::object v) {
            s.bodyCollisionPerSubstep = toBool(v, "SolverSettings.body_collision_per_substep");
          },
          "True: rigid bodies' contacts found every substep; False: once per step, re-evaluated per substep.")
      .def_property(
          "sleeping", [](const SolverSettings& s) { return s.sleeping; },
          [](SolverSettings& s, py::object v) { s.sleeping = toBool(v, "SolverSettings.sleeping"); },
          "Islands of rigid bodies at rest fall asleep (not stepped until touched).")
      .def_property(
          "sleep_linear_speed", [](const SolverSettings& s) { return s.sleepLinearSpeed; },
          [](SolverSettings& s, py::object v) {
            s.sleepLinearSpeed = toDouble(v, "SolverSettings.sleep_linear_speed");
          },
          "m/s")
      .def_property(
          "sleep_angular_speed", [](const SolverSettings& s) { return s.sleepAngularSpeed; },
          [](SolverSettings& s, py::object v) {
            s.sleepAngularSpeed = toDouble(v, "SolverSettings.sleep_angular_speed");
          },
          "rad/s")
      .def_property(
          "sleep_time", [](const SolverSettings& s) { return s.sleepTime; },
          [](SolverSettings& s, py::object v) { s.sleepTime = toDouble(v, "SolverSettings.sleep_time"); }, "s")
      .def("validate", &SolverSettings::validate, "validate()\n\nRaises pliant.Error naming the first invalid field.")
      .def(
          "copy", [](const SolverSettings& s) { return s; }, "copy() -> SolverSettings")
      .def("as_dict", &settingsDict, "as_dict() -> dict\n\nThe fields as keywords of SolverSettings(**d).")
      .def("__repr__",
           [](const SolverSettings& s) {
             std::string out = "SolverSettings(";
             bool first = true;
             for (auto item : settingsDict(s)) {
               out += (first ? "" : ", ") + py::str(item.first).cast<std::string>() + "=" +
                      py::repr(item.second).cast<std::string>();
               first = false;
             }
             return out + ")";
           })
      .def(py::pickle([](const SolverSettings& s) { return settingsDict(s); },
                      [](py::dict d) {
                        SolverSettings s;
                        applySettings(s, "SolverSettings (unpickled)", py::kwargs(d));
                        return s;
                      }));

  py::class_<PySolver>(m, "Solver", py::custom_type_setup([](PyHeapTypeObject* heap) {
                         auto* type = &heap->ht_type;
                         type->tp_flags |= Py_TPFLAGS_HAVE_GC;
                         type->tp_traverse = traverseSolver;
                         type->tp_clear = clearSolver;
                       }),
                       R"doc(
Advances a State by one time step (settings.time_step). Holds the Model it was given (shared);
set_particle_mass, fix_particle, release_particle and set_constraint_parameters change it between
steps (the solver then steps its own copy, Solver.model). step() releases the GIL: other Python
threads run meanwhile, and solvers of other states may step in parallel. Pliant's own threads are
set with pliant.set_thread_count; results are bit-identical for any thread count.)doc")
      .def(py::init([](const ModelHolder& model, py::object settings) {
             SolverSettings s;
             if (!settings.is_none()) {
               if (!py::isinstance<SolverSettings>(settings))
                 throw py::type_error("Solver: settings must be a SolverSettings, got " +
                                      std::string(Py_TYPE(settings.ptr())->tp_name));
               s = settings.cast<SolverSettings>();
             }
             return std::make_unique<PySolver>(model, s);
           }),
           py::arg("model"), py::arg("settings") = py::none(), "Solver(model, settings=None)")
      .def(
          "step",
          [](PySolver& s, py::object stateObject) { stepOnce(s, stateObject, toState(stateObject, "Solver.step")); },
          py::arg("state"),
          R"doc(step(state)

Advances the state by settings.time_step, releasing the GIL meanwhile. A refused step (non-finite
or too large a move) leaves the state as it was and raises pliant.StepRefused, which names the
particle and the constraint or contact; an exception raised by a Python callback (a user
constraint, a path) refuses the step with that exception as __cause__.)doc")
      .def(
          "run",
          [](PySolver& s, py::object stateObject, py::object steps) {
            State& state = toState(stateObject, "Solver.run");
            const int n = toInt(steps, "Solver.run: steps");
            if (n < 0) throw py::value_error("Solver.run: steps must be >= 0, got " + std::to_string(n));
            // Without Python callbacks the loop runs in C++ with the GIL released, taking it back
            // every 0.1 s to let Ctrl-C through; with them, step by step.
            const bool callbacks = !s.observer.is_none() || holdsPythonCallables(s.solver.model());
            int done = 0;
            while (done < n) {
              if (callbacks) {
                stepOnce(s, stateObject, state);
                ++done;
              } else {
                StepGuard guard(s, stateObject);
                StepResult result;
                CallbackScope scope;
                {
                  py::gil_scoped_release release;
                  const auto start = std::chrono::steady_clock::now();
                  while (done < n && result.ok()) {
                    result = s.solver.step(state);
                    if (result.ok()) ++done;
                    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(100)) break;
                  }
                }
                if (!result.ok()) raiseStepRefused(result, state, scope);
              }
              if (PyErr_CheckSignals() != 0) throw py::error_already_set();
            }
          },
          py::arg("state"), py::arg("steps"),
          "run(state, steps)\n\nTakes `steps` steps in a C++ loop (the GIL released), stopping with StepRefused at "
          "a refused one.")
      .def_property(
          "settings", [](const PySolver& s) { return s.solver.settings(); },
          [](PySolver& s, const SolverSettings& settings) {
            s.checkIdle("settings");
            s.solver.setSettings(settings);
          },
          "The settings (a copy; assign a SolverSettings to change them).")
      .def_property_readonly(
          "model", [](const PySolver& s) { return holdModel(s.solver.modelPtr()); },
          "The model stepped: the one given, or after an edit the solver's own copy.")
      .def(
          "set_particle_mass",
          [](PySolver& s, py::object particle, py::object mass) {
            s.checkIdle("set_particle_mass");
            s.solver.setParticleMass(toParticle(particle, "set_particle_mass: particle"),
                                     toDouble(mass, "set_particle_mass: mass"));
          },
          py::arg("particle"), py::arg("mass"),
          "set_particle_mass(particle, mass)\n\nMass (kg) of a particle; 0 or inf fixes it.")
      .def(
          "fix_particle",
          [](PySolver& s, py::object particle) {
            s.checkIdle("fix_particle");
            s.solver.fixParticle(toParticle(particle, "fix_particle: particle"));
          },
          py::arg("particle"), "fix_particle(particle)\n\nPins a particle where it is.")
      .def(
          "release_particle",
          [](PySolver& s, py::object particle) {
            s.checkIdle("release_particle");
            s.solver.releaseParticle(toParticle(particle, "release_particle: particle"));
          },
          py::arg("particle"), "release_particle(particle)\n\nFrees a fixed particle with its mass.")
      .def(
          "set_constraint_parameters",
          [](PySolver& s, py::object family, py::object index, py::object params) {
            s.checkIdle("set_constraint_parameters");
            const int i = toInt(index, "set_constraint_parameters: index");
            if (i < 0) throw py::value_error("set_constraint_parameters: index must be >= 0");
            s.solver.setConstraintParameters(
                {toFamily(family, "set_constraint_parameters: family"), static_cast<std::uint32_t>(i)},
                toParameters(params, "set_constraint_parameters: params"));
          },
          py::arg("family"), py::arg("index"), py::arg("params"),
          "set_constraint_parameters(family, index, params)\n\nCompliance, damping and stiffness of one "
          "constraint.")
      .def_property(
          "substep_observer", [](const PySolver& s) { return s.observer; },
          [](PySolver& s, py::object observer) {
            s.checkIdle("substep_observer");
            if (!observer.is_none() && !PyCallable_Check(observer.ptr()))
              throw py::type_error("Solver.substep_observer: expected a callable(state) or None");
            s.observer = observer;
            s.installObserver();
          },
          "Called as observer(state) after every substep's velocity update (e.g. to record probes per substep); "
          "None for none. An exception it raises is raised by step() after the step.")
      .def_property_readonly(
          "last_projection_count", [](const PySolver& s) { return s.solver.lastProjectionCount(); },
          "Constraint projections made by the last step.")
      .def_property_readonly(
          "last_contact_count", [](const PySolver& s) { return s.solver.lastContactCount(); },
          "Contacts of the last substep (colliders, particle pairs, surfaces).")
      .def_property(
          "stage_timing", [](const PySolver& s) { return s.solver.stageTiming(); },
          [](PySolver& s, py::object on) {
            s.checkIdle("stage_timing");
            s.solver.setStageTiming(toBool(on, "Solver.stage_timing"));
          },
          "Whether every step times the stages of the pipeline (False by default); setting True starts from zero.")
      .def(
          "stage_times", [](const PySolver& s) { return stageTimesDict(s.solver.stageTimes()); },
          "stage_times() -> dict\n\nSeconds of wall-clock time per stage, summed over the steps timed since "
          "stage_timing was set (predict, collider_contacts, particle_contacts, surface_contacts, body_contacts, "
          "constraints, contact_projection, velocities, step_end), and steps.")
      .def(
          "body_attachment_force",
          [](const PySolver& s, py::object index) {
            const int i = toInt(index, "body_attachment_force: attachment");
            if (i < 0) throw py::value_error("body_attachment_force: attachment: expected an index >= 0");
            const Vec3 f = s.solver.bodyAttachmentForce(static_cast<std::size_t>(i));
            return py::make_tuple(f.x(), f.y(), f.z());
          },
          py::arg("attachment"),
          "body_attachment_force(attachment) -> (fx, fy, fz) N, the force body attachment `attachment` exerted on its "
          "particle in the last substep (lambda n / h^2); the body felt the opposite.")
      .def(
          "last_contacts",
          [](const PySolver& s, py::object kind) {
            const std::string k = toString(kind, "last_contacts: kind");
            if (k == "collider") return contactArrays(s.solver.lastColliderContacts());
            if (k == "particle") return contactArrays(s.solver.lastParticleContacts());
            throw py::value_error("last_contacts: kind must be 'collider' or 'particle', got '" + k + "'");
          },
          py::arg("kind") = "collider",
          "last_contacts(kind='collider') -> dict\n\nThe contacts of the last substep as arrays: particle, other "
          "(particle pairs), collider, lambda (normal force = lambda / h^2), normal_velocity (m/s).")
      .def("__repr__", [](const PySolver& s) {
        return "<pliant.Solver: " + std::to_string(s.solver.model().particleCount()) + " particles, " +
               modeName(s.solver.settings().mode) + ", " + std::to_string(s.solver.settings().substeps) +
               " substeps x " + std::to_string(s.solver.settings().iterations) + " iterations>";
      });

  m.def(
      "set_thread_count",
      [](py::object threads) {
        const int n = toInt(threads, "set_thread_count: threads");
        if (n < 1) throw py::value_error("set_thread_count: threads must be >= 1, got " + std::to_string(n));
        setThreadCount(n);
      },
      py::arg("threads"),
      "set_thread_count(threads)\n\nWorker threads of Pliant's parallel loops (process-wide); results do not depend "
      "on it.");
  m.def("thread_count", &threadCount, "thread_count() -> int");
  m.def("available_cores", &availableCores,
        "available_cores() -> int\n\nThe CPUs the process may run on (its affinity mask when first asked).");
}

}  // namespace pliant::python
