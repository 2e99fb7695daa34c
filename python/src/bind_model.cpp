// pliant.ConstraintParameters, ContactMaterial, Collider, ModelBuilder (with every generator and
// constraint family), GeneratedObject and Model, and the mesh readers.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "common.h"
#include "pliant/io/mesh_io.h"
#include "pliant/io/model_bytes.h"

namespace pliant::python {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string fmt(double v) {
  std::string s = py::repr(py::float_(v)).cast<std::string>();
  return s;
}

std::string vecText(const Vec3& v) { return "(" + fmt(v.x()) + ", " + fmt(v.y()) + ", " + fmt(v.z()) + ")"; }

py::array vecArray(const Vec3& v) {
  py::array_t<double> a(3);
  for (int k = 0; k < 3; ++k) a.mutable_data()[k] = v[k];
  return a;
}

py::tuple quatTuple(const Quat& q) { return py::make_tuple(q.w(), q.x(), q.y(), q.z()); }

BendingModel toBending(py::handle value, const std::string& field) {
  const std::string name = toString(value, field);
  if (name == "none") return BendingModel::None;
  if (name == "dihedral") return BendingModel::Dihedral;
  if (name == "isometric") return BendingModel::Isometric;
  throw py::value_error(field + ": unknown bending model '" + name + "' (expected 'none', 'dihedral' or 'isometric')");
}

py::array indexRows(const std::vector<std::array<ParticleIndex, 3>>& rows) {
  py::array_t<std::uint32_t> a(std::vector<py::ssize_t>{static_cast<py::ssize_t>(rows.size()), py::ssize_t{3}});
  if (!rows.empty()) std::memcpy(a.mutable_data(), rows.data(), rows.size() * sizeof(rows[0]));
  return a;
}
py::array indexRows(const std::vector<std::array<ParticleIndex, 4>>& rows) {
  py::array_t<std::uint32_t> a(std::vector<py::ssize_t>{static_cast<py::ssize_t>(rows.size()), py::ssize_t{4}});
  if (!rows.empty()) std::memcpy(a.mutable_data(), rows.data(), rows.size() * sizeof(rows[0]));
  return a;
}

// Points (k, 3) in m, a copy.
py::array pointRows(const std::vector<Vec3>& points) {
  py::array_t<double> a(std::vector<py::ssize_t>{static_cast<py::ssize_t>(points.size()), py::ssize_t{3}});
  for (std::size_t i = 0; i < points.size(); ++i)
    for (int k = 0; k < 3; ++k) a.mutable_data()[3 * i + k] = points[i][k];
  return a;
}

}  // namespace

void requireFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return;
  errno = ENOENT;
  PyErr_SetFromErrnoWithFilename(PyExc_FileNotFoundError, path.c_str());
  throw py::error_already_set();
}

