// Determinism with contacts: a scene with every contact feature (static and kinematic colliders of
// each shape, friction, restitution, particle-particle contacts through the hash grid, a cloth with
// thickness) gives bit-identical states when run twice, when continued from a copied state with a
// second solver (contacts are solver scratch rebuilt every substep, not hidden state), and with any
// thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "determinism/crossed_cloths.h"
#include "pliant/builders.h"
#include "pliant/colliders.h"
#include "pliant/model.h"
#include "pliant/parallel.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

ModelPtr contactScene() {
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = cloth.nodesY = 10;
  cloth.sizeX = cloth.sizeY = 0.9;
  cloth.origin = Vec3(-0.45, 0.9, -0.45);
  cloth.stretch.compliance = 1e-6;
  cloth.bending = BendingModel::Isometric;
  cloth.bendingParams.compliance = 0.5;
  const GeneratedObject c = addClothGrid(b, cloth);
  b.setParticleRadius(c.firstParticle, c.particleCount, 0.02);
  // A heap of loose particles of mixed radii and masses.
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      const ParticleIndex p = b.addParticle(Vec3(0.8 + 0.09 * i, 0.3 + 0.07 * j + 0.01 * i, 0.02 * j), 0.05 + 0.01 * i);
      b.setParticleRadius(p, 0.03 + 0.002 * j);
    }
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.05, 1.0, 0.0), {0.6, 0.4, 0.2}));
  b.addCollider(Collider::sphere(Vec3::Zero(), 0.3, {0.3, 0.2, 0.0}),
                [](double t) { return Vec3(0.2 * t, 0.35, 0.0); });
  b.addCollider(Collider::box(Vec3(1.0, 0.1, 0.0), Vec3(0.3, 0.1, 0.3), Quat::Identity(), {0.8, 0.5, 0.5}), {},
                [](double t) { return Quat(Eigen::AngleAxisd(0.5 * t, Vec3::UnitY())); });
  b.addCollider(Collider::capsule(Vec3(0.6, 0.2, -0.5), Vec3(1.3, 0.25, -0.4), 0.1, {0.1, 0.1, 0.9}));
  b.model().particleContactMaterial = {0.4, 0.3, 0.1};
  return b.build();
}

SolverSettings contactSettings() {
  SolverSettings s = SolverSettings::smallSteps(8);
  s.iterations = 2;
  return s;
}

std::vector<std::uint64_t> run(int steps, State* final = nullptr, std::size_t* contacts = nullptr) {
  const ModelPtr model = contactScene();
  Solver solver(model, contactSettings());
  State state = State::fromModel(*model);
  std::vector<std::uint64_t> hashes;
  for (int i = 0; i < steps; ++i) {
    const StepResult r = solver.step(state);
    EXPECT_TRUE(r.ok()) << r.message;
    hashes.push_back(state.hash());
    if (contacts) *contacts = std::max(*contacts, solver.lastContactCount());
  }
  if (final) *final = state;
  return hashes;
}

TEST(ContactDeterminism, IndependentRunsAreBitIdentical) {
  std::size_t contacts = 0;
  State first, second;
  const auto a = run(40, &first, &contacts);
  const auto b = run(40, &second);
  EXPECT_EQ(a, b);
  EXPECT_EQ(first.position, second.position);
  EXPECT_EQ(first.velocity, second.velocity);
  EXPECT_GT(contacts, 20u);  // the scene does make contacts
  EXPECT_NE(a.front(), a.back());
}

TEST(ContactDeterminism, CopiedStateContinuesIdenticallyWithAnotherSolver) {
  const ModelPtr model = contactScene();
  Solver solver(model, contactSettings());
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 20).ok());
  State copy = state;
  Solver other(model, contactSettings());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(solver.step(state).ok());
    ASSERT_TRUE(other.step(copy).ok());
    ASSERT_EQ(copy.hash(), state.hash()) << "step " << 21 + i;
  }
  EXPECT_GT(solver.lastContactCount(), 0u);
}

TEST(ContactDeterminism, ASolverHandedAnotherStateFindsThatStatesContacts) {
  // Particle pairs come from a candidate list kept between steps (particle_contacts.cpp); it must
  // follow the state it is given, not the one it was built for: the loose particles of the heap,
  // moved each to another's place, meet other neighbours at once.
  const ModelPtr model = contactScene();
  Solver solver(model, contactSettings());
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.run(state, 25).ok());
  State swapped = state;
  const std::size_t n = model->particleCount(), heap = 25;
  for (std::size_t k = 0; k < heap; ++k) {
    const std::size_t from = n - heap + (k + 7) % heap;
    swapped.position[n - heap + k] = state.position[from];
    swapped.previousPosition[n - heap + k] = state.previousPosition[from];
  }
  State fresh = swapped;
  Solver other(model, contactSettings());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(solver.step(swapped).ok());
    ASSERT_TRUE(other.step(fresh).ok());
    ASSERT_EQ(fresh.hash(), swapped.hash()) << "step " << i;
  }
  EXPECT_GT(solver.lastParticleContacts().size(), 0u);
}

