// What the Bullet side-by-side programs share: converting Pliant's points to Bullet's, a soft-rigid
// world as its users set one up, and the option and CSV helpers of bench_options.h.
#pragma once

#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>
#include <LinearMath/btVector3.h>
#include <btBulletDynamicsCommon.h>

#include "../bench_options.h"
#include "pliant/math.h"

namespace pliant::bench::bullet {

inline btVector3 toBullet(const Vec3& x) { return btVector3(btScalar(x.x()), btScalar(x.y()), btScalar(x.z())); }

using bench::parseCount;
using bench::parsePositive;
using bench::writeCsv;

// The world a soft body lives in, with the objects it points to.
struct BulletWorld {
  btSoftBodyRigidBodyCollisionConfiguration collision;
  btCollisionDispatcher dispatcher{&collision};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver constraintSolver;
  btSoftRigidDynamicsWorld world{&dispatcher, &broadphase, &constraintSolver, &collision};

  explicit BulletWorld(const pliant::Vec3& gravity) {
    world.setGravity(toBullet(gravity));
    btSoftBodyWorldInfo& info = world.getWorldInfo();
    info.m_gravity = world.getGravity();
    info.m_broadphase = &broadphase;
    info.m_dispatcher = &dispatcher;
    info.air_density = 0;
    info.m_sparsesdf.Initialize();
  }
};

}  // namespace pliant::bench::bullet
