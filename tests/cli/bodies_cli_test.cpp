// End-to-end: rigid bodies and joints through `pliant run` (issue 17). The built-in hinge chain's
// outputs carry a part per body in every frame format, each body's pose in final_bodies.csv, the
// bodies' triangles and poses and the joints' anchors in viewer-data.json, and the counts in
// summary.json, and `pliant render` draws them; a hanging chain at rest reports through its
// joint_force probes the weight below each hinge (V16); and a run resumed from a checkpoint ends in
// the uninterrupted run's state.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_fixture.h"

namespace fs = std::filesystem;

namespace {

using pliant::cli_testing::readFile;
using pliant::cli_testing::writeFile;
using CliBodies = pliant::cli_testing::CliFixture;
using ::testing::HasSubstr;

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::vector<std::string> splitCells(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
  return out;
}

// The last row of a CSV file by column name.
std::map<std::string, double> lastRow(const fs::path& file) {
  const std::vector<std::string> rows = splitLines(readFile(file));
  std::map<std::string, double> row;
  if (rows.size() < 2) return row;
  const std::vector<std::string> names = splitCells(rows.front());
  const std::vector<std::string> values = splitCells(rows.back());
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) row[names[i]] = std::stod(values[i]);
  return row;
}

TEST_F(CliBodies, HingeChainOutputsCarryBodyPartsPosesAndCounts) {
  auto r = run("info hinge-chain");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("bodies       10\njoints       10\n"));
  writeFile(path("chain.json"), pliant::cli_testing::readFile(fs::path(PLIANT_SOURCE_DIR) / "scenes/hinge-chain.json"));
  r = run("validate chain.json");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("chain.json: ok (0 particles, 0 constraints, 10 bodies, 10 joints, 240 frames)"));
  r = run("run hinge-chain --frames 10 --out vtk --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(readFile(path("vtk/summary.json")));
  EXPECT_EQ(summary.at("bodies"), 10);
  EXPECT_EQ(summary.at("joints"), 10);
  EXPECT_EQ(summary.at("particles"), 0);
  // VTK: a multiblock of one .vtu per body, named after it (no empty particle part).
  const std::string vtm = readFile(path("vtk/frames/frame_000010.vtm"));
  for (int b = 0; b < 10; ++b) {
    const std::string name = "link_" + std::to_string(b);
    EXPECT_THAT(vtm, HasSubstr("name=\"" + name + "\"")) << name;
    EXPECT_TRUE(fs::exists(path("vtk/frames/frame_000010_" + name + ".vtu"))) << name;
  }
  EXPECT_THAT(vtm, ::testing::Not(HasSubstr("name=\"mesh\"")));
  // final_bodies.csv: a row per body with its pose; the chain has swung down from the horizontal.
  const std::vector<std::string> rows = splitLines(readFile(path("vtk/final_bodies.csv")));
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_EQ(rows[0], "body,name,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,asleep");
  const std::vector<std::string> tip = splitCells(rows[10]);
  ASSERT_EQ(tip.size(), 16u);
  EXPECT_EQ(tip[1], "\"link_9\"");
  EXPECT_EQ(tip[15], "0");                   // a swinging chain never sleeps
  EXPECT_LT(std::stod(tip[3]), 2.0 - 0.05);  // y fell
  const double qw = std::stod(tip[5]), qx = std::stod(tip[6]), qy = std::stod(tip[7]), qz = std::stod(tip[8]);
  EXPECT_NEAR(qw * qw + qx * qx + qy * qy + qz * qz, 1.0, 1e-9);
  // Probes: the joint force, the body's pose, momentum and energy columns.
  const std::string header = splitLines(readFile(path("vtk/probes.csv"))).front();
  for (const char* column : {"top_hinge.fx", "top_hinge.fy", "top_hinge.tz", "tip.x", "tip.qw", "tip.wz", "momentum.px",
                             "momentum.Lz", "energy.kinetic", "energy.gravitational", "energy.total"})
    EXPECT_THAT(header, HasSubstr(column));
  // Energy: the hinges do no work, so kinetic + gravitational stays where it started, less what
  // XPBD's implicit steps lose, first order in h (docs/validation.md V16: 1.05 % of the kinetic
  // energy by frame 10 at 20 substeps, halving with each doubling of the substeps); 2 % of it.
  const std::vector<std::string> probeRows = splitLines(readFile(path("vtk/probes.csv")));
  const auto last = lastRow(path("vtk/probes.csv"));
  const std::vector<std::string> firstCells = splitCells(probeRows[1]);
  const std::vector<std::string> names = splitCells(probeRows[0]);
  double firstTotal = 0.0;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == "energy.total") firstTotal = std::stod(firstCells[i]);
  EXPECT_GT(last.at("energy.kinetic"), 1.0);
  EXPECT_NEAR(last.at("energy.total"), firstTotal, 0.02 * last.at("energy.kinetic"));
  // viewer-data.json: each body's triangles once and its pose per kept frame, the joints' anchors.
  const nlohmann::json viewer = nlohmann::json::parse(readFile(path("vtk/viewer-data.json")));
  const std::size_t kept = viewer.at("frames").at("numbers").size();
  ASSERT_EQ(viewer.at("bodies").size(), 10u);
  EXPECT_EQ(viewer.at("bodies")[0].at("name"), "link_0");
  EXPECT_FALSE(viewer.at("bodies")[0].at("triangles").get<std::string>().empty());
  EXPECT_EQ(viewer.at("bodies")[0].at("poses").size(), kept);
  ASSERT_EQ(viewer.at("joints").size(), 10u);
  EXPECT_EQ(viewer.at("joints")[0].at("type"), "hinge");
  EXPECT_EQ(viewer.at("joints")[0].at("bodies"), nlohmann::json::array({-1, 0}));
  ASSERT_EQ(viewer.at("joints")[0].at("anchors").size(), kept);
  // The top hinge's anchor stays on the world's pivot, on both sides.
  const nlohmann::json& anchor = viewer.at("joints")[0].at("anchors").back();
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(anchor[3 + k].get<double>(), anchor[k].get<double>(), 1e-3);
  EXPECT_NEAR(anchor[1].get<double>(), 2.0, 1e-3);

  // OBJ: a named object per body; PLY: a file per body; glTF: a node per body.
  r = run("run hinge-chain --frames 2 --format obj --out obj --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string obj = readFile(path("obj/frames/frame_000002.obj"));
  EXPECT_THAT(obj, HasSubstr("o link_0"));
  EXPECT_THAT(obj, HasSubstr("o link_9"));
  r = run("run hinge-chain --frames 2 --format ply --out ply --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(fs::exists(path("ply/frames/frame_000002_link_9.ply")));
  r = run("run hinge-chain --frames 2 --format glb --out glb --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(readFile(path("glb/scene.glb")), HasSubstr("link_9"));
}

// `pliant render` draws the bodies from viewer-data.json and frames them: without the time overlay
// the first and last images differ only by the chain having swung.
TEST_F(CliBodies, RenderDrawsTheBodies) {
  auto r = run("run hinge-chain --frames 30 --no-frames --out out --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  r = run("render out --frames 0,last --size 160x120 --no-time");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string first = readFile(path("out/render/frame_000000.png"));
  const std::string last = readFile(path("out/render/frame_000030.png"));
  ASSERT_GT(first.size(), 33u);
  EXPECT_NE(first, last);
}

// V16/V11: ten boxes of 0.5 kg hanging straight down on hinges are at rest from the start; hinge k
// (from the top) carries the weight of the 10 - k boxes below it, m g (10 - k), which the
// joint_force probe reports as the force on its lower box (+y). Tolerance 1e-3 of the chain's
// weight (the substep's sag g h^2 is far below it).
TEST_F(CliBodies, HangingChainJointForceProbesCarryTheWeightBelow) {
  const double m = 0.5, g = 9.81;
  std::ostringstream scene;
  scene << R"({"name": "hanging", "solver": {"mode": "small-steps", "substeps": 20}, "frames": 60, "bodies": [)";
  for (int k = 0; k < 10; ++k)
    scene << (k ? ", " : "") << R"({"name": "link_)" << k
          << R"(", "type": "box", "half_extents": [0.02, 0.1, 0.02], "mass": 0.5, "position": [0, )"
          << 2.0 - 0.1 - 0.2 * k << ", 0]}";
  scene << R"(], "joints": [)";
  for (int k = 0; k < 10; ++k)
    scene << (k ? ", " : "") << R"({"name": "hinge_)" << k << R"(", "type": "hinge", "body_a": )"
          << (k ? "\"link_" + std::to_string(k - 1) + "\"" : std::string("\"world\"")) << R"(, "body_b": "link_)" << k
          << R"(", "anchor": [0, )" << 2.0 - 0.2 * k << R"(, 0], "axis": [0, 0, 1]})";
  scene << R"(], "probes": [{"name": "top", "type": "joint_force", "joint": "hinge_0"},
                           {"name": "middle", "type": "joint_force", "joint": 5},
                           {"name": "bottom", "type": "joint_force", "joint": "hinge_9"},
                           {"name": "p", "type": "body_momentum"}]})";
  writeFile(path("hanging.json"), scene.str());
  const auto r = run("run hanging.json --no-frames --out out --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const auto row = lastRow(path("out/probes.csv"));
  const double weight = 10 * m * g, tolerance = 1e-3 * weight;
  EXPECT_NEAR(row.at("top.fy"), weight, tolerance);
  EXPECT_NEAR(row.at("middle.fy"), 5 * m * g, tolerance);
  EXPECT_NEAR(row.at("bottom.fy"), m * g, tolerance);
  EXPECT_NEAR(row.at("top.fx"), 0.0, tolerance);
  EXPECT_NEAR(row.at("top.tz"), 0.0, tolerance);
  EXPECT_NEAR(row.at("p.py"), 0.0, 1e-3);  // at rest
}

