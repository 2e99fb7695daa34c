#include "common.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace pliant::python {

PyObject* kErrorType = nullptr;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string typeName(py::handle value) { return Py_TYPE(value.ptr())->tp_name; }

[[noreturn]] void typeError(const std::string& message) { throw py::type_error(message); }
[[noreturn]] void valueError(const std::string& message) { throw py::value_error(message); }

std::string shapeText(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// np.asarray(value) with a numeric dtype (integer when `integer`); TypeError naming `field` otherwise.
py::array numericArray(py::handle value, const std::string& field, bool integer, const char* expected) {
  if (value.is_none() || PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr()))
    typeError(field + ": expected " + expected + ", got " + typeName(value));
  py::array a = py::array::ensure(value);
  if (!a) typeError(field + ": expected " + expected + ", got " + typeName(value));
  const char kind = a.dtype().kind();
  const bool ok = integer ? (kind == 'i' || kind == 'u' || a.size() == 0) : (kind == 'i' || kind == 'u' || kind == 'f');
  if (!ok)
    typeError(field + ": expected " + expected + ", got an array of " + py::str(a.dtype()).cast<std::string>() +
              (integer && kind == 'f' ? " (indices must be integers)" : ""));
  return a;
}

}  // namespace

double toDouble(py::handle value, const std::string& field) {
  if (PyFloat_Check(value.ptr())) return PyFloat_AS_DOUBLE(value.ptr());
  if (value.is_none() || PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr()) || !PyNumber_Check(value.ptr()))
    typeError(field + ": expected a number, got " + typeName(value));
  const double v = PyFloat_AsDouble(value.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    typeError(field + ": expected a number, got " + typeName(value));
  }
  return v;
}

py::dict stageTimesDict(const StageTimes& times) {
  py::dict d;
  for (const StageTimeField& field : stageTimeFields()) d[field.name] = times.*field.seconds;
  d["steps"] = times.steps;
  return d;
}

bool toBool(py::handle value, const std::string& field) {
  if (value.ptr() == Py_True) return true;
  if (value.ptr() == Py_False) return false;
  // numpy.bool_ and the integers 0 and 1.
  if (std::string(typeName(value)) == "numpy.bool_") return PyObject_IsTrue(value.ptr()) == 1;
  if (PyLong_Check(value.ptr())) {
    const long v = PyLong_AsLong(value.ptr());
    if (v == 0 || v == 1) return v == 1;
    PyErr_Clear();
  }
  typeError(field + ": expected True or False, got " + std::string(py::repr(value)));
}

int toInt(py::handle value, const std::string& field) {
  if (PyBool_Check(value.ptr()) || PyFloat_Check(value.ptr()) || !PyIndex_Check(value.ptr()))
    typeError(field + ": expected an integer, got " + typeName(value));
  const long long v = PyLong_AsLongLong(py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr())).ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    valueError(field + ": integer out of range");
  }
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    valueError(field + ": " + std::to_string(v) + " is out of range for an int");
  return static_cast<int>(v);
}

std::string toString(py::handle value, const std::string& field) {
  if (PyUnicode_Check(value.ptr())) return value.cast<std::string>();
  // os.PathLike (pathlib.Path) for file names.
  if (PyObject_HasAttrString(value.ptr(), "__fspath__")) {
    py::object path = py::reinterpret_steal<py::object>(PyOS_FSPath(value.ptr()));
    if (!path) throw py::error_already_set();
    if (PyUnicode_Check(path.ptr())) return path.cast<std::string>();
  }
  typeError(field + ": expected a string, got " + typeName(value));
}

ParticleIndex toParticle(std::int64_t value, const std::string& field) {
  if (value < 0 || value > std::numeric_limits<ParticleIndex>::max())
    valueError(field + ": particle index " + std::to_string(value) + " out of range (expected 0 to 4294967295)");
  return static_cast<ParticleIndex>(value);
}

ParticleIndex toParticle(py::handle value, const std::string& field) {
  if (PyBool_Check(value.ptr()) || PyFloat_Check(value.ptr()) || !PyIndex_Check(value.ptr()))
    typeError(field + ": expected an integer particle index, got " + typeName(value));
  const long long v = PyLong_AsLongLong(py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr())).ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    valueError(field + ": particle index out of range");
  }
  return toParticle(static_cast<std::int64_t>(v), field);
}

