#include "constraints/families.h"

namespace pliant::detail {

namespace {
template <class Constraint>
ConstraintParameters& parametersOf(Constraint& c) {
  return c.params;
}
// Handled before the switch (two constraints per entry).
ConstraintParameters& parametersOf(NeoHookeanConstraint& c) { return c.deviatoric; }
}  // namespace

const FamilyKernels& familyKernels(ConstraintFamily family) {
  // Pointers, not copies: the entries are defined in other files.
  static const FamilyKernels* const table[kConstraintFamilyCount] = {
#define PLIANT_FAMILY_ENTRY(Enumerator, array, name, Struct) &k##Enumerator##Kernels,
      PLIANT_CONSTRAINT_FAMILIES(PLIANT_FAMILY_ENTRY)
#undef PLIANT_FAMILY_ENTRY
  };
  return *table[static_cast<int>(family)];
}

bool isUnilateral(const Model& model, ConstraintRef ref) {
  return familyKernels(ref.family).unilateral(model, ref.index);
}

const ConstraintParameters& constraintParameters(const Model& model, ConstraintRef ref) {
  return constraintParameters(const_cast<Model&>(model), ref);  // reads only
}

ConstraintParameters& constraintParameters(Model& model, ConstraintRef ref) {
  if (ref.family == ConstraintFamily::NeoHookean) {
    NeoHookeanConstraint& tet = model.neoHookeans[ref.index / 2];
    return ref.index % 2 == 0 ? tet.deviatoric : tet.hydrostatic;
  }
  switch (ref.family) {
#define PLIANT_FAMILY_PARAMETERS(Enumerator, array, name, Struct) \
  case ConstraintFamily::Enumerator:                              \
    return parametersOf(model.array[ref.index]);
    PLIANT_CONSTRAINT_FAMILIES(PLIANT_FAMILY_PARAMETERS)
#undef PLIANT_FAMILY_PARAMETERS
  }
  return model.distances[ref.index].params;  // unreachable
}

}  // namespace pliant::detail

namespace pliant {

const char* familyName(ConstraintFamily family) {
  switch (family) {
#define PLIANT_FAMILY_NAME(Enumerator, array, name, Struct) \
  case ConstraintFamily::Enumerator:                        \
    return name;
    PLIANT_CONSTRAINT_FAMILIES(PLIANT_FAMILY_NAME)
#undef PLIANT_FAMILY_NAME
  }
  return "unknown";
}

}  // namespace pliant
