// pliant.State: numpy views that alias the state's arrays (writing a position moves the particle),
// copies, hashes, checkpoints and pickling (the checkpoint bytes).
#include <cstdio>

#include "common.h"
#include "pliant/io/output.h"

namespace pliant::python {

namespace {

std::string hex(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

// Copies `from` into `to` without reallocating `to`'s arrays, so numpy views of `to` stay valid.
void assignInPlace(State& to, const State& from, const std::string& what) {
  if (from.position.size() != to.position.size() || from.lambda.size() != to.lambda.size() ||
      from.attachmentTarget.size() != to.attachmentTarget.size() ||
      from.bodyPosition.size() != to.bodyPosition.size() || from.jointLambda.size() != to.jointLambda.size())
    throw py::value_error(what + ": the states belong to different models (" + std::to_string(from.position.size()) +
                          " and " + std::to_string(to.position.size()) + " particles, " +
                          std::to_string(from.lambda.size()) + " and " + std::to_string(to.lambda.size()) +
                          " multipliers)");
  // Equal sizes: vector assignment copies into the existing storage.
  to = from;
}

State& stateOf(py::handle self) { return self.cast<State&>(); }

// (j, 3) float64: State::jointForce or jointTorque of every joint, a new array.
py::array_t<double> jointRows(const State& s, Vec3 (State::*of)(std::size_t) const) {
  const std::size_t joints = s.jointLinearImpulse.size();
  py::array_t<double> out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(joints), 3});
  auto rows = out.mutable_unchecked<2>();
  for (std::size_t j = 0; j < joints; ++j) {
    const Vec3 v = (s.*of)(j);
    for (int k = 0; k < 3; ++k) rows(static_cast<py::ssize_t>(j), k) = v[k];
  }
  return out;
}

}  // namespace