namespace {

// Reads the keywords shared by the generators.
template <class Def>
void takeCommon(Keywords& kw, Def& def) {
  kw.set("name", def.name, toString);
  kw.set("damping_factor", def.dampingFactor, toDouble);
}

ClothGridDef clothGridDef(const py::kwargs& kwargs) {
  Keywords kw("add_cloth_grid", kwargs);
  ClothGridDef d;
  takeCommon(kw, d);
  kw.set("nodes_x", d.nodesX, toInt);
  kw.set("nodes_y", d.nodesY, toInt);
  kw.set("size_x", d.sizeX, toDouble);
  kw.set("size_y", d.sizeY, toDouble);
  kw.set("origin", d.origin, toVec3);
  kw.set("axis_x", d.axisX, toVec3);
  kw.set("axis_y", d.axisY, toVec3);
  kw.set("total_mass", d.totalMass, toDouble);
  kw.set("stretch", d.stretch, toParameters);
  kw.set("bending", d.bending, toBending);
  kw.set("bending_params", d.bendingParams, toParameters);
  kw.set("self_collision", d.selfCollision, toBool);
  kw.done();
  return d;
}

ChainDef chainDef(const py::kwargs& kwargs) {
  Keywords kw("add_chain", kwargs);
  ChainDef d;
  takeCommon(kw, d);
  kw.set("particles", d.particles, toInt);
  kw.set("start", d.start, toVec3);
  kw.set("end", d.end, toVec3);
  kw.set("particle_mass", d.particleMass, toDouble);
  kw.set("fix_start", d.fixStart, toBool);
  kw.set("stretch", d.stretch, toParameters);
  kw.done();
  return d;
}

// A neo-Hookean material from a dict: youngs_modulus (Pa) and poisson_ratio, or lame_mu and
// lame_lambda (Pa); damping (s) optional. The builder checks the ranges.
// The settings of add_shape_matching_cluster(s): mode 'rigid' or 'linear', beta, preserve_volume, params.
ShapeMatchingSettings toShapeMatching(py::handle mode, py::handle beta, py::handle preserveVolume, py::handle params,
                                      const std::string& fn) {
  ShapeMatchingSettings s;
  const std::string name = toString(mode, fn + "mode");
  if (name == "rigid") s.mode = ShapeMatchingMode::Rigid;
  else if (name == "linear") s.mode = ShapeMatchingMode::Linear;
  else throw py::value_error(fn + "mode: expected 'rigid' or 'linear', got '" + name + "'");
  s.beta = toDouble(beta, fn + "beta");
  if (!(s.beta >= 0.0 && s.beta <= 1.0)) throw py::value_error(fn + "beta: expected a number in [0, 1]");
  s.preserveVolume = toBool(preserveVolume, fn + "preserve_volume");
  s.params = toParameters(params, fn + "params");
  return s;
}

std::optional<NeoHookeanMaterial> toNeoHookean(py::handle value, const std::string& field) {
  if (value.is_none()) return std::nullopt;
  if (!PyDict_Check(value.ptr()))
    throw py::type_error(
        field + ": expected a dict of youngs_modulus and poisson_ratio (or lame_mu and lame_lambda) and damping; got " +
        std::string(Py_TYPE(value.ptr())->tp_name));
  std::optional<double> E, nu, mu, lambda;
  double damping = 0.0;
  for (auto item : py::reinterpret_borrow<py::dict>(value)) {
    const std::string key = toString(item.first, field + " key");
    const double v = toDouble(item.second, field + "['" + key + "']");
    if (key == "youngs_modulus") E = v;
    else if (key == "poisson_ratio") nu = v;
    else if (key == "lame_mu") mu = v;
    else if (key == "lame_lambda") lambda = v;
    else if (key == "damping") damping = v;
    else
      throw py::value_error(field + ": unknown key '" + key +
                            "' (expected youngs_modulus, poisson_ratio, lame_mu, lame_lambda, damping)");
  }
  NeoHookeanMaterial m;
  if (E && nu && !mu && !lambda) {
    m.youngsModulus = *E;
    m.poissonRatio = *nu;
  } else if (mu && lambda && !E && !nu) {
    if (!(*mu > 0.0) || !(*lambda > -2.0 / 3.0 * *mu))
      throw py::value_error(field + ": expected lame_mu > 0 and lame_lambda > -2/3 lame_mu (Pa)");
    m = NeoHookeanMaterial::fromLame(*mu, *lambda);
  } else {
    throw py::value_error(field + ": expected youngs_modulus and poisson_ratio, or lame_mu and lame_lambda");
  }
  m.damping = damping;
  return m;
}

TetBoxDef tetBoxDef(const py::kwargs& kwargs) {
  Keywords kw("add_tet_box", kwargs);
  TetBoxDef d;
  takeCommon(kw, d);
  kw.set("cells_x", d.cellsX, toInt);
  kw.set("cells_y", d.cellsY, toInt);
  kw.set("cells_z", d.cellsZ, toInt);
  kw.set("origin", d.origin, toVec3);
  kw.set("size", d.size, toVec3);
  kw.set("density", d.density, toDouble);
  kw.set("volume", d.volume, toParameters);
  kw.set("edges", d.edges, toParameters);
  kw.set("add_edges", d.addEdges, toBool);
  kw.set("neo_hookean", d.neoHookean, toNeoHookean);
  kw.done();
  return d;
}

TetMeshDef tetMeshDef(const py::kwargs& kwargs) {
  Keywords kw("add_tet_mesh", kwargs);
  TetMeshDef d;
  takeCommon(kw, d);
  kw.set("density", d.density, toDouble);
  kw.set("volume", d.volume, toParameters);
  kw.set("edges", d.edges, toParameters);
  kw.set("add_edges", d.addEdges, toBool);
  kw.set("neo_hookean", d.neoHookean, toNeoHookean);
  kw.done();
  return d;
}

SoftBodyFromSurfaceDef softBodyFromSurfaceDef(const py::kwargs& kwargs) {
  Keywords kw("add_soft_body_from_surface", kwargs);
  SoftBodyFromSurfaceDef d;
  takeCommon(kw, d);
  kw.set("cell_size", d.cellSize, toDouble);
  kw.set("density", d.density, toDouble);
  kw.set("translation", d.translation, toVec3);
  kw.set("volume", d.volume, toParameters);
  kw.set("edges", d.edges, toParameters);
  kw.set("add_edges", d.addEdges, toBool);
  kw.set("neo_hookean", d.neoHookean, toNeoHookean);
  kw.done();
  return d;
}

ClothMeshDef clothMeshDef(const py::kwargs& kwargs) {
  Keywords kw("add_cloth_mesh", kwargs);
  ClothMeshDef d;
  takeCommon(kw, d);
  kw.set("total_mass", d.totalMass, toDouble);
  kw.set("stretch", d.stretch, toParameters);
  kw.set("bending", d.bending, toBending);
  kw.set("bending_params", d.bendingParams, toParameters);
  kw.set("self_collision", d.selfCollision, toBool);
  kw.done();
  return d;
}

BalloonDef balloonDef(const py::kwargs& kwargs) {
  Keywords kw("add_balloon", kwargs);
  BalloonDef d;
  takeCommon(kw, d);
  kw.set("centre", d.centre, toVec3);
  kw.set("radius", d.radius, toDouble);
  kw.set("rings", d.rings, toInt);
  kw.set("segments", d.segments, toInt);
  kw.set("total_mass", d.totalMass, toDouble);
  kw.set("stretch", d.stretch, toParameters);
  kw.set("pressure", d.pressure, toDouble);
  kw.set("volume", d.volume, toParameters);
  kw.done();
  return d;
}

SignedDistanceGridOptions gridOptions(py::handle cellSize, py::handle maxCells, py::handle padding,
                                      const std::string& function) {
  SignedDistanceGridOptions o;
  if (!cellSize.is_none()) o.cellSize = toDouble(cellSize, function + ": cell_size");
  if (!maxCells.is_none()) o.maxCellsPerAxis = toInt(maxCells, function + ": max_cells_per_axis");
  if (!padding.is_none()) o.padding = toDouble(padding, function + ": padding");
  return o;
}

Quat optionalQuat(py::handle value, const std::string& field) {
  return value.is_none() ? Quat::Identity() : toQuat(value, field);
}

// ModelBuilder.add_body's keywords (BodyDefinition, pliant/bodies.h).
BodyDefinition bodyDef(const py::kwargs& kwargs) {
  Keywords kw("add_body", kwargs);
  BodyDefinition d;
  kw.set("name", d.name, toString);
  std::string shape = "sphere";
  kw.set("shape", shape, toString);
  if (shape == "sphere") d.shape.kind = BodyShapeKind::Sphere;
  else if (shape == "box") d.shape.kind = BodyShapeKind::Box;
  else if (shape == "capsule") d.shape.kind = BodyShapeKind::Capsule;
  else if (shape == "convex_hull") d.shape.kind = BodyShapeKind::ConvexHull;
  else
    throw py::value_error("add_body: shape: expected 'sphere', 'box', 'capsule' or 'convex_hull', got '" + shape + "'");
  kw.set("radius", d.shape.radius, toDouble);
  kw.set("half_height", d.shape.halfHeight, toDouble);
  kw.set("half_extents", d.shape.halfExtents, toVec3);
  if (auto points = kw.take("points")) {
    if (d.shape.kind != BodyShapeKind::ConvexHull)
      throw py::value_error("add_body: points: only a convex_hull has them");
    d.shape.hull = std::make_shared<const ConvexHull>(
        buildConvexHull(toVec3Array(*points, kw.field("points")), "add_body: points"));
  } else if (d.shape.kind == BodyShapeKind::ConvexHull) {
    throw py::value_error("add_body: points: a convex_hull needs its points, (n, 3) m");
  }
  kw.set("density", d.density, toDouble);
  kw.set("mass", d.mass, toDouble);
  std::string motion = "dynamic";
  kw.set("motion", motion, toString);
  if (motion == "dynamic") d.motion = BodyMotion::Dynamic;
  else if (motion == "static") d.motion = BodyMotion::Static;
  else if (motion == "kinematic") d.motion = BodyMotion::Kinematic;
  else throw py::value_error("add_body: motion: expected 'dynamic', 'static' or 'kinematic', got '" + motion + "'");
  kw.set("position", d.pose.position, toVec3);
  kw.set("rotation", d.pose.rotation, toQuat);
  kw.set("velocity", d.velocity, toVec3);
  kw.set("angular_velocity", d.angularVelocity, toVec3);
  kw.set("material", d.material, toMaterial);
  kw.done();
  return d;
}

BodyIndex bodySide(py::handle value, const std::string& field) {
  if (value.is_none()) return kWorldBody;
  const int index = toInt(value, field);
  if (index < 0) throw py::value_error(field + ": expected a body index >= 0 or None (the world)");
  return static_cast<BodyIndex>(index);
}

// ModelBuilder.add_joint's keywords (JointDefinition, pliant/bodies.h).
JointDefinition jointDef(const py::kwargs& kwargs) {
  Keywords kw("add_joint", kwargs);
  JointDefinition d;
  std::string type = "fixed";
  kw.set("type", type, toString);
  if (type == "fixed") d.kind = JointKind::Fixed;
  else if (type == "spherical") d.kind = JointKind::Spherical;
  else if (type == "hinge") d.kind = JointKind::Hinge;
  else if (type == "prismatic") d.kind = JointKind::Prismatic;
  else if (type == "distance") d.kind = JointKind::Distance;
  else
    throw py::value_error("add_joint: type: expected 'fixed', 'spherical', 'hinge', 'prismatic' or 'distance', got '" +
                          type + "'");
  kw.set("body_a", d.bodyA, bodySide);
  kw.set("body_b", d.bodyB, bodySide);
  kw.set("anchor", d.anchor, toVec3);
  kw.set("anchor_b", d.anchorB, toVec3);
  kw.set("axis", d.axis, toVec3);
  kw.set("rest_length", d.restLength, toDouble);
  kw.set("compliance", d.params.compliance, toDouble);
  kw.set("damping", d.params.damping, toDouble);
  kw.set("lower", d.lower, toDouble);
  kw.set("upper", d.upper, toDouble);
  kw.set("swing_limit", d.swingLimit, toDouble);
  std::string drive = "none";
  kw.set("drive", drive, toString);
  if (drive == "angle") d.drive = JointDrive::Angle;
  else if (drive == "speed") d.drive = JointDrive::Speed;
  else if (drive != "none")
    throw py::value_error("add_joint: drive: expected 'angle', 'speed' or 'none', got '" + drive + "'");
  kw.set("drive_target", d.driveTarget, toDouble);
  kw.set("drive_compliance", d.driveParams.compliance, toDouble);
  kw.set("drive_damping", d.driveParams.damping, toDouble);
  kw.done();
  return d;
}

// Read-only views of one constraint family's fields, without copies.
py::array constraintParticles(const Model& m, ConstraintFamily family, py::handle owner) {
  auto stencil = [&](const auto& array, std::size_t k) {
    using T = std::decay_t<decltype(array[0])>;
    if (array.empty())
      return readOnly(
          py::array_t<std::uint32_t>(std::vector<py::ssize_t>{py::ssize_t{0}, static_cast<py::ssize_t>(k)}));
    return fieldView<std::uint32_t>(&array[0].particles[0], array.size(), sizeof(T), k, owner);
  };
  switch (family) {
    case ConstraintFamily::Attachment:
      if (m.attachments.empty())
        return readOnly(py::array_t<std::uint32_t>(std::vector<py::ssize_t>{py::ssize_t{0}, py::ssize_t{1}}));
      return fieldView<std::uint32_t>(&m.attachments[0].particle, m.attachments.size(), sizeof(AttachmentConstraint), 1,
                                      owner);
    case ConstraintFamily::Distance:
      return stencil(m.distances, 2);
    case ConstraintFamily::MaxDistance:
      return stencil(m.maxDistances, 2);
    case ConstraintFamily::DihedralBending:
      return stencil(m.dihedralBendings, 4);
    case ConstraintFamily::IsometricBending:
      return stencil(m.isometricBendings, 4);
    case ConstraintFamily::TetVolume:
      return stencil(m.tetVolumes, 4);
    case ConstraintFamily::NeoHookean:
      return stencil(m.neoHookeans, 4);  // per tet
    case ConstraintFamily::GlobalVolume:
      throw py::value_error(
          "constraint_particles: a global volume constraint has a whole mesh; use volume_triangles(index)");
    case ConstraintFamily::ShapeMatching:
      throw py::value_error(
          "constraint_particles: a shape matching cluster has any number of particles; use cluster_particles(index)");
    case ConstraintFamily::Generic: {
      if (m.generics.empty())
        return readOnly(py::array_t<std::uint32_t>(std::vector<py::ssize_t>{py::ssize_t{0}, py::ssize_t{0}}));
      const std::uint32_t k = m.generics[0].particleCount;
      for (std::size_t i = 0; i < m.generics.size(); ++i)
        if (m.generics[i].particleCount != k || m.generics[i].firstParticle != i * k)
          throw py::value_error(
              "constraint_particles: the generic constraints have different particle counts; use "
              "generic_particles(index)");
      return fieldView<std::uint32_t>(m.genericParticles.data(), m.generics.size(), k * sizeof(ParticleIndex), k,
                                      owner);
    }
  }
  throw py::value_error("constraint_particles: unknown family");
}

py::array restValues(const Model& m, ConstraintFamily family, py::handle owner) {
  auto field = [&](const auto& array, auto member) {
    using T = std::decay_t<decltype(array[0])>;
    if (array.empty()) return readOnly(py::array_t<double>(0));
    return fieldView<double>(&(array[0].*member), array.size(), sizeof(T), 0, owner);
  };
  switch (family) {
    case ConstraintFamily::Attachment:
      return field(m.attachments, &AttachmentConstraint::restDistance);
    case ConstraintFamily::Distance:
      return field(m.distances, &DistanceConstraint::restLength);
    case ConstraintFamily::MaxDistance:
      return field(m.maxDistances, &MaxDistanceConstraint::maxLength);
    case ConstraintFamily::DihedralBending:
      return field(m.dihedralBendings, &DihedralBendingConstraint::restAngle);
    case ConstraintFamily::TetVolume:
      return field(m.tetVolumes, &TetVolumeConstraint::restVolume);
    case ConstraintFamily::GlobalVolume:
      return field(m.globalVolumes, &GlobalVolumeConstraint::restVolume);
    case ConstraintFamily::IsometricBending:
      if (m.isometricBendings.empty())
        return readOnly(py::array_t<double>(std::vector<py::ssize_t>{py::ssize_t{0}, py::ssize_t{4}}));
      return fieldView<double>(&m.isometricBendings[0].weights[0], m.isometricBendings.size(),
                               sizeof(IsometricBendingConstraint), 4, owner);
    case ConstraintFamily::Generic:
      throw py::value_error("rest_values: generic constraints keep their rest state in their function");
    case ConstraintFamily::NeoHookean:
      return field(m.neoHookeans, &NeoHookeanConstraint::restVolume);  // per tet
    case ConstraintFamily::ShapeMatching:
      throw py::value_error(
          "rest_values: a shape matching cluster's rest shape is per particle; use cluster_particles");
  }
  throw py::value_error("rest_values: unknown family");
}

py::array parameterView(const Model& m, ConstraintFamily family, py::handle owner) {
  auto view = [&](const auto& array) {
    using T = std::decay_t<decltype(array[0])>;
    if (array.empty()) return readOnly(py::array_t<double>(std::vector<py::ssize_t>{py::ssize_t{0}, py::ssize_t{3}}));
    if constexpr (std::is_same_v<T, NeoHookeanConstraint>) {
      // Two constraints per tet (rows 2i and 2i + 1, deviatoric and hydrostatic): a read-only copy.
      py::array_t<double> out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(2 * array.size()), py::ssize_t{3}});
      double* d = out.mutable_data();
      for (const NeoHookeanConstraint& c : array)
        for (const ConstraintParameters* p : {&c.deviatoric, &c.hydrostatic}) {
          *d++ = p->compliance;
          *d++ = p->damping;
          *d++ = p->stiffness;
        }
      return readOnly(out);
    } else {
      return fieldView<double>(&array[0].params.compliance, array.size(), sizeof(T), 3, owner);
    }
  };
  switch (family) {
#define PLIANT_PARAMETER_VIEW(Enumerator, array, name, Struct) \
  case ConstraintFamily::Enumerator:                           \
    return view(m.array);
    PLIANT_CONSTRAINT_FAMILIES(PLIANT_PARAMETER_VIEW)
#undef PLIANT_PARAMETER_VIEW
  }
  throw py::value_error("constraint_parameters: unknown family");
}