Vec3 toVec3(py::handle value, const std::string& field) {
  py::array a = numericArray(value, field, false, "3 numbers");
  if (a.ndim() != 1 || a.shape(0) != 3)
    valueError(field + ": expected 3 numbers, got an array of shape " + shapeText(a));
  auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  return Vec3(d.at(0), d.at(1), d.at(2));
}

Quat toQuat(py::handle value, const std::string& field) {
  py::array a = numericArray(value, field, false, "a quaternion (w, x, y, z)");
  if (a.ndim() != 1 || a.shape(0) != 4)
    valueError(field + ": expected a quaternion of 4 numbers (w, x, y, z), got shape " + shapeText(a));
  auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  Quat q(d.at(0), d.at(1), d.at(2), d.at(3));
  const double norm = q.norm();
  if (!std::isfinite(norm) || !(norm > 0.0)) valueError(field + ": expected a non-zero finite quaternion (w, x, y, z)");
  q.coeffs() /= norm;
  return q;
}

std::vector<Vec3> toVec3Array(py::handle value, const std::string& field) {
  py::array a = numericArray(value, field, false, "an (n, 3) array of numbers");
  if (!(a.ndim() == 2 && a.shape(1) == 3) && !(a.ndim() == 1 && a.shape(0) == 0))
    valueError(field + ": expected an (n, 3) array, got shape " + shapeText(a));
  auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  const std::size_t n = a.ndim() == 2 ? static_cast<std::size_t>(a.shape(0)) : 0;
  std::vector<Vec3> out(n);
  if (n > 0) std::memcpy(static_cast<void*>(out.data()), d.data(), n * sizeof(Vec3));
  return out;
}

std::vector<double> toDoubleArray(py::handle value, const std::string& field) {
  py::array a = numericArray(value, field, false, "an (n,) array of numbers");
  if (a.ndim() != 1) valueError(field + ": expected an (n,) array, got shape " + shapeText(a));
  auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  return std::vector<double>(d.data(), d.data() + d.size());
}

std::vector<ParticleIndex> toIndexMatrix(py::handle value, std::size_t columns, const std::string& field,
                                         std::size_t* rows, std::size_t* foundColumns) {
  const std::string expected = columns == 0 ? "an (m, k) array of integer indices"
                                            : "an (m, " + std::to_string(columns) + ") array of integer indices";
  py::array a = numericArray(value, field, true, expected.c_str());
  const bool emptyList = a.ndim() == 1 && a.shape(0) == 0;
  if (!emptyList && (a.ndim() != 2 || (columns != 0 && static_cast<std::size_t>(a.shape(1)) != columns)))
    valueError(field + ": expected " + expected + ", got shape " + shapeText(a));
  auto d = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  const std::size_t r = emptyList ? 0 : static_cast<std::size_t>(a.shape(0));
  const std::size_t k = emptyList ? columns : static_cast<std::size_t>(a.shape(1));
  std::vector<ParticleIndex> out(r * k);
  for (std::size_t i = 0; i < r * k; ++i) {
    const std::int64_t v = d.data()[i];
    if (v < 0 || v > std::numeric_limits<ParticleIndex>::max())
      valueError(field + ": index " + std::to_string(v) + " at row " + std::to_string(i / std::max<std::size_t>(k, 1)) +
                 " out of range (expected 0 to 4294967295)");
    out[i] = static_cast<ParticleIndex>(v);
  }
  if (rows) *rows = r;
  if (foundColumns) *foundColumns = k;
  return out;
}

