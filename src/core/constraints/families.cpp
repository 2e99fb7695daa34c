#include "constraints/families.h"

namespace pliant::detail {

const FamilyKernels& familyKernels(ConstraintFamily family) {
  static const FamilyKernels table[kConstraintFamilyCount] = {
      {projectAttachment, projectAttachment, evaluateAttachment},
      {projectDistance, projectDistanceIndependent, evaluateDistance},
      {projectMaxDistance, projectMaxDistanceIndependent, evaluateMaxDistance},
      {projectDihedralBending, projectDihedralBending, evaluateDihedralBending},
      {projectIsometricBending, projectIsometricBendingIndependent, evaluateIsometricBending},
      {projectTetVolume, projectTetVolume, evaluateTetVolume},
      {projectGlobalVolume, projectGlobalVolume, evaluateGlobalVolume},
      {projectGeneric, projectGeneric, evaluateGeneric},
  };
  return table[static_cast<int>(family)];
}

bool isUnilateral(const Model& model, ConstraintRef ref) {
  switch (ref.family) {
    case ConstraintFamily::MaxDistance: return true;
    case ConstraintFamily::Generic: return model.generics[ref.index].inequality;
    default: return false;
  }
}

const ConstraintParameters& constraintParameters(const Model& model, ConstraintRef ref) {
  const std::uint32_t i = ref.index;
  switch (ref.family) {
    case ConstraintFamily::Attachment: return model.attachments[i].params;
    case ConstraintFamily::Distance: return model.distances[i].params;
    case ConstraintFamily::MaxDistance: return model.maxDistances[i].params;
    case ConstraintFamily::DihedralBending: return model.dihedralBendings[i].params;
    case ConstraintFamily::IsometricBending: return model.isometricBendings[i].params;
    case ConstraintFamily::TetVolume: return model.tetVolumes[i].params;
    case ConstraintFamily::GlobalVolume: return model.globalVolumes[i].params;
    case ConstraintFamily::Generic: return model.generics[i].params;
  }
  return model.distances[i].params;  // unreachable
}

}  // namespace pliant::detail

namespace pliant {

const char* familyName(ConstraintFamily family) {
  switch (family) {
    case ConstraintFamily::Attachment: return "attachment";
    case ConstraintFamily::Distance: return "distance";
    case ConstraintFamily::MaxDistance: return "max-distance";
    case ConstraintFamily::DihedralBending: return "dihedral-bending";
    case ConstraintFamily::IsometricBending: return "isometric-bending";
    case ConstraintFamily::TetVolume: return "tet-volume";
    case ConstraintFamily::GlobalVolume: return "global-volume";
    case ConstraintFamily::Generic: return "generic";
  }
  return "unknown";
}

}  // namespace pliant
