// Convex hulls by quickhull.
#include "pliant/error.h"
#include "pliant/rigid_shapes.h"

namespace pliant {

ConvexHull buildConvexHull(const std::vector<Vec3>&, const std::string& source) {
  throw Error(source + ": convex hulls are not yet implemented");
}

}  // namespace pliant
