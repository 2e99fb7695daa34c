// Internal interface between the solver and the constraint families.
//
// Each family provides a fast projector over an index range (the hot loop: no allocation, no
// virtual call) and a general evaluator (value and gradient of one constraint) that diagnostics,
// divergence tracing and the reference implicit solver share.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "pliant/constraints.h"
#include "pliant/model.h"
#include "pliant/solver.h"

namespace pliant::detail {

struct SolveContext {
  SolverMode mode = SolverMode::Xpbd;
  double h = 0.0;                  // s, substep
  double invH2 = 0.0;              // 1/s^2
  double invH = 0.0;               // 1/s
  double stiffnessExponent = 1.0;  // PBD: k' = 1 - (1-k)^stiffnessExponent
  Vec3* x = nullptr;
  const Vec3* xPrev = nullptr;
  const double* w = nullptr;
  double* lambda = nullptr;  // this family's multipliers (already offset)
  // The pass started from lambda = 0 (the first pass of a substep): no unilateral constraint can
  // hold a multiplier when it is reached, so the kernels need not look at lambda to know whether a
  // slack one must give some back (projection.h). False is always correct for them, only slower;
  // neo-Hookean tets are projected only in the pass where it is true (neo_hookean.cpp says why).
  bool multipliersFresh = false;
  const Vec3* attachmentTarget = nullptr;
  std::vector<Vec3>* scratch = nullptr;   // gradient buffer for variable-size families
  std::vector<double>* values = nullptr;  // values of a batch of user constraints (Model::genericBatchFunctions)
  // Where a user constraint function's exception is reported (its message, the first of a step);
  // the constraint's particles are made non-finite so the step is refused and the replay names it.
  std::string* userFunctionError = nullptr;
};

using ProjectFn = void (*)(const Model&, const SolveContext&, std::uint32_t begin, std::uint32_t end);
// Value C of constraint i at positions x; fills its particles and dC/dx for each.
using EvaluateFn = double (*)(const Model&, const Vec3* x, const Vec3* attachmentTarget, std::uint32_t i,
                              std::vector<ParticleIndex>& particles, std::vector<Vec3>& gradient);

// What the solver, the planner, validation and diagnostics need of one family. Each family's file
// (src/core/constraints/<family>.cpp) defines its entry, k<Family>Kernels; familyKernels() indexes
// them in PLIANT_CONSTRAINT_FAMILIES order.
struct FamilyKernels {
  ProjectFn project;  // in index order: Gauss-Seidel over [begin, end)
  // For an independent range (SolveBatch::independent): may project several constraints at once
  // (SIMD lanes); bit-identical to `project` on such a range. Families without a SIMD kernel use
  // `project` here too.
  ProjectFn projectIndependent;
  EvaluateFn evaluate;
  // Writes the particles of constraint i (at most 4) and returns how many, for the parallel plan;
  // null for a family always projected serially (shared scratch, user code).
  int (*particles)(const Model&, std::uint32_t i, ParticleIndex* out);
  // Whether constraint i keeps C >= 0 (projected only while violated, lambda never pulls).
  bool (*unilateral)(const Model&, std::uint32_t i);
  // Checks every constraint of the family (indices, parameters, rest values); throws pliant::Error
  // naming the first bad one.
  void (*validate)(const Model&);
  // Whether projectIndependent, in a pass with SolveContext::multipliersFresh, starts every
  // multiplier of its range from 0 itself (not reading it), so that the caller need not zero them
  // first: one write of the multipliers a substep instead of a fill, a read and a write.
  bool independentStartsFresh = false;
};

const FamilyKernels& familyKernels(ConstraintFamily family);
// Entries of a family's array (what the plan cuts and the kernels index); each owns
// constraintsPerEntry(family) consecutive multipliers.
inline std::uint32_t entryCount(const Model& model, ConstraintFamily family) {
  return static_cast<std::uint32_t>(model.constraintCount(family) / constraintsPerEntry(family));
}
bool isUnilateral(const Model& model, ConstraintRef ref);
const ConstraintParameters& constraintParameters(const Model& model, ConstraintRef ref);
ConstraintParameters& constraintParameters(Model& model, ConstraintRef ref);

#define PLIANT_DECLARE_FAMILY(Enumerator, array, name, Struct)                                                    \
  extern const FamilyKernels k##Enumerator##Kernels;                                                              \
  void project##Enumerator(const Model&, const SolveContext&, std::uint32_t, std::uint32_t);                      \
  double evaluate##Enumerator(const Model&, const Vec3*, const Vec3*, std::uint32_t, std::vector<ParticleIndex>&, \
                              std::vector<Vec3>&);