std::vector<ParticleIndex> toIndexArray(py::handle value, const std::string& field) {
  py::array a = numericArray(value, field, true, "an (n,) array of integer indices");
  if (a.ndim() != 1) valueError(field + ": expected an (n,) array of indices, got shape " + shapeText(a));
  auto d = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  std::vector<ParticleIndex> out(static_cast<std::size_t>(d.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t v = d.data()[i];
    if (v < 0 || v > std::numeric_limits<ParticleIndex>::max())
      valueError(field + ": index " + std::to_string(v) + " at position " + std::to_string(i) +
                 " out of range (expected 0 to 4294967295)");
    out[i] = static_cast<ParticleIndex>(v);
  }
  return out;
}

ConstraintParameters toParameters(py::handle value, const std::string& field) {
  if (value.is_none()) return {};
  if (py::isinstance<ConstraintParameters>(value)) return value.cast<ConstraintParameters>();
  if (PyDict_Check(value.ptr())) {
    ConstraintParameters p;
    for (auto item : py::reinterpret_borrow<py::dict>(value)) {
      const std::string key = toString(item.first, field + " key");
      if (key == "compliance") p.compliance = toDouble(item.second, field + "['compliance']");
      else if (key == "damping") p.damping = toDouble(item.second, field + "['damping']");
      else if (key == "stiffness") p.stiffness = toDouble(item.second, field + "['stiffness']");
      else valueError(field + ": unknown key '" + key + "' (expected compliance, damping, stiffness)");
    }
    return p;
  }
  typeError(field + ": expected ConstraintParameters or a dict of compliance, damping, stiffness; got " +
            typeName(value));
}

ContactMaterial toMaterial(py::handle value, const std::string& field) {
  if (value.is_none()) return {};
  if (py::isinstance<ContactMaterial>(value)) return value.cast<ContactMaterial>();
  if (PyDict_Check(value.ptr())) {
    ContactMaterial m;
    for (auto item : py::reinterpret_borrow<py::dict>(value)) {
      const std::string key = toString(item.first, field + " key");
      if (key == "static_friction") m.staticFriction = toDouble(item.second, field + "['static_friction']");
      else if (key == "dynamic_friction") m.dynamicFriction = toDouble(item.second, field + "['dynamic_friction']");
      else if (key == "restitution") m.restitution = toDouble(item.second, field + "['restitution']");
      else valueError(field + ": unknown key '" + key + "' (expected static_friction, dynamic_friction, restitution)");
    }
    return m;
  }
  typeError(field + ": expected ContactMaterial or a dict of static_friction, dynamic_friction, restitution; got " +
            typeName(value));
}

ConstraintFamily toFamily(py::handle value, const std::string& field) {
  if (!PyUnicode_Check(value.ptr())) typeError(field + ": expected a constraint family name, got " + typeName(value));
  std::string name = value.cast<std::string>();
  for (char& c : name)
    if (c == '_') c = '-';
  std::string known;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const auto family = static_cast<ConstraintFamily>(f);
    if (name == familyName(family)) return family;
    known += (f ? ", " : "") + std::string(familyName(family));
  }
  valueError(field + ": unknown constraint family '" + value.cast<std::string>() + "' (expected one of " + known + ")");
}

std::string familyKey(ConstraintFamily family) { return familyName(family); }

Keywords::Keywords(std::string function, const py::kwargs& kwargs)
    : function_(std::move(function)), kwargs_(py::dict(kwargs)) {}

std::optional<py::object> Keywords::take(const char* name) {
  accepted_.emplace_back(name);
  if (!kwargs_.contains(name)) return std::nullopt;
  py::object value = kwargs_[name];
  PyDict_DelItemString(kwargs_.ptr(), name);
  return value;
}

void Keywords::done() {
  if (kwargs_.empty()) return;
  std::string accepted;
  for (const std::string& a : accepted_) accepted += (accepted.empty() ? "" : ", ") + a;
  const std::string first = py::str(kwargs_.begin()->first).cast<std::string>();
  typeError(function_ + ": unexpected keyword argument '" + first + "' (accepted: " + accepted + ")");
}

py::array vec3View(const std::vector<Vec3>& data, py::handle owner, bool writable) {
  static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 must be three packed doubles");
  py::array view(py::dtype::of<double>(), {static_cast<py::ssize_t>(data.size()), py::ssize_t{3}},
                 {static_cast<py::ssize_t>(sizeof(Vec3)), static_cast<py::ssize_t>(sizeof(double))},
                 data.empty() ? nullptr : data.data()->data(), owner);
  if (!writable) view.attr("setflags")(py::arg("write") = false);
  return view;
}

