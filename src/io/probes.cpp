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
      case Probe::Kind::Body:
        add(p, {"x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"});
        break;
      case Probe::Kind::BodyMomentum:
        add(p, {"px", "py", "pz", "Lx", "Ly", "Lz"});
        break;
      case Probe::Kind::BodyEnergy:
        add(p, {"kinetic", "gravitational", "total"});
        break;
      case Probe::Kind::JointForce:
        add(p, {"fx", "fy", "fz", "tx", "ty", "tz"});
        break;
    }
  }
  return h;
}

namespace {

// The bodies a body probe sums over: `body`, or every dynamic body when it is -1.
template <class Visit>
void forEachProbedBody(const Model& model, int body, Visit&& visit) {
  if (body >= 0) {
    visit(static_cast<std::size_t>(body));
    return;
  }
  for (std::size_t b = 0; b < model.bodyCount(); ++b)
    if (model.bodies[b].dynamic()) visit(b);
}

// The world inertia tensor of body b times w: R diag(I) R^T w.
Vec3 worldInertiaTimes(const Model& model, const State& state, std::size_t b, const Vec3& w) {
  const Quat& q = state.bodyRotation[b];
  return q * model.bodies[b].inertia.cwiseProduct(q.conjugate() * w);
}

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
      case Probe::Kind::Body: {
        const auto b = static_cast<std::size_t>(p.body);
        const Vec3& x = state.bodyPosition[b];
        const Quat& q = state.bodyRotation[b];
        const Vec3& v = state.bodyVelocity[b];
        const Vec3& w = state.bodyAngularVelocity[b];
        for (double c : {x.x(), x.y(), x.z(), q.w(), q.x(), q.y(), q.z(), v.x(), v.y(), v.z(), w.x(), w.y(), w.z()})
          put(c);
        break;
      }
      case Probe::Kind::BodyMomentum: {
        Vec3 linear = Vec3::Zero(), angular = Vec3::Zero();
        forEachProbedBody(model, p.body, [&](std::size_t b) {
          const Vec3 momentum = model.bodies[b].mass * state.bodyVelocity[b];
          linear += momentum;
          angular +=
              state.bodyPosition[b].cross(momentum) + worldInertiaTimes(model, state, b, state.bodyAngularVelocity[b]);
        });
        for (double c : {linear.x(), linear.y(), linear.z(), angular.x(), angular.y(), angular.z()}) put(c);
        break;
      }
      case Probe::Kind::BodyEnergy: {
        double kinetic = 0.0, gravitational = 0.0;
        forEachProbedBody(model, p.body, [&](std::size_t b) {
          const double m = model.bodies[b].mass;
          const Vec3& w = state.bodyAngularVelocity[b];
          kinetic += 0.5 * m * state.bodyVelocity[b].squaredNorm() + 0.5 * w.dot(worldInertiaTimes(model, state, b, w));
          gravitational -= m * scene_->settings.gravity.dot(state.bodyPosition[b]);
        });
        for (double c : {kinetic, gravitational, kinetic + gravitational}) put(c);
        break;
      }
      case Probe::Kind::JointForce: {
        const Vec3 f = state.jointForce(p.joint), t = state.jointTorque(p.joint);
        for (double c : {f.x(), f.y(), f.z(), t.x(), t.y(), t.z()}) put(c);
        break;
      }
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