std::string colliderRepr(const Collider& c) {
  std::string s = std::string("Collider.") + colliderShapeName(c.shape) + "(position=" + vecText(c.pose.position);
  if (c.shape == ColliderShape::Sphere || c.shape == ColliderShape::Capsule) s += ", radius=" + fmt(c.radius);
  if (c.shape == ColliderShape::Capsule) s += ", half_height=" + fmt(c.halfHeight);
  if (c.shape == ColliderShape::Box) s += ", half_extents=" + vecText(c.halfExtents);
  if (c.kinematic()) s += ", kinematic";
  return s + ")";
}

}  // namespace

void bindModel(py::module_& m) {
  py::class_<ConstraintParameters>(m, "ConstraintParameters", R"doc(
Material of one constraint. XPBD reads ``compliance`` and ``damping``; PBD reads ``stiffness``.

compliance: XPBD compliance alpha >= 0, the inverse stiffness of U = C^2 / (2 alpha), in [C]^2/J
    (m/N for a distance constraint); 0 is a hard constraint.
damping: XPBD damping beta >= 0 (Macklin et al. 2016, eq. 26), in J s/[C]^2 (N s/m for a distance).
stiffness: PBD stiffness k in [0, 1], the fraction of the correction applied per projection.

Anywhere a ConstraintParameters is expected, a dict of these keys works too.)doc")
      .def(py::init([](double compliance, double damping, double stiffness) {
             return ConstraintParameters{compliance, damping, stiffness};
           }),
           py::arg("compliance") = 0.0, py::arg("damping") = 0.0, py::arg("stiffness") = 1.0,
           "ConstraintParameters(compliance=0.0, damping=0.0, stiffness=1.0)")
      .def_readwrite("compliance", &ConstraintParameters::compliance, "XPBD compliance, [C]^2/J (m/N for distances).")
      .def_readwrite("damping", &ConstraintParameters::damping, "XPBD damping, J s/[C]^2 (N s/m for distances).")
      .def_readwrite("stiffness", &ConstraintParameters::stiffness, "PBD stiffness in [0, 1].")
      .def("__repr__",
           [](const ConstraintParameters& p) {
             return "ConstraintParameters(compliance=" + fmt(p.compliance) + ", damping=" + fmt(p.damping) +
                    ", stiffness=" + fmt(p.stiffness) + ")";
           })
      .def("__eq__",
           [](const ConstraintParameters& a, py::object b) {
             if (!py::isinstance<ConstraintParameters>(b)) return false;
             const auto& o = b.cast<const ConstraintParameters&>();
             return a.compliance == o.compliance && a.damping == o.damping && a.stiffness == o.stiffness;
           })
      .def(
          py::pickle([](const ConstraintParameters& p) { return py::make_tuple(p.compliance, p.damping, p.stiffness); },
                     [](py::tuple t) {
                       if (t.size() != 3) throw py::value_error("ConstraintParameters: bad pickle state");
                       return ConstraintParameters{t[0].cast<double>(), t[1].cast<double>(), t[2].cast<double>()};
                     }));

  py::class_<ContactMaterial>(m, "ContactMaterial", R"doc(
Surface material of a contact (Mueller et al. 2020, sec. 3.5-3.6): Coulomb friction with a static
and a dynamic coefficient (dimensionless, >= 0) and restitution e in [0, 1]. A dict of these keys
works wherever a ContactMaterial is expected.)doc")
      .def(py::init([](double s, double d, double e) {
             return ContactMaterial{s, d, e};
           }),
           py::arg("static_friction") = 0.0, py::arg("dynamic_friction") = 0.0, py::arg("restitution") = 0.0,
           "ContactMaterial(static_friction=0.0, dynamic_friction=0.0, restitution=0.0)")
      .def_readwrite("static_friction", &ContactMaterial::staticFriction, "mu_s >= 0.")
      .def_readwrite("dynamic_friction", &ContactMaterial::dynamicFriction, "mu_d >= 0.")
      .def_readwrite("restitution", &ContactMaterial::restitution, "e in [0, 1].")
      .def("__repr__",
           [](const ContactMaterial& c) {
             return "ContactMaterial(static_friction=" + fmt(c.staticFriction) +
                    ", dynamic_friction=" + fmt(c.dynamicFriction) + ", restitution=" + fmt(c.restitution) + ")";
           })
      .def(py::pickle(
          [](const ContactMaterial& c) { return py::make_tuple(c.staticFriction, c.dynamicFriction, c.restitution); },
          [](py::tuple t) {
            if (t.size() != 3) throw py::value_error("ContactMaterial: bad pickle state");
            return ContactMaterial{t[0].cast<double>(), t[1].cast<double>(), t[2].cast<double>()};
          }));

  py::class_<Collider>(m, "Collider", R"doc(
A rigid obstacle that particles cannot enter (contacts are unilateral constraints C >= 0). Made by
the static constructors; add it to a model with ModelBuilder.add_collider (optionally with paths
that move it). Rotations are quaternions (w, x, y, z).)doc")
      .def_static(
          "plane",
          [](py::object point, py::object normal, py::object material) {
            return Collider::plane(toVec3(point, "Collider.plane: point"), toVec3(normal, "Collider.plane: normal"),
                                   toMaterial(material, "Collider.plane: material"));
          },
          py::arg("point"), py::arg("normal"), py::arg("material") = py::none(),
          "plane(point, normal, material=None) -> Collider\n\nThe half-space behind the plane through `point` (m) "
          "with outward `normal`.")
      .def_static(
          "sphere",
          [](py::object centre, py::object radius, py::object material) {
            return Collider::sphere(toVec3(centre, "Collider.sphere: centre"),
                                    toDouble(radius, "Collider.sphere: radius"),
                                    toMaterial(material, "Collider.sphere: material"));
          },
          py::arg("centre"), py::arg("radius"), py::arg("material") = py::none(),
          "sphere(centre, radius, material=None) -> Collider\n\nA solid sphere (m).")
      .def_static(
          "box",
          [](py::object centre, py::object halfExtents, py::object rotation, py::object material) {
            return Collider::box(
                toVec3(centre, "Collider.box: centre"), toVec3(halfExtents, "Collider.box: half_extents"),
                optionalQuat(rotation, "Collider.box: rotation"), toMaterial(material, "Collider.box: material"));
          },
          py::arg("centre"), py::arg("half_extents"), py::arg("rotation") = py::none(),
          py::arg("material") = py::none(),
          "box(centre, half_extents, rotation=None, material=None) -> Collider\n\nA solid box of half sizes "
          "`half_extents` (m) along its axes, turned by `rotation` (w, x, y, z).")
      .def_static(
          "capsule",
          [](py::object a, py::object b, py::object radius, py::object material) {
            return Collider::capsule(toVec3(a, "Collider.capsule: a"), toVec3(b, "Collider.capsule: b"),
                                     toDouble(radius, "Collider.capsule: radius"),
                                     toMaterial(material, "Collider.capsule: material"));
          },
          py::arg("a"), py::arg("b"), py::arg("radius"), py::arg("material") = py::none(),
          "capsule(a, b, radius, material=None) -> Collider\n\nThe capsule around the segment a-b (m).")
      .def_static(
          "mesh",
          [](py::object vertices, py::object triangles, py::object position, py::object rotation, py::object cellSize,
             py::object maxCells, py::object padding, py::object material) {
            const std::string fn = "Collider.mesh";
            return Collider::mesh(
                toVec3Array(vertices, fn + ": vertices"), toIndexRows<3>(triangles, fn + ": triangles"),
                position.is_none() ? Vec3::Zero() : toVec3(position, fn + ": position"),
                optionalQuat(rotation, fn + ": rotation"), gridOptions(cellSize, maxCells, padding, fn),
                toMaterial(material, fn + ": material"), "Collider.mesh");
          },
          py::arg("vertices"), py::arg("triangles"), py::arg("position") = py::none(), py::arg("rotation") = py::none(),
          py::arg("cell_size") = py::none(), py::arg("max_cells_per_axis") = py::none(),
          py::arg("padding") = py::none(), py::arg("material") = py::none(),
          "mesh(vertices, triangles, position=None, rotation=None, cell_size=None, max_cells_per_axis=None, "
          "padding=None, material=None) -> Collider\n\nA closed triangle mesh (vertices (n, 3) m, triangles (m, 3)) "
          "through its signed distance grid, built now.")
      .def_static(
          "mesh_file",
          [](py::object path, py::object position, py::object rotation, py::object scale, py::object cellSize,
             py::object maxCells, py::object padding, py::object material) {
            const std::string fn = "Collider.mesh_file";
            const std::string file = toString(path, fn + ": path");
            requireFile(file);
            return io::readMeshCollider(file, position.is_none() ? Vec3::Zero() : toVec3(position, fn + ": position"),
                                        optionalQuat(rotation, fn + ": rotation"),
                                        gridOptions(cellSize, maxCells, padding, fn),
                                        toMaterial(material, fn + ": material"),
                                        scale.is_none() ? Vec3::Ones() : toVec3(scale, fn + ": scale"));
          },
          py::arg("path"), py::arg("position") = py::none(), py::arg("rotation") = py::none(),
          py::arg("scale") = py::none(), py::arg("cell_size") = py::none(), py::arg("max_cells_per_axis") = py::none(),
          py::arg("padding") = py::none(), py::arg("material") = py::none(),
          "mesh_file(path, position=None, rotation=None, scale=None, cell_size=None, max_cells_per_axis=None, "
          "padding=None, material=None) -> Collider\n\nA mesh collider from a Wavefront OBJ file.")
      .def_property_readonly(
          "shape", [](const Collider& c) { return std::string(colliderShapeName(c.shape)); },
          "'plane', 'sphere', 'box', 'capsule' or 'mesh'.")
      .def_property_readonly(
          "position", [](const Collider& c) { return vecArray(c.pose.position); }, "Frame origin (m).")
      .def_property_readonly(
          "rotation", [](const Collider& c) { return quatTuple(c.pose.rotation); }, "Orientation (w, x, y, z).")
      .def_readonly("radius", &Collider::radius, "Sphere and capsule radius (m).")
      .def_readonly("half_height", &Collider::halfHeight, "Capsule: half the length of its axis (m).")
      .def_property_readonly(
          "half_extents", [](const Collider& c) { return vecArray(c.halfExtents); }, "Box half sizes (m).")
      .def_property_readonly(
          "material", [](const Collider& c) { return c.material; }, "Its ContactMaterial.")
      .def_property_readonly("kinematic", &Collider::kinematic, "Whether paths move it.")
      .def_property_readonly(
          "mesh_vertices",
          [](const Collider& c) -> py::object {
            if (!c.grid) return py::none();
            return readOnly(vec3Copy(c.grid->vertices));
          },
          "Mesh colliders: the vertices (n, 3) in the collider's frame (m); None otherwise.")
      .def_property_readonly(
          "mesh_triangles",
          [](const Collider& c) -> py::object {
            if (!c.grid) return py::none();
            return readOnly(indexRows(c.grid->triangles));
          },
          "Mesh colliders: the triangles (m, 3), outward; None otherwise.")
      .def(
          "signed_distance",
          [](const Collider& c, py::object point) {
            Vec3 normal;
            const double d = colliderDistance(c, c.pose, toVec3(point, "Collider.signed_distance: point"), normal);
            return py::make_tuple(d, vecArray(normal));
          },
          py::arg("point"),
          "signed_distance(point) -> (float, ndarray)\n\nSigned distance (m, negative inside) from the surface at "
          "the collider's fixed pose, and the outward normal.")
      .def("__repr__", &colliderRepr);

  py::class_<GeneratedObject>(m, "GeneratedObject", R"doc(
What a generator made: particles first_particle .. first_particle + particle_count - 1, the surface
triangles and the tetrahedra (global particle indices), and its index in the model's objects.)doc")
      .def_readonly("first_particle", &GeneratedObject::firstParticle, "Index of its first particle.")
      .def_readonly("particle_count", &GeneratedObject::particleCount, "Number of its particles.")
      .def_readonly("object", &GeneratedObject::object, "Index in Model.objects.")
      .def_property_readonly(
          "particles",
          [](const GeneratedObject& g) {
            py::array_t<std::int64_t> a(static_cast<py::ssize_t>(g.particleCount));
            for (std::uint32_t i = 0; i < g.particleCount; ++i) a.mutable_data()[i] = g.firstParticle + i;
            return a;
          },
          "The particle indices (n,).")
      .def_property_readonly(
          "triangles", [](const GeneratedObject& g) { return readOnly(indexRows(g.triangles)); },
          "Surface triangles (m, 3), counter-clockwise seen from the front or outside.")
      .def_property_readonly(
          "tets", [](const GeneratedObject& g) { return readOnly(indexRows(g.tets)); }, "Tetrahedra (m, 4).")
      .def_property_readonly(
          "skin_triangles",
          [](const GeneratedObject& g) {
            return readOnly(indexRows(g.skin ? g.skin->triangles : std::vector<std::array<std::uint32_t, 3>>{}));
          },
          "The surface of a soft body from a surface (k, 3), indices into skin_points' rows; empty otherwise.")
      .def(
          "skin_points",
          [](const GeneratedObject& g, py::object positions) {
            const std::vector<Vec3> x = toVec3Array(positions, "skin_points: positions");
            if (!g.skin) return pointRows({});
            for (const auto& t : g.skin->tets)
              for (ParticleIndex p : t)
                if (p >= x.size())
                  throw Error("skin_points: positions has " + std::to_string(x.size()) +
                              " rows; expected the whole model's particles (at least " + std::to_string(p + 1) + ")");
            std::vector<Vec3> out(g.skin->vertexCount());
            g.skin->pose(x, out);
            return pointRows(out);
          },
          py::arg("positions"),
          "skin_points(positions) -> ndarray\n\nThe surface's vertices (k, 3) m over the model's particle "
          "positions (e.g. state.positions): x = sum w_k x_k of the tet each lies in. Empty when there is no skin.")
      .def("__repr__", [](const GeneratedObject& g) {
        return "GeneratedObject(first_particle=" + std::to_string(g.firstParticle) +
               ", particle_count=" + std::to_string(g.particleCount) +
               ", triangles=" + std::to_string(g.triangles.size()) + ", tets=" + std::to_string(g.tets.size()) + ")";
      });

  py::class_<ModelBuilder>(m, "ModelBuilder", R"doc(
Builds a Model: particles, constraints of every family, generators, colliders, objects. Every add_*
checks its arguments and raises pliant.Error (a ValueError) or TypeError naming the bad one.
build() returns an immutable Model; the builder can go on and build again.)doc")
      .def(py::init<>())
      .def_property_readonly("particle_count", &ModelBuilder::particleCount, "Particles added so far.")
      .def(
          "position",
          [](const ModelBuilder& b, py::object particle) {
            return vecArray(b.position(toParticle(particle, "position: particle")));
          },
          py::arg("particle"), "position(particle) -> ndarray\n\nInitial position (m) of a particle.")
      .def(
          "add_particle",
          [](ModelBuilder& b, py::object position, py::object mass, py::object velocity) {
            return b.addParticle(toVec3(position, "add_particle: position"), toDouble(mass, "add_particle: mass"),
                                 velocity.is_none() ? Vec3::Zero() : toVec3(velocity, "add_particle: velocity"));
          },
          py::arg("position"), py::arg("mass"), py::arg("velocity") = py::none(),
          "add_particle(position, mass, velocity=None) -> int\n\nA particle at `position` (m) of `mass` kg (0 or "
          "inf: fixed) with `velocity` (m/s). Returns its index.")
      .def(
          "add_particles",
          [](ModelBuilder& b, py::object positions, py::object masses, py::object velocities) {
            const std::vector<Vec3> x = toVec3Array(positions, "add_particles: positions");
            std::vector<double> mass;
            if (PyFloat_Check(masses.ptr()) || PyLong_Check(masses.ptr()) ||
                (py::isinstance<py::array>(masses) && py::array(masses).ndim() == 0))
              mass.assign(x.size(), toDouble(masses, "add_particles: masses"));
            else mass = toDoubleArray(masses, "add_particles: masses");
            if (mass.size() != x.size())
              throw py::value_error("add_particles: masses has " + std::to_string(mass.size()) + " entries for " +
                                    std::to_string(x.size()) + " positions");
            std::vector<Vec3> v(x.size(), Vec3::Zero());
            if (!velocities.is_none()) {
              v = toVec3Array(velocities, "add_particles: velocities");
              if (v.size() != x.size())
                throw py::value_error("add_particles: velocities has " + std::to_string(v.size()) + " rows for " +
                                      std::to_string(x.size()) + " positions");
            }
            py::array_t<std::int64_t> out(static_cast<py::ssize_t>(x.size()));
            for (std::size_t i = 0; i < x.size(); ++i) out.mutable_data()[i] = b.addParticle(x[i], mass[i], v[i]);
            return out;
          },
          py::arg("positions"), py::arg("masses"), py::arg("velocities") = py::none(),
          "add_particles(positions, masses, velocities=None) -> ndarray\n\nParticles at positions (n, 3) m with "
          "masses (n,) kg or one mass for all, velocities (n, 3) m/s. Returns their indices.")
      .def(
          "fix_particle", [](ModelBuilder& b, py::object p) { b.fixParticle(toParticle(p, "fix_particle: particle")); },
          py::arg("particle"), "fix_particle(particle)\n\nMakes a particle immovable (inverse mass 0).")
      .def(
          "add_kinematic",
          [](ModelBuilder& b, py::object p, py::object path) {
            const ParticleIndex particle = toParticle(p, "add_kinematic: particle");
            if (!PyCallable_Check(path.ptr()))
              throw py::type_error("add_kinematic: path must be callable (time -> xyz)");
            b.addKinematic(particle,
                           PyPath{PyCallable(path), "kinematic path of particle " + std::to_string(particle)});
          },
          py::arg("particle"), py::arg("path"),
          "add_kinematic(particle, path)\n\nThe particle follows path(t) -> (x, y, z) m at time t s; constraints "
          "cannot move it. A model with Python paths cannot be pickled.")
      .def(
          "add_distance",
          [](ModelBuilder& b, py::object a, py::object c, py::object params, py::object rest) {
            return b.addDistance(toParticle(a, "add_distance: a"), toParticle(c, "add_distance: b"),
                                 toParameters(params, "add_distance: params"),
                                 rest.is_none() ? -1.0 : toDouble(rest, "add_distance: rest_length"));
          },
          py::arg("a"), py::arg("b"), py::arg("params") = py::none(), py::arg("rest_length") = py::none(),
          "add_distance(a, b, params=None, rest_length=None) -> int\n\nC = |x_a - x_b| - rest_length (m); "
          "rest_length None: the current distance.")
      .def(
          "add_distances",
          [](ModelBuilder& b, py::object pairs, py::object params, py::object rest) {
            const auto rows = toIndexRows<2>(pairs, "add_distances: pairs");
            const ConstraintParameters p = toParameters(params, "add_distances: params");
            std::vector<double> lengths(rows.size(), -1.0);
            if (!rest.is_none()) {
              lengths = toDoubleArray(rest, "add_distances: rest_lengths");
              if (lengths.size() != rows.size())
                throw py::value_error("add_distances: rest_lengths has " + std::to_string(lengths.size()) +
                                      " entries for " + std::to_string(rows.size()) + " pairs");
            }
            py::array_t<std::int64_t> out(static_cast<py::ssize_t>(rows.size()));
            for (std::size_t i = 0; i < rows.size(); ++i)
              out.mutable_data()[i] = b.addDistance(rows[i][0], rows[i][1], p, lengths[i]);
            return out;
          },
          py::arg("pairs"), py::arg("params") = py::none(), py::arg("rest_lengths") = py::none(),
          "add_distances(pairs, params=None, rest_lengths=None) -> ndarray\n\nOne distance constraint per row of "
          "pairs (m, 2). Returns their indices.")
      .def(
          "add_max_distance",
          [](ModelBuilder& b, py::object a, py::object c, py::object params, py::object length) {
            return b.addMaxDistance(toParticle(a, "add_max_distance: a"), toParticle(c, "add_max_distance: b"),
                                    toParameters(params, "add_max_distance: params"),
                                    length.is_none() ? -1.0 : toDouble(length, "add_max_distance: max_length"));
          },
          py::arg("a"), py::arg("b"), py::arg("params") = py::none(), py::arg("max_length") = py::none(),
          "add_max_distance(a, b, params=None, max_length=None) -> int\n\nKeeps |x_a - x_b| <= max_length (m); "
          "None: the current distance.")
      .def(
          "add_attachment",
          [](ModelBuilder& b, py::object p, py::object target, py::object params, py::object rest) {
            return b.addAttachment(toParticle(p, "add_attachment: particle"), toVec3(target, "add_attachment: target"),
                                   toParameters(params, "add_attachment: params"),
                                   toDouble(rest, "add_attachment: rest_distance"));
          },
          py::arg("particle"), py::arg("target"), py::arg("params") = py::none(), py::arg("rest_distance") = 0.0,
          "add_attachment(particle, target, params=None, rest_distance=0.0) -> int\n\nKeeps the particle at "
          "rest_distance (m) from a fixed point. State.attachment_targets moves the point between steps.")
      .def(
          "add_moving_attachment",
          [](ModelBuilder& b, py::object p, py::object path, py::object params, py::object rest) {
            const ParticleIndex particle = toParticle(p, "add_moving_attachment: particle");
            if (!PyCallable_Check(path.ptr()))
              throw py::type_error("add_moving_attachment: path must be callable (time -> xyz)");
            return b.addMovingAttachment(
                particle, PyPath{PyCallable(path), "attachment target path of particle " + std::to_string(particle)},
                toParameters(params, "add_moving_attachment: params"),
                toDouble(rest, "add_moving_attachment: rest_distance"));
          },
          py::arg("particle"), py::arg("path"), py::arg("params") = py::none(), py::arg("rest_distance") = 0.0,
          "add_moving_attachment(particle, path, params=None, rest_distance=0.0) -> int\n\nAn attachment whose "
          "target follows path(t) -> (x, y, z) m.")
      .def(
          "add_dihedral_bending",
          [](ModelBuilder& b, py::object p0, py::object p1, py::object p2, py::object p3, py::object params,
             py::object angle) {
            const std::string fn = "add_dihedral_bending: ";
            return b.addDihedralBending(toParticle(p0, fn + "p0"), toParticle(p1, fn + "p1"), toParticle(p2, fn + "p2"),
                                        toParticle(p3, fn + "p3"), toParameters(params, fn + "params"),
                                        angle.is_none() ? kNaN : toDouble(angle, fn + "rest_angle"));
          },
          py::arg("p0"), py::arg("p1"), py::arg("p2"), py::arg("p3"), py::arg("params") = py::none(),
          py::arg("rest_angle") = py::none(),
          "add_dihedral_bending(p0, p1, p2, p3, params=None, rest_angle=None) -> int\n\nTriangles (p0, p1, p2) and "
          "(p1, p0, p3) share edge p0-p1; C = angle - rest_angle (rad); None: the current angle.")
      .def(
          "add_isometric_bending",
          [](ModelBuilder& b, py::object p0, py::object p1, py::object p2, py::object p3, py::object params) {
            const std::string fn = "add_isometric_bending: ";
            return b.addIsometricBending(toParticle(p0, fn + "p0"), toParticle(p1, fn + "p1"),
                                         toParticle(p2, fn + "p2"), toParticle(p3, fn + "p3"),
                                         toParameters(params, fn + "params"));
          },
          py::arg("p0"), py::arg("p1"), py::arg("p2"), py::arg("p3"), py::arg("params") = py::none(),
          "add_isometric_bending(p0, p1, p2, p3, params=None) -> int\n\nBergou et al. 2006 bending of the edge "
          "p0-p1 with opposite vertices p2, p3 (flat rest state).")
      .def(
          "add_tet_volume",
          [](ModelBuilder& b, py::object p0, py::object p1, py::object p2, py::object p3, py::object params) {
            const std::string fn = "add_tet_volume: ";
            return b.addTetVolume(toParticle(p0, fn + "p0"), toParticle(p1, fn + "p1"), toParticle(p2, fn + "p2"),
                                  toParticle(p3, fn + "p3"), toParameters(params, fn + "params"));
          },
          py::arg("p0"), py::arg("p1"), py::arg("p2"), py::arg("p3"), py::arg("params") = py::none(),
          "add_tet_volume(p0, p1, p2, p3, params=None) -> int\n\nC = V - V_rest of one tetrahedron (m^3).")
      .def(
          "add_neo_hookean_tet",
          [](ModelBuilder& b, py::object p0, py::object p1, py::object p2, py::object p3, py::object material) {
            const std::string fn = "add_neo_hookean_tet: ";
            const std::optional<NeoHookeanMaterial> tetMaterial = toNeoHookean(material, fn + "material");
            if (!tetMaterial) throw py::value_error(fn + "material: expected a dict, got None");
            return b.addNeoHookeanTet(toParticle(p0, fn + "p0"), toParticle(p1, fn + "p1"), toParticle(p2, fn + "p2"),
                                      toParticle(p3, fn + "p3"), *tetMaterial);
          },
          py::arg("p0"), py::arg("p1"), py::arg("p2"), py::arg("p3"), py::arg("material"),
          "add_neo_hookean_tet(p0, p1, p2, p3, material) -> int\n\nA stable neo-Hookean tet (Macklin & Mueller "
          "2021) with the current positions as rest shape; material is a dict of youngs_modulus (Pa) and "
          "poisson_ratio, or lame_mu and lame_lambda (Pa), and damping (s). Its constraints are 2i and 2i + 1.")
      .def(
          "add_shape_matching_cluster",
          [](ModelBuilder& b, py::object particles, py::object mode, py::object beta, py::object preserveVolume,
             py::object params) {
            const std::string fn = "add_shape_matching_cluster: ";
            const std::vector<ParticleIndex> p = toIndexArray(particles, fn + "particles");
            return b.addShapeMatchingCluster(p, toShapeMatching(mode, beta, preserveVolume, params, fn));
          },
          py::arg("particles"), py::arg("mode") = "rigid", py::arg("beta") = 0.5, py::arg("preserve_volume") = true,
          py::arg("params") = py::none(),
          "add_shape_matching_cluster(particles, mode='rigid', beta=0.5, preserve_volume=True, params=None) -> "
          "int\n\nA shape matching cluster (Mueller et al. 2005) over `particles` (at least 2) with the current "
          "positions as rest shape: one constraint C = sqrt(sum m_i |x_i - g_i|^2 / M) (m; compliance m/N) "
          "pulling each particle to its goal g_i on the best-fitting rigid copy ('rigid') or the blend of the "
          "linear fit and the rotation ('linear', beta in [0, 1], optionally volume-preserving).")
      .def(
          "add_shape_matching_clusters",
          [](ModelBuilder& b, py::object particles, py::object clusterSize, py::object mode, py::object beta,
             py::object preserveVolume, py::object params) {
            const std::string fn = "add_shape_matching_clusters: ";
            const std::vector<ParticleIndex> p = toIndexArray(particles, fn + "particles");
            const double size = toDouble(clusterSize, fn + "cluster_size");
            if (!(size >= 0.0) || std::isinf(size))
              throw py::value_error(fn + "cluster_size must be a finite length >= 0 m (0: one cluster)");
            std::uint32_t count = 0;
            const std::uint32_t first =
                addShapeMatchingClusters(b, p, size, toShapeMatching(mode, beta, preserveVolume, params, fn), &count);
            return py::make_tuple(first, count);
          },
          py::arg("particles"), py::arg("cluster_size") = 0.0, py::arg("mode") = "rigid", py::arg("beta") = 0.5,
          py::arg("preserve_volume") = true, py::arg("params") = py::none(),
          "add_shape_matching_clusters(particles, cluster_size=0.0, mode='rigid', beta=0.5, preserve_volume=True, "
          "params=None) -> (first, count)\n\nShape matching clusters for any object: one over all `particles` "
          "(cluster_size 0), or one per block of 2 x 2 x 2 cells of edge cluster_size (m), overlapping by a cell.")
      .def(
          "add_global_volume",
          [](ModelBuilder& b, py::object triangles, py::object pressure, py::object params) {
            const auto t = toIndexRows<3>(triangles, "add_global_volume: triangles");
            return b.addGlobalVolume(t, toDouble(pressure, "add_global_volume: pressure"),
                                     toParameters(params, "add_global_volume: params"));
          },
          py::arg("triangles"), py::arg("pressure") = 1.0, py::arg("params") = py::none(),
          "add_global_volume(triangles, pressure=1.0, params=None) -> int\n\nC = V - pressure V_rest of the closed "
          "outward mesh triangles (m, 3) (a balloon).")
      .def(
          "add_constraint",
          [](ModelBuilder& b, py::object function, py::object particles, py::object inequality, py::object params) {
            const std::string fn = "add_constraint: ";
            if (!PyCallable_Check(function.ptr()))
              throw py::type_error(fn + "function must be callable (x (k, 3) -> (C, gradient (k, 3)))");
            const std::vector<ParticleIndex> p = toIndexArray(particles, fn + "particles");
            return b.addGeneric(PyConstraintFunction{PyCallable(function)}, p, toBool(inequality, fn + "inequality"),
                                toParameters(params, fn + "params"));
          },
          py::arg("function"), py::arg("particles"), py::arg("inequality") = false, py::arg("params") = py::none(),
          R"doc(add_constraint(function, particles, inequality=False, params=None) -> int

A user constraint over `particles` (k indices): function(x) receives their positions, a new (k, 3)
array (m), and returns (C, gradient) with gradient dC/dx of shape (k, 3). An inequality keeps
C >= 0. Returns the index of the generic constraint.

Slower than the built-in families: every projection calls into Python (a few microseconds each).
For many constraints of one kind use add_vectorized_constraint. An exception raised by the function
refuses the step (pliant.StepRefused, its __cause__ the exception). A model holding Python
functions cannot be pickled, and a function should not refer to the model (a reference cycle
through C++ that Python's garbage collector cannot see).)doc")
      .def(
          "add_vectorized_constraint",
          [](ModelBuilder& b, py::object function, py::object particles, py::object inequality, py::object params) {
            const std::string fn = "add_vectorized_constraint: ";
            if (!PyCallable_Check(function.ptr()))
              throw py::type_error(
                  fn + "function must be callable (x (c, k, 3), rows (c,) -> (C (c,), gradient (c, k, 3)))");
            std::size_t rows = 0, arity = 0;
            const std::vector<ParticleIndex> p = toIndexMatrix(particles, 0, fn + "particles", &rows, &arity);
            if (rows == 0) return py::array_t<std::int64_t>(0);
            const bool ineq = toBool(inequality, fn + "inequality");
            const ConstraintParameters prm = toParameters(params, fn + "params");
            PyBatchFunction batch{PyCallable(function), static_cast<std::uint32_t>(b.model().generics.size()),
                                  std::make_shared<std::vector<std::int64_t>>(rows)};
            auto rowOf = batch.rowOf;
            const std::uint32_t id = b.addGenericBatchFunction(std::move(batch));
            std::vector<std::uint32_t> index;
            try {
              index = b.addGenericBatch(id, p, static_cast<std::uint32_t>(arity), ineq, prm);
            } catch (...) {
              // Leave no unused function behind on a refused call.
              b.model().genericFunctions.pop_back();
              b.model().genericBatchFunctions.pop_back();
              throw;
            }
            const auto first = static_cast<std::uint32_t>(b.model().generics.size() - rows);
            py::array_t<std::int64_t> out(static_cast<py::ssize_t>(rows));
            for (std::size_t r = 0; r < rows; ++r) {
              out.mutable_data()[r] = index[r];
              (*rowOf)[index[r] - first] = static_cast<std::int64_t>(r);
            }
            return out;
          },
          py::arg("function"), py::arg("particles"), py::arg("inequality") = false, py::arg("params") = py::none(),
          R"doc(add_vectorized_constraint(function, particles, inequality=False, params=None) -> ndarray

Many user constraints of one kind, evaluated in few calls: particles is (m, k), one row per
constraint. function(x, rows) receives x (c, k, 3), the positions of c of them, and rows (c,), which
rows of `particles` they are, and returns (C (c,), gradient (c, k, 3)) as arrays. The rows are
grouped so that no two of a group share a particle (greedy colouring), each group is one call per
Gauss-Seidel pass, and projecting it after that one call equals evaluating each constraint just
before its projection. Returns the generic constraint index of each row (m,).

A particle shared by many rows (an anchor) puts each of them in a group of its own: keep such a
point inside the function instead.)doc")
      .def(
          "set_particle_radius",
          [](ModelBuilder& b, py::object particle, py::object radius, py::object count) {
            const ParticleIndex first = toParticle(particle, "set_particle_radius: particle");
            const double r = toDouble(radius, "set_particle_radius: radius");
            const int n = toInt(count, "set_particle_radius: count");
            if (n < 0) throw py::value_error("set_particle_radius: count must be >= 0");
            b.setParticleRadius(first, static_cast<std::uint32_t>(n), r);
          },
          py::arg("particle"), py::arg("radius"), py::arg("count") = 1,
          "set_particle_radius(particle, radius, count=1)\n\nContact radius (m) of particles particle .. particle + "
          "count - 1.")
      .def(
          "add_collider",
          [](ModelBuilder& b, const Collider& c, py::object path, py::object rotationPath) {
            PathFunction p;
            RotationFunction r;
            const std::string what = "collider " + std::to_string(b.model().colliders.size());
            if (!path.is_none()) {
              if (!PyCallable_Check(path.ptr())) throw py::type_error("add_collider: path must be callable");
              p = PyPath{PyCallable(path), what + " path"};
            }
            if (!rotationPath.is_none()) {
              if (!PyCallable_Check(rotationPath.ptr()))
                throw py::type_error("add_collider: rotation_path must be callable");
              r = PyRotation{PyCallable(rotationPath), what + " rotation path"};
            }
            return b.addCollider(c, p, r);
          },
          py::arg("collider"), py::arg("path") = py::none(), py::arg("rotation_path") = py::none(),
          "add_collider(collider, path=None, rotation_path=None) -> int\n\nAdds a collider; path(t) -> (x, y, z) m "
          "moves its frame origin, rotation_path(t) -> (w, x, y, z) turns it.")
      .def(
          "add_body", [](ModelBuilder& b, const py::kwargs& kwargs) { return b.addBody(bodyDef(kwargs)); },
          "add_body(*, name='', shape='sphere', radius=0, half_height=0, half_extents=(0, 0, 0), points=None, "
          "density=1000, mass=0, motion='dynamic', position=(0, 0, 0), rotation=(1, 0, 0, 0), velocity=(0, 0, 0), "
          "angular_velocity=(0, 0, 0), material=None) -> int\n\nA rigid body (sphere, box, capsule along y, or the "
          "convex hull of `points`), its shape frame placed at `position` (m) turned by `rotation` (w, x, y, z); mass "
          "from `density` (kg/m^3) or `mass` (kg); motion 'dynamic', 'static' or 'kinematic'. Returns its index.")
      .def(
          "add_body_attachment",
          [](ModelBuilder& b, py::object p, py::object body, py::object point, py::object params, py::object rest) {
            const int index = toInt(body, "add_body_attachment: body");
            if (index < 0) throw py::value_error("add_body_attachment: body: expected a body index >= 0");
            const ParticleIndex particle = toParticle(p, "add_body_attachment: particle");
            return b.addBodyAttachment(
                particle, static_cast<BodyIndex>(index),
                point.is_none() ? b.position(particle) : toVec3(point, "add_body_attachment: point"),
                toParameters(params, "add_body_attachment: params"),
                toDouble(rest, "add_body_attachment: rest_distance"));
          },
          py::arg("particle"), py::arg("body"), py::arg("point") = py::none(), py::arg("params") = py::none(),
          py::arg("rest_distance") = 0.0,
          "add_body_attachment(particle, body, point=None, params=None, rest_distance=0.0) -> int\n\nHolds the "
          "particle at rest_distance (m) from the material point of body `body` that is at `point` (m, world) at time "
          "0 (None: where the particle starts). The body feels the pull (Mueller et al. 2020, eq. 2); a static or "
          "kinematic body is a target. Solver.body_attachment_force reports its force.")
      .def(
          "add_joint", [](ModelBuilder& b, const py::kwargs& kwargs) { return b.addJoint(jointDef(kwargs)); },
          "add_joint(*, type='fixed', body_a=None, body_b=None, anchor=(0, 0, 0), anchor_b=(0, 0, 0), axis=(1, 0, 0), "
          "rest_length=-1, compliance=0, damping=0, lower=-inf, upper=inf, swing_limit=inf, drive='none', "
          "drive_target=0, drive_compliance=0, drive_damping=0) -> int\n\nA joint ('fixed', 'spherical', 'hinge', "
          "'prismatic' or 'distance') between bodies body_a and body_b (indices; None is the world) at `anchor` (m, "
          "world) about `axis`; limits in rad (m for prismatic), a hinge drive to an 'angle' (rad) or a 'speed' "
          "(rad/s). Returns its index.")
      .def(
          "add_collision_triangles",
          [](ModelBuilder& b, py::object triangles, py::object enable) {
            return b.addCollisionTriangles(toIndexRows<3>(triangles, "add_collision_triangles: triangles"),
                                           toBool(enable, "add_collision_triangles: enable"));
          },
          py::arg("triangles"), py::arg("enable") = true,
          "add_collision_triangles(triangles, enable=True) -> int\n\nTriangles (m, 3) for surface contact (self- "
          "and cloth-cloth collision); enable turns self_collision on.")
      .def(
          "add_object",
          [](ModelBuilder& b, py::object name, py::object particles, py::object damping) {
            return b.addObject(toString(name, "add_object: name"), toIndexArray(particles, "add_object: particles"),
                               toDouble(damping, "add_object: damping_factor"));
          },
          py::arg("name"), py::arg("particles"), py::arg("damping_factor") = 0.0,
          "add_object(name, particles, damping_factor=0.0) -> int\n\nA named group of particles with "
          "momentum-conserving damping in [0, 1] per step.")
      .def(
          "add_cloth_grid", [](ModelBuilder& b, py::kwargs kw) { return addClothGrid(b, clothGridDef(kw)); },
          R"doc(add_cloth_grid(**fields) -> GeneratedObject

A rectangular cloth (ClothGridDef): name='cloth', nodes_x=32, nodes_y=32, size_x=1.0, size_y=1.0 (m),
origin=(0, 0, 0) (m, node (0, 0)), axis_x=(1, 0, 0), axis_y=(0, 0, 1), total_mass=1.0 (kg),
stretch=ConstraintParameters(), bending='none' | 'dihedral' | 'isometric',
bending_params=ConstraintParameters(), damping_factor=0.0, self_collision=False.
Node (column i, row j) is particle first_particle + j * nodes_x + i.)doc")
      .def(
          "add_chain", [](ModelBuilder& b, py::kwargs kw) { return addChain(b, chainDef(kw)); },
          R"doc(add_chain(**fields) -> GeneratedObject

A rope (ChainDef): name='chain', particles=10, start=(0, 0, 0), end=(1, 0, 0) (m),
particle_mass=0.1 (kg), fix_start=True, stretch=ConstraintParameters(), damping_factor=0.0.)doc")
      .def(
          "add_tet_box", [](ModelBuilder& b, py::kwargs kw) { return addTetBox(b, tetBoxDef(kw)); },
          R"doc(add_tet_box(**fields) -> GeneratedObject

A soft body box of hexahedral cells split into tetrahedra (TetBoxDef): name='beam', cells_x=8,
cells_y=2, cells_z=2, origin=(0, 0, 0), size=(2, 0.5, 0.5) (m), density=1000 (kg/m^3),
volume=ConstraintParameters(), edges=ConstraintParameters(), add_edges=True, damping_factor=0.0,
neo_hookean=None (a dict of youngs_modulus (Pa) and poisson_ratio, or lame_mu and lame_lambda (Pa), and
damping (s): stable neo-Hookean tets instead of volume and edge constraints).)doc")
      .def(
          "add_tet_mesh",
          [](ModelBuilder& b, py::object vertices, py::object tets, py::kwargs kw) {
            return addTetMesh(b, toVec3Array(vertices, "add_tet_mesh: vertices"),
                              toIndexRows<4>(tets, "add_tet_mesh: tets"), tetMeshDef(kw));
          },
          py::arg("vertices"), py::arg("tets"),
          R"doc(add_tet_mesh(vertices, tets, **fields) -> GeneratedObject

A soft body from a tetrahedral mesh, vertices (n, 3) m and positive tets (m, 4) (see read_tet_mesh)
(TetMeshDef): name='softbody', density=1000 (kg/m^3), volume=ConstraintParameters(),
edges=ConstraintParameters(), add_edges=True, damping_factor=0.0, neo_hookean=None (as add_tet_box).)doc")
      .def(
          "add_soft_body_from_surface",
          [](ModelBuilder& b, py::object vertices, py::object triangles, py::kwargs kw) {
            return addSoftBodyFromSurface(b, toVec3Array(vertices, "add_soft_body_from_surface: vertices"),
                                          toIndexRows<3>(triangles, "add_soft_body_from_surface: triangles"),
                                          softBodyFromSurfaceDef(kw));
          },
          py::arg("vertices"), py::arg("triangles"),
          R"doc(add_soft_body_from_surface(vertices, triangles, **fields) -> GeneratedObject

A soft body from a closed, consistently oriented triangle surface, vertices (n, 3) m and triangles
(m, 3): the surface is embedded in a grid of cubes split into tets, which simulate; each surface
vertex follows its tet (GeneratedObject.skin_points gives the surface posed from positions)
(SoftBodyFromSurfaceDef): name='softbody', cell_size=0.05 (m), density=1000 (kg/m^3 of the enclosed
solid), translation=(0, 0, 0) (m), volume=ConstraintParameters(), edges=ConstraintParameters(),
add_edges=True, damping_factor=0.0, neo_hookean=None (as add_tet_box).)doc")
      .def(
          "add_cloth_mesh",
          [](ModelBuilder& b, py::object vertices, py::object triangles, py::kwargs kw) {
            return addClothMesh(b, toVec3Array(vertices, "add_cloth_mesh: vertices"),
                                toIndexRows<3>(triangles, "add_cloth_mesh: triangles"), clothMeshDef(kw));
          },
          py::arg("vertices"), py::arg("triangles"),
          R"doc(add_cloth_mesh(vertices, triangles, **fields) -> GeneratedObject

A cloth from a triangle mesh, vertices (n, 3) m and triangles (m, 3) (ClothMeshDef): name='cloth',
total_mass=1.0 (kg), stretch=ConstraintParameters(), bending='none' | 'dihedral' | 'isometric',
bending_params=ConstraintParameters(), damping_factor=0.0, self_collision=False.)doc")
      .def(
          "add_balloon", [](ModelBuilder& b, py::kwargs kw) { return addBalloon(b, balloonDef(kw)); },
          R"doc(add_balloon(**fields) -> GeneratedObject

A closed sphere surface with a global volume constraint (BalloonDef): name='balloon',
centre=(0, 0, 0), radius=0.5 (m), rings=12, segments=24, total_mass=0.2 (kg),
stretch=ConstraintParameters(), pressure=1.0, volume=ConstraintParameters(), damping_factor=0.0.)doc")
      .def(
          "add_bending_constraints",
          [](ModelBuilder& b, py::object triangles, py::object model, py::object params) {
            return addBendingConstraints(b, toIndexRows<3>(triangles, "add_bending_constraints: triangles"),
                                         toBending(model, "add_bending_constraints: model"),
                                         toParameters(params, "add_bending_constraints: params"));
          },
          py::arg("triangles"), py::arg("model") = "dihedral", py::arg("params") = py::none(),
          "add_bending_constraints(triangles, model='dihedral', params=None) -> int\n\nBending on every interior "
          "edge of the mesh triangles (m, 3). Returns how many were added.")
      .def(
          "add_tethers",
          [](ModelBuilder& b, py::object anchors, py::object first, py::object count, py::object params,
             py::object slack) {
            const int n = toInt(count, "add_tethers: particle_count");
            if (n < 0) throw py::value_error("add_tethers: particle_count must be >= 0");
            return addTethers(b, toIndexArray(anchors, "add_tethers: anchors"),
                              toParticle(first, "add_tethers: first_particle"), static_cast<std::uint32_t>(n),
                              toParameters(params, "add_tethers: params"), toDouble(slack, "add_tethers: slack"));
          },
          py::arg("anchors"), py::arg("first_particle"), py::arg("particle_count"), py::arg("params") = py::none(),
          py::arg("slack") = 1.0,
          "add_tethers(anchors, first_particle, particle_count, params=None, slack=1.0) -> int\n\nLong-range "
          "attachments: max-distance constraints from every free particle of the range to each anchor.")
      .def_property(
          "self_collision", [](const ModelBuilder& b) { return b.model().selfCollision; },
          [](ModelBuilder& b, py::object v) { b.model().selfCollision = toBool(v, "self_collision"); },
          "Surface contact between collision triangles on or off.")
      .def_property(
          "surface_thickness", [](const ModelBuilder& b) { return b.model().surfaceThickness; },
          [](ModelBuilder& b, py::object v) { b.model().surfaceThickness = toDouble(v, "surface_thickness"); },
          "Gap kept between two surfaces (m).")
      .def_property(
          "particle_collisions", [](const ModelBuilder& b) { return b.model().particleCollisions; },
          [](ModelBuilder& b, py::object v) { b.model().particleCollisions = toBool(v, "particle_collisions"); },
          "Contacts between particles of radius > 0.")
      .def_property(
          "particle_contact_material", [](const ModelBuilder& b) { return b.model().particleContactMaterial; },
          [](ModelBuilder& b, py::object v) {
            b.model().particleContactMaterial = toMaterial(v, "particle_contact_material");
          },
          "Friction and restitution of particle-particle contacts (a ContactMaterial).")
      .def_property(
          "surface_contact_material", [](const ModelBuilder& b) { return b.model().surfaceContactMaterial; },
          [](ModelBuilder& b, py::object v) {
            b.model().surfaceContactMaterial = toMaterial(v, "surface_contact_material");
          },
          "Friction and restitution of surface contacts (a ContactMaterial).")
      .def(
          "build", [](const ModelBuilder& b) { return holdModel(b.build()); },
          "build() -> Model\n\nValidates and returns the model, immutable from now on.");

  py::class_<Model, ModelHolder>(m, "Model", R"doc(
A built model: everything that does not change while stepping. Immutable and shared (solvers and
scenes hold the same one); its arrays are read-only numpy views. Change masses, pins and
parameters through a Solver, positions and forces through a State.)doc")
      .def_property_readonly("particle_count", &Model::particleCount, "Number of particles.")
      .def_property_readonly("total_constraint_count", &Model::totalConstraintCount,
                             "Constraints of every family, the length of State.lambdas.")
      .def(
          "constraint_count",
          [](const Model& model, py::object family) {
            return model.constraintCount(toFamily(family, "constraint_count: family"));
          },
          py::arg("family"), "constraint_count(family) -> int")
      .def_property_readonly(
          "constraint_counts",
          [](const Model& model) {
            py::dict d;
            for (int f = 0; f < kConstraintFamilyCount; ++f)
              d[py::str(familyKey(static_cast<ConstraintFamily>(f)))] =
                  model.constraintCount(static_cast<ConstraintFamily>(f));
            return d;
          },
          "Constraints per family, in projection order.")
      .def(
          "lambda_slice",
          [](const Model& model, py::object family) {
            const auto f = static_cast<int>(toFamily(family, "lambda_slice: family"));
            return py::slice(model.lambdaOffset[f], model.lambdaOffset[f + 1], 1);
          },
          py::arg("family"), "lambda_slice(family) -> slice\n\nWhere a family's multipliers are in State.lambdas.")
      .def_property_readonly(
          "initial_positions",
          [](py::object self) { return vec3View(self.cast<const Model&>().initialPosition, self, false); },
          "(n, 3) m, read-only view.")
      .def_property_readonly(
          "initial_velocities",
          [](py::object self) { return vec3View(self.cast<const Model&>().initialVelocity, self, false); },
          "(n, 3) m/s, read-only view.")
      .def_property_readonly(
          "masses", [](py::object self) { return doubleView(self.cast<const Model&>().mass, self, false); },
          "(n,) kg, read-only view (a fixed particle keeps its mass).")
      .def_property_readonly(
          "inverse_masses",
          [](py::object self) { return doubleView(self.cast<const Model&>().inverseMass, self, false); },
          "(n,) 1/kg, 0 for fixed and kinematic particles; read-only view.")
      .def_property_readonly(
          "particle_radii",
          [](py::object self) {
            const Model& model = self.cast<const Model&>();
            if (model.particleRadius.empty()) {
              py::array_t<double> zeros(static_cast<py::ssize_t>(model.particleCount()));
              std::fill(zeros.mutable_data(), zeros.mutable_data() + zeros.size(), 0.0);
              return readOnly(zeros);
            }
            return doubleView(model.particleRadius, self, false);
          },
          "(n,) m, contact radius of each particle.")
      .def(
          "constraint_particles",
          [](py::object self, py::object family) {
            return constraintParticles(self.cast<const Model&>(), toFamily(family, "constraint_particles: family"),
                                       self);
          },
          py::arg("family"),
          "constraint_particles(family) -> ndarray\n\nParticle indices of every constraint of a family, (m, k) "
          "uint32, read-only view (k = 1 attachment, 2 distance and max-distance, 4 bending and tet-volume).")
      .def(
          "rest_values",
          [](py::object self, py::object family) {
            return restValues(self.cast<const Model&>(), toFamily(family, "rest_values: family"), self);
          },
          py::arg("family"),
          "rest_values(family) -> ndarray\n\nRest length (m), maximum length (m), rest angle (rad), rest volume (m^3) "
          "or rest distance (m) per constraint (m,); isometric bending: the weights (m, 4) 1/m. Read-only view.")
      .def(
          "constraint_parameters",
          [](py::object self, py::object family) {
            return parameterView(self.cast<const Model&>(), toFamily(family, "constraint_parameters: family"), self);
          },
          py::arg("family"),
          "constraint_parameters(family) -> ndarray\n\n(m, 3) columns compliance, damping, stiffness; read-only "
          "view.")
      .def_property_readonly(
          "tets",
          [](py::object self) {
            return constraintParticles(self.cast<const Model&>(), ConstraintFamily::TetVolume, self);
          },
          "(m, 4) particle indices of the tet volume constraints (read-only view).")
      .def_property_readonly(
          "collision_triangles",
          [](py::object self) {
            const Model& model = self.cast<const Model&>();
            if (model.collisionTriangles.empty())
              return readOnly(py::array_t<std::uint32_t>(std::vector<py::ssize_t>{py::ssize_t{0}, py::ssize_t{3}}));
            return fieldView<std::uint32_t>(&model.collisionTriangles[0].particles[0], model.collisionTriangles.size(),
                                            sizeof(CollisionTriangle), 3, self);
          },
          "(m, 3) triangles registered for surface contact (read-only view).")
      .def(
          "volume_triangles",
          [](const Model& model, py::object index) {
            const int i = toInt(index, "volume_triangles: index");
            if (i < 0 || static_cast<std::size_t>(i) >= model.globalVolumes.size())
              throw py::index_error("volume_triangles: no global volume constraint " + std::to_string(i));
            const GlobalVolumeConstraint& c = model.globalVolumes[static_cast<std::size_t>(i)];
            py::array_t<std::uint32_t> out(
                std::vector<py::ssize_t>{static_cast<py::ssize_t>(c.triangleCount), py::ssize_t{3}});
            for (std::uint32_t t = 0; t < c.triangleCount; ++t)
              for (int k = 0; k < 3; ++k)
                out.mutable_data()[3 * t + k] =
                    model.volumeVertices[c.firstVertex + model.volumeTriangles[c.firstTriangle + t][k]];
            return readOnly(out);
          },
          py::arg("index"), "volume_triangles(index) -> ndarray\n\nTriangles (m, 3) of a global volume constraint.")
      .def(
          "cluster_particles",
          [](const Model& model, py::object index) {
            const int i = toInt(index, "cluster_particles: index");
            if (i < 0 || static_cast<std::size_t>(i) >= model.shapeMatchings.size())
              throw py::index_error("cluster_particles: no shape matching cluster " + std::to_string(i));
            const ShapeMatchingConstraint& c = model.shapeMatchings[static_cast<std::size_t>(i)];
            py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(c.memberCount));
            std::memcpy(out.mutable_data(), model.shapeMatchingParticles.data() + c.firstMember,
                        c.memberCount * sizeof(ParticleIndex));
            return readOnly(out);
          },
          py::arg("index"), "cluster_particles(index) -> ndarray\n\nThe particles of a shape matching cluster.")
      .def(
          "generic_particles",
          [](const Model& model, py::object index) {
            const int i = toInt(index, "generic_particles: index");
            if (i < 0 || static_cast<std::size_t>(i) >= model.generics.size())
              throw py::index_error("generic_particles: no generic constraint " + std::to_string(i));
            const GenericConstraint& c = model.generics[static_cast<std::size_t>(i)];
            py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(c.particleCount));
            std::memcpy(out.mutable_data(), model.genericParticles.data() + c.firstParticle,
                        c.particleCount * sizeof(ParticleIndex));
            return readOnly(out);
          },
          py::arg("index"), "generic_particles(index) -> ndarray\n\nParticles of one user constraint.")
      .def_property_readonly(
          "attachment_targets",
          [](py::object self) {
            const Model& model = self.cast<const Model&>();
            if (model.attachments.empty())
              return readOnly(py::array_t<double>(std::vector<py::ssize_t>{py::ssize_t{0}, py::ssize_t{3}}));
            return fieldView<double>(model.attachments[0].target.data(), model.attachments.size(),
                                     sizeof(AttachmentConstraint), 3, self);
          },
          "(a, 3) m, the fixed target of each attachment (moving ones: their start); read-only view.")
      .def_property_readonly(
          "kinematic_particles",
          [](const Model& model) {
            py::array_t<std::int64_t> out(static_cast<py::ssize_t>(model.kinematicParticles.size()));
            for (std::size_t i = 0; i < model.kinematicParticles.size(); ++i)
              out.mutable_data()[i] = model.kinematicParticles[i].particle;
            return out;
          },
          "Indices of the particles that follow paths.")
      .def_property_readonly(
          "objects",
          [](py::object self) {
            const Model& model = self.cast<const Model&>();
            py::list out;
            for (const SimObject& o : model.objects) {
              py::dict d;
              d["name"] = o.name;
              d["particles"] = readOnly(
                  py::array_t<std::uint32_t>(static_cast<py::ssize_t>(o.particles.size()), o.particles.data()));
              d["damping_factor"] = o.dampingFactor;
              out.append(d);
            }
            return out;
          },
          "The named objects: dicts of name, particles (n,) and damping_factor.")
      .def_property_readonly(
          "colliders", [](const Model& model) { return model.colliders; }, "The colliders (copies).")
      .def_readonly("self_collision", &Model::selfCollision, "Surface contact between collision triangles on or off.")
      .def_readonly("surface_thickness", &Model::surfaceThickness, "m")
      .def_readonly("particle_collisions", &Model::particleCollisions, "Contacts between particles of radius > 0.")
      .def_readonly("particle_contact_material", &Model::particleContactMaterial,
                    "Material of particle-particle contacts.")
      .def_readonly("surface_contact_material", &Model::surfaceContactMaterial, "Material of surface contacts.")
      .def_property_readonly(
          "functions", [](const Model& model) { return io::describeModelFunctions(model); },
          "What of the model is code (paths, user constraint functions); '' when nothing is. Such a model cannot be "
          "pickled.")
      .def("__repr__",
           [](const Model& model) {
             return "<pliant.Model: " + std::to_string(model.particleCount()) + " particles, " +
                    std::to_string(model.totalConstraintCount()) + " constraints, " +
                    std::to_string(model.colliders.size()) + " colliders>";
           })
      .def(py::pickle(
          [](const Model& model) {
            const std::string functions = io::describeModelFunctions(model);
            if (!functions.empty())
              throw py::type_error(
                  "cannot pickle this Model: it holds " + functions +
                  " (code, not data). Rebuild the model in the other process, or pickle the Scene it came from (a "
                  "scene pickles as its JSON text).");
            return py::bytes(io::encodeModel(model));
          },
          [](py::bytes bytes) {
            return holdModel(std::make_shared<const Model>(io::decodeModel(std::string(bytes), "pickled Model")));
          }));

  {
    // The constraint family names, in projection order (a class attribute).
    py::list families;
    for (int f = 0; f < kConstraintFamilyCount; ++f) families.append(familyKey(static_cast<ConstraintFamily>(f)));
    m.attr("Model").attr("families") = py::tuple(families);
  }

  m.def(
      "read_obj",
      [](py::object path) {
        const std::string file = toString(path, "read_obj: path");
        requireFile(file);
        const io::TriangleMesh mesh = io::readObj(file);
        return py::make_tuple(vec3Copy(mesh.vertices), indexRows(mesh.triangles));
      },
      py::arg("path"),
      "read_obj(path) -> (vertices, triangles)\n\nA Wavefront OBJ mesh: vertices (n, 3) m, triangles (m, 3).");
  m.def(
      "read_tet_mesh",
      [](py::object path) {
        const std::string file = toString(path, "read_tet_mesh: path");
        const bool tetgen = file.ends_with(".node") || file.ends_with(".ele");
        requireFile(tetgen ? file.substr(0, file.size() - 5) + ".node" : file);
        const io::TetMesh mesh = io::readTetMesh(file);
        return py::make_tuple(vec3Copy(mesh.vertices), indexRows(mesh.tets));
      },
      py::arg("path"),
      "read_tet_mesh(path) -> (vertices, tets)\n\nA tetrahedral mesh (TetGen .node/.ele or Gmsh .msh): vertices "
      "(n, 3) m, positive tets (m, 4).");
  m.def(
      "extract_surface",
      [](py::object tets) { return indexRows(boundaryTriangles(toIndexRows<4>(tets, "extract_surface: tets"))); },
      py::arg("tets"), "extract_surface(tets) -> ndarray\n\nBoundary triangles (m, 3) of positive tets, outward.");
}

}  // namespace pliant::python