py::array doubleView(const std::vector<double>& data, py::handle owner, bool writable) {
  py::array view(py::dtype::of<double>(), {static_cast<py::ssize_t>(data.size())},
                 {static_cast<py::ssize_t>(sizeof(double))}, data.empty() ? nullptr : data.data(), owner);
  if (!writable) view.attr("setflags")(py::arg("write") = false);
  return view;
}

py::array readOnly(py::array array) {
  array.attr("setflags")(py::arg("write") = false);
  return array;
}

py::array vec3Copy(const std::vector<Vec3>& data) {
  py::array_t<double> out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(data.size()), py::ssize_t{3}});
  if (!data.empty()) std::memcpy(out.mutable_data(), data.data()->data(), data.size() * sizeof(Vec3));
  return out;
}

void assignVec3(std::vector<Vec3>& data, py::handle value, const std::string& field) {
  py::array a = numericArray(value, field, false, "an (n, 3) array of numbers");
  if (a.ndim() != 2 || static_cast<std::size_t>(a.shape(0)) != data.size() || a.shape(1) != 3)
    valueError(field + ": expected shape (" + std::to_string(data.size()) + ", 3), got " + shapeText(a));
  auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  // memmove: the value may be a view of these very numbers.
  if (!data.empty()) std::memmove(static_cast<void*>(data.data()), d.data(), data.size() * sizeof(Vec3));
}

void assignDoubles(std::vector<double>& data, py::handle value, const std::string& field) {
  py::array a = numericArray(value, field, false, "an (n,) array of numbers");
  if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != data.size())
    valueError(field + ": expected shape (" + std::to_string(data.size()) + ",), got " + shapeText(a));
  auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!data.empty()) std::memmove(data.data(), d.data(), data.size() * sizeof(double));
}

PyCallable::PyCallable(py::object function)
    : function_(new py::object(std::move(function)), [](py::object* f) {
        // The interpreter may be gone when a model outlives it (process exit): leak the reference.
        if (!Py_IsInitialized()) {
          (void)f->release();
          delete f;
          return;
        }
        py::gil_scoped_acquire gil;
        delete f;
      }) {}

namespace {
thread_local CallbackScope* activeScope = nullptr;
}

CallbackScope::CallbackScope() : previous_(activeScope) { activeScope = this; }
CallbackScope::~CallbackScope() { activeScope = previous_; }
CallbackScope* CallbackScope::active() { return activeScope; }

void CallbackScope::recordCurrentError() {
  if (!error_) error_.emplace();
  else PyErr_Clear();
}

void CallbackScope::raise() {
  error_->restore();
  error_.reset();
  throw py::error_already_set();
}

void recordOrRethrow() {
  CallbackScope* scope = CallbackScope::active();
  try {
    throw;
  } catch (py::error_already_set& e) {
    if (!scope) throw;
    e.restore();
  } catch (py::builtin_exception& e) {
    if (!scope) throw;
    e.set_error();
  } catch (const Error& e) {
    if (!scope) throw;
    PyErr_SetString(kErrorType, e.what());
  } catch (const std::exception& e) {
    if (!scope) throw;
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  scope->recordCurrentError();
}

Vec3 PyPath::operator()(double time) const {
  py::gil_scoped_acquire gil;
  try {
    return toVec3(function.get()(time), what + " at t = " + std::to_string(time) + " s");
  } catch (...) {
    recordOrRethrow();
  }
  return Vec3::Constant(kNaN);
}

Quat PyRotation::operator()(double time) const {
  py::gil_scoped_acquire gil;
  try {
    return toQuat(function.get()(time), what + " at t = " + std::to_string(time) + " s");
  } catch (...) {
    recordOrRethrow();
  }
  return Quat(kNaN, kNaN, kNaN, kNaN);
}

namespace {

// (C, gradient) returned by a user constraint function: C a number (or `count` numbers), the
// gradient `count` x `arity` x 3 numbers.
void readConstraintResult(const py::object& result, std::size_t count, std::size_t arity, bool batch,
                          std::span<double> values, std::span<Vec3> gradient) {
  const std::string what = batch ? "vectorized constraint function" : "constraint function";
  if (!PyTuple_Check(result.ptr()) || PyTuple_GET_SIZE(result.ptr()) != 2)
    typeError(what + ": expected it to return a tuple (C, gradient), got " + typeName(result));
  py::handle c = PyTuple_GET_ITEM(result.ptr(), 0);
  py::handle g = PyTuple_GET_ITEM(result.ptr(), 1);
  if (!batch) {
    values[0] = toDouble(c, what + ": C");
  } else {
    py::array a = numericArray(c, what + ": C", false, "an array of C values");
    if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != count)
      valueError(what + ": C has shape " + shapeText(a) + ", expected (" + std::to_string(count) + ",)");
    auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
    std::memcpy(values.data(), d.data(), count * sizeof(double));
  }
  py::array a = numericArray(g, what + ": gradient", false, "an array of gradients");
  const bool shapeOk = batch ? (a.ndim() == 3 && static_cast<std::size_t>(a.shape(0)) == count &&
                                static_cast<std::size_t>(a.shape(1)) == arity && a.shape(2) == 3)
                             : (a.ndim() == 2 && static_cast<std::size_t>(a.shape(0)) == arity && a.shape(1) == 3);
  if (!shapeOk)
    valueError(what + ": gradient has shape " + shapeText(a) + ", expected (" +
               (batch ? std::to_string(count) + ", " : std::string()) + std::to_string(arity) + ", 3)");
  auto d = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  std::memcpy(static_cast<void*>(gradient.data()), d.data(), count * arity * sizeof(Vec3));
}

}  // namespace

