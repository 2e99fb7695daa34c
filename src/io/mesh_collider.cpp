// Mesh colliders from OBJ files: the file is read here, in the I/O layer; the distance grid is
// built by the core (Collider::mesh, SignedDistanceGrid::build).
#include "pliant/error.h"
#include "pliant/io/mesh_io.h"

namespace pliant::io {

Collider readMeshCollider(const std::string& objPath, const Vec3& position, const Quat& rotation,
                          const SignedDistanceGridOptions& options, const ContactMaterial& material,
                          const Vec3& scale) {
  if (!scale.allFinite() || !(scale.array() > 0.0).all())
    throw Error(objPath + ": mesh scale factors must be finite numbers > 0");
  TriangleMesh m = readObj(objPath);
  for (Vec3& v : m.vertices) v = v.cwiseProduct(scale);
  return Collider::mesh(m.vertices, m.triangles, position, rotation, options, material, objPath);
}

}  // namespace pliant::io