void bindState(py::module_& m) {
  py::class_<State>(m, "State", R"doc(
Everything that changes while stepping: positions, velocities, multipliers, external forces,
attachment targets, time. positions, velocities, previous_positions, external_forces, lambdas and
attachment_targets are float64 numpy views of the state's own memory: read them and write them
between steps (no copy either way), e.g. state.positions[3] += (0, 0.1, 0) moves particle 3.
A view stays valid as long as it is referenced (it keeps the state alive).

Pickling uses the checkpoint bytes, so a state sent to another process steps on bit-identically.)doc")
      .def(py::init([](const ModelHolder& model) { return State::fromModel(*model); }), py::arg("model"),
           "State(model)\n\nAt rest at the model's initial positions and velocities, time 0.")
      .def_static(
          "from_model", [](const ModelHolder& model) { return State::fromModel(*model); }, py::arg("model"),
          "from_model(model) -> State")
      .def_property(
          "positions", [](py::object self) { return vec3View(stateOf(self).position, self, true); },
          [](State& s, py::object v) { assignVec3(s.position, v, "State.positions"); },
          "(n, 3) float64 m, a writable view of the state's positions.")
      .def_property(
          "velocities", [](py::object self) { return vec3View(stateOf(self).velocity, self, true); },
          [](State& s, py::object v) { assignVec3(s.velocity, v, "State.velocities"); },
          "(n, 3) float64 m/s, a writable view.")
      .def_property(
          "previous_positions", [](py::object self) { return vec3View(stateOf(self).previousPosition, self, true); },
          [](State& s, py::object v) { assignVec3(s.previousPosition, v, "State.previous_positions"); },
          "(n, 3) float64 m, positions at the start of the last substep, a writable view.")
      .def_property(
          "external_forces", [](py::object self) { return vec3View(stateOf(self).externalForce, self, true); },
          [](State& s, py::object v) { assignVec3(s.externalForce, v, "State.external_forces"); },
          "(n, 3) float64 N per particle, added to gravity and kept across steps; a writable view.")
      .def_property(
          "lambdas", [](py::object self) { return doubleView(stateOf(self).lambda, self, true); },
          [](State& s, py::object v) { assignDoubles(s.lambda, v, "State.lambdas"); },
          "(m,) float64 multipliers of the last substep (Model.lambda_slice(family) finds a family's), a writable "
          "view.")
      .def_property(
          "attachment_targets", [](py::object self) { return vec3View(stateOf(self).attachmentTarget, self, true); },
          [](State& s, py::object v) { assignVec3(s.attachmentTarget, v, "State.attachment_targets"); },
          "(a, 3) float64 m, the current target of each attachment; write it to move fixed ones.")
      .def_property(
          "body_positions", [](py::object self) { return vec3View(stateOf(self).bodyPosition, self, true); },
          [](State& s, py::object v) { assignVec3(s.bodyPosition, v, "State.body_positions"); },
          "(b, 3) float64 m, each rigid body's centre of mass, a writable view.")
      .def_property(
          "body_velocities", [](py::object self) { return vec3View(stateOf(self).bodyVelocity, self, true); },
          [](State& s, py::object v) { assignVec3(s.bodyVelocity, v, "State.body_velocities"); },
          "(b, 3) float64 m/s, each body's centre of mass velocity, a writable view.")
      .def_property(
          "body_angular_velocities",
          [](py::object self) { return vec3View(stateOf(self).bodyAngularVelocity, self, true); },
          [](State& s, py::object v) { assignVec3(s.bodyAngularVelocity, v, "State.body_angular_velocities"); },
          "(b, 3) float64 rad/s, world axes, a writable view.")
      .def_property_readonly(
          "body_rotations",
          [](const State& s) {
            py::array_t<double> out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(s.bodyRotation.size()), 4});
            auto q = out.mutable_unchecked<2>();
            for (std::size_t b = 0; b < s.bodyRotation.size(); ++b) {
              const auto i = static_cast<py::ssize_t>(b);
              q(i, 0) = s.bodyRotation[b].w();
              q(i, 1) = s.bodyRotation[b].x();
              q(i, 2) = s.bodyRotation[b].y();
              q(i, 3) = s.bodyRotation[b].z();
            }
            return out;
          },
          "(b, 4) float64, each body frame's rotation to the world as a unit quaternion (w, x, y, z); a copy.")
      .def(
          "joint_forces", [](const State& s) { return jointRows(s, &State::jointForce); },
          "joint_forces() -> (j, 3) float64 N, the force each joint exerted on its body B in the last substep.")
      .def(
          "joint_torques", [](const State& s) { return jointRows(s, &State::jointTorque); },
          "joint_torques() -> (j, 3) float64 N m, the couple each joint exerted on its body B in the last substep.")
      .def_property_readonly(
          "body_asleep",
          [](const State& s) {
            py::array_t<bool> out(static_cast<py::ssize_t>(s.bodySleepIsland.size()));
            auto a = out.mutable_unchecked<1>();
            for (std::size_t b = 0; b < s.bodySleepIsland.size(); ++b) a(static_cast<py::ssize_t>(b)) = s.bodyAsleep(b);
            return out;
          },
          "(b,) bool, whether each body sleeps (SolverSettings.sleeping); a copy.")
      .def(
          "wake_body",
          [](State& s, std::int64_t body) {
            if (body < 0 || static_cast<std::size_t>(body) >= s.bodyPosition.size())
              throw py::index_error("State.wake_body: no body " + std::to_string(body));
            s.wakeBody(static_cast<std::size_t>(body));
          },
          py::arg("body"),
          "wake_body(body)\n\nWakes the body's island (setting a sleeping body's velocity or position wakes it "
          "too).")
      .def_readwrite("time", &State::time, "Simulated time (s).")
      .def_readwrite("step_count", &State::stepCount, "Steps taken.")
      .def_readwrite("last_substep", &State::lastSubstep, "h of the last substep (s).")
      .def_property_readonly(
          "particle_count", [](const State& s) { return s.position.size(); }, "Number of particles.")
      .def(
          "hash", [](const State& s) { return s.hash(); },
          "hash() -> int\n\n64-bit FNV-1a over everything that decides the next step (the CLI's state hash).")
      .def(
          "hash_hex", [](const State& s) { return hex(s.hash()); },
          "hash_hex() -> str\n\nThe hash as 16 hex digits, as summary.json and the CLI print it.")
      .def(
          "copy", [](const State& s) { return State(s); }, "copy() -> State\n\nAn independent copy.")
      .def("__copy__", [](const State& s) { return State(s); })
      .def(
          "__deepcopy__", [](const State& s, py::object) { return State(s); }, py::arg("memo"))
      .def(
          "assign", [](State& s, const State& other) { assignInPlace(s, other, "State.assign"); }, py::arg("other"),
          "assign(other)\n\nCopies another state of the same model into this one, in place (views stay valid).")
      .def(
          "save", [](const State& s, py::object path) { io::writeCheckpoint(toString(path, "State.save: path"), s); },
          py::arg("path"),
          "save(path)\n\nWrites a checkpoint file (atomically), the format of `pliant run --checkpoint-*`.")
      .def_static(
          "load",
          [](py::object path, const ModelHolder& model) {
            const std::string file = toString(path, "State.load: path");
            requireFile(file);
            return io::readCheckpoint(file, *model);
          },
          py::arg("path"), py::arg("model"),
          "load(path, model) -> State\n\nReads a checkpoint, checking it against the model.")
      .def("__repr__",
           [](const State& s) {
             return "<pliant.State: " + std::to_string(s.position.size()) +
                    " particles, t = " + std::to_string(s.time) + " s, step " + std::to_string(s.stepCount) +
                    ", hash " + hex(s.hash()) + ">";
           })
      .def(py::pickle([](const State& s) { return py::bytes(io::encodeCheckpoint(s)); },
                      [](py::bytes bytes) { return io::decodeCheckpoint(std::string(bytes), "pickled State"); }));

  m.def(
      "save_checkpoint",
      [](py::object path, const State& s) { io::writeCheckpoint(toString(path, "save_checkpoint: path"), s); },
      py::arg("path"), py::arg("state"), "save_checkpoint(path, state)\n\nThe same as state.save(path).");
  m.def(
      "load_checkpoint",
      [](py::object path, const ModelHolder& model) {
        const std::string file = toString(path, "load_checkpoint: path");
        requireFile(file);
        return io::readCheckpoint(file, *model);
      },
      py::arg("path"), py::arg("model"), "load_checkpoint(path, model) -> State\n\nThe same as State.load.");
}

}  // namespace pliant::python