PLIANT_CONSTRAINT_FAMILIES(PLIANT_DECLARE_FAMILY)
#undef PLIANT_DECLARE_FAMILY

// The particles of a family whose constraints list them in a fixed-size `particles` array.
template <auto Array>
int stencilParticles(const Model& model, std::uint32_t i, ParticleIndex* out) {
  const auto& particles = (model.*Array)[i].particles;
  for (std::size_t k = 0; k < std::size(particles); ++k) out[k] = particles[k];
  return static_cast<int>(std::size(particles));
}
inline bool neverUnilateral(const Model&, std::uint32_t) { return false; }
inline bool alwaysUnilateral(const Model&, std::uint32_t) { return true; }

void projectDistanceIndependent(const Model&, const SolveContext&, std::uint32_t, std::uint32_t);
// The independent distance kernel with at most `lanes` constraints at once: 4 (AVX2, where the CPU
// has it) or 1 (scalar). Both give the same bits; tests compare them.
void projectDistanceLanes(int lanes, const Model&, const SolveContext&, std::uint32_t, std::uint32_t);
// Tethers and limits: four slackness tests per AVX2 instruction, the taut ones by the scalar kernel.
void projectMaxDistanceIndependent(const Model&, const SolveContext&, std::uint32_t, std::uint32_t);
void projectIsometricBendingIndependent(const Model&, const SolveContext&, std::uint32_t, std::uint32_t);
// The same for isometric bending: 4 lanes (AVX2, where the CPU has it) or 1.
void projectIsometricBendingLanes(int lanes, const Model&, const SolveContext&, std::uint32_t, std::uint32_t);
// Neo-Hookean tets: coupled tets four at a time (AVX2, where the CPU has it), the rest by the
// scalar kernel; 1 lane is the scalar kernel. Both give the same bits; tests compare them.
void projectNeoHookeanIndependent(const Model&, const SolveContext&, std::uint32_t, std::uint32_t);
void projectNeoHookeanLanes(int lanes, const Model&, const SolveContext&, std::uint32_t, std::uint32_t);
// How many constraints (tets for neo-Hookean) the independent kernels project per instruction on this CPU.
int distanceKernelLanes();
int isometricBendingKernelLanes();
int neoHookeanKernelLanes();

}  // namespace pliant::detail

namespace pliant::detail {
// Geometry shared with the builders.
double dihedralAngle(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3);
double signedTetVolume(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3);
double closedMeshVolume(const Model& model, std::uint32_t i, const Vec3* x);
// Bergou et al. 2006 weights K_i (1/m) of an edge stencil at rest; false for a degenerate one.
bool isometricBendingWeights(const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3, double weights[4]);
// C at the rest shape of neo-Hookean constraint i (scalar index, see ConstraintRef): sqrt 3 for a
// deviatoric one, 1 - gamma for a hydrostatic one. Energies are reported relative to it.
double neoHookeanRestValue(const Model& model, std::uint32_t i);
// Rest shape of a shape matching cluster whose memberCount is set: its rest offsets q_i (m, into
// restOffsets[0 .. memberCount)), total weight, and A_qq's pseudo-inverse, null projector and rank.
void shapeMatchingRestShape(const Vec3* restPositions, const ParticleIndex* particles, const double* weights,
                            ShapeMatchingConstraint& con, Vec3* restOffsets);
}  // namespace pliant::detail
