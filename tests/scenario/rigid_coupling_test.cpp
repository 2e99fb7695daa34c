// Scenario tests of particles coupled with rigid bodies in one substep loop and Gauss-Seidel pass
// (issue 17; ../shared/VALIDATION.md V16, rigid bodies). The closed forms are written at each test.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "body_definitions.h"
#include "pliant/pliant.h"

namespace pliant {
namespace {

constexpr double kG = 9.81;

using test::box;

Vec3 linearMomentum(const Model& model, const State& state) {
  Vec3 p = Vec3::Zero();
  for (std::size_t i = 0; i < model.particleCount(); ++i) p += model.mass[i] * state.velocity[i];
  for (std::size_t b = 0; b < model.bodyCount(); ++b) p += model.bodies[b].mass * state.bodyVelocity[b];
  return p;
}

// V16 (a body hanging from a compliant constraint stretches it by m g alpha, and lambda / h^2 is the
// force): a light rope of particles on stiff distance constraints, its top particle fixed, carries
// a box of mass m at its lower end through a body attachment of compliance alpha. At rest the
// attachment pulls the rope's end down with the box's weight m g (the rope's own weight is carried
// above it), and the attachment is stretched by m g alpha.
TEST(V16_Coupling, RopeCarryingABoxFeelsItsWeightThroughTheAttachment) {
  const double m = 2.0, alpha = 1e-4, link = 0.1;
  const int links = 5;
  ModelBuilder builder;
  std::vector<ParticleIndex> rope;
  for (int i = 0; i <= links; ++i) rope.push_back(builder.addParticle(Vec3(0.0, -link * i, 0.0), i == 0 ? 0.0 : 0.01));
  for (int i = 0; i < links; ++i) builder.addDistance(rope[i], rope[i + 1], {});
  const double bottom = -link * links;
  const BodyIndex b = builder.addBody(box(Vec3(0.0, bottom - 0.1, 0.0), Vec3(0.1, 0.1, 0.1), m));
  ConstraintParameters params;
  params.compliance = alpha;
  params.damping = 20.0;  // to come to rest
  builder.addBodyAttachment(rope.back(), b, Vec3(0.0, bottom, 0.0), params);
  const ModelPtr model = builder.build();
  SolverSettings settings = SolverSettings::smallSteps(20);
  settings.velocityDamping = 1.0;  // 1/s: the rope's sideways modes settle too
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 600).ok());          // 10 s: the box's bounce on the compliant attachment settles
  const Vec3 force = solver.bodyAttachmentForce(0);  // on the rope's end
  EXPECT_NEAR(-force.y(), m * kG, 1e-3 * m * kG);
  EXPECT_LT(force.head<1>().norm() + std::abs(force.z()), 1e-6 * m * kG);
  const double stretch = state.position[rope.back()].y() - (state.bodyPosition[0].y() + 0.1);
  EXPECT_NEAR(stretch, m * kG * alpha, 1e-2 * m * kG * alpha);
  EXPECT_LT(state.bodyVelocity[0].norm(), 1e-4);
}

// Newton's third law through a coupling constraint: without gravity a moving particle attached to a
// free box (rest distance d) pulls it along; every correction is p on the particle and -p on the box,
// so the total linear momentum m_p v_0 stays exactly that (to rounding: 1e-9 relative).
TEST(V16_Coupling, ParticlePullingAFreeBodyConservesMomentum) {
  ModelBuilder builder;
  const ParticleIndex p = builder.addParticle(Vec3(0.5, 0.3, 0.0), 0.7, Vec3(3.0, 1.0, -0.5));
  const BodyIndex b = builder.addBody(box(Vec3::Zero(), Vec3(0.2, 0.1, 0.15), 1.3));
  ConstraintParameters params;
  params.compliance = 1e-5;
  builder.addBodyAttachment(p, b, Vec3(0.2, 0.1, 0.0), params, -1.0);  // off the centre: the box also turns
  const ModelPtr model = builder.build();
  SolverSettings settings = SolverSettings::smallSteps(10);
  settings.gravity = Vec3::Zero();
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  const Vec3 before = linearMomentum(*model, state);
  ASSERT_TRUE(solver.run(state, 120).ok());
  EXPECT_LT((linearMomentum(*model, state) - before).norm(), 1e-9 * before.norm());
  EXPECT_GT(state.bodyVelocity[0].norm(), 0.1);         // the box was pulled
  EXPECT_GT(state.bodyAngularVelocity[0].norm(), 0.1);  // and turned
}

