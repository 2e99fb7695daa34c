// Unit tests of src/run/sweep_file.cpp (pliant::sweep::parseSweep): how parameters expand into
// cases (grid order, zip, linear and log ranges with exact ends, seeded random draws), the resolved
// scene of a case, and errors that name the field.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "pliant/error.h"
#include "pliant/run/sweep.h"

namespace pliant::sweep {
namespace {

// A sweep of the built-in rope with `body` (parameters, combine, ...) spliced in.
Sweep parse(const std::string& body) {
  return parseSweep(R"({"name": "t", "scene": {"builtin": "rope"}, "metrics": [], )" + body + "}", "t.json", "");
}

std::string errorOf(const std::string& body) {
  try {
    parse(body);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SweepFile, GridVariesTheLastParameterFastestAndResolvesEachScene) {
  const Sweep s = parse(R"("parameters": [{"pointer": "/frames", "values": [3, 4]},
                                          {"pointer": "/solver/substeps", "values": [1, 2, 5]}])");
  ASSERT_EQ(s.cases.size(), 6u);
  EXPECT_EQ(s.cases[1].values, (std::vector<std::string>{"3", "2"}));
  EXPECT_EQ(s.cases[3].values, (std::vector<std::string>{"4", "1"}));
  const auto scene = nlohmann::json::parse(s.cases[5].sceneJson);
  EXPECT_EQ(scene["frames"], 4);
  EXPECT_EQ(scene["solver"]["substeps"], 5);
  // Different scenes, different hashes; the same text, the same hash.
  EXPECT_NE(s.cases[0].sceneHash, s.cases[1].sceneHash);
  EXPECT_EQ(parse(R"("parameters": [{"pointer": "/frames", "values": [3, 4]},
                                    {"pointer": "/solver/substeps", "values": [1, 2, 5]}])")
                .cases[4]
                .sceneHash,
            s.cases[4].sceneHash);
}

TEST(SweepFile, RangesHitTheirEndsExactlyAndZipPairsValues) {
  const Sweep s = parse(R"("combine": "zip", "parameters": [
      {"pointer": "/objects/0/stretch/compliance", "log": {"from": 1e-4, "to": 1e-2, "count": 3}},
      {"pointer": "/solver/substeps", "linear": {"from": 1, "to": 10, "count": 3}, "integer": true}])");
  ASSERT_EQ(s.cases.size(), 3u);
  EXPECT_EQ(s.cases[0].values, (std::vector<std::string>{"0.0001", "1"}));
  EXPECT_EQ(s.cases[1].values, (std::vector<std::string>{"0.001", "6"}));  // 5.5 rounded
  EXPECT_EQ(s.cases[2].values, (std::vector<std::string>{"0.01", "10"}));
}

TEST(SweepFile, RandomSamplesFollowTheSeedAndStayInTheirRange) {
  const std::string body = R"("combine": "random", "samples": 50, "seed": SEED, "parameters": [
      {"pointer": "/objects/0/stretch/compliance", "random": {"from": 1e-8, "to": 1e-4, "scale": "log"}},
      {"pointer": "/solver/substeps", "values": [2, 3]}])";
  const auto withSeed = [&](const char* seed) {
    std::string b = body;
    b.replace(b.find("SEED"), 4, seed);
    return parse(b);
  };
  const Sweep a = withSeed("1"), b = withSeed("1"), c = withSeed("2");
  ASSERT_EQ(a.cases.size(), 50u);
  bool differs = false, small = false, large = false;
  for (std::size_t i = 0; i < a.cases.size(); ++i) {
    EXPECT_EQ(a.cases[i].values, b.cases[i].values);
    differs = differs || a.cases[i].values != c.cases[i].values;
    const double v = std::stod(a.cases[i].values[0]);
    EXPECT_GE(v, 1e-8);
    EXPECT_LE(v, 1e-4);
    small = small || v < 1e-7;  // log-uniform: a tenth of the draws in each decade
    large = large || v > 1e-5;
  }
  EXPECT_TRUE(differs);
  EXPECT_TRUE(small && large);
}

TEST(SweepFile, ErrorsNameTheFileAndTheField) {
  EXPECT_EQ(
      errorOf(R"("parameters": [{"pointer": "/solver/velocity_damping", "values": [1]}])")
          .rfind("t.json: /parameters/0/pointer: the base scene builtin:rope has no field /solver/velocity_damping", 0),
      0u);
  EXPECT_NE(errorOf(R"("parameters": [{"pointer": "/frames", "values": [1]}], "set": {"/nope": 1})")
                .find("t.json: /set/~1nope: the base scene"),
            std::string::npos);
  EXPECT_NE(errorOf(R"("parameters": [{"pointer": "/frames", "random": {"from": 1, "to": 2}}])")
                .find("/parameters/0/random: random draws need \"combine\": \"random\""),
            std::string::npos);
  EXPECT_NE(errorOf(R"("parameters": [{"pointer": "/frames", "linear": {"from": 1, "to": 2, "count": 0}}])")
                .find("/parameters/0/linear/count: expected a whole number from 1"),
            std::string::npos);
  EXPECT_NE(errorOf(R"("parameters": [{"pointer": "/frames", "values": [1]}, {"pointer": "/frames", "values": [2]}])")
                .find("/parameters/1/pointer: varied twice"),
            std::string::npos);
  EXPECT_NE(errorOf(R"("parameters": [{"pointer": "frames", "values": [1]}])")
                .find("/parameters/0/pointer: expected a JSON pointer"),
            std::string::npos);
}

TEST(SweepFile, TheBuiltinSweepsLoad) {
  ASSERT_FALSE(builtinSweepNames().empty());
  for (const std::string& name : builtinSweepNames()) {
    const Sweep s = parseSweep(builtinSweepText(name), "builtin:" + name, "");
    EXPECT_GT(s.cases.size(), 1u) << name;
  }
}

}  // namespace
}  // namespace pliant::sweep
