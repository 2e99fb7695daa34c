// Small dense math used across Pliant. Eigen supplies the types; Pliant adds nothing of its own
// beyond these aliases, so users can pass Eigen vectors straight in.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace pliant {

using Vec3 = Eigen::Vector3d;  // a point (m), a velocity (m/s), a force (N), ... per context
using Mat3 = Eigen::Matrix3d;

}  // namespace pliant