// A dynamic box hangs from a kinematic particle that moves 1 m along x in 1 s, then stops. The
// attachment is hard (alpha = 0), so the box's material point stays on the particle up to what one
// linearised correction per substep leaves ([M20] eqs. 8-9 turn the body by a first-order quaternion
// update: measured 1.6e-5 m while the box swings, bound 1e-4 m), and, damped, the box comes to hang
// straight below it.
TEST(V16_Coupling, BodyPinnedToAMovingKinematicParticleFollowsIt) {
  ModelBuilder builder;
  const ParticleIndex p = builder.addParticle(Vec3::Zero(), 1.0);
  builder.addKinematic(p, [](double t) { return Vec3(std::min(t, 1.0), 0.0, 0.0); });
  const BodyIndex b = builder.addBody(box(Vec3(0.0, -0.2, 0.0), Vec3(0.1, 0.2, 0.1), 1.5));
  builder.addBodyAttachment(p, b, Vec3::Zero(), {});  // the middle of its top face
  const ModelPtr model = builder.build();
  SolverSettings settings = SolverSettings::smallSteps(20);
  settings.velocityDamping = 2.0;  // 1/s
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  const Vec3 local = model->bodyAttachments[0].localPoint;
  double worst = 0.0;
  for (int frame = 0; frame < 360; ++frame) {
    ASSERT_TRUE(solver.step(state).ok());
    const Vec3 point = state.bodyPosition[0] + state.bodyRotation[0] * local;
    worst = std::max(worst, (point - state.position[p]).norm());
  }
  EXPECT_LT(worst, 1e-4);
  EXPECT_NEAR(state.position[p].x(), 1.0, 1e-12);
  EXPECT_NEAR(state.bodyPosition[0].x(), 1.0, 1e-2);  // hanging below the particle again
  EXPECT_NEAR(state.bodyPosition[0].y(), -0.2, 1e-3);
}

// A cloth whose near edge is pinned to a kinematic box that moves and turns: every pinned particle
// stays on its material point of the box (hard attachments to a body that is a moving target are
// met exactly after each pass: 1e-9 m), and the cloth is carried along.
TEST(V16_Coupling, ClothPinnedToAMovingKinematicBodyFollowsIt) {
  ModelBuilder builder;
  ClothGridDef cloth;
  cloth.nodesX = 9;
  cloth.nodesY = 9;
  cloth.sizeX = 0.8;
  cloth.sizeY = 0.8;
  cloth.origin = Vec3(-0.4, 1.0, 0.0);
  cloth.totalMass = 0.2;
  const GeneratedObject object = addClothGrid(builder, cloth);
  BodyDefinition def = box(Vec3(0.0, 1.0, -0.05), Vec3(0.5, 0.05, 0.05), 1.0, "bar");
  def.motion = BodyMotion::Kinematic;
  def.path = [](double t) { return Vec3(0.5 * t, 1.0 + 0.2 * t, -0.05); };
  def.rotationPath = [](double t) { return Quat(Eigen::AngleAxisd(0.5 * t, Vec3::UnitY())); };
  const BodyIndex bar = builder.addBody(def);
  for (int i = 0; i < cloth.nodesX; ++i) {
    const ParticleIndex p = object.firstParticle + i;  // row 0, at z = 0
    builder.addBodyAttachment(p, bar, builder.position(p), {});
  }
  const ModelPtr model = builder.build();
  Solver solver(model, SolverSettings::smallSteps(10));
  State state = State::fromModel(*model);
  double worst = 0.0;
  for (int frame = 0; frame < 60; ++frame) {
    ASSERT_TRUE(solver.step(state).ok());
    for (const BodyAttachment& a : model->bodyAttachments) {
      const Vec3 point = state.bodyPosition[bar] + state.bodyRotation[bar] * a.localPoint;
      worst = std::max(worst, (point - state.position[a.particle]).norm());
    }
  }
  EXPECT_LT(worst, 1e-9);
  // After 1 s the bar's centre is at (0.5, 1.2, -0.05): the cloth's middle went with it.
  const Vec3 middle = state.position[object.firstParticle + 4 * cloth.nodesX + 4];
  EXPECT_GT(middle.x(), 0.3);
}

