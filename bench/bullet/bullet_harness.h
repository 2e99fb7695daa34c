// What the Bullet side-by-side programs share: converting Pliant's points to Bullet's, and the
// option and CSV helpers of bench_options.h.
#pragma once

#include <LinearMath/btVector3.h>

#include "../bench_options.h"
#include "pliant/math.h"

namespace pliant::bench::bullet {

inline btVector3 toBullet(const Vec3& x) { return btVector3(btScalar(x.x()), btScalar(x.y()), btScalar(x.z())); }

using bench::parseCount;
using bench::parsePositive;
using bench::writeCsv;

}  // namespace pliant::bench::bullet
