// The box hierarchy's pair search (src/core/collision/box_tree.h) against the brute-force answer:
// every overlapping pair found, none twice, none that does not overlap, however the search is cut
// into tasks; with subtrees flagged to skip, exactly the pairs within a flagged subtree left out;
// and, after a few boxes moved, refitting only above them answers as a whole refit does.
#include "collision/box_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <span>
#include <utility>
#include <vector>

namespace pliant::detail {
namespace {

// Boxes of `count` primitives scattered in a unit cube, each up to `size` m across.
std::vector<Aabb> randomBoxes(std::size_t count, double size, std::uint32_t seed, std::vector<Vec3>& centres) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<Aabb> boxes(count);
  centres.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const Vec3 centre(unit(random), unit(random), unit(random));
    // The tree is built on other centres than the boxes' (a rest layout that has since moved).
    centres[i] = centre + 0.05 * Vec3(unit(random), unit(random), unit(random));
    const Vec3 half = 0.5 * size * Vec3(unit(random), unit(random), unit(random));
    boxes[i].add(centre - half);
    boxes[i].add(centre + half);
  }
  return boxes;
}

using Pairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

Pairs found(const BoxTree& a, const BoxTree& b, bool self, std::size_t minTasks, const std::vector<Aabb>& boxesA,
            const std::vector<Aabb>& boxesB, std::span<const std::uint8_t> skip = {}) {
  std::vector<BoxTree::Task> tasks, scratch;
  a.pairTasks(b, self, minTasks, tasks, scratch, skip);
  if (minTasks > 1 && (skip.empty() || !skip[0])) {  // a skipped root leaves nothing to cut
    EXPECT_GE(tasks.size(), std::min<std::size_t>(minTasks, 16));
  }
  Pairs pairs;
  for (const BoxTree::Task& task : tasks)
    a.pairs(
        b, self, task, boxesA, boxesB,
        [&](std::uint32_t i, std::uint32_t j) {
          pairs.emplace_back(self ? std::min(i, j) : i, self ? std::max(i, j) : j);
        },
        skip);
  return pairs;
}

TEST(BoxTree, SelfPairsAreEveryOverlappingPairOnce) {
  std::vector<Vec3> centres;
  const std::vector<Aabb> boxes = randomBoxes(700, 0.16, 7, centres);
  BoxTree tree;
  tree.build(centres);
  tree.refit(boxes);
  Pairs expected;
  for (std::uint32_t i = 0; i < boxes.size(); ++i)
    for (std::uint32_t j = i + 1; j < boxes.size(); ++j)
      if (boxes[i].overlaps(boxes[j])) expected.emplace_back(i, j);
  ASSERT_GT(expected.size(), 500u);
  for (std::size_t minTasks : {std::size_t{1}, std::size_t{64}, std::size_t{1000}}) {
    Pairs pairs = found(tree, tree, true, minTasks, boxes, boxes);
    const std::size_t reported = pairs.size();
    std::sort(pairs.begin(), pairs.end());
    EXPECT_EQ(std::unique(pairs.begin(), pairs.end()), pairs.end()) << "a pair reported twice, tasks " << minTasks;
    EXPECT_EQ(reported, expected.size());
    EXPECT_EQ(pairs, expected) << "tasks " << minTasks;
  }
}

TEST(BoxTree, SelfPairsLeaveOutExactlyThePairsWithinSkippedSubtrees) {
  std::vector<Vec3> centres;
  const std::vector<Aabb> boxes = randomBoxes(700, 0.16, 5, centres);
  BoxTree tree;
  tree.build(centres);
  tree.refit(boxes);
  // Flag every third node of up to 32 primitives (leaves and inner nodes, nested flags included);
  // group[i] is the topmost flagged subtree holding primitive i (or none).
  std::vector<std::uint8_t> skip(tree.nodeCount(), 0);
  std::vector<std::int64_t> group(boxes.size(), -1);
  for (std::uint32_t k = 1; k < tree.nodeCount(); k += 3) skip[k] = tree.primitives(k).size() <= 32;
  for (auto k = static_cast<std::uint32_t>(tree.nodeCount()); k-- > 0;)  // parents after children: the topmost wins
    if (skip[k])
      for (std::uint32_t i : tree.primitives(k)) group[i] = static_cast<std::int64_t>(k);
  Pairs expected;
  std::size_t within = 0;
  for (std::uint32_t i = 0; i < boxes.size(); ++i)
    for (std::uint32_t j = i + 1; j < boxes.size(); ++j) {
      if (!boxes[i].overlaps(boxes[j])) continue;
      if (group[i] >= 0 && group[i] == group[j]) ++within;
      else expected.emplace_back(i, j);
    }
  ASSERT_GT(within, 100u);  // the flags leave out something to check
  ASSERT_GT(expected.size(), 500u);
  for (std::size_t minTasks : {std::size_t{1}, std::size_t{64}, std::size_t{1000}}) {
    Pairs pairs = found(tree, tree, true, minTasks, boxes, boxes, skip);
    std::sort(pairs.begin(), pairs.end());
    EXPECT_EQ(pairs, expected) << "tasks " << minTasks;
  }
  skip[0] = 1;  // the root: nothing
  EXPECT_TRUE(found(tree, tree, true, 64, boxes, boxes, skip).empty());
}

