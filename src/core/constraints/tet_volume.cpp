// Tetrahedral volume C = V - V0, V = (x1-x0).((x2-x0)x(x3-x0))/6 (Mueller et al. 2007). The
// gradient of each vertex is the area-weighted normal of the opposite face over 3. An inverted tet
// has V < 0 and is pushed back; a fully collapsed one has zero gradient and is skipped.
#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {

inline double tetVolumeAndGradient(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3, Vec3 gradient[4]) {
  const Vec3 d1 = x1 - x0;
  const Vec3 d2 = x2 - x0;
  const Vec3 d3 = x3 - x0;
  gradient[1] = d2.cross(d3) / 6.0;
  gradient[2] = d3.cross(d1) / 6.0;
  gradient[3] = d1.cross(d2) / 6.0;
  gradient[0] = -(gradient[1] + gradient[2] + gradient[3]);
  return d1.dot(gradient[1]);
}

}  // namespace

void projectTetVolume(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  for (std::uint32_t c = begin; c < end; ++c) {
    const TetVolumeConstraint& con = model.tetVolumes[c];
    const ParticleIndex* p = con.particles;
    Vec3 gradient[4];
    const double volume = tetVolumeAndGradient(x[p[0]], x[p[1]], x[p[2]], x[p[3]], gradient);
    double wSum = 0.0;
    for (int i = 0; i < 4; ++i) wSum += w[p[i]] * gradient[i].squaredNorm();
    // A collapsed tet (all gradients ~0) has no direction to recover along.
    if (!(wSum > 1e-300)) continue;
    const double dLambda =
        solveMultiplier(volume - con.restVolume, wSum, 4, gradient, p, con.params, ctx.lambda[c], false, ctx);
    for (int i = 0; i < 4; ++i) moveParticle(x, p[i], w[p[i]], (w[p[i]] * dLambda) * gradient[i]);
  }
}

double evaluateTetVolume(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                         std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const TetVolumeConstraint& con = model.tetVolumes[i];
  const ParticleIndex* p = con.particles;
  particles.assign(p, p + 4);
  gradient.resize(4);
  return tetVolumeAndGradient(x[p[0]], x[p[1]], x[p[2]], x[p[3]], gradient.data()) - con.restVolume;
}

double signedTetVolume(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3) {
  Vec3 gradient[4];
  return tetVolumeAndGradient(x0, x1, x2, x3, gradient);
}

namespace {
void validateTetVolumes(const Model& model) {
  for (std::size_t i = 0; i < model.tetVolumes.size(); ++i) {
    const std::string where = describe("tet volume constraint", i);
    for (ParticleIndex p : model.tetVolumes[i].particles) checkIndex(p, model.particleCount(), where);
    checkParameters(model.tetVolumes[i].params, where);
    if (!std::isfinite(model.tetVolumes[i].restVolume)) throw Error(where + ": rest volume must be finite");
  }
}
}  // namespace

const FamilyKernels kTetVolumeKernels = {projectTetVolume,  projectTetVolume,
                                         evaluateTetVolume, stencilParticles<&Model::tetVolumes>,
                                         neverUnilateral,   validateTetVolumes};

}  // namespace pliant::detail
