// ThreadSanitizer's options for the test executables of the `tsan` preset, built in so that ctest,
// a debugger or a direct run all check the same way: libomp and GoogleTest are not instrumented
// (Archer reports OpenMP's synchronisation instead), and the first report fails the test.
#include <cstdlib>

namespace {
constexpr const char* kOptions = "ignore_noninstrumented_modules=1:halt_on_error=1:second_deadlock_stack=1";

// Archer reads the variable itself (and warns when it lacks ignore_noninstrumented_modules); it
// starts with the first parallel region, after this runs.
[[maybe_unused]] const int kExported = setenv("TSAN_OPTIONS", kOptions, 0);
}  // namespace

extern "C" const char* __tsan_default_options();
extern "C" const char* __tsan_default_options() { return kOptions; }