TEST(BoxTree, PairsOfTwoTreesAreEveryOverlappingPairOnce) {
  std::vector<Vec3> centresA, centresB;
  const std::vector<Aabb> boxesA = randomBoxes(300, 0.12, 11, centresA);
  const std::vector<Aabb> boxesB = randomBoxes(900, 0.2, 13, centresB);
  BoxTree a, b;
  a.build(centresA);
  b.build(centresB);
  a.refit(boxesA);
  b.refit(boxesB);
  Pairs expected;
  for (std::uint32_t i = 0; i < boxesA.size(); ++i)
    for (std::uint32_t j = 0; j < boxesB.size(); ++j)
      if (boxesA[i].overlaps(boxesB[j])) expected.emplace_back(i, j);
  ASSERT_GT(expected.size(), 500u);
  for (std::size_t minTasks : {std::size_t{1}, std::size_t{64}}) {
    Pairs pairs = found(a, b, false, minTasks, boxesA, boxesB);
    const std::size_t reported = pairs.size();
    std::sort(pairs.begin(), pairs.end());
    EXPECT_EQ(reported, expected.size()) << "tasks " << minTasks;
    EXPECT_EQ(pairs, expected) << "tasks " << minTasks;
  }
}

TEST(BoxTree, RefitAboveTheMovedBoxesAnswersAsAWholeRefit) {
  std::vector<Vec3> centres;
  std::vector<Aabb> boxes = randomBoxes(700, 0.08, 3, centres);
  BoxTree partly, wholly;
  partly.build(centres);
  wholly.build(centres);
  partly.refit(boxes);
  std::mt19937 random(17);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<std::uint32_t> pick(0, static_cast<std::uint32_t>(boxes.size() - 1));
  for (int round = 0; round < 20; ++round) {
    // A few boxes move across the cube (far beyond their old nodes' boxes), in two batches.
    std::vector<std::uint32_t> moved;
    for (int k = 0; k < 1 + round % 5; ++k) {
      const std::uint32_t i = pick(random);
      const Vec3 shift = Vec3(unit(random), unit(random), unit(random)) - boxes[i].min;
      boxes[i].min += shift;
      boxes[i].max += shift;
      moved.push_back(i);
    }
    partly.refitAbove(moved, boxes);
    wholly.refit(boxes);
    for (int q = 0; q < 50; ++q) {
      Aabb query;
      const Vec3 at(unit(random), unit(random), unit(random));
      query.add(at);
      query.add(at + 0.1 * Vec3(unit(random), unit(random), unit(random)));
      std::vector<std::uint32_t> a, b, expected;
      partly.query(query, boxes, [&](std::uint32_t i) { a.push_back(i); });
      wholly.query(query, boxes, [&](std::uint32_t i) { b.push_back(i); });
      for (std::uint32_t i = 0; i < boxes.size(); ++i)
        if (boxes[i].overlaps(query)) expected.push_back(i);
      EXPECT_EQ(a, b) << "round " << round;  // the same nodes, visited in the same order
      std::sort(a.begin(), a.end());
      EXPECT_EQ(a, expected) << "round " << round;
    }
    Pairs pairs = found(partly, partly, true, 1, boxes, boxes);
    Pairs expected = found(wholly, wholly, true, 1, boxes, boxes);
    EXPECT_EQ(pairs, expected) << "round " << round;
  }
}

}  // namespace
}  // namespace pliant::detail
