// Constraint families: the data each family stores per constraint.
//
// Every family is one flat array in the Model and is solved by one function over an index range
// (no virtual call, no allocation per constraint). Each constraint carries its material
// parameters; their units depend on the family's constraint function C and are given below.
//
// Sign convention (docs/validation.md): equality constraints solve C(x) = 0; unilateral ones keep
// C(x) >= 0 by projected Gauss-Seidel: projected while violated or while they hold a multiplier
// from an earlier pass of the substep, with an accumulated multiplier clamped at 0 (never pulls).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "pliant/math.h"

namespace pliant {

using ParticleIndex = std::uint32_t;

// Material of one constraint. Which fields are read depends on the solver mode:
// XPBD reads compliance and damping, PBD reads stiffness.
struct ConstraintParameters {
  // XPBD compliance alpha >= 0, the inverse stiffness of the energy U = C^2 / (2 alpha).
  // Units: [C]^2 / J, e.g. m/N for a distance constraint. 0 means a hard constraint.
  double compliance = 0.0;
  // XPBD damping coefficient beta >= 0 (Macklin et al. 2016, eq. 26). Units: J s / [C]^2,
  // e.g. N s/m for a distance constraint. It scales with compliance (gamma = alpha beta / h),
  // so it has no effect on a hard constraint (compliance 0).
  double damping = 0.0;
  // PBD stiffness k in [0, 1]: the fraction of the correction applied per projection.
  double stiffness = 1.0;
};

// The constraint families, in the order the solver projects them within one iteration, as
// X(Enumerator, Model array, "name", constraint struct). This list is the one place that names every
// family: the enum, the family table of the solver (src/core/constraints/families.cpp), counts,
// names and parameter access are generated from it. Adding a family: its struct below, one line
// here, its array in Model, its kernels in src/core/constraints/<family>.cpp, a ModelBuilder method.
#define PLIANT_CONSTRAINT_FAMILIES(X)                                                     \
  X(Attachment, attachments, "attachment", AttachmentConstraint)                          \
  X(Distance, distances, "distance", DistanceConstraint)                                  \
  X(MaxDistance, maxDistances, "max-distance", MaxDistanceConstraint)                     \
  X(DihedralBending, dihedralBendings, "dihedral-bending", DihedralBendingConstraint)     \
  X(IsometricBending, isometricBendings, "isometric-bending", IsometricBendingConstraint) \
  X(TetVolume, tetVolumes, "tet-volume", TetVolumeConstraint)                             \
  X(GlobalVolume, globalVolumes, "global-volume", GlobalVolumeConstraint)                 \
  X(Generic, generics, "generic", GenericConstraint)                                      \
  X(NeoHookean, neoHookeans, "neo-hookean", NeoHookeanConstraint)                         \
  X(ShapeMatching, shapeMatchings, "shape-matching", ShapeMatchingConstraint)

enum class ConstraintFamily : std::uint8_t {
#define PLIANT_FAMILY_ENUMERATOR(Enumerator, array, name, Struct) Enumerator,
  PLIANT_CONSTRAINT_FAMILIES(PLIANT_FAMILY_ENUMERATOR)
#undef PLIANT_FAMILY_ENUMERATOR
};
inline constexpr int kConstraintFamilyCount = 0
#define PLIANT_FAMILY_COUNT(Enumerator, array, name, Struct) +1
    PLIANT_CONSTRAINT_FAMILIES(PLIANT_FAMILY_COUNT)
#undef PLIANT_FAMILY_COUNT
    ;
const char* familyName(ConstraintFamily family);

// Scalar constraints (multipliers) per entry of a family's array: 2 for a neo-Hookean tet (its
// deviatoric and hydrostatic constraints), 1 for every other family (a shape matching cluster is
// one constraint however many particles it has).
constexpr std::uint32_t constraintsPerEntry(ConstraintFamily family) {
  return family == ConstraintFamily::NeoHookean ? 2 : 1;
}

// A constraint named by its family and its index in that family's array (for a neo-Hookean tet i,
// index 2i is its deviatoric constraint and 2i + 1 its hydrostatic one).
struct ConstraintRef {
  ConstraintFamily family = ConstraintFamily::Distance;
  std::uint32_t index = 0;
};

// Keeps particle p at `restDistance` (m) from a target point in space: C = |x_p - target| - d.
// The target is fixed (`targetPath` < 0, at `target`) or follows Model::attachmentPaths[targetPath].
// With restDistance 0 it pins the particle to the point. Compliance unit: m/N.
struct AttachmentConstraint {
  ParticleIndex particle = 0;
  Vec3 target = Vec3::Zero();  // m, used when targetPath < 0
  std::int32_t targetPath = -1;
  double restDistance = 0.0;  // m
  ConstraintParameters params;
};

// Stretch: C = |x_a - x_b| - restLength. Compliance unit: m/N; damping: N s/m.
struct DistanceConstraint {
  ParticleIndex particles[2] = {0, 0};
  double restLength = 0.0;  // m
  ConstraintParameters params;
};

// One-sided distance: acts only when |x_a - x_b| > maxLength (or to give back, within a substep, a
// pull others made unnecessary), C = maxLength - |x_a - x_b| >= 0.
// Used for maximum-distance limits and long-range attachments (tethers, Kim et al. 2012).
// Compliance unit: m/N.
struct MaxDistanceConstraint {
  ParticleIndex particles[2] = {0, 0};
  double maxLength = 0.0;  // m
  ConstraintParameters params;
};

// Dihedral-angle bending (Mueller et al. 2007) over two triangles (p0, p1, p2) and (p1, p0, p3)
// sharing the edge p0-p1: C = theta - restAngle, theta the signed dihedral angle in (-pi, pi]
// (0 when flat). Compliance unit: rad^2/J = 1/(N m).
struct DihedralBendingConstraint {
  ParticleIndex particles[4] = {0, 0, 0, 0};
  double restAngle = 0.0;  // rad
  ConstraintParameters params;
};

// Isometric bending (Bergou et al. 2006, "A quadratic bending model for inextensible surfaces"):
// the discrete bending energy of the edge stencil is E = 1/2 |sum_i K_i x_i|^2 with the constant
// weights K_i (1/m) computed from the rest cotangents, K = sqrt(3/(A0+A1)) (c03+c04, c01+c02,
// -c01-c03, -c02-c04). Pliant uses C = |sum_i K_i x_i| (dimensionless), so XPBD's energy
// U = C^2/(2 alpha) is exactly Bergou's quadratic energy scaled by the bending stiffness 1/alpha.
// Particles: p0-p1 the shared edge, p2 and p3 the opposite vertices. Compliance unit: 1/J.
// Assumes a flat rest state, as the model does.
struct IsometricBendingConstraint {
  ParticleIndex particles[4] = {0, 0, 0, 0};
  double weights[4] = {0, 0, 0, 0};  // K_i, 1/m
  ConstraintParameters params;
};

// Volume of one tetrahedron: C = V - restVolume with V = (x1-x0).((x2-x0)x(x3-x0))/6.
// Compliance unit: m^6/J = m^3/Pa.
struct TetVolumeConstraint {
  ParticleIndex particles[4] = {0, 0, 0, 0};
  double restVolume = 0.0;  // m^3 (signed, positive for a right-handed tet)
  ConstraintParameters params;
};

// Volume enclosed by a closed, outward-oriented triangle mesh (Mueller et al. 2007, balloons):
// C = V - pressure * restVolume. The triangles are Model::volumeTriangles[firstTriangle ..
// firstTriangle + triangleCount), their vertices Model::volumeVertices[firstVertex ..
// firstVertex + vertexCount) as local indices. Compliance unit: m^3/Pa.
struct GlobalVolumeConstraint {
  std::uint32_t firstTriangle = 0;
  std::uint32_t triangleCount = 0;
  std::uint32_t firstVertex = 0;
  std::uint32_t vertexCount = 0;
  double restVolume = 0.0;  // m^3
  double pressure = 1.0;    // dimensionless factor on the rest volume (> 1 inflates)
  ConstraintParameters params;
};

// A user-supplied constraint function (seed 004's general solve). It receives the positions of the
// constraint's particles (m) and writes dC/dx_i for each into `gradient` (same length), returning C.
using GenericConstraintFunction = std::function<double(std::span<const Vec3> positions, std::span<Vec3> gradient)>;

// A user constraint function that evaluates many instances in one call (for functions whose call
// costs more than their arithmetic, e.g. vectorised Python). It receives the positions of `count`
// consecutive constraints, constraint after constraint (count x arity, m), and writes each one's C
// into `values` (count) and its gradient dC/dx into `gradient` (count x arity, zeroed before the
// call). `firstConstraint` is the index in Model::generics of the first of them.
using GenericBatchFunction = std::function<void(std::uint32_t firstConstraint, std::span<const Vec3> positions,
                                                std::span<double> values, std::span<Vec3> gradient)>;

// One instance of a user constraint over Model::genericParticles[firstParticle ..
// firstParticle + particleCount), evaluated by Model::genericFunctions[function] or, for a batch
// function, Model::genericBatchFunctions[function].
// An inequality keeps C >= 0. Units of the parameters follow the user's C.
struct GenericConstraint {
  std::uint32_t function = 0;
  std::uint32_t firstParticle = 0;
  std::uint32_t particleCount = 0;
  bool inequality = false;
  ConstraintParameters params;
  // Batch functions only: the constraint is in the group that ends before index batchEnd of
  // Model::generics. A group is consecutive constraints of one function and one particle count that
  // share no particle; it is evaluated with one call, then projected constraint by constraint, which
  // equals evaluating each just before its projection (no projection in the group moves another's
  // particles). 0 for per-constraint functions.
  std::uint32_t batchEnd = 0;
};

// Stable neo-Hookean material of one tetrahedron (Macklin & Mueller 2021, "A Constraint-based
// Formulation of Stable Neo-Hookean Materials", MIG 2021): with the deformation gradient
// F = [x1-x0, x2-x0, x3-x0] restInverse, two constraints
//   deviatoric   C_D = |F|_F = sqrt(tr(F^T F)),  compliance 1/(mu V)
//   hydrostatic  C_H = det F - gamma,            compliance 1/(lambda V)
// whose XPBD energies C^2/(2 alpha) add up to V (mu/2 tr(F^T F) + lambda/2 (det F - gamma)^2), the
// paper's neo-Hookean energy plus a constant. gamma = 1 + mu/lambda makes the rest shape an equilibrium.
// `lambda` is the paper's parameter, Lame's first parameter plus mu (docs/validation.md V15), so that
// small strains give back Young's modulus and Poisson's ratio. Inverted (det F < 0) and flat tets
// have well-defined gradients and are pushed back. One entry holds both constraints; see ConstraintRef.
struct NeoHookeanConstraint {
  ParticleIndex particles[4] = {0, 0, 0, 0};
  Mat3 restInverse = Mat3::Identity();  // 1/m, inverse of the rest edge matrix [x1-x0, x2-x0, x3-x0]
  double restVolume = 0.0;              // m^3, > 0
  double gamma = 1.0;                   // 1 + mu/lambda, dimensionless
  // Compliance 1/(mu V) (1/J, C_D is dimensionless) and damping (J s), and 1/(lambda V) for C_H.
  ConstraintParameters deviatoric;
  ConstraintParameters hydrostatic;
  // Both constraints solved together (a 2x2 system per tet), or in sequence (deviatoric first).
  bool coupled = true;
};

// A neo-Hookean material, given by Young's modulus and Poisson's ratio (see NeoHookeanConstraint).
struct NeoHookeanMaterial {
  double youngsModulus = 1.0e5;  // Pa, > 0
  double poissonRatio = 0.3;     // dimensionless, in (-1, 0.5); 0.499 is nearly incompressible
  // Kelvin-Voigt retardation time (s, >= 0): the viscous stress is this times the rate of the
  // elastic stress (XPBD damping beta = damping / compliance on both constraints).
  double damping = 0.0;
  bool coupled = true;  // see NeoHookeanConstraint::coupled
  // Lame's parameters (Pa): mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu)).
  double lameMu() const { return youngsModulus / (2.0 * (1.0 + poissonRatio)); }
  double lameLambda() const {
    return youngsModulus * poissonRatio / ((1.0 + poissonRatio) * (1.0 - 2.0 * poissonRatio));
  }
  // The material with Lame's parameters mu > 0 and lambda > -2/3 mu (Pa).
  static NeoHookeanMaterial fromLame(double mu, double lambda) {
    NeoHookeanMaterial m;
    m.youngsModulus = mu * (3.0 * lambda + 2.0 * mu) / (lambda + mu);
    m.poissonRatio = lambda / (2.0 * (lambda + mu));
    return m;
  }
};

// How a shape matching cluster deforms its rest shape to find its goal positions (Mueller,
// Heidelberger, Teschner & Gross 2005, "Meshless deformations based on shape matching", sec. 3-4).
enum class ShapeMatchingMode : std::uint8_t {
  // g_i = R q_i + c: the best-fitting rigid copy of the rest shape, R the rotation of the polar
  // decomposition of A_pq = sum_i m_i p_i q_i^T.
  Rigid,
  // g_i = (beta A + (1 - beta) R) q_i + c with A = A_pq A_qq^-1, the best-fitting linear map
  // (optionally scaled to det A = 1 to preserve volume).
  Linear,
};

// Shape matching over a cluster of particles (Mueller et al. 2005), one XPBD constraint per cluster:
//   C = sqrt(sum_i m_i |x_i - g_i|^2 / M)   (m; M = sum_i m_i, the cluster's mass-weighted RMS
// distance to its goal positions g_i = T q_i + c, c the centre of mass, q_i the rest offsets from
// the rest centre of mass). The energy C^2 / (2 alpha) pulls every particle towards its goal; with
// compliance 0 one projection moves every (free) particle exactly onto its goal, Mueller's update
// with alpha = 1, and the PBD stiffness k moves it the fraction k of the way (Mueller's alpha).
// The members are Model::shapeMatchingParticles[firstMember .. firstMember + memberCount), with
// rest offsets q_i (m) and fit weights m_i (kg) at the same positions of shapeMatchingRestOffsets and
// shapeMatchingWeights. src/core/constraints/shape_matching.cpp explains the choice.
// Compliance unit: m/N (m^2/J); damping: N s/m.
struct ShapeMatchingConstraint {
  std::uint32_t firstMember = 0;
  std::uint32_t memberCount = 0;
  ShapeMatchingMode mode = ShapeMatchingMode::Rigid;
  // Linear mode: the rank of A_qq (3 for a solid cluster, 2 flat, 1 collinear); volume
  // preservation scales A by |det A|^(-1/rank), which keeps volume, area or length.
  std::uint8_t restRank = 3;
  bool preserveVolume = true;  // linear mode: scale A to |det A| = 1 (see restRank)
  double beta = 0.0;           // linear mode: blend of the linear map and the rotation, in [0, 1]
  double totalWeight = 0.0;    // kg, M = sum of the fit weights
  // Linear mode: the pseudo-inverse of A_qq = sum_i m_i q_i q_i^T (1/(kg m^2)) and the projector
  // onto A_qq's null space (dimensionless; zero for a solid cluster), through which A acts as R.
  Mat3 restInverse = Mat3::Zero();
  Mat3 restNullProjector = Mat3::Zero();
  ConstraintParameters params;
};

// What ModelBuilder::addShapeMatchingCluster and the cluster generators take.
struct ShapeMatchingSettings {
  ShapeMatchingMode mode = ShapeMatchingMode::Rigid;
  double beta = 0.5;           // linear mode only, in [0, 1]: 1 is the pure linear map, 0 rigid
  bool preserveVolume = true;  // linear mode only
  // Compliance (m/N) and damping (N s/m) in XPBD, stiffness in [0, 1] in PBD mode (see
  // ShapeMatchingConstraint).
  ConstraintParameters params;
};

}  // namespace pliant
