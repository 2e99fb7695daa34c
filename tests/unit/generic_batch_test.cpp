// Unit tests of batch user constraints (GenericBatchFunction, src/core/constraints/generic.cpp): a
// group evaluated with one call and then projected constraint by constraint must give the same bits
// as calling a per-constraint function just before each projection, the builder's groups must share
// no particle, and a malformed group or a throwing batch function must be refused with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "pliant/builders.h"
#include "pliant/error.h"
#include "pliant/model.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace pliant {
namespace {

// C = |x0 - x1| - rest of one link; the rest length is looked up by the link's number.
double linkValue(const Vec3& a, const Vec3& b, double rest, Vec3& g0, Vec3& g1) {
  const Vec3 delta = a - b;
  const double length = delta.norm();
  g0 = delta / length;
  g1 = -g0;
  return length - rest;
}

struct ClothLinks {
  ModelBuilder builder;
  std::vector<ParticleIndex> particles;  // 2 per link
  std::vector<double> rest;              // per link
};

// A 6 x 6 cloth, two corners pinned, whose edges are kept as (stencil, rest length) and removed
// from the distance family, so they can be added back as user constraints.
ClothLinks clothLinks() {
  ClothLinks links;
  ClothGridDef def;
  def.nodesX = 6;
  def.nodesY = 6;
  def.origin = Vec3(0.0, 1.0, 0.0);
  def.stretch.compliance = 1e-6;
  def.stretch.damping = 0.5;
  const GeneratedObject cloth = addClothGrid(links.builder, def);
  links.builder.fixParticle(cloth.firstParticle);
  links.builder.fixParticle(cloth.firstParticle + 5);
  Model& m = links.builder.model();
  for (const DistanceConstraint& d : m.distances) {
    links.particles.insert(links.particles.end(), {d.particles[0], d.particles[1]});
    links.rest.push_back(d.restLength);
  }
  m.distances.clear();
  return links;
}

TEST(GenericBatch, GroupsShareNoParticleAndMapEveryConstraint) {
  ClothLinks links = clothLinks();
  int calls = 0;
  const std::uint32_t f = links.builder.addGenericBatchFunction(
      [&](std::uint32_t, std::span<const Vec3>, std::span<double> values, std::span<Vec3>) {
        ++calls;
        std::fill(values.begin(), values.end(), 0.0);
      });
  const std::vector<std::uint32_t> index =
      links.builder.addGenericBatch(f, links.particles, 2, false, ConstraintParameters{});
  const ModelPtr model = links.builder.build();
  ASSERT_EQ(index.size(), links.rest.size());
  // Every link became exactly one generic constraint, over its own particles.
  std::set<std::uint32_t> distinct(index.begin(), index.end());
  EXPECT_EQ(distinct.size(), index.size());
  for (std::size_t k = 0; k < index.size(); ++k) {
    const GenericConstraint& c = model->generics[index[k]];
    EXPECT_EQ(model->genericParticles[c.firstParticle], links.particles[2 * k]);
    EXPECT_EQ(model->genericParticles[c.firstParticle + 1], links.particles[2 * k + 1]);
  }
  // Groups are consecutive and disjoint; a grid's edges need a handful of colours, not one per edge.
  std::size_t groups = 0;
  for (std::size_t i = 0; i < model->generics.size(); i = model->generics[i].batchEnd) {
    ++groups;
    std::set<ParticleIndex> seen;
    for (std::size_t k = i; k < model->generics[i].batchEnd; ++k) {
      EXPECT_EQ(model->generics[k].batchEnd, model->generics[i].batchEnd);
      for (std::uint32_t p = 0; p < 2; ++p)
        EXPECT_TRUE(seen.insert(model->genericParticles[model->generics[k].firstParticle + p]).second);
    }
  }
  EXPECT_GE(groups, 4u);
  EXPECT_LE(groups, 10u);
  // One call per group and iteration.
  SolverSettings settings;
  settings.iterations = 3;
  Solver solver(model, settings);
  State state = State::fromModel(*model);
  ASSERT_TRUE(solver.step(state).ok());
  EXPECT_EQ(calls, static_cast<int>(3 * groups));
}

TEST(GenericBatch, EqualsPerConstraintFunctionsBitForBit) {
  // The same links as per-constraint functions, added in the order addGenericBatch stored them.
  ClothLinks batchLinks = clothLinks();
  const std::vector<double> rest = batchLinks.rest;
  std::vector<std::uint32_t> linkOf;  // generic constraint -> link, filled once the map is known
  const std::uint32_t f = batchLinks.builder.addGenericBatchFunction(
      [&](std::uint32_t first, std::span<const Vec3> x, std::span<double> values, std::span<Vec3> g) {
        for (std::size_t k = 0; k < values.size(); ++k)
          values[k] = linkValue(x[2 * k], x[2 * k + 1], rest[linkOf[first + k]], g[2 * k], g[2 * k + 1]);
      });
  const std::vector<std::uint32_t> index =
      batchLinks.builder.addGenericBatch(f, batchLinks.particles, 2, false, ConstraintParameters{1e-6, 0.5, 1.0});
  linkOf.assign(index.size(), 0);
  for (std::size_t k = 0; k < index.size(); ++k) linkOf[index[k]] = static_cast<std::uint32_t>(k);
  const ModelPtr batchModel = batchLinks.builder.build();

  ClothLinks singleLinks = clothLinks();
  for (std::uint32_t c = 0; c < linkOf.size(); ++c) {
    const std::uint32_t k = linkOf[c];
    const double r = rest[k];
    singleLinks.builder.addGeneric(
        [r](std::span<const Vec3> x, std::span<Vec3> g) { return linkValue(x[0], x[1], r, g[0], g[1]); },
        std::span<const ParticleIndex>(&singleLinks.particles[2 * k], 2), false, ConstraintParameters{1e-6, 0.5, 1.0});
  }
  const ModelPtr singleModel = singleLinks.builder.build();

  SolverSettings settings;
  settings.substeps = 4;
  settings.iterations = 2;
  Solver a(batchModel, settings), b(singleModel, settings);
  State sa = State::fromModel(*batchModel), sb = State::fromModel(*singleModel);
  for (int step = 0; step < 60; ++step) {
    ASSERT_TRUE(a.step(sa).ok());
    ASSERT_TRUE(b.step(sb).ok());
  }
  EXPECT_EQ(sa.hash(), sb.hash());
  // The cloth fell and stretched its links (so the comparison is not trivial).
  EXPECT_LT(sa.position[20].y(), 0.95);
  EXPECT_NE(sa.lambda[batchModel->lambdaIndex({ConstraintFamily::Generic, 0})], 0.0);
}

TEST(GenericBatch, AThrowingBatchRefusesTheStepNamingTheConstraint) {
  ClothLinks links = clothLinks();
  const std::uint32_t f = links.builder.addGenericBatchFunction(
      [](std::uint32_t, std::span<const Vec3>, std::span<double>, std::span<Vec3>) {
        throw std::runtime_error("rest lengths not loaded");
      });
  links.builder.addGenericBatch(f, links.particles, 2, false, ConstraintParameters{});
  const ModelPtr model = links.builder.build();
  Solver solver(model, SolverSettings{});
  State state = State::fromModel(*model);
  const std::uint64_t before = state.hash();
  const StepResult result = solver.step(state);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(result.hasConstraint);
  EXPECT_EQ(result.constraint.family, ConstraintFamily::Generic);
  EXPECT_NE(result.message.find("rest lengths not loaded"), std::string::npos) << result.message;
  EXPECT_EQ(state.hash(), before);
}

TEST(GenericBatch, MalformedGroupsAndArgumentsAreRefused) {
  ClothLinks links = clothLinks();
  const std::uint32_t f = links.builder.addGenericBatchFunction(
      [](std::uint32_t, std::span<const Vec3>, std::span<double>, std::span<Vec3>) {});
  const std::uint32_t single =
      links.builder.addGenericFunction([](std::span<const Vec3>, std::span<Vec3>) { return 0.0; });
  const std::vector<ParticleIndex> three = {0, 1, 2};
  EXPECT_THROW(links.builder.addGenericBatch(f, three, 2, false, {}), Error);       // not whole pairs
  EXPECT_THROW(links.builder.addGenericBatch(single, three, 3, false, {}), Error);  // not a batch function
  EXPECT_THROW(links.builder.addGenericBatch(f, three, 0, false, {}), Error);
  const std::vector<ParticleIndex> outOfRange = {0, 1000};
  EXPECT_THROW(links.builder.addGenericBatch(f, outOfRange, 2, false, {}), Error);
  // Two constraints sharing particle 1 land in different groups; forcing them into one is refused.
  const std::vector<ParticleIndex> pairs = {0, 1, 1, 2};
  const std::vector<std::uint32_t> index = links.builder.addGenericBatch(f, pairs, 2, false, {});
  EXPECT_NE(links.builder.model().generics[index[0]].batchEnd, links.builder.model().generics[index[1]].batchEnd);
  links.builder.model().generics[index[0]].batchEnd = links.builder.model().generics[index[1]].batchEnd;
  try {
    links.builder.build();
    FAIL() << "a group sharing a particle was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shares particle 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pliant
