// Stable neo-Hookean tets (Macklin & Mueller 2021, "A Constraint-based Formulation of Stable
// Neo-Hookean Materials"): per tet, with F = Ds restInverse and Ds = [x1-x0, x2-x0, x3-x0],
//   C_D = |F|_F,         dC_D/dF = F / |F|_F
//   C_H = det F - gamma, dC_H/dF = cof F = [f1 x f2, f2 x f0, f0 x f1] (f_j the columns of F)
// and the gradient of a vertex k = 1..3 is column k-1 of (dC/dF) restInverse^T, vertex 0's minus
// their sum. Both gradients stay finite for flat (det F = 0) and inverted (det F < 0) tets: C_H's
// gradient pushes an inverted tet back through zero volume, which is what makes the model stable.
//
// The two constraints of a tet are solved together by default: one Newton step of XPBD's
// multiplier equations for both (a 2x2 system per tet, Macklin et al. 2016, eq. 26 with a block
// of two rows). At the rest shape the two gradients are parallel and the constraints' values are
// not zero (C_D = sqrt 3, C_H = 1 - gamma); the coupled step finds the multipliers that balance
// exactly and leaves the rest shape unmoved, where solving them in sequence moves each vertex
// back and forth by a little every substep (tests/unit/neo_hookean_test.cpp measures both).
// The sequential form (deviatoric, then hydrostatic with the updated F) is kept for comparison.
// PBD mode solves these tets as XPBD too: the material is its compliance, and a PBD stiffness of
// 1 on C_D = |F| would collapse every tet.
//
// One pass per substep (the first; later Gauss-Seidel passes skip these tets): the model is meant
// for small steps (Macklin et al. 2019), as the paper uses it. Its multipliers do not vanish at
// rest (they hold a prestress of order mu V h^2 on each constraint that cancels between the two),
// and XPBD applies a later pass's dlambda along the new gradients while the force already applied
// keeps its old direction; with a prestress as large as the material's stiffness that neglected
// term is not small: with 20 passes per substep an undeformed cube left its rest shape by
// centimetres within a second (tests/unit/neo_hookean_test.cpp keeps it at rest with 20 passes).
// Accuracy comes from substeps.
#include <cmath>

#include "constraints/projection.h"
#include "validation.h"

