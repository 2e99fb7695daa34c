// Golden state hashes: every built-in and benchmark scene, stepped for a fixed number of frames from
// its initial state, must end in the state recorded here, bit for bit. A change that moves a hash on
// purpose (new physics) updates the table in the same commit and says why; a refactoring must leave
// every row unchanged. Set PLIANT_PRINT_GOLDEN=1 to print the table the current code produces.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pliant/bench/benchmark.h"
#include "pliant/io/scenes.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

struct GoldenRow {
  const char* scene;
  int frames;  // stepped from the initial state (fewer than the scene's own for large ones)
  // What the run must have reached (else the row tests less than it claims): 0 nothing asked,
  // 1 contacts with colliders, particles or bodies (particles on bodies, issue 17), 2 surface
  // contacts (self-collision) too.
  int expectContact;
  std::uint64_t hash;  // State::hash after `frames` steps
};

// Frames are chosen so that each scene's characteristic work has started (contact scenes touch
// their colliders or themselves) while the whole table stays a few seconds in a sanitizer build.
// The drapes land on the sphere at about frame 12: the 128 and 256 ones are hashed over their
// first frames only (falling, the surface broad phase running over every particle), to keep the
// table fast.
constexpr GoldenRow kGolden[] = {
    {"cloth", 60, 0, 0x6aeab426803e7372},
    {"rope", 240, 0, 0xecfef3a871d5266a},
    {"beam", 120, 0, 0xf9814f3e660028b7},
    {"balloon", 240, 0, 0xed8151a60fe9a3c0},
    {"cloth-sphere", 40, 1, 0x8e142666f6dafd40},
    {"softbody-slope", 60, 1, 0x88d43b60bcb5134b},
    {"cloth-fold", 80, 2, 0x058db634570858f0},
    {"two-cloths", 40, 2, 0xa5b5cb70ce67136a},
    {"cloth-100-2m", 10, 0, 0x54eb0d9415bc19fc},
    {"cloth-100-10m-bending", 10, 0, 0xb09eead8d1684096},
    // Rigid bodies on hinges (issue 17): the whole swing the scene shows.
    {"hinge-chain", 240, 0, 0x2e7fdf182e7a8f9e},
    // A resting pile (issue 17): the first frames of the 10-level pyramid, every box in contact (the
    // hash holds the sleep timers since sleeping, rigid/sleeping.cpp).
    {"box-pyramid", 10, 0, 0xea8067e4131be727},
    // A soft body embedded from a closed surface (issue 18), landing on its slope.
    {"bunny-slope", 30, 1, 0xccf5a6a4c5bf284a},
    // A car on hinged sphere wheels driving over two bumps (issue 17): the whole run. Its contacts
    // are body contacts, which lastContactCount (particle contacts) does not count.
    {"car", 240, 0, 0xb134153867118e2d},
    // Particles coupled with bodies (issue 17): a cloth landing on a falling box, and a rope
    // carrying a box through a body attachment, the whole swing.
    {"cloth-over-body", 60, 1, 0xc17888b014f1f630},
    {"rope-box", 180, 0, 0x9eecc6ad3025951f},
    {"cloth-grid-64", 5, 0, 0x6d2184e701f7ccaf},
    {"cloth-grid-128", 2, 0, 0x41f9565faea10198},
    {"cloth-grid-256", 1, 0, 0x27fb535669a5149c},
    {"tet-beam-1k", 30, 0, 0x80c9dc97fcbc9b0d},
    {"tet-beam-10k", 3, 0, 0x6828b7a24561ef66},
    {"tet-beam-100k", 1, 0, 0x09a4603dc76e4e3f},
    {"contact-fold-64", 25, 2, 0xe6ebb5c3b7fe7da9},
    {"contact-sphere-80", 20, 1, 0xd6943f3dcd010553},
    {"contact-drape-64", 20, 1, 0x329a971cc5955877},
    {"contact-drape-128", 2, 0, 0x01a394a3d980eccc},
    {"contact-drape-256", 1, 0, 0x5a0d934e3ba823f2},
    {"neo-beam-100k", 1, 0, 0x1174a77fc5102864},
};

class GoldenHash : public ::testing::TestWithParam<GoldenRow> {};

TEST_P(GoldenHash, SceneEndsInItsRecordedState) {
  const GoldenRow& row = GetParam();
  setThreadCount(1);  // any count gives the same bits (tested in ParallelDeterminism)
  const Scene scene = makeBenchmarkScene(row.scene);
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  std::size_t contacts = 0;
  std::size_t surfaceContacts = 0;
  for (int frame = 0; frame < row.frames; ++frame) {
    const StepResult result = solver.step(state);
    ASSERT_TRUE(result.ok()) << result.message;
    contacts += solver.lastContactCount() + solver.lastParticleBodyContacts().size();
    surfaceContacts += solver.lastSurfaceContacts().size();
  }
  if (std::getenv("PLIANT_PRINT_GOLDEN") != nullptr)
    std::printf("    {\"%s\", %d, %d, 0x%016" PRIx64 "},\n", row.scene, row.frames, row.expectContact, state.hash());
  EXPECT_EQ(state.hash(), row.hash) << "got 0x" << std::hex << state.hash();
  if (row.expectContact >= 1) {
    EXPECT_GT(contacts, 0u) << "the run never reached a contact";
  }
  if (row.expectContact >= 2) {
    EXPECT_GT(surfaceContacts, 0u) << "the run never reached a surface contact";
  }
}

std::string rowName(const ::testing::TestParamInfo<GoldenRow>& row) {
  std::string name = row.param.scene;
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenes, GoldenHash, ::testing::ValuesIn(kGolden), rowName);

// Every scene the CLI and benchmarks can build has a row, so a new scene cannot go unrecorded.
TEST(GoldenHashTable, CoversEveryScene) {
  auto covered = [](const std::string& name) {
    for (const GoldenRow& row : kGolden)
      if (name == row.scene) return true;
    return false;
  };
  for (const std::string& name : builtinSceneNames()) EXPECT_TRUE(covered(name)) << name;
  for (const std::string& name : benchmarkSceneNames())
    EXPECT_TRUE(covered(name) || name == "cloth-grid-512") << name;  // 512^2: a quarter second a frame
}

}  // namespace
}  // namespace pliant
