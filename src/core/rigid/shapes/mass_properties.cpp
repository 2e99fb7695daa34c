// Mass properties of body shapes: closed forms for the sphere, box and capsule, exact polyhedral
// integration for convex hulls and triangle meshes.
//
// Polyhedra: by the divergence theorem the solid is the signed sum of the tetrahedra (r, a, b, c)
// joining a reference point r to each outward triangle (a, b, c). For a tetrahedron with one vertex
// at the origin and the others at v1, v2, v3 (relative to r), volume V = v1 . (v2 x v3) / 6 and the
// exact second moment (covariance) is
//   C = int x x^T dV = V / 20 (sum_i v_i v_i^T + s s^T),   s = v1 + v2 + v3
// (Tonon 2004, "Explicit exact formulas for the 3-D tetrahedron inertia tensor in terms of its
// vertex coordinates", J. Math. Stat. 1(1); the affine image of the canonical tetrahedron's
// covariance). The inertia about a point follows as I = tr(C) 1 - C, moved to the centre of mass
// by the parallel-axis theorem. The reference point is the vertex mean, so that far-off meshes do
// not lose digits to cancellation.
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "pliant/error.h"
#include "pliant/rigid_shapes.h"

namespace pliant {
namespace {

void checkDensity(double density) {
  if (!std::isfinite(density) || density <= 0.0)
    throw Error("mass properties: density must be finite and > 0 (kg/m^3), got " + formatNumber(density));
}

Mat3 inertiaFromCovariance(const Mat3& c) { return c.trace() * Mat3::Identity() - c; }

// Every edge (u, v) of an outward mesh is used once in each direction: closed, manifold and
// consistently oriented.
void checkClosedOriented(std::size_t vertexCount, const std::vector<std::array<std::uint32_t, 3>>& triangles,
                         const std::string& source) {
  std::vector<std::uint64_t> directed;
  directed.reserve(3 * triangles.size());
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const auto& tri = triangles[t];
    for (int k = 0; k < 3; ++k) {
      if (tri[k] >= vertexCount)
        throw Error(source + ": triangle " + std::to_string(t) + " uses vertex " + std::to_string(tri[k]) +
                    ", expected an index below " + std::to_string(vertexCount));
    }
    if (tri[0] == tri[1] || tri[1] == tri[2] || tri[2] == tri[0])
      throw Error(source + ": triangle " + std::to_string(t) + " repeats a vertex, expected three distinct vertices");
    for (int k = 0; k < 3; ++k) directed.push_back((std::uint64_t{tri[k]} << 32) | std::uint64_t{tri[(k + 1) % 3]});
  }
  std::sort(directed.begin(), directed.end());
  for (std::size_t i = 0; i < directed.size(); ++i) {
    const std::uint32_t u = static_cast<std::uint32_t>(directed[i] >> 32);
    const std::uint32_t v = static_cast<std::uint32_t>(directed[i] & 0xffffffffu);
    if (i + 1 < directed.size() && directed[i + 1] == directed[i])
      throw Error(source + ": edge (" + std::to_string(u) + ", " + std::to_string(v) +
                  ") is used twice in the same direction: the mesh is not manifold or not consistently oriented");
    const std::uint64_t reverse = (std::uint64_t{v} << 32) | std::uint64_t{u};
    if (!std::binary_search(directed.begin(), directed.end(), reverse))
      throw Error(source + ": edge (" + std::to_string(u) + ", " + std::to_string(v) +
                  ") has no triangle on its other side: expected a closed, consistently oriented mesh");
  }
}

}  // namespace

MassProperties massProperties(const std::vector<Vec3>& vertices,
                              const std::vector<std::array<std::uint32_t, 3>>& triangles, double density,
                              const std::string& source) {
  checkDensity(density);
  if (vertices.empty() || triangles.empty())
    throw Error(source + ": the mesh is empty, expected a closed triangle mesh");
  Vec3 reference = Vec3::Zero();
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (!vertices[i].allFinite()) throw Error(source + ": vertex " + std::to_string(i) + " is not finite");
    reference += vertices[i];
  }
  reference /= static_cast<double>(vertices.size());
  checkClosedOriented(vertices.size(), triangles, source);

  double volume = 0.0;
  Vec3 first = Vec3::Zero();  // int x dV about the reference point
  Mat3 covariance = Mat3::Zero();
  double extent = 0.0;
  for (const Vec3& v : vertices) extent = std::max(extent, (v - reference).cwiseAbs().maxCoeff());
  for (const auto& tri : triangles) {
    const Vec3 a = vertices[tri[0]] - reference;
    const Vec3 b = vertices[tri[1]] - reference;
    const Vec3 c = vertices[tri[2]] - reference;
    const double v = a.dot(b.cross(c)) / 6.0;
    const Vec3 s = a + b + c;
    volume += v;
    first += v * s / 4.0;
    covariance += v / 20.0 * (a * a.transpose() + b * b.transpose() + c * c.transpose() + s * s.transpose());
  }
  // Relative to the cube of the extent: a flat or inward-facing mesh encloses no (positive) volume.
  if (!(volume > 1e-12 * extent * extent * extent))
    throw Error(source + ": the mesh encloses a volume of " + formatNumber(volume) +
                " m^3, expected a positive volume (a closed mesh with outward, counter-clockwise triangles)");
  MassProperties p;
  p.mass = density * volume;
  const Vec3 centre = first / volume;  // relative to the reference point
  p.centreOfMass = reference + centre;
  // Parallel-axis theorem on the covariance: C_com = C - V c c^T.
  const Mat3 centred = covariance - volume * centre * centre.transpose();
  p.inertia = density * inertiaFromCovariance(centred);
  return p;
}