TEST(ContactDeterminism, ASubstepObserverThatOnlyReadsChangesNothing) {
  // Without an observer, a substep's velocities are formed inside the next prediction pass and, in
  // a model without contacts, never stored. Contacts take their approach velocity from the state
  // after the prediction, so where they can occur the stored velocities must be those an observer
  // sees. A fast particle meets the plane after contact-free substeps, closing more than the contact
  // margin in one substep (so its contact starts penetrating); the contact scene
  // has contacts in most substeps.
  ModelBuilder drop;
  drop.addParticle(Vec3(0.0, 0.5, 0.0), 0.2, Vec3(0.3, -10.0, 0.0));
  drop.addCollider(Collider::plane(Vec3::Zero(), Vec3::UnitY(), {0.2, 0.1, 0.5}));
  for (const ModelPtr& model : {drop.build(), contactScene()}) {
    Solver plain(model, contactSettings());
    Solver observed(model, contactSettings());
    int calls = 0;
    observed.setSubstepObserver([&](const State&) { ++calls; });
    State a = State::fromModel(*model);
    State b = State::fromModel(*model);
    std::size_t contacts = 0;
    for (int i = 0; i < 40; ++i) {
      ASSERT_TRUE(plain.step(a).ok());
      ASSERT_TRUE(observed.step(b).ok());
      ASSERT_EQ(a.hash(), b.hash()) << "step " << i + 1;
      contacts = std::max(contacts, plain.lastContactCount());
    }
    EXPECT_EQ(calls, 40 * contactSettings().substeps);
    EXPECT_GT(contacts, 0u);
  }
}

TEST(ContactDeterminism, ThreadCountDoesNotChangeTheResult) {
  // Above 16384 particles the per-particle loops run on threads; the contact stages are serial and
  // read only what those loops wrote, so the hash must not depend on the thread count. A thick
  // cloth lying across a tilted plane: most particles are in contact from the first substep.
  ModelBuilder b;
  ClothGridDef cloth;
  cloth.nodesX = cloth.nodesY = 131;
  cloth.origin = Vec3(-0.5, 0.003, -0.5);
  cloth.stretch.compliance = 1e-6;
  const GeneratedObject c = addClothGrid(b, cloth);
  b.setParticleRadius(c.firstParticle, c.particleCount, 0.003);
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.1, 1.0, 0.0), {0.3, 0.2, 0.0}));
  const ModelPtr model = b.build();
  ASSERT_GT(model->particleCount(), 16384u);
  const int saved = threadCount();
  std::vector<std::uint64_t> hashes;
  for (int threads : {1, 3}) {
    setThreadCount(threads);
    SolverSettings s;
    s.substeps = 2;
    Solver solver(model, s);
    State state = State::fromModel(*model);
    EXPECT_TRUE(solver.run(state, 3).ok());
    EXPECT_GT(solver.lastColliderContacts().size(), 10000u);
    hashes.push_back(state.hash());
  }
  setThreadCount(saved);
  EXPECT_EQ(hashes[0], hashes[1]);
}

