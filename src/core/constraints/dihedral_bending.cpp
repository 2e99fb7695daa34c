// Dihedral-angle bending (Mueller et al. 2007, "Position based dynamics", sec. 4.2) with the signed
// angle theta = atan2((nA x nB).e, nA.nB), which is smooth through the flat state where acos is
// not. Gradients follow Bridson et al. 2003 ("Simulation of clothing with folds and wrinkles"):
// a wing vertex moves the angle along its face normal at rate 1/height, and the edge vertices
// take the opposite share weighted by where the wing projects onto the edge.
//
// Layout: edge p0-p1, triangle A = (p0, p1, p2), triangle B = (p1, p0, p3).
#include <numbers>

#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {

struct DihedralGeometry {
  double angle = 0.0;  // rad
  Vec3 gradient[4];
  bool valid = false;
};

// Degenerate (zero edge, collinear wing) stencils report valid = false.
inline DihedralGeometry dihedralGeometry(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3) {
  DihedralGeometry g;
  const Vec3 e = x1 - x0;
  const double e2 = e.squaredNorm();
  const Vec3 nA = e.cross(x2 - x0);
  const Vec3 nB = (x0 - x1).cross(x3 - x1);
  const double nA2 = nA.squaredNorm();
  const double nB2 = nB.squaredNorm();
  // A wing closer to the edge line than 1e-8 edge lengths has no well-defined plane.
  const double minNormal2 = 1e-16 * e2 * e2;
  if (!(e2 > 1e-24) || !(nA2 > minNormal2) || !(nB2 > minNormal2)) return g;
  const double eLength = std::sqrt(e2);
  const Vec3 nAUnit = nA / std::sqrt(nA2);
  const Vec3 nBUnit = nB / std::sqrt(nB2);
  g.angle = std::atan2(nAUnit.cross(nBUnit).dot(e / eLength), nAUnit.dot(nBUnit));
  const Vec3 g2 = (-eLength / nA2) * nA;
  const Vec3 g3 = (-eLength / nB2) * nB;
  const double t2 = (x2 - x0).dot(e) / e2;
  const double t3 = (x3 - x0).dot(e) / e2;
  g.gradient[0] = -(1.0 - t2) * g2 - (1.0 - t3) * g3;
  g.gradient[1] = -t2 * g2 - t3 * g3;
  g.gradient[2] = g2;
  g.gradient[3] = g3;
  g.valid = true;
  return g;
}

// The angle difference wrapped into (-pi, pi], so a fold through +-pi does not jump by 2 pi.
inline double wrappedDifference(double angle, double restAngle) {
  double d = angle - restAngle;
  if (d > std::numbers::pi) d -= 2.0 * std::numbers::pi;
  if (d <= -std::numbers::pi) d += 2.0 * std::numbers::pi;
  return d;
}

}  // namespace

void projectDihedralBending(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  for (std::uint32_t c = begin; c < end; ++c) {
    const DihedralBendingConstraint& con = model.dihedralBendings[c];
    const ParticleIndex* p = con.particles;
    const DihedralGeometry g = dihedralGeometry(x[p[0]], x[p[1]], x[p[2]], x[p[3]]);
    if (!g.valid) continue;
    double wSum = 0.0;
    for (int i = 0; i < 4; ++i) wSum += w[p[i]] * g.gradient[i].squaredNorm();
    const double dLambda = solveMultiplier(wrappedDifference(g.angle, con.restAngle), wSum, 4, g.gradient, p,
                                           con.params, ctx.lambda[c], false, ctx);
    for (int i = 0; i < 4; ++i) moveParticle(x, p[i], w[p[i]], (w[p[i]] * dLambda) * g.gradient[i]);
  }
}

double evaluateDihedralBending(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                               std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const DihedralBendingConstraint& con = model.dihedralBendings[i];
  const ParticleIndex* p = con.particles;
  particles.assign(p, p + 4);
  const DihedralGeometry g = dihedralGeometry(x[p[0]], x[p[1]], x[p[2]], x[p[3]]);
  gradient.assign(g.gradient, g.gradient + 4);
  if (!g.valid) gradient.assign(4, Vec3::Zero());
  return g.valid ? wrappedDifference(g.angle, con.restAngle) : 0.0;
}

double dihedralAngle(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3) {
  return dihedralGeometry(x0, x1, x2, x3).angle;
}

namespace {
void validateDihedralBendings(const Model& model) {
  for (std::size_t i = 0; i < model.dihedralBendings.size(); ++i) {
    const std::string where = describe("dihedral bending constraint", i);
    for (ParticleIndex p : model.dihedralBendings[i].particles) checkIndex(p, model.particleCount(), where);
    checkParameters(model.dihedralBendings[i].params, where);
    if (!std::isfinite(model.dihedralBendings[i].restAngle)) throw Error(where + ": rest angle must be finite");
  }
}
}  // namespace

const FamilyKernels kDihedralBendingKernels = {projectDihedralBending,  projectDihedralBending,
                                               evaluateDihedralBending, stencilParticles<&Model::dihedralBendings>,
                                               neverUnilateral,         validateDihedralBendings};

}  // namespace pliant::detail