TEST_F(CliBodies, ResumingFromACheckpointWithBodiesEndsInTheSameState) {
  auto r = run("run hinge-chain --frames 40 --checkpoint-at 20 --no-frames --out A --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  ASSERT_TRUE(fs::exists(path("A/checkpoints/frame_000020.ckpt")));
  r = run("run hinge-chain --frames 40 --resume A/checkpoints/frame_000020.ckpt --no-frames --out B --quiet");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const nlohmann::json a = nlohmann::json::parse(readFile(path("A/summary.json")));
  const nlohmann::json b = nlohmann::json::parse(readFile(path("B/summary.json")));
  EXPECT_EQ(b.at("first_frame"), 20);
  EXPECT_EQ(a.at("state_hash"), b.at("state_hash"));
  EXPECT_EQ(readFile(path("A/final_bodies.csv")), readFile(path("B/final_bodies.csv")));
  // The resumed probe rows are the uninterrupted run's, joint forces included (the checkpoint
  // carries the joints' last impulses).
  const std::vector<std::string> probesA = splitLines(readFile(path("A/probes.csv")));
  const std::vector<std::string> probesB = splitLines(readFile(path("B/probes.csv")));
  ASSERT_EQ(probesA.size(), 42u);
  ASSERT_EQ(probesB.size(), 22u);
  for (std::size_t i = 1; i < probesB.size(); ++i) EXPECT_EQ(probesB[i], probesA[20 + i]) << "row " << i;
  // A checkpoint of the chain does not resume another scene (the counts name bodies and joints).
  r = run("run rope --frames 40 --resume A/checkpoints/frame_000020.ckpt --no-frames --out C --quiet");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("10 bodies and 10 joints"));
}

TEST_F(CliBodies, HingeChainIsBitIdenticalForAnyThreadCount) {
  for (const char* threads : {"1", "2", "4"}) {
    const auto r =
        run(std::string("run hinge-chain --frames 30 --no-frames --quiet --threads ") + threads + " --out t" + threads);
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  const auto hash = [&](const char* folder) {
    return nlohmann::json::parse(readFile(path(std::string(folder) + "/summary.json"))).at("state_hash");
  };
  EXPECT_EQ(hash("t1"), hash("t2"));
  EXPECT_EQ(hash("t1"), hash("t4"));
}

}  // namespace
