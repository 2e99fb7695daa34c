// The extension module pliant._pliant; python/pliant/__init__.py re-exports it as `pliant`.
#include "common.h"

namespace pliant::python {
extern PyObject* kStepRefusedType;
}

PYBIND11_MODULE(_pliant, m) {
  namespace py = pybind11;
  using namespace pliant::python;
  // Docstrings start with the Python signature written by hand (pybind11's would show `object` for
  // the arguments converted here); the .pyi stub has the types.
  py::options options;
  options.disable_function_signatures();
  m.doc() = "Pliant: position-based simulation (PBD, XPBD, small-step XPBD), the C++ library's Python module.";
  m.attr("__version__") = PLIANT_VERSION;

  // pliant.Error: bad input (a parameter, a scene file, a mesh) named by field; a ValueError.
  static py::exception<pliant::Error> error(m, "Error", PyExc_ValueError);
  error.attr("__doc__") =
      "Bad input (a parameter, a scene file, a mesh, a checkpoint); the message names the field or the file and "
      "what was expected. A ValueError.";
  kErrorType = error.ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const pliant::Error& e) {
      PyErr_SetString(kErrorType, e.what());
    }
  });
  // pliant.StepRefused: a refused step; instances carry what the solver found (see Solver.step).
  kStepRefusedType = PyErr_NewExceptionWithDoc(
      "pliant._pliant.StepRefused",
      "A step was refused (a non-finite or too large move); the state is left as it was.\n\n"
      "Attributes: status ('non-finite' or 'excessive-displacement'), step and time (the step refused), particle "
      "(the first bad particle or None), constraint ((family, index) whose projection made it so, or None), "
      "collider and contact_particle (a contact that did), surface_contact ((kind, particles) or None), report "
      "(pliant.run's report dict, or None). A Python "
      "callback that raised is the __cause__.",
      PyExc_RuntimeError, nullptr);
  if (!kStepRefusedType) throw py::error_already_set();
  py::object refused = py::reinterpret_borrow<py::object>(kStepRefusedType);
  for (const char* name : {"particle", "constraint", "collider", "contact_particle", "surface_contact", "status",
                           "step", "time", "report"})
    refused.attr(name) = py::none();
  m.attr("StepRefused") = refused;

  bindModel(m);
  bindState(m);
  bindSolver(m);
  bindScene(m);
}