TEST(ContactDeterminism, ParticlePairsAndCollidersSplitOverThreadsGiveTheSerialResult) {
  // Above 4096 particles the particle-pair list is rebuilt by threads over shares of the grid,
  // re-tested in shares of the list, and the collider contacts are found, projected and given
  // their velocity pass in one share of whole particles per thread (particle_contacts.cpp,
  // collider_contacts.cpp): the contacts, their order and the state must be those of one thread.
  // Two thick cloths (radius just under half the spacing), the upper one crossed and within
  // particle reach of the lower one, falling onto a plane with a sphere's cap above it: pairs and
  // collider contacts at once.
  ModelBuilder b;
  addCrossedCloths(b, 48, 0.021, 0.043, 0.01, false);
  b.model().particleContactMaterial = {0.4, 0.3, 0.0};
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.0, 1.0, 0.0), {0.6, 0.5, 0.0}));
  b.addCollider(Collider::sphere(Vec3(0.3, -0.27, 0.0), 0.28, {0.4, 0.3, 0.0}));
  const ModelPtr model = b.build();
  ASSERT_GT(model->particleCount(), 4096u);
  const int saved = threadCount();
  std::vector<std::vector<std::uint64_t>> hashes;
  std::vector<std::vector<std::pair<ParticleIndex, ParticleIndex>>> pairs;
  std::vector<std::vector<std::pair<ParticleIndex, std::int32_t>>> colliderContacts;
  // The collider contacts' multipliers and friction, bit for bit, read at the end of every substep
  // (the threads' lists are joined when read) and after the last step.
  std::vector<std::vector<double>> colliderValues;
  auto values = [](const std::vector<Contact>& contacts, std::vector<double>& out) {
    for (const Contact& c : contacts) out.insert(out.end(), {c.lambda, c.friction.x(), c.friction.y(), c.friction.z()});
  };
  for (int threads : {1, 2, 3}) {
    setThreadCount(threads);
    Solver solver(model, SolverSettings::smallSteps(4));
    colliderValues.emplace_back();
    solver.setSubstepObserver([&](const State&) { values(solver.lastColliderContacts(), colliderValues.back()); });
    State state = State::fromModel(*model);
    hashes.emplace_back();
    for (int i = 0; i < 6; ++i) {
      const StepResult r = solver.step(state);
      ASSERT_TRUE(r.ok()) << r.message;
      hashes.back().push_back(state.hash());
    }
    pairs.emplace_back();
    for (const Contact& c : solver.lastParticleContacts()) pairs.back().emplace_back(c.particle, c.other);
    colliderContacts.emplace_back();
    for (const Contact& c : solver.lastColliderContacts()) colliderContacts.back().emplace_back(c.particle, c.collider);
    std::vector<double> last;
    values(solver.lastColliderContacts(), last);
    ASSERT_GE(colliderValues.back().size(), last.size());
    EXPECT_TRUE(
        std::equal(last.begin(), last.end(), colliderValues.back().end() - static_cast<std::ptrdiff_t>(last.size())))
        << "threads " << threads << ": the contacts read after the step are those of its last substep";
  }
  setThreadCount(saved);
  EXPECT_GT(pairs[0].size(), 1000u);
  EXPECT_TRUE(std::any_of(colliderValues[0].begin(), colliderValues[0].end(), [](double v) { return v > 0.0; }));
  EXPECT_GT(colliderContacts[0].size(), 1000u);
  EXPECT_TRUE(std::is_sorted(pairs[0].begin(), pairs[0].end()));
  for (std::size_t t = 1; t < hashes.size(); ++t) {
    EXPECT_EQ(hashes[0], hashes[t]) << "threads " << t + 1;
    EXPECT_EQ(pairs[0], pairs[t]) << "threads " << t + 1;
    EXPECT_EQ(colliderContacts[0], colliderContacts[t]) << "threads " << t + 1;
    EXPECT_EQ(colliderValues[0], colliderValues[t]) << "threads " << t + 1;
  }
}

TEST(ContactDeterminism, ColliderContactsReadFromTwoThreadsAfterAStep) {
  // On several threads the collider contacts stay in one list per thread and are joined when
  // first read after a step (collider_contacts.cpp): two threads reading a solver between steps at
  // once must both get the whole list (under ThreadSanitizer: without a data race).
  ModelBuilder b;
  addCrossedCloths(b, 48, 0.021, 0.043, 0.01, false);
  b.addCollider(Collider::plane(Vec3::Zero(), Vec3(0.0, 1.0, 0.0), {0.6, 0.5, 0.0}));
  const ModelPtr model = b.build();
  ASSERT_GT(model->particleCount(), 4096u);
  const int saved = threadCount();
  std::vector<std::pair<ParticleIndex, std::int32_t>> serial;
  {
    setThreadCount(1);
    Solver solver(model, SolverSettings::smallSteps(4));
    State state = State::fromModel(*model);
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(solver.step(state).ok());
    for (const Contact& c : solver.lastColliderContacts()) serial.emplace_back(c.particle, c.collider);
  }
  setThreadCount(2);
  Solver solver(model, SolverSettings::smallSteps(4));
  State state = State::fromModel(*model);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(solver.step(state).ok());
  setThreadCount(saved);
  std::vector<std::pair<ParticleIndex, std::int32_t>> read[2];
  auto reader = [&](int k) {
    for (const Contact& c : solver.lastColliderContacts()) read[k].emplace_back(c.particle, c.collider);
  };
  std::thread first(reader, 0), second(reader, 1);
  first.join();
  second.join();
  EXPECT_GT(serial.size(), 1000u);
  EXPECT_EQ(read[0], serial);
  EXPECT_EQ(read[1], serial);
}

}  // namespace
}  // namespace pliant
