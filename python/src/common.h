// Shared pieces of the Python binding: argument conversion that names the bad field, numpy views
// that alias Pliant's arrays, Python callables that the solver may hold and call without the GIL,
// and the scope that carries a Python exception raised inside a step back to the caller.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pliant/pliant.h"

namespace pliant::python {

namespace py = pybind11;

// ---------------------------------------------------------------------------------------------
// Conversions. Each raises TypeError (wrong kind of value) or ValueError (wrong shape or range)
// whose message starts with `field`.

double toDouble(py::handle value, const std::string& field);
bool toBool(py::handle value, const std::string& field);
int toInt(py::handle value, const std::string& field);
std::string toString(py::handle value, const std::string& field);
// A particle index: an integer in [0, 2^32).
ParticleIndex toParticle(py::handle value, const std::string& field);
ParticleIndex toParticle(std::int64_t value, const std::string& field);
// Three numbers: a sequence or an array of shape (3,).
Vec3 toVec3(py::handle value, const std::string& field);
// A rotation as a quaternion (w, x, y, z), normalised; it must not be zero.
Quat toQuat(py::handle value, const std::string& field);
// An (n, 3) array of numbers.
std::vector<Vec3> toVec3Array(py::handle value, const std::string& field);
// An (n,) array of numbers.
std::vector<double> toDoubleArray(py::handle value, const std::string& field);
// An (n,) array of integer indices in [0, 2^32).
std::vector<ParticleIndex> toIndexArray(py::handle value, const std::string& field);
// An (n, K) array of integer indices in [0, 2^32); K = 0 accepts any number of columns (returned
// in `columns`).
std::vector<ParticleIndex> toIndexMatrix(py::handle value, std::size_t columns, const std::string& field,
                                         std::size_t* rows = nullptr, std::size_t* foundColumns = nullptr);
template <std::size_t K>
std::vector<std::array<std::uint32_t, K>> toIndexRows(py::handle value, const std::string& field) {
  std::size_t rows = 0;
  const std::vector<ParticleIndex> flat = toIndexMatrix(value, K, field, &rows);
  std::vector<std::array<std::uint32_t, K>> out(rows);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < K; ++k) out[r][k] = flat[r * K + k];
  return out;
}

// Solver::stageTimes as a dict of seconds per stage (the StageTimes field names in snake case)
// and `steps`.
py::dict stageTimesDict(const StageTimes& times);

ConstraintParameters toParameters(py::handle value, const std::string& field);
ContactMaterial toMaterial(py::handle value, const std::string& field);

// Constraint family from its name ("distance", "max-distance" or "max_distance", ...).
ConstraintFamily toFamily(py::handle value, const std::string& field);
std::string familyKey(ConstraintFamily family);  // the name Python shows: familyName()

// Keyword arguments read one by one; done() raises TypeError for any left unread, listing the
// accepted ones (`function` names the call in every message).
class Keywords {
 public:
  Keywords(std::string function, const py::kwargs& kwargs);
  // The value of `name` if given (and marks it read).
  std::optional<py::object> take(const char* name);
  std::string field(const char* name) const { return function_ + ": " + name; }
  // Sets `out` to convert(value, field) when `name` is given (convert names the field in errors).
  template <class T, class Convert>
  void set(const char* name, T& out, Convert convert) {
    if (auto value = take(name)) out = convert(*value, field(name));
  }
  void done();

 private:
  std::string function_;
  py::dict kwargs_;
  std::vector<std::string> accepted_;
};

// ---------------------------------------------------------------------------------------------
// numpy views of Pliant's arrays, without copies. `owner` keeps the memory alive (numpy's base).