namespace pliant::detail {

namespace {

// Below this |F|_F the deviatoric direction is undefined (the tet collapsed to a point).
constexpr double kMinNorm = 1e-12;

struct TetGradients {
  Vec3 deviatoric[4];
  Vec3 hydrostatic[4];
  double cD = 0.0;  // |F|_F
  double detF = 0.0;
};

// Deformation gradient of the tet at positions x.
inline Mat3 deformationGradient(const NeoHookeanConstraint& con, const Vec3* x) {
  const ParticleIndex* p = con.particles;
  Mat3 ds;
  ds.col(0) = x[p[1]] - x[p[0]];
  ds.col(1) = x[p[2]] - x[p[0]];
  ds.col(2) = x[p[3]] - x[p[0]];
  return ds * con.restInverse;
}

// Vertex gradients of a constraint whose derivative with respect to F is `dF`.
inline void vertexGradients(const Mat3& dF, const Mat3& restInverse, Vec3 out[4]) {
  const Mat3 g = dF * restInverse.transpose();
  out[1] = g.col(0);
  out[2] = g.col(1);
  out[3] = g.col(2);
  out[0] = -(out[1] + out[2] + out[3]);
}

inline void deviatoricGradient(const NeoHookeanConstraint& con, const Mat3& F, TetGradients& t) {
  t.cD = F.norm();
  if (t.cD < kMinNorm) {
    for (Vec3& g : t.deviatoric) g.setZero();
    return;
  }
  vertexGradients(F / t.cD, con.restInverse, t.deviatoric);
}

inline void hydrostaticGradient(const NeoHookeanConstraint& con, const Mat3& F, TetGradients& t) {
  Mat3 cofactor;
  cofactor.col(0) = F.col(1).cross(F.col(2));
  cofactor.col(1) = F.col(2).cross(F.col(0));
  cofactor.col(2) = F.col(0).cross(F.col(1));
  t.detF = F.col(0).dot(cofactor.col(0));
  vertexGradients(cofactor, con.restInverse, t.hydrostatic);
}

inline double weightedNorm2(const Vec3 g[4], const ParticleIndex* p, const double* w) {
  double sum = 0.0;
  for (int i = 0; i < 4; ++i) sum += w[p[i]] * g[i].squaredNorm();
  return sum;
}

inline void applyCorrection(Vec3* x, const ParticleIndex* p, const double* w, const Vec3 g[4], double dLambda) {
  for (int i = 0; i < 4; ++i) moveParticle(x, p[i], w[p[i]], (w[p[i]] * dLambda) * g[i]);
}

// XPBD's right-hand side -C - alpha~ lambda - gamma gradC.(x - x^n) and the factor (1 + gamma).
inline double xpbdRhs(double C, const Vec3 g[4], const ParticleIndex* p, const ConstraintParameters& params,
                      double lambda, const SolveContext& ctx, double& onePlusGamma) {
  const double alphaTilde = params.compliance * ctx.invH2;
  const double gamma = params.compliance * params.damping * ctx.invH;
  double dampingTerm = 0.0;
  if (gamma != 0.0) {
    for (int i = 0; i < 4; ++i) dampingTerm += g[i].dot(ctx.x[p[i]] - ctx.xPrev[p[i]]);
    dampingTerm *= gamma;
  }
  onePlusGamma = 1.0 + gamma;
  return -C - alphaTilde * lambda - dampingTerm;
}

void projectSequential(const NeoHookeanConstraint& con, const SolveContext& ctx, double* lambda) {
  Vec3* x = ctx.x;
  const double* w = ctx.w;
  const ParticleIndex* p = con.particles;
  TetGradients t;
  deviatoricGradient(con, deformationGradient(con, x), t);
  const double wD = weightedNorm2(t.deviatoric, p, w);
  if (t.cD >= kMinNorm && wD > 1e-300) {
    const double d = solveMultiplier(t.cD, wD, 4, t.deviatoric, p, con.deviatoric, lambda[0], false, ctx);
    applyCorrection(x, p, w, t.deviatoric, d);
  }
  hydrostaticGradient(con, deformationGradient(con, x), t);
  const double wH = weightedNorm2(t.hydrostatic, p, w);
  if (wH > 1e-300) {
    const double d =
        solveMultiplier(t.detF - con.gamma, wH, 4, t.hydrostatic, p, con.hydrostatic, lambda[1], false, ctx);
    applyCorrection(x, p, w, t.hydrostatic, d);
  }
}

void projectCoupled(const NeoHookeanConstraint& con, const SolveContext& ctx, double* lambda) {
  const double* w = ctx.w;
  const ParticleIndex* p = con.particles;
  TetGradients t;
  const Mat3 F = deformationGradient(con, ctx.x);
  deviatoricGradient(con, F, t);
  hydrostaticGradient(con, F, t);
  double gDD = 0.0, gHH = 0.0, gDH = 0.0;
  for (int i = 0; i < 4; ++i) {
    const double wi = w[p[i]];
    gDD += wi * t.deviatoric[i].squaredNorm();
    gHH += wi * t.hydrostatic[i].squaredNorm();
    gDH += wi * t.deviatoric[i].dot(t.hydrostatic[i]);
  }
  // A collapsed tet (no deviatoric direction) or one whose vertices cannot move: the sequential
  // kernel handles what is left of it one constraint at a time.
  if (t.cD < kMinNorm || !(gDD > 1e-300) || !(gHH > 1e-300)) {
    projectSequential(con, ctx, lambda);
    return;
  }
  double onePlusGammaD = 1.0, onePlusGammaH = 1.0;
  const double rD = xpbdRhs(t.cD, t.deviatoric, p, con.deviatoric, lambda[0], ctx, onePlusGammaD);
  const double rH = xpbdRhs(t.detF - con.gamma, t.hydrostatic, p, con.hydrostatic, lambda[1], ctx, onePlusGammaH);
  // Row j: (1 + gamma_j) sum_k G_jk dlambda_k + alpha~_j dlambda_j = r_j.
  const double a00 = onePlusGammaD * gDD + con.deviatoric.compliance * ctx.invH2;
  const double a01 = onePlusGammaD * gDH;
  const double a10 = onePlusGammaH * gDH;
  const double a11 = onePlusGammaH * gHH + con.hydrostatic.compliance * ctx.invH2;
  const double det = a00 * a11 - a01 * a10;
  // Singular only for hard constraints (compliance 0) with parallel gradients, as at rest.
  if (!(det > 1e-300 * (a00 * a11))) {
    projectSequential(con, ctx, lambda);
    return;
  }
  const double dD = (a11 * rD - a01 * rH) / det;
  const double dH = (a00 * rH - a10 * rD) / det;
  lambda[0] += dD;
  lambda[1] += dH;
  for (int i = 0; i < 4; ++i)
    moveParticle(ctx.x, p[i], w[p[i]], w[p[i]] * (dD * t.deviatoric[i] + dH * t.hydrostatic[i]));
}

}  // namespace

void projectNeoHookean(const Model& model, const SolveContext& ctx, std::uint32_t begin, std::uint32_t end) {
  // Once per substep: see the top of this file.
  if (!ctx.multipliersFresh) return;
  // A material is its compliance: PBD mode, which reads stiffness instead, solves these as XPBD.
  SolveContext xpbd = ctx;
  xpbd.mode = SolverMode::Xpbd;
  for (std::uint32_t c = begin; c < end; ++c) {
    const NeoHookeanConstraint& con = model.neoHookeans[c];
    double* lambda = xpbd.lambda + 2 * std::size_t{c};
    if (con.coupled) projectCoupled(con, xpbd, lambda);
    else projectSequential(con, xpbd, lambda);
  }
}

double evaluateNeoHookean(const Model& model, const Vec3* x, const Vec3*, std::uint32_t i,
                          std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient) {
  const NeoHookeanConstraint& con = model.neoHookeans[i / 2];
  particles.assign(con.particles, con.particles + 4);
  gradient.resize(4);
  TetGradients t;
  const Mat3 F = deformationGradient(con, x);
  if (i % 2 == 0) {
    deviatoricGradient(con, F, t);
    gradient.assign(t.deviatoric, t.deviatoric + 4);
    return t.cD;
  }
  hydrostaticGradient(con, F, t);
  gradient.assign(t.hydrostatic, t.hydrostatic + 4);
  return t.detF - con.gamma;
}

double neoHookeanRestValue(const Model& model, std::uint32_t i) {
  return i % 2 == 0 ? std::sqrt(3.0) : 1.0 - model.neoHookeans[i / 2].gamma;
}

namespace {

void validateNeoHookeans(const Model& model) {
  for (std::size_t i = 0; i < model.neoHookeans.size(); ++i) {
    const NeoHookeanConstraint& c = model.neoHookeans[i];
    const std::string where = describe("neo-Hookean tet", i);
    for (ParticleIndex p : c.particles) checkIndex(p, model.particleCount(), where);
    checkParameters(c.deviatoric, where + " (deviatoric)");
    checkParameters(c.hydrostatic, where + " (hydrostatic)");
    if (!(c.restVolume > 0.0) || !std::isfinite(c.restVolume))
      throw Error(where + ": rest volume must be finite and > 0 m^3");
    if (!c.restInverse.allFinite()) throw Error(where + ": rest shape inverse must be finite");
    if (!(c.gamma > 0.0) || !std::isfinite(c.gamma)) throw Error(where + ": gamma must be finite and > 0");
  }
}

}  // namespace

const FamilyKernels kNeoHookeanKernels = {projectNeoHookean,  projectNeoHookean,
                                          evaluateNeoHookean, stencilParticles<&Model::neoHookeans>,
                                          neverUnilateral,    validateNeoHookeans};

}  // namespace pliant::detail