MassProperties massProperties(const BodyShape& shape, double density) {
  checkDensity(density);
  constexpr double pi = std::numbers::pi;
  MassProperties p;
  switch (shape.kind) {
    case BodyShapeKind::Sphere: {
      const double r = shape.radius;
      if (!std::isfinite(r) || r <= 0.0)
        throw Error("mass properties: sphere radius must be finite and > 0 (m), got " + formatNumber(r));
      p.mass = density * 4.0 / 3.0 * pi * r * r * r;
      p.inertia = Mat3::Identity() * (0.4 * p.mass * r * r);
      return p;
    }
    case BodyShapeKind::Box: {
      const Vec3 e = shape.halfExtents;
      if (!e.allFinite() || e.minCoeff() <= 0.0)
        throw Error("mass properties: box half extents must be finite and > 0 (m)");
      p.mass = density * 8.0 * e.x() * e.y() * e.z();
      // Full side 2e: I_xx = m (4 e_y^2 + 4 e_z^2) / 12.
      p.inertia.diagonal() =
          p.mass / 3.0 *
          Vec3(e.y() * e.y() + e.z() * e.z(), e.x() * e.x() + e.z() * e.z(), e.x() * e.x() + e.y() * e.y());
      return p;
    }
    case BodyShapeKind::Capsule: {
      const double r = shape.radius;
      const double h = shape.halfHeight;
      if (!std::isfinite(r) || r <= 0.0 || !std::isfinite(h) || h < 0.0)
        throw Error("mass properties: capsule radius must be finite and > 0 and half height finite and >= 0 (m)");
      // A cylinder of length 2h and two hemispherical caps. A cap of mass m_h has its centroid 3r/8
      // from its flat face; about a transverse axis through its centroid its moment is
      // (2/5 - 9/64) m_h r^2, moved out to h + 3r/8 from the capsule's centre (parallel axes):
      // m_h (2/5 r^2 + h^2 + 3 h r / 4).
      const double cylinder = density * pi * r * r * 2.0 * h;
      const double cap = density * 2.0 / 3.0 * pi * r * r * r;
      p.mass = cylinder + 2.0 * cap;
      const double axial = cylinder * r * r / 2.0 + 2.0 * (0.4 * cap * r * r);
      const double transverse =
          cylinder * (r * r / 4.0 + (2.0 * h) * (2.0 * h) / 12.0) + 2.0 * cap * (0.4 * r * r + h * h + 0.75 * h * r);
      p.inertia.diagonal() = Vec3(transverse, axial, transverse);
      return p;
    }
    case BodyShapeKind::ConvexHull:
      if (!shape.hull) throw Error("mass properties: convex hull shape without a hull");
      return massProperties(shape.hull->vertices, shape.hull->triangles, density, "convex hull");
    case BodyShapeKind::Mesh:
      if (!shape.grid) throw Error("mass properties: mesh shape without a signed distance grid");
      return massProperties(shape.grid->vertices, shape.grid->triangles, density, "mesh shape");
    case BodyShapeKind::Plane:
      break;
  }
  throw Error("mass properties: a plane has no finite mass, expected a static body");
}

PrincipalInertia principalInertia(const Mat3& inertia) {
  // Symmetrised so that round-off asymmetry does not leak into the eigenvectors.
  const Mat3 symmetric = 0.5 * (inertia + inertia.transpose());
  const Eigen::SelfAdjointEigenSolver<Mat3> solver(symmetric);  // ascending eigenvalues
  Mat3 axes = solver.eigenvectors();
  if (axes.determinant() < 0.0) axes.col(2) = -axes.col(2);  // a proper rotation
  PrincipalInertia p;
  p.moments = solver.eigenvalues();
  p.rotation = Quat(axes).normalized();
  return p;
}

}  // namespace pliant
