// Mass properties of body shapes.
#include "pliant/error.h"
#include "pliant/rigid_shapes.h"

namespace pliant {

MassProperties massProperties(const BodyShape&, double) { throw Error("massProperties: not yet implemented"); }

MassProperties massProperties(const std::vector<Vec3>&, const std::vector<std::array<std::uint32_t, 3>>&, double,
                              const std::string& source) {
  throw Error(source + ": massProperties: not yet implemented");
}

PrincipalInertia principalInertia(const Mat3&) { throw Error("principalInertia: not yet implemented"); }

}  // namespace pliant