py::array vec3View(const std::vector<Vec3>& data, py::handle owner, bool writable);
py::array doubleView(const std::vector<double>& data, py::handle owner, bool writable);
// A read-only strided view of `count` records of `stride` bytes starting at `first`: shape (count,)
// of `T` when columns is 0, else (count, columns) with consecutive columns.
template <class T>
py::array fieldView(const void* first, std::size_t count, std::size_t stride, std::size_t columns, py::handle owner) {
  std::vector<py::ssize_t> shape = {static_cast<py::ssize_t>(count)};
  std::vector<py::ssize_t> strides = {static_cast<py::ssize_t>(stride)};
  if (columns > 0) {
    shape.push_back(static_cast<py::ssize_t>(columns));
    strides.push_back(static_cast<py::ssize_t>(sizeof(T)));
  }
  py::array view(py::dtype::of<T>(), shape, strides, first, owner);
  view.attr("setflags")(py::arg("write") = false);
  return view;
}
py::array readOnly(py::array array);
// A new (n, 3) array holding copies of the vectors.
py::array vec3Copy(const std::vector<Vec3>& data);
// Copies an (n, 3) array into `data` (same n), naming `field` when the shape differs.
void assignVec3(std::vector<Vec3>& data, py::handle value, const std::string& field);
void assignDoubles(std::vector<double>& data, py::handle value, const std::string& field);

// ---------------------------------------------------------------------------------------------
// Python callables held by C++ objects (a Model's paths and user constraint functions). Copying
// and destroying one needs no GIL (a shared pointer), so models may be copied inside the solver;
// the last owner takes the GIL to release the Python object.

class PyCallable {
 public:
  explicit PyCallable(py::object function);
  const py::object& get() const { return *function_; }

 private:
  std::shared_ptr<py::object> function_;
};

// Carries the first Python exception raised by a callback while Pliant's C++ runs (a step, a
// diagnostic). Callbacks called while a scope is active record their exception here and return NaN
// (which refuses a step); the binding raises it once the C++ call has returned. Without a scope
// (e.g. ModelBuilder evaluating a path at time 0) the exception propagates as usual.
class CallbackScope {
 public:
  CallbackScope();
  ~CallbackScope();
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;
  static CallbackScope* active();
  // Records the Python error now set (the first one wins); clears the indicator.
  void recordCurrentError();
  bool failed() const { return error_.has_value(); }
  py::error_already_set& error() { return *error_; }
  // Raises the recorded exception as is (GIL held).
  [[noreturn]] void raise();

 private:
  CallbackScope* previous_;
  std::optional<py::error_already_set> error_;
};

// Handles an exception caught inside a callback (GIL held): recorded in the active scope, or turned
// into a C++ exception that keeps the Python error.
void recordOrRethrow();

// The functors Pliant holds for Python callables (recognisable with std::function::target).
struct PyPath {
  PyCallable function;
  std::string what;  // e.g. "kinematic path of particle 3", for messages
  Vec3 operator()(double time) const;
};
struct PyRotation {
  PyCallable function;
  std::string what;
  Quat operator()(double time) const;
};
struct PyConstraintFunction {
  PyCallable function;
  double operator()(std::span<const Vec3> positions, std::span<Vec3> gradient) const;
};
struct PyBatchFunction {
  PyCallable function;
  std::uint32_t firstConstraint = 0;                 // generic constraint of row 0's group start
  std::shared_ptr<std::vector<std::int64_t>> rowOf;  // (constraint - firstConstraint) -> row
  void operator()(std::uint32_t first, std::span<const Vec3> positions, std::span<double> values,
                  std::span<Vec3> gradient) const;
};

// Raises pliant.StepRefused for the refused step `r` of `state` (its attributes name the particle,
// constraint and contact); a Python callback error recorded in `scope` becomes its __cause__.
[[noreturn]] void raiseStepRefused(const StepResult& r, const State& state, CallbackScope& scope);

// Raises FileNotFoundError (naming the path) when nothing is there.
void requireFile(const std::string& path);

// Whether the model holds Python callables: collider paths, or any at all.
bool holdsPythonColliderPaths(const Model& model);
bool holdsPythonCallables(const Model& model);

// The State an argument names (TypeError naming `function` otherwise).
State& toState(py::handle value, const std::string& function);

// ---------------------------------------------------------------------------------------------
// Registration of each part of the module (bind_*.cpp).

void bindModel(py::module_& m);
void bindState(py::module_& m);
void bindSolver(py::module_& m);
void bindScene(py::module_& m);

// pliant.Error (a ValueError): raised for pliant::Error.
extern PyObject* kErrorType;

// The shared Model as Python holds it: a built Model never changes (ModelPtr); the binding exposes
// read-only access only.
using ModelHolder = std::shared_ptr<Model>;
inline ModelHolder holdModel(const ModelPtr& model) { return std::const_pointer_cast<Model>(model); }

}  // namespace pliant::python