double PyConstraintFunction::operator()(std::span<const Vec3> positions, std::span<Vec3> gradient) const {
  py::gil_scoped_acquire gil;
  double value = kNaN;
  try {
    // A copy, not a view: the function may keep what it is given.
    py::array_t<double> x(std::vector<py::ssize_t>{static_cast<py::ssize_t>(positions.size()), py::ssize_t{3}});
    std::memcpy(x.mutable_data(), positions.data()->data(), positions.size() * sizeof(Vec3));
    const py::object result = function.get()(x);
    readConstraintResult(result, 1, positions.size(), false, std::span<double>(&value, 1), gradient);
    return value;
  } catch (...) {
    recordOrRethrow();
  }
  return kNaN;
}

void PyBatchFunction::operator()(std::uint32_t first, std::span<const Vec3> positions, std::span<double> values,
                                 std::span<Vec3> gradient) const {
  py::gil_scoped_acquire gil;
  try {
    const std::size_t count = values.size();
    const std::size_t arity = positions.size() / count;
    py::array_t<double> x(
        std::vector<py::ssize_t>{static_cast<py::ssize_t>(count), static_cast<py::ssize_t>(arity), py::ssize_t{3}});
    std::memcpy(x.mutable_data(), positions.data()->data(), positions.size() * sizeof(Vec3));
    py::array_t<std::int64_t> rows(static_cast<py::ssize_t>(count));
    for (std::size_t k = 0; k < count; ++k) rows.mutable_data()[k] = (*rowOf)[first - firstConstraint + k];
    const py::object result = function.get()(x, rows);
    readConstraintResult(result, count, arity, true, values, gradient);
    return;
  } catch (...) {
    recordOrRethrow();
  }
  std::fill(values.begin(), values.end(), kNaN);
}

bool holdsPythonColliderPaths(const Model& model) {
  for (const PathFunction& p : model.colliderPaths)
    if (p.target<PyPath>()) return true;
  for (const RotationFunction& r : model.colliderRotationPaths)
    if (r.target<PyRotation>()) return true;
  return false;
}

bool holdsPythonCallables(const Model& model) {
  if (holdsPythonColliderPaths(model)) return true;
  for (const KinematicParticle& k : model.kinematicParticles)
    if (k.path.target<PyPath>()) return true;
  for (const PathFunction& p : model.attachmentPaths)
    if (p.target<PyPath>()) return true;
  for (const GenericConstraintFunction& f : model.genericFunctions)
    if (f.target<PyConstraintFunction>()) return true;
  for (const GenericBatchFunction& f : model.genericBatchFunctions)
    if (f.target<PyBatchFunction>()) return true;
  return false;
}

State& toState(py::handle value, const std::string& function) {
  if (!py::isinstance<State>(value)) typeError(function + ": expected a pliant.State, got " + typeName(value));
  return value.cast<State&>();
}

}  // namespace pliant::python
