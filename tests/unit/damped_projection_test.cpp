// The written-out XPBD projections (distance and isometric bending) against the update of Macklin
// et al. 2016, eq. 26, evaluated here from the family's C and gradient:
//   dlambda = (-C - alpha~ lambda - gamma sum_i gradC_i . (x_i - x_i^n)) / ((1 + gamma) sum_i w_i |gradC_i|^2 +
//   alpha~), dx_i = w_i gradC_i dlambda,   alpha~ = alpha / h^2,   gamma = alpha beta / h.
// Damped and undamped, with a nonzero starting lambda and one fixed particle.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "constraints/families.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant {
namespace {

struct Expected {
  double dLambda = 0.0;
  std::vector<Vec3> position;
};

// Eq. 26 for constraint `index` of `family`, from the family's own C and gradient.
Expected eq26(const Model& m, const State& s, ConstraintFamily family, std::uint32_t index, double h,
              const ConstraintParameters& params, double lambda) {
  std::vector<ParticleIndex> particles;
  std::vector<Vec3> gradient;
  const double C = detail::familyKernels(family).evaluate(m, s.position.data(), s.attachmentTarget.data(), index,
                                                          particles, gradient);
  const double alphaTilde = params.compliance / (h * h);
  const double gamma = params.compliance * params.damping / h;
  double wGrad2 = 0.0, motion = 0.0;
  for (std::size_t i = 0; i < particles.size(); ++i) {
    wGrad2 += m.inverseMass[particles[i]] * gradient[i].squaredNorm();
    motion += gradient[i].dot(s.position[particles[i]] - s.previousPosition[particles[i]]);
  }
  Expected e;
  e.dLambda = (-C - alphaTilde * lambda - gamma * motion) / ((1.0 + gamma) * wGrad2 + alphaTilde);
  e.position = s.position;
  for (std::size_t i = 0; i < particles.size(); ++i)
    e.position[particles[i]] += m.inverseMass[particles[i]] * gradient[i] * e.dLambda;
  return e;
}

void expectProjectionMatchesEq26(const Model& m, ConstraintFamily family, const ConstraintParameters& params) {
  const double h = 1.0 / 300.0;
  State s = State::fromModel(m);
  s.previousPosition = s.position;
  // Moved since the substep's start: a stretch or fold, and some motion for the damping term.
  const Vec3 moves[4] = {Vec3(0.01, -0.02, 0.015), Vec3(-0.012, 0.004, -0.02), Vec3(0.0, 0.03, 0.01),
                         Vec3(0.02, -0.01, -0.025)};
  for (std::size_t p = 0; p < s.position.size(); ++p)
    if (m.inverseMass[p] != 0.0) s.position[p] += moves[p % 4];
  const double lambda0 = -0.3;
  s.lambda[m.lambdaOffset[static_cast<int>(family)]] = lambda0;
  const Expected expected = eq26(m, s, family, 0, h, params, lambda0);

  detail::SolveContext ctx;
  ctx.mode = SolverMode::Xpbd;
  ctx.h = h;
  ctx.invH = 1.0 / h;
  ctx.invH2 = 1.0 / (h * h);
  ctx.x = s.position.data();
  ctx.xPrev = s.previousPosition.data();
  ctx.w = m.inverseMass.data();
  ctx.attachmentTarget = s.attachmentTarget.data();
  ctx.lambda = s.lambda.data() + m.lambdaOffset[static_cast<int>(family)];
  detail::familyKernels(family).project(m, ctx, 0, 1);

  const double scale = std::abs(expected.dLambda);
  ASSERT_GT(scale, 1e-6);
  EXPECT_NEAR(ctx.lambda[0] - lambda0, expected.dLambda, 1e-12 * scale);
  for (std::size_t p = 0; p < s.position.size(); ++p)
    EXPECT_LT((s.position[p] - expected.position[p]).norm(), 1e-14) << "particle " << p;
}

ConstraintParameters material(double compliance, double damping) {
  ConstraintParameters p;
  p.compliance = compliance;
  p.damping = damping;
  return p;
}

TEST(DampedProjection, DistanceFollowsEq26) {
  for (const ConstraintParameters& params : {material(1e-4, 0.0), material(1e-4, 2.0), material(0.0, 5.0)}) {
    SCOPED_TRACE(::testing::Message() << "compliance " << params.compliance << " damping " << params.damping);
    ModelBuilder b;
    const ParticleIndex a = b.addParticle(Vec3(0, 0, 0), 0.5);
    const ParticleIndex c = b.addParticle(Vec3(0.3, 0.1, 0), 2.0);
    b.addDistance(a, c, params);
    const ModelPtr m = b.build();
    expectProjectionMatchesEq26(*m, ConstraintFamily::Distance, params);
  }
}

TEST(DampedProjection, IsometricBendingFollowsEq26) {
  for (const ConstraintParameters& params : {material(1e-3, 0.0), material(1e-3, 0.5)}) {
    SCOPED_TRACE(::testing::Message() << "compliance " << params.compliance << " damping " << params.damping);
    ModelBuilder b;
    const ParticleIndex p0 = b.addParticle(Vec3(0, 0, 0), 0.0);  // fixed
    const ParticleIndex p1 = b.addParticle(Vec3(1, 0, 0), 1.0);
    const ParticleIndex p2 = b.addParticle(Vec3(0.4, 0.8, 0), 0.7);
    const ParticleIndex p3 = b.addParticle(Vec3(0.6, -0.9, 0), 1.3);
    b.addIsometricBending(p0, p1, p2, p3, params);
    const ModelPtr m = b.build();
    expectProjectionMatchesEq26(*m, ConstraintFamily::IsometricBending, params);
  }
}

}  // namespace
}  // namespace pliant
