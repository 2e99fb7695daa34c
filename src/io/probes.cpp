#include "pliant/io/probes.h"

#include <charconv>

#include "pliant/diagnostics.h"
#include "pliant/geometry.h"

namespace pliant {

ProbeRecorder::ProbeRecorder(const Scene& scene) : scene_(&scene) {
  for (const SimObject& o : scene.model->objects) objectParticles_.push_back(o.particles);
}

std::string ProbeRecorder::header() const {
  std::string h;
  for (const std::string& column : columns()) h += (h.empty() ? "" : ",") + column;
  return h + "\n";
}

std::vector<std::string> ProbeRecorder::columns() const {
  std::vector<std::string> h = {"time"};
  auto add = [&](const Probe& p, std::initializer_list<const char*> columns) {
    for (const char* c : columns) h.push_back(p.name + "." + c);
  };
  for (const Probe& p : scene_->probes) {
    switch (p.kind) {
      case Probe::Kind::Particle:
        add(p, {"x", "y", "z", "vx", "vy", "vz"});
        break;
      case Probe::Kind::ConstraintForce:
        add(p, {"force"});
        break;
      case Probe::Kind::Energy:
        add(p, {"kinetic", "gravitational", "elastic", "total"});
        break;
      case Probe::Kind::Momentum:
        add(p, {"px", "py", "pz", "Lx", "Ly", "Lz"});
        break;
      case Probe::Kind::CentreOfMass:
        add(p, {"x", "y", "z"});
        break;
      case Probe::Kind::Residual:
        add(p, {"max", "rms"});
        break;
      case Probe::Kind::Intersections:
        add(p, {"pairs"});
        break;
    }
  }
  return h;
}

namespace {

void appendNumber(std::string& out, double value) {
  char buffer[32];
  // Shortest representation that reads back exactly.
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

}  // namespace

void ProbeRecorder::values(const State& state, std::vector<double>& out) const {
  const Model& model = *scene_->model;
  out.push_back(state.time);
  auto put = [&](double v) { out.push_back(v); };
  for (const Probe& p : scene_->probes) {
    const std::vector<ParticleIndex>* subset = p.object >= 0 ? &objectParticles_[p.object] : nullptr;
    switch (p.kind) {
      case Probe::Kind::Particle: {
        const Vec3& x = state.position[p.particle];
        const Vec3& v = state.velocity[p.particle];
        for (double c : {x.x(), x.y(), x.z(), v.x(), v.y(), v.z()}) put(c);
        break;
      }
      case Probe::Kind::ConstraintForce:
        put(constraintForce(model, state, p.constraint));
        break;
      case Probe::Kind::Energy: {
        EnergyReport e = computeEnergy(model, state, scene_->settings);
        if (subset) {
          // Kinetic and gravitational energy of the object alone; elastic energy stays the
          // scene's (constraints may join objects).
          e.kinetic = e.gravitational = 0.0;
          for (ParticleIndex i : *subset) {
            if (model.inverseMass[i] == 0.0) continue;
            e.kinetic += 0.5 * model.mass[i] * state.velocity[i].squaredNorm();
            e.gravitational -= model.mass[i] * scene_->settings.gravity.dot(state.position[i]);
          }
        }
        for (double c : {e.kinetic, e.gravitational, e.elastic, e.total()}) put(c);
        break;
      }
      case Probe::Kind::Momentum: {
        const MomentumReport m = computeMomentum(model, state, subset);
        for (double c : {m.linear.x(), m.linear.y(), m.linear.z(), m.angular.x(), m.angular.y(), m.angular.z()}) put(c);
        break;
      }
      case Probe::Kind::CentreOfMass: {
        const MomentumReport m = computeMomentum(model, state, subset);
        for (double c : {m.centreOfMass.x(), m.centreOfMass.y(), m.centreOfMass.z()}) put(c);
        break;
      }
      case Probe::Kind::Residual: {
        const ResidualReport r = computeResidual(model, state, scene_->settings);
        put(r.max);
        put(r.rms);
        break;
      }
      case Probe::Kind::Intersections:
        put(static_cast<double>(countIntersectingTrianglePairs(state.position, scene_->topology.triangles)));
        break;
    }
  }
}

void ProbeRecorder::record(const State& state, std::string& out) const {
  std::vector<double> row;
  values(state, row);
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i > 0) out.push_back(',');
    appendNumber(out, row[i]);
  }
  out.push_back('\n');
}

}  // namespace pliant