// Two-way collision, V16 momentum: a particle of the body's mass flies without gravity into a free
// sphere body at rest, off its centre line. Every contact correction (position and velocity pass,
// normal and friction) is p on the particle and -p on the body, so m_p v_p + m_b v_b keeps its
// initial value m_p v_0 to 1e-9 relative; the body is set moving (it feels the particle).
TEST(V16_Coupling, ParticleHittingAFreeBodyConservesLinearMomentum) {
  for (double restitution : {0.0, 0.8}) {
    ModelBuilder builder;
    const ParticleIndex p = builder.addParticle(Vec3(-1.0, 0.1, 0.0), 2.0, Vec3(4.0, 0.0, 0.0));
    builder.setParticleRadius(p, 0.02);
    BodyDefinition def;
    def.shape.kind = BodyShapeKind::Sphere;
    def.shape.radius = 0.25;
    def.mass = 2.0;
    def.material.staticFriction = 0.5;
    def.material.dynamicFriction = 0.4;
    def.material.restitution = restitution;
    builder.addBody(def);
    const ModelPtr model = builder.build();
    SolverSettings settings = SolverSettings::smallSteps(10);
    settings.gravity = Vec3::Zero();
    Solver solver(model, settings);
    State state = State::fromModel(*model);
    const Vec3 before = linearMomentum(*model, state);
    ASSERT_TRUE(solver.run(state, 40).ok());
    EXPECT_LT((linearMomentum(*model, state) - before).norm(), 1e-9 * before.norm()) << "e = " << restitution;
    EXPECT_GT(state.bodyVelocity[0].x(), 0.5) << "e = " << restitution;
    // No overlap left: the particle's centre is at least its radius from the sphere (to 1e-6 m).
    EXPECT_GT((state.position[p] - state.bodyPosition[0]).norm(), 0.27 - 1e-6);
  }
}

// The body feels the cloth: a box dropped onto a square cloth pinned along its four edges (a
// hammock) comes to rest on it. At rest the cloth carries the box's weight (the box stops above the
// pinned rim's level minus the sag), and the cloth sags under it.
TEST(V16_Coupling, BoxRestsOnAHammockOfCloth) {
  ModelBuilder builder;
  ClothGridDef cloth;
  cloth.nodesX = 21;
  cloth.nodesY = 21;
  cloth.sizeX = 1.0;
  cloth.sizeY = 1.0;
  cloth.origin = Vec3(-0.5, 0.0, -0.5);
  cloth.totalMass = 0.5;
  cloth.stretch.compliance = 1e-6;
  cloth.stretch.damping = 1.0;
  const GeneratedObject object = addClothGrid(builder, cloth);
  for (int j = 0; j < cloth.nodesY; ++j)
    for (int i = 0; i < cloth.nodesX; ++i)
      if (i == 0 || j == 0 || i == cloth.nodesX - 1 || j == cloth.nodesY - 1)
        builder.fixParticle(object.firstParticle + j * cloth.nodesX + i);
  const double half = 0.15;
  builder.addBody(box(Vec3(0.0, half + 0.01, 0.0), Vec3(half, half, half), 2.0));
  const ModelPtr model = builder.build();
  SolverSettings settings = SolverSettings::smallSteps(20);
  settings.velocityDamping = 5.0;  // 1/s: the trampoline's bounce settles within a few seconds
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 360).ok());  // 6 s
  const double boxBottom = state.bodyPosition[0].y() - half;
  const Vec3 middle = state.position[object.firstParticle + 10 * cloth.nodesX + 10];
  EXPECT_LT(state.bodyVelocity[0].norm(), 1e-2);  // stopped
  EXPECT_LT(middle.y(), -1e-3);                   // the cloth sags
  EXPECT_GT(boxBottom, middle.y() - 1e-3);        // the box lies on it, not through it
  EXPECT_GT(boxBottom, -0.3);
  // Closed form: at rest the contacts carry the box's weight, so their normal forces lambda / h^2
  // along the shape's outward normal at each particle, summed over the last substep, balance m g
  // (to 1e-3; the plain sum of |lambda| is larger, by the cloth pressing on the box's sides).
  const double h = settings.timeStep / settings.substeps;
  const RigidBody& body = model->bodies[0];
  const ColliderPose pose = body.shapePose(state.bodyPosition[0], state.bodyRotation[0]);
  double carried = 0.0, total = 0.0;
  for (const ParticleBodyContact& k : solver.lastParticleBodyContacts()) {
    Vec3 n;
    shapeDistance(body.shape, pose, state.position[k.particle], n);
    carried -= k.lambda / (h * h) * n.y();
    total += k.lambda / (h * h);
  }
  EXPECT_NEAR(carried, 2.0 * kG, 1e-3 * 2.0 * kG);
  EXPECT_GT(total, carried);
}

}  // namespace
}  // namespace pliant
