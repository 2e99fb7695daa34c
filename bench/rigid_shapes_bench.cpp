// Cost of one narrow-phase call (pliant::collideShapes, issue 17) per pair of shape kinds, at a
// resting pose: the numbers behind the rigid body step's collide stage.
//
//   rigid/collide/box-box          a box resting flat on a box, turned 0.3 rad (4 clipped points)
//   rigid/collide/box-plane        a box resting on the ground (4 vertices)
//   rigid/collide/capsule-box      a capsule lying on a box (the axis clipped to the top face)
//   rigid/collide/sphere-box       a sphere resting on a box
//   rigid/collide/hull-hull        two 32-point hulls of a sphere, overlapping
//   rigid/collide/sphere-mesh      a sphere on a 32^3 signed distance grid of a box mesh
//
// Counter: contacts (points of the manifold). The label holds the deepest separation, so a fast but
// different result shows.
//
// Reproduce (Release build): ./build/release/bench/pliant_bench --benchmark_filter=rigid/
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "pliant/rigid_shapes.h"

namespace {

using pliant::BodyShape;
using pliant::BodyShapeKind;
using pliant::ColliderPose;
using pliant::ContactManifold;
using pliant::Quat;
using pliant::Vec3;

Quat about(double angle, const Vec3& axis) { return Quat(Eigen::AngleAxisd(angle, axis.normalized())); }

BodyShape sphereHull(double radius) {
  std::vector<Vec3> points;
  for (int i = 0; i < 32; ++i) {  // a Fibonacci sphere
    const double y = 1.0 - 2.0 * (i + 0.5) / 32.0, r = std::sqrt(1.0 - y * y), phi = 2.399963229728653 * i;
    points.push_back(radius * Vec3(r * std::cos(phi), y, r * std::sin(phi)));
  }
  BodyShape s;
  s.kind = BodyShapeKind::ConvexHull;
  s.hull = std::make_shared<const pliant::ConvexHull>(pliant::buildConvexHull(points, "bench hull"));
  return s;
}

BodyShape boxMesh() {
  std::vector<Vec3> v;
  for (int i = 0; i < 8; ++i) v.push_back(Vec3((i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0));
  const pliant::ConvexHull hull = pliant::buildConvexHull(v, "bench box");
  pliant::SignedDistanceGridOptions options;
  options.maxCellsPerAxis = 32;
  BodyShape s;
  s.kind = BodyShapeKind::Mesh;
  s.grid = std::make_shared<const pliant::SignedDistanceGrid>(
      pliant::SignedDistanceGrid::build(hull.vertices, hull.triangles, options, "bench mesh"));
  return s;
}

void collidePair(benchmark::State& state, const BodyShape& a, const ColliderPose& pa, const BodyShape& b,
                 const ColliderPose& pb) {
  ContactManifold m;
  for (auto _ : state) {
    pliant::collideShapes(a, pa, b, pb, 0.01, m);
    benchmark::DoNotOptimize(m);
  }
  double deepest = 0.0;
  for (int i = 0; i < m.count; ++i) deepest = std::min(deepest, m.points[i].separation);
  state.counters["contacts"] = m.count;
  state.SetLabel("deepest=" + std::to_string(deepest));
}

BodyShape box(const Vec3& half) {
  BodyShape s;
  s.kind = BodyShapeKind::Box;
  s.halfExtents = half;
  return s;
}

void boxBox(benchmark::State& state) {
  collidePair(state, box(Vec3(1, 0.5, 1)), {Vec3::Zero(), Quat::Identity()}, box(Vec3(0.5, 0.5, 0.5)),
              {Vec3(0.1, 0.99, 0.2), about(0.3, Vec3::UnitY())});
}
void boxPlane(benchmark::State& state) {
  BodyShape ground;
  ground.kind = BodyShapeKind::Plane;
  collidePair(state, ground, {Vec3::Zero(), Quat::Identity()}, box(Vec3(0.5, 0.5, 0.5)),
              {Vec3(0, 0.49, 0), about(0.3, Vec3::UnitY())});
}
void capsuleBox(benchmark::State& state) {
  BodyShape capsule;
  capsule.kind = BodyShapeKind::Capsule;
  capsule.radius = 0.25;
  capsule.halfHeight = 0.5;
  collidePair(state, box(Vec3(1, 0.5, 1)), {Vec3::Zero(), Quat::Identity()}, capsule,
              {Vec3(0.1, 0.74, 0.2), about(M_PI / 2, Vec3(1, 0, 1))});
}
void sphereBox(benchmark::State& state) {
  BodyShape sphere;
  sphere.kind = BodyShapeKind::Sphere;
  sphere.radius = 0.25;
  collidePair(state, box(Vec3(1, 0.5, 1)), {Vec3::Zero(), Quat::Identity()}, sphere,
              {Vec3(0.1, 0.74, 0.2), Quat::Identity()});
}
void hullHull(benchmark::State& state) {
  const BodyShape hull = sphereHull(0.5);
  collidePair(state, hull, {Vec3::Zero(), Quat::Identity()}, hull, {Vec3(0.1, 0.97, 0.05), about(0.4, Vec3(1, 2, 3))});
}
void sphereMesh(benchmark::State& state) {
  BodyShape sphere;
  sphere.kind = BodyShapeKind::Sphere;
  sphere.radius = 0.25;
  collidePair(state, boxMesh(), {Vec3::Zero(), Quat::Identity()}, sphere, {Vec3(0.1, 1.24, 0.2), Quat::Identity()});
}

}  // namespace

BENCHMARK(boxBox)->Name("rigid/collide/box-box");
BENCHMARK(boxPlane)->Name("rigid/collide/box-plane");
BENCHMARK(capsuleBox)->Name("rigid/collide/capsule-box");
BENCHMARK(sphereBox)->Name("rigid/collide/sphere-box");
BENCHMARK(hullHull)->Name("rigid/collide/hull-hull");
BENCHMARK(sphereMesh)->Name("rigid/collide/sphere-mesh");
