// The narrow phase between two body shapes.
#include "pliant/error.h"
#include "pliant/rigid_shapes.h"

namespace pliant {

void collideShapes(const BodyShape&, const ColliderPose&, const BodyShape&, const ColliderPose&, double,
                   ContactManifold& out) {
  out.count = 0;
  throw Error("collideShapes: not yet implemented");
}

}  // namespace pliant
