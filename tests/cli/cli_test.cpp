// End-to-end tests of the `pliant` executable (apps/pliant_main.cpp): each test runs the binary in
// a fresh folder under the system temp folder, with stdout and stderr captured to files, and checks
// the exit code (0 ok, 2 bad input), the messages and the files written (docs/scene-format.md,
// "Output of pliant run"). Runs are a few frames each so the whole file takes seconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_fixture.h"
#include "pliant/bench/benchmark.h"
#include "pliant/io/scenes.h"
#include "pliant/solver.h"
#include "pliant/state.h"

namespace fs = std::filesystem;

namespace {

using pliant::cli_testing::readFile;
using pliant::cli_testing::RunResult;
using pliant::cli_testing::shellQuote;
using pliant::cli_testing::writeFile;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

std::string badScene(const std::string& name) { return std::string(PLIANT_TEST_DATA_DIR) + "/scenes/bad/" + name; }
std::string goodScene(const std::string& name) { return std::string(PLIANT_TEST_DATA_DIR) + "/scenes/" + name; }

std::vector<std::string> badSceneFiles() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(std::string(PLIANT_TEST_DATA_DIR) + "/scenes/bad"))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, separator)) out.push_back(field);
  if (!line.empty() && line.back() == separator) out.emplace_back();
  return out;
}

// A whole field that reads as a finite number.
bool finiteNumber(const std::string& field, double* value = nullptr) {
  if (field.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(field.c_str(), &end);
  if (value) *value = v;
  return end == field.c_str() + field.size() && std::isfinite(v);
}

// Every regular file under `folder`, relative, sorted.
std::vector<std::string> filesUnder(const fs::path& folder) {
  std::vector<std::string> out;
  if (!fs::exists(folder)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    if (entry.is_regular_file()) out.push_back(fs::relative(entry.path(), folder).string());
  std::sort(out.begin(), out.end());
  return out;
}

using CliTest = pliant::cli_testing::CliFixture;

nlohmann::json readJson(const fs::path& path) {
  const std::string text = readFile(path);
  EXPECT_FALSE(text.empty()) << path;
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// No temporary file of an atomic write is left behind (docs: "never leaves a half-written file").
void expectNoTemporaryFiles(const fs::path& folder) {
  for (const std::string& file : filesUnder(folder)) EXPECT_EQ(file.find(".tmp"), std::string::npos) << file;
}

// ---------------------------------------------------------------------------------------------
// Minimal readers of the frame formats, enough to show the files are complete and consistent.

std::uint32_t littleEndian32(const char* p) {
  std::uint32_t v = 0;
  for (int k = 3; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(p[k]);
  return v;
}

struct Mesh {
  std::vector<std::array<double, 3>> points;
  std::size_t triangles = 0;
  std::size_t lines = 0;
  std::size_t tets = 0;
};

std::uint64_t littleEndian64(const char* p) { return (std::uint64_t{littleEndian32(p + 4)} << 32) | littleEndian32(p); }

// The value of attribute `name` in an XML start tag (empty when absent).
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t at = tag.find(key);
  if (at == std::string::npos) return {};
  const std::size_t begin = at + key.size();
  return tag.substr(begin, tag.find('"', begin) - begin);
}

// VTK XML unstructured grid (.vtu) with raw appended little-endian data and UInt64 block headers:
// reads Points, connectivity, offsets and types and checks they agree with the Piece's counts.
Mesh readVtu(const fs::path& path) {
  Mesh mesh;
  const std::string text = readFile(path);
  EXPECT_THAT(text, StartsWith("<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\"")) << path;
  EXPECT_THAT(text, HasSubstr("byte_order=\"LittleEndian\" header_type=\"UInt64\"")) << path;
  const std::string marker = "<AppendedData encoding=\"raw\">";
  const std::size_t appended = text.find(marker);
  const std::size_t data = text.find('_', appended) + 1;
  const std::string tail = "\n  </AppendedData>\n</VTKFile>\n";
  if (appended == std::string::npos || !text.ends_with(tail)) {
    ADD_FAILURE() << path << ": no raw appended data or an incomplete file";
    return mesh;
  }
  const std::string xml = text.substr(0, appended);
  const std::size_t pieceAt = xml.find("<Piece ");
  if (pieceAt == std::string::npos) {
    ADD_FAILURE() << path << ": no Piece";
    return mesh;
  }
  const std::string pieceTag = xml.substr(pieceAt, xml.find('>', pieceAt) - pieceAt);
  const std::size_t n = std::stoul(attribute(pieceTag, "NumberOfPoints"));
  const std::size_t cells = std::stoul(attribute(pieceTag, "NumberOfCells"));
  // Name -> (type, bytes of the block).
  std::map<std::string, std::pair<std::string, std::string>> arrays;
  std::size_t dataEnd = data;
  for (std::size_t tagAt = xml.find("<DataArray "); tagAt != std::string::npos;
       tagAt = xml.find("<DataArray ", tagAt + 1)) {
    const std::string tag = xml.substr(tagAt, xml.find('>', tagAt) - tagAt);
    if (attribute(tag, "format") != "appended") continue;  // e.g. the ascii TIME field
    const std::string name = attribute(tag, "Name");
    const std::size_t at = data + std::stoul(attribute(tag, "offset"));
    if (at + 8 > text.size()) {
      ADD_FAILURE() << path << ": array " << name << " beyond the end";
      continue;
    }
    const std::uint64_t size = littleEndian64(text.data() + at);
    if (at + 8 + size > text.size() - tail.size()) {
      ADD_FAILURE() << path << ": array " << name << " of " << size << " bytes is truncated";
      continue;
    }
    arrays[name] = {attribute(tag, "type"), text.substr(at + 8, size)};
    dataEnd = std::max<std::size_t>(dataEnd, at + 8 + size);
  }
  EXPECT_EQ(dataEnd, text.size() - tail.size()) << path << ": the blocks do not fill the appended data";
  for (const char* name : {"Points", "connectivity", "offsets", "types", "velocity"})
    if (!arrays.contains(name)) {
      ADD_FAILURE() << path << ": no " << name << " array";
      return mesh;
    }
  const std::string& points = arrays["Points"].second;
  EXPECT_EQ(arrays["Points"].first, "Float32");
  EXPECT_EQ(points.size(), 12 * n) << path;
  for (std::size_t i = 0; i + 1 <= points.size() / 12; ++i) {
    std::array<double, 3> p{};
    for (int k = 0; k < 3; ++k) p[k] = std::bit_cast<float>(littleEndian32(points.data() + 12 * i + 4 * k));
    mesh.points.push_back(p);
  }
  EXPECT_EQ(arrays["velocity"].second.size(), 12 * n) << path;
  const std::string& connectivity = arrays["connectivity"].second;
  const std::string& offsets = arrays["offsets"].second;
  const std::string& types = arrays["types"].second;
  EXPECT_EQ(offsets.size(), 4 * cells) << path;
  EXPECT_EQ(types.size(), cells) << path;
  for (std::size_t i = 0; i < connectivity.size() / 4; ++i)
    EXPECT_LT(littleEndian32(connectivity.data() + 4 * i), n) << path << ": connectivity " << i;
  std::uint32_t previous = 0;
  for (std::size_t c = 0; c < cells && 4 * c + 4 <= offsets.size() && c < types.size(); ++c) {
    const std::uint32_t endOfCell = littleEndian32(offsets.data() + 4 * c);
    const auto cellType = static_cast<unsigned char>(types[c]);
    const std::uint32_t expectedSize = cellType == 5 ? 3 : cellType == 3 ? 2 : cellType == 10 ? 4 : 1;
    EXPECT_EQ(endOfCell - previous, expectedSize) << path << ": cell " << c << " of type " << int(cellType);
    previous = endOfCell;
    mesh.triangles += cellType == 5;
    mesh.lines += cellType == 3;
    mesh.tets += cellType == 10;
  }
  EXPECT_EQ(std::size_t{previous} * 4, connectivity.size()) << path;
  return mesh;
}

Mesh readObj(const fs::path& path) {
  Mesh mesh;
  std::vector<std::vector<std::size_t>> faces;
  for (const std::string& line : lines(readFile(path))) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "v") {
      std::array<double, 3> p{};
      in >> p[0] >> p[1] >> p[2];
      EXPECT_FALSE(in.fail()) << path << ": " << line;
      mesh.points.push_back(p);
    } else if (tag == "f" || tag == "l") {
      // A face corner is "v", "v/vt", "v//vn" or "v/vt/vn": the vertex index comes first. A line
      // ("l") is a polyline through all of its vertices: one segment per pair of neighbours.
      std::vector<std::size_t> indices;
      for (std::string corner; in >> corner;) indices.push_back(std::stoul(corner.substr(0, corner.find('/'))));
      if (tag == "f") {
        EXPECT_EQ(indices.size(), 3u) << path << ": " << line;
        mesh.triangles += 1;
      } else {
        EXPECT_GE(indices.size(), 2u) << path << ": " << line;
        mesh.lines += indices.size() - 1;
      }
      faces.push_back(indices);
    }
  }
  for (const auto& face : faces)
    for (std::size_t i : face) EXPECT_TRUE(i >= 1 && i <= mesh.points.size()) << path << ": index " << i;
  return mesh;
}

// Binary little-endian PLY: parses the header's elements and properties and reads every record.
Mesh readPly(const fs::path& path) {
  Mesh mesh;
  const std::string text = readFile(path);
  const std::size_t headerEnd = text.find("end_header\n");
  if (!text.starts_with("ply\nformat binary_little_endian 1.0\n") || headerEnd == std::string::npos) {
    ADD_FAILURE() << path << ": not a binary little-endian PLY file";
    return mesh;
  }
  struct Element {
    std::string name;
    std::size_t count = 0;
    std::vector<std::string> properties;  // type names; "list" entries as "list:count:index"
  };
  std::vector<Element> elements;
  for (const std::string& line : lines(text.substr(0, headerEnd))) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "element") {
      Element e;
      in >> e.name >> e.count;
      elements.push_back(e);
    } else if (word == "property" && !elements.empty()) {
      std::string type;
      in >> type;
      if (type == "list") {
        std::string countType, indexType;
        in >> countType >> indexType;
        type = "list:" + countType + ":" + indexType;
      }
      elements.back().properties.push_back(type);
    }
  }
  auto sizeOf = [](const std::string& type) -> std::size_t {
    if (type == "char" || type == "uchar" || type == "int8" || type == "uint8") return 1;
    if (type == "short" || type == "ushort" || type == "int16" || type == "uint16") return 2;
    if (type == "double" || type == "float64") return 8;
    return 4;
  };
  std::size_t at = headerEnd + std::strlen("end_header\n");
  for (const Element& e : elements) {
    for (std::size_t r = 0; r < e.count; ++r) {
      std::array<double, 3> p{};
      for (std::size_t k = 0; k < e.properties.size(); ++k) {
        const std::string& type = e.properties[k];
        if (type.starts_with("list:")) {
          if (at >= text.size()) break;
          const auto count = static_cast<unsigned char>(text[at]);
          EXPECT_EQ(type, "list:uchar:int") << path;
          at += 1;
          for (unsigned i = 0; i < count && at + 4 <= text.size(); ++i, at += 4)
            if (e.name == "face") {
              EXPECT_LT(littleEndian32(text.data() + at), elements.front().count) << path;
            }
          if (e.name == "face") {
            EXPECT_EQ(count, 3u) << path;
            mesh.triangles += 1;
          }
        } else {
          if (e.name == "vertex" && k < 3 && type == "float" && at + 4 <= text.size())
            p[k] = std::bit_cast<float>(littleEndian32(text.data() + at));
          at += sizeOf(type);
        }
      }
      if (e.name == "vertex") mesh.points.push_back(p);
      if (e.name == "edge") mesh.lines += 1;
    }
  }
  EXPECT_EQ(at, text.size()) << path << ": the records do not fill the file exactly";
  return mesh;
}

// ---------------------------------------------------------------------------------------------
// pliant run

using CliRun = CliTest;

TEST_F(CliRun, DefaultSceneWritesEveryOutputAndTheyParse) {
  const RunResult r = run("run --out out --frames 10 --uncompressed --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(r.out, "");  // --quiet: no summary line
  const fs::path out = path("out");

  // summary.json: the default scene is cloth, 48 x 48 particles.
  const nlohmann::json summary = readJson(out / "summary.json");
  ASSERT_FALSE(summary.is_discarded()) << readFile(out / "summary.json");
  EXPECT_EQ(summary.at("scene"), "cloth");
  EXPECT_EQ(summary.at("frames"), 10);
  EXPECT_EQ(summary.at("first_frame"), 0);
  EXPECT_EQ(summary.at("particles"), 2304);
  EXPECT_NEAR(summary.at("time_s").get<double>(), 10.0 / 60.0, 1e-12);
  EXPECT_EQ(summary.at("settings").at("substeps"), 15);
  EXPECT_EQ(summary.at("settings").at("iterations"), 1);
  EXPECT_EQ(summary.at("outputs").at("frames_written"), 11);
  EXPECT_TRUE(std::isfinite(summary.at("final_energy_J").at("total").get<double>()));
  EXPECT_TRUE(std::isfinite(summary.at("final_residual").at("max").get<double>()));
  const std::string hash = summary.at("state_hash").get<std::string>();
  EXPECT_EQ(hash.size(), 16u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos) << hash;

  // The CLI computes what the library computes: same scene, same steps, same state hash.
  {
    const pliant::Scene scene = pliant::makeBuiltinScene("cloth");
    pliant::Solver solver(scene.model, scene.settings);
    pliant::State state = pliant::State::fromModel(*scene.model);
    ASSERT_TRUE(solver.run(state, 10).ok());
    char expected[17];
    std::snprintf(expected, sizeof expected, "%016llx", static_cast<unsigned long long>(state.hash()));
    EXPECT_EQ(hash, expected);
  }

  // frames/frame_000000.vtu .. frame_000010.vtu, each a complete VTK XML file of the cloth.
  for (int frame = 0; frame <= 10; ++frame) {
    char name[32];
    std::snprintf(name, sizeof name, "frame_%06d.vtu", frame);
    SCOPED_TRACE(name);
    const Mesh mesh = readVtu(out / "frames" / name);
    ASSERT_EQ(mesh.points.size(), 2304u);
    EXPECT_EQ(mesh.triangles, 2u * 47u * 47u);
    for (const auto& p : mesh.points)
      for (double c : p) ASSERT_TRUE(std::isfinite(c));
    if (frame == 0) {  // grid node 0 at the origin (-0.75, 1.6, -0.75), written as float
      EXPECT_NEAR(mesh.points[0][0], -0.75, 1e-6);
      EXPECT_NEAR(mesh.points[0][1], 1.6, 1e-6);
      EXPECT_NEAR(mesh.points[0][2], -0.75, 1e-6);
    }
  }
  EXPECT_EQ(filesUnder(out / "frames").size(), 11u);

  // scene.pvd lists the 11 frames with their times.
  const std::string pvd = readFile(out / "scene.pvd");
  EXPECT_THAT(pvd, HasSubstr("<VTKFile type=\"Collection\""));
  std::size_t dataSets = 0;
  for (std::size_t at = pvd.find("<DataSet"); at != std::string::npos; at = pvd.find("<DataSet", at + 1)) ++dataSets;
  EXPECT_EQ(dataSets, 11u);
  EXPECT_THAT(pvd, HasSubstr("file=\"frames/frame_000000.vtu\""));
  EXPECT_THAT(pvd, HasSubstr("file=\"frames/frame_000010.vtu\""));

  // probes.csv: time + corner (6) + pin_force (1) + energy (4) + residual (2) columns; one row per frame.
  const std::vector<std::string> probeLines = lines(readFile(out / "probes.csv"));
  ASSERT_EQ(probeLines.size(), 12u);
  const std::vector<std::string> header = split(probeLines[0], ',');
  ASSERT_EQ(header.size(), 14u) << probeLines[0];
  EXPECT_EQ(header[0], "time");
  EXPECT_EQ(header[1], "corner.x");
  EXPECT_EQ(header[7], "pin_force.force");
  EXPECT_EQ(header[11], "energy.total");
  EXPECT_EQ(header[13], "residual.rms");
  for (std::size_t row = 1; row < probeLines.size(); ++row) {
    const std::vector<std::string> fields = split(probeLines[row], ',');
    ASSERT_EQ(fields.size(), header.size()) << probeLines[row];
    for (const std::string& f : fields) EXPECT_TRUE(finiteNumber(f)) << "row " << row << ": '" << f << "'";
    double time = 0.0;
    ASSERT_TRUE(finiteNumber(fields[0], &time));
    EXPECT_NEAR(time, static_cast<double>(row - 1) / 60.0, 1e-12);
  }
  // Row 0 is the initial state: the far corner (node 47, 47) at (0.75, 1.6, 0.75), at rest.
  const std::vector<std::string> first = split(probeLines[1], ',');
  EXPECT_EQ(std::stod(first[1]), 0.75);
  EXPECT_EQ(std::stod(first[2]), 1.6);
  EXPECT_EQ(std::stod(first[4]), 0.0);

  // final_state.csv: a header and one row per particle; pinned node 0 has not moved.
  const std::vector<std::string> finalLines = lines(readFile(out / "final_state.csv"));
  ASSERT_EQ(finalLines.size(), 2305u);
  EXPECT_EQ(finalLines[0], "particle,x,y,z,vx,vy,vz");
  for (std::size_t row = 1; row < finalLines.size(); ++row) {
    const std::vector<std::string> fields = split(finalLines[row], ',');
    ASSERT_EQ(fields.size(), 7u) << finalLines[row];
    EXPECT_EQ(fields[0], std::to_string(row - 1));
    for (const std::string& f : fields) ASSERT_TRUE(finiteNumber(f)) << finalLines[row];
  }
  const std::vector<std::string> pinned = split(finalLines[1], ',');
  EXPECT_EQ(std::stod(pinned[1]), -0.75);
  EXPECT_EQ(std::stod(pinned[2]), 1.6);
  EXPECT_EQ(std::stod(pinned[4]), 0.0);

  EXPECT_FALSE(fs::exists(out / "checkpoints"));
  expectNoTemporaryFiles(out);
}

TEST_F(CliRun, ObjFormatWritesCompleteObjFrames) {
  const RunResult r = run("run --out out --frames 2 --format obj --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(filesUnder(path("out") / "frames"),
            (std::vector<std::string>{"frame_000000.obj", "frame_000001.obj", "frame_000002.obj"}));
  for (const std::string& name : filesUnder(path("out") / "frames")) {
    SCOPED_TRACE(name);
    const Mesh mesh = readObj(path("out") / "frames" / name);
    EXPECT_EQ(mesh.points.size(), 2304u);
    EXPECT_EQ(mesh.triangles, 2u * 47u * 47u);
  }
  const Mesh first = readObj(path("out/frames/frame_000000.obj"));
  EXPECT_NEAR(first.points[0][1], 1.6, 1e-6);
  EXPECT_TRUE(fs::exists(path("out/summary.json")));
  EXPECT_FALSE(fs::exists(path("out/scene.pvd")));  // a ParaView collection lists VTK frames only
  expectNoTemporaryFiles(path("out"));
}

TEST_F(CliRun, PlyFormatWritesCompletePlyFrames) {
  const RunResult r = run("run rope --out out --frames 2 --format ply --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(filesUnder(path("out") / "frames"),
            (std::vector<std::string>{"frame_000000.ply", "frame_000001.ply", "frame_000002.ply"}));
  for (const std::string& name : filesUnder(path("out") / "frames")) {
    SCOPED_TRACE(name);
    const Mesh mesh = readPly(path("out") / "frames" / name);
    EXPECT_EQ(mesh.points.size(), 41u);
    // PLY has no polyline that assimp or meshio read: a rope's PLY is its points, and says so.
    EXPECT_EQ(mesh.lines, 0u);
    EXPECT_EQ(mesh.triangles, 0u);
    EXPECT_THAT(readFile(path("out") / "frames" / name), HasSubstr("comment its lines are not written"));
  }
  // The rope starts at (0, 2, 0) and ends at (2, 2, 0).
  const Mesh first = readPly(path("out/frames/frame_000000.ply"));
  ASSERT_EQ(first.points.size(), 41u);
  EXPECT_NEAR(first.points[40][0], 2.0, 1e-6);
  EXPECT_NEAR(first.points[40][1], 2.0, 1e-6);
  expectNoTemporaryFiles(path("out"));
}

TEST_F(CliRun, EveryAndNoFramesChooseWhichFramesAreWritten) {
  // --every 2 writes frames 0, 2, 4 and always the last one.
  RunResult r = run("run rope --out every --frames 5 --every 2 --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(filesUnder(path("every") / "frames"),
            (std::vector<std::string>{"frame_000000.vtu", "frame_000002.vtu", "frame_000004.vtu", "frame_000005.vtu"}));
  // Probes are still recorded every frame.
  EXPECT_EQ(lines(readFile(path("every/probes.csv"))).size(), 7u);

  r = run("run rope --out none --frames 3 --no-frames --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_TRUE(filesUnder(path("none") / "frames").empty());
  EXPECT_FALSE(fs::exists(path("none/scene.pvd")));
  EXPECT_TRUE(fs::exists(path("none/summary.json")));
  EXPECT_TRUE(fs::exists(path("none/final_state.csv")));
  EXPECT_EQ(readJson(path("none/summary.json")).at("outputs").at("frames_written"), 0);
}

TEST_F(CliRun, WithoutQuietPrintsASummaryLine) {
  const RunResult r = run("run rope --out out --frames 2");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("scene rope"));
  EXPECT_THAT(r.out, HasSubstr("41 particles"));
  EXPECT_THAT(r.out, HasSubstr(readJson(path("out/summary.json")).at("state_hash").get<std::string>()));
}

TEST_F(CliRun, EveryBuiltinSceneRunsFiveFrames) {
  for (const std::string& name : pliant::builtinSceneNames()) {
    SCOPED_TRACE(name);
    const RunResult r = run("run " + name + " --out " + name + " --frames 5 --quiet");
    EXPECT_EQ(r.exitCode, kExitOk) << r.err;
    const nlohmann::json summary = readJson(path(name) / "summary.json");
    ASSERT_FALSE(summary.is_discarded());
    EXPECT_EQ(summary.at("scene"), name);
    EXPECT_EQ(summary.at("frames"), 5);
    const pliant::Scene scene = pliant::makeBuiltinScene(name);
    EXPECT_EQ(summary.at("particles"), scene.model->particleCount());
    // One .vtu for a single part, else a multiblock of one .vtu per object, body and collider.
    const std::size_t parts = scene.topology.parts.size() + scene.model->bodyCount() + scene.model->colliders.size();
    EXPECT_EQ(summary.at("outputs").at("parts").size(), parts);
    EXPECT_TRUE(fs::exists(path(name) / "frames" / (parts == 1 ? "frame_000005.vtu" : "frame_000005.vtm")));
  }
}

TEST_F(CliRun, SceneFileAndBuiltinNameGiveTheSameResult) {
  const RunResult a = run("run rope --out a --frames 5 --no-frames --quiet");
  const RunResult b = run("run " + shellQuote(std::string(PLIANT_SOURCE_DIR) + "/scenes/rope.json") +
                          " --out b --frames 5 --no-frames --quiet");
  ASSERT_EQ(a.exitCode, kExitOk) << a.err;
  ASSERT_EQ(b.exitCode, kExitOk) << b.err;
  EXPECT_EQ(readJson(path("a/summary.json")).at("state_hash"), readJson(path("b/summary.json")).at("state_hash"));
  EXPECT_EQ(readFile(path("a/final_state.csv")), readFile(path("b/final_state.csv")));
}

TEST_F(CliRun, ThreadCountDoesNotChangeTheResult) {
  const RunResult one = run("run --out one --frames 5 --no-frames --threads 1 --quiet");
  const RunResult two = run("run --out two --frames 5 --no-frames --threads 2 --quiet");
  ASSERT_EQ(one.exitCode, kExitOk) << one.err;
  ASSERT_EQ(two.exitCode, kExitOk) << two.err;
  EXPECT_EQ(readJson(path("one/summary.json")).at("settings").at("threads"), 1);
  EXPECT_EQ(readJson(path("one/summary.json")).at("state_hash"), readJson(path("two/summary.json")).at("state_hash"));
}

TEST_F(CliRun, FullFeaturedSceneFileRuns) {
  const RunResult r = run("run " + shellQuote(goodScene("full.json")) + " --out out --frames 3 --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  const nlohmann::json summary = readJson(path("out/summary.json"));
  EXPECT_EQ(summary.at("scene"), "full");
  EXPECT_EQ(summary.at("particles"), 84);
  EXPECT_EQ(summary.at("constraints").at("distance"), 187);
  // "probe_every": "substep": 1 initial row + 3 frames x 4 substeps.
  const std::vector<std::string> probeLines = lines(readFile(path("out/probes.csv")));
  ASSERT_EQ(probeLines.size(), 1u + 1u + 12u);
  double last = 0.0;
  ASSERT_TRUE(finiteNumber(split(probeLines.back(), ',')[0], &last));
  EXPECT_NEAR(last, 0.03, 1e-12);
  double second = 0.0;
  ASSERT_TRUE(finiteNumber(split(probeLines[2], ',')[0], &second));
  EXPECT_NEAR(second, 0.0025, 1e-12);
}

TEST_F(CliRun, RefusedStepExits1NamingTheSceneAndKeepsTheFramesBeforeIt) {
  // Gravity moves the free rope by g dt^2 = 2.7 mm in the first step, far above the bound.
  writeFile(path("runaway.json"),
            R"({"name": "runaway", "solver": {"max_displacement": 1e-6}, "frames": 5, "objects": [{"type": "rope",
                "name": "r", "start": [0, 0, 0], "end": [1, 0, 0], "particles": 5, "mass": 1}]})");
  const RunResult r = run("run runaway.json --out out --quiet");
  EXPECT_EQ(r.exitCode, kExitInternal);
  EXPECT_THAT(r.err, HasSubstr("pliant: runaway.json: "));
  EXPECT_THAT(r.err, HasSubstr("displacement above the bound"));
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(fs::exists(path("out/frames/frame_000000.vtu")));
  // The run's files up to the last good frame, the summary saying it was refused.
  EXPECT_THAT(readFile(path("out/summary.json")), HasSubstr("\"status\": \"refused\""));
}

// ---------------------------------------------------------------------------------------------
// Bad input: exit 2, one message on stderr naming the file, nothing written.

using CliBadInput = CliTest;

TEST_F(CliBadInput, EveryMalformedSceneExits2WithOneMessageAndNoOutputFolder) {
  const std::vector<std::string> files = badSceneFiles();
  EXPECT_GE(files.size(), 26u);
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const RunResult r = run("run " + shellQuote(file) + " --out out --frames 1 --quiet");
    EXPECT_EQ(r.exitCode, kExitBadInput) << r.err;
    EXPECT_THAT(r.err, StartsWith("pliant: " + file + ":"));
    EXPECT_EQ(lines(r.err).size(), 1u) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(path("out"))) << "the output folder was created";
  }
}

TEST_F(CliBadInput, MalformedSceneLeavesAnExistingOutputFolderUntouched) {
  fs::create_directories(path("out"));
  writeFile(path("out/keep.txt"), "previous run\n");
  const RunResult r = run("run " + shellQuote(badScene("negative_mass.json")) + " --out out --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("negative_mass.json: /objects/0/mass: expected a number greater than 0, got -1"));
  EXPECT_EQ(filesUnder(path("out")), std::vector<std::string>{"keep.txt"});
}

TEST_F(CliBadInput, MissingSceneFileFolderAndUnknownBuiltin) {
  RunResult r = run("run does_not_exist.json --out out");
  EXPECT_EQ(r.exitCode, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("does_not_exist.json: cannot open"));
  r = run("run " + shellQuote(std::string(PLIANT_TEST_DATA_DIR) + "/scenes") + " --out out");
  EXPECT_EQ(r.exitCode, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("is a folder"));
  r = run("run ropee --out out");
  EXPECT_EQ(r.exitCode, kExitBadInput);
  std::string list;
  for (const std::string& name : pliant::builtinSceneNames()) list += (list.empty() ? "" : ", ") + name;
  EXPECT_THAT(r.err, HasSubstr("unknown scene 'ropee' (built-in scenes: " + list + ")"));
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(CliBadInput, BadOptionsExit2) {
  for (const std::string& args :
       {std::string("run --bogus"), std::string("run --format xyz"), std::string("run --frames -1"),
        std::string("run --every 0"), std::string("run --frames ten"), std::string("frobnicate"),
        std::string("validate"), std::string("info")}) {
    SCOPED_TRACE(args);
    const RunResult r = run(args + " --out out");
    EXPECT_EQ(r.exitCode, kExitBadInput);
    EXPECT_FALSE(r.err.empty());
    EXPECT_FALSE(fs::exists(path("out")));
  }
}

TEST_F(CliBadInput, OptionRangesAreWordsNotThreeHundredDigits) {
  // CLI11's own checks printed "not in range 0.000000 to 17976931348623157..." (issue 16).
  RunResult r = run("run --frames -3 --out out");
  EXPECT_EQ(r.exitCode, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--frames: expected a whole number of at least 0 (and at most 2147483647), got -3"));
  r = run("run --threads 0 --out out");
  EXPECT_THAT(r.err, HasSubstr("--threads: expected a whole number of at least 1 (and at most 2147483647), got 0"));
  r = run("run --every 99999999999 --out out");
  EXPECT_EQ(r.exitCode, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("got 99999999999"));
  r = run("bench --frames 2.5 --csv out.csv");
  EXPECT_THAT(r.err, HasSubstr("--frames: expected a whole number of at least 1"));
  EXPECT_FALSE(fs::exists(path("out")));
  EXPECT_FALSE(fs::exists(path("out.csv")));
}

// ---------------------------------------------------------------------------------------------
// pliant scenes / validate / info / --version / --help

using CliCommands = CliTest;

TEST_F(CliCommands, ScenesListsTheBuiltinsInOrder) {
  const RunResult r = run("scenes");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  const std::vector<std::string> out = lines(r.out);
  const std::vector<std::string> names = pliant::builtinSceneNames();
  ASSERT_EQ(out.size(), names.size()) << r.out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_THAT(out[i], StartsWith(names[i] + " "));
    EXPECT_THAT(out[i], HasSubstr(pliant::builtinSceneDescription(names[i])));
  }
}

TEST_F(CliCommands, ScenesNamePrintsItsJson) {
  const RunResult r = run("scenes cloth");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(r.out, readFile(std::string(PLIANT_SOURCE_DIR) + "/scenes/cloth.json"));
  const nlohmann::json scene = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(scene.is_discarded());
  EXPECT_EQ(scene.at("name"), "cloth");
  // What it prints is a scene file: saved and validated, it is the cloth again.
  writeFile(path("cloth.json"), r.out);
  const RunResult v = run("validate cloth.json");
  EXPECT_EQ(v.exitCode, kExitOk) << v.err;
  EXPECT_THAT(v.out, HasSubstr("2304 particles"));

  const RunResult unknown = run("scenes clot");
  EXPECT_EQ(unknown.exitCode, kExitBadInput);
  EXPECT_THAT(unknown.err, HasSubstr("clot"));
}

TEST_F(CliCommands, ValidateGoodAndBadFiles) {
  RunResult r = run("validate " + shellQuote(goodScene("full.json")));
  EXPECT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("full.json: ok (84 particles"));
  EXPECT_THAT(r.out, HasSubstr("50 frames"));
  EXPECT_EQ(r.err, "");

  for (const std::string& file : badSceneFiles()) {
    SCOPED_TRACE(file);
    r = run("validate " + shellQuote(file));
    EXPECT_EQ(r.exitCode, kExitBadInput);
    EXPECT_THAT(r.err, StartsWith("pliant: " + file + ":"));
    EXPECT_EQ(lines(r.err).size(), 1u) << r.err;
    EXPECT_EQ(r.out, "");
  }
  r = run("validate " + shellQuote(badScene("syntax_error.json")));
  EXPECT_THAT(r.err, HasSubstr("syntax_error.json:5:31: JSON syntax error: unexpected '}'"));
}

// The words of the first line of `pliant info` output whose first word is `label` ({label} when none).
std::vector<std::string> infoLine(const std::string& output, const std::string& label) {
  for (const std::string& line : lines(output)) {
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string word; in >> word;) words.push_back(word);
    if (!words.empty() && words[0] == label) return words;
  }
  return {label};
}

TEST_F(CliCommands, InfoPrintsTheSceneSize) {
  RunResult r = run("info rope");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(infoLine(r.out, "particles"), (std::vector<std::string>{"particles", "41"})) << r.out;
  EXPECT_EQ(infoLine(r.out, "frames").at(1), "240") << r.out;
  EXPECT_THAT(r.out, HasSubstr("20 substeps x 1 iterations"));

  r = run("info " + shellQuote(goodScene("full.json")));
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(infoLine(r.out, "particles"), (std::vector<std::string>{"particles", "84"})) << r.out;
  EXPECT_EQ(infoLine(r.out, "objects"), (std::vector<std::string>{"objects", "6"})) << r.out;
  EXPECT_EQ(infoLine(r.out, "sheet"), (std::vector<std::string>{"sheet", "12", "particles"})) << r.out;
  EXPECT_EQ(infoLine(r.out, "probes"), (std::vector<std::string>{"probes", "9"})) << r.out;

  r = run("info " + shellQuote(badScene("pin_index.json")));
  EXPECT_EQ(r.exitCode, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("pin_index.json: /objects/0/pins/0/index"));
}

TEST_F(CliCommands, VersionAndHelp) {
  RunResult r = run("--version");
  EXPECT_EQ(r.exitCode, kExitOk);
  EXPECT_THAT(r.out, HasSubstr(std::string("pliant ") + PLIANT_VERSION));

  const std::vector<std::pair<std::string, std::vector<std::string>>> helps = {
      {"--help", {"run", "scenes", "validate", "info"}},
      {"run --help",
       {"--out", "--frames", "--format", "--every", "--no-frames", "--threads", "--checkpoint-every", "--checkpoint-at",
        "--resume", "--quiet"}},
      {"scenes --help", {"name"}},
      {"validate --help", {"file"}},
      {"info --help", {"file"}},
      {"bench --help", {"--scene", "--threads", "--frames", "--csv", "--stages"}},
  };
  for (const auto& [args, mentions] : helps) {
    SCOPED_TRACE(args);
    r = run(args);
    EXPECT_EQ(r.exitCode, kExitOk) << r.err;
    for (const std::string& word : mentions) EXPECT_THAT(r.out, HasSubstr(word));
  }
}

// ---------------------------------------------------------------------------------------------
// Checkpoints

using CliCheckpoint = CliTest;

TEST_F(CliCheckpoint, ResumedRunIsBitIdenticalToAnUninterruptedOne) {
  RunResult r = run("run rope --frames 60 --checkpoint-at 30 --out A --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(filesUnder(path("A/checkpoints")), std::vector<std::string>{"frame_000030.ckpt"});
  r = run("run rope --frames 60 --resume A/checkpoints/frame_000030.ckpt --out B --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;

  const nlohmann::json a = readJson(path("A/summary.json"));
  const nlohmann::json b = readJson(path("B/summary.json"));
  EXPECT_EQ(b.at("first_frame"), 30);
  EXPECT_EQ(b.at("frames"), 60);
  EXPECT_EQ(a.at("state_hash"), b.at("state_hash"));
  EXPECT_EQ(a.at("time_s"), b.at("time_s"));
  EXPECT_EQ(readFile(path("A/final_state.csv")), readFile(path("B/final_state.csv")));
  // The resumed run's probe rows (frames 30..60) are the uninterrupted run's, character for character.
  const std::vector<std::string> probesA = lines(readFile(path("A/probes.csv")));
  const std::vector<std::string> probesB = lines(readFile(path("B/probes.csv")));
  ASSERT_EQ(probesA.size(), 62u);
  ASSERT_EQ(probesB.size(), 32u);
  EXPECT_EQ(probesA[0], probesB[0]);
  for (std::size_t i = 1; i < probesB.size(); ++i) EXPECT_EQ(probesB[i], probesA[30 + i]) << "row " << i;
  // Frames of the resumed run start at the checkpoint's frame.
  EXPECT_TRUE(fs::exists(path("B/frames/frame_000030.vtu")));
  EXPECT_FALSE(fs::exists(path("B/frames/frame_000029.vtu")));
  EXPECT_EQ(readFile(path("A/frames/frame_000060.vtu")), readFile(path("B/frames/frame_000060.vtu")));
}

TEST_F(CliCheckpoint, CheckpointEveryAndAListOfFrames) {
  RunResult r = run("run rope --frames 6 --checkpoint-every 2 --no-frames --out every --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(filesUnder(path("every/checkpoints")),
            (std::vector<std::string>{"frame_000002.ckpt", "frame_000004.ckpt", "frame_000006.ckpt"}));
  // docs/scene-format.md: --checkpoint-at F1,F2
  r = run("run rope --frames 6 --checkpoint-at 1,5 --no-frames --out at --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(filesUnder(path("at/checkpoints")), (std::vector<std::string>{"frame_000001.ckpt", "frame_000005.ckpt"}));
  // The scene may follow the list: each --checkpoint-at takes one argument.
  r = run("run --checkpoint-at 3 rope --frames 4 --no-frames --out after --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(filesUnder(path("after/checkpoints")), std::vector<std::string>{"frame_000003.ckpt"});
  EXPECT_EQ(readJson(path("after/summary.json")).at("scene"), "rope");
  // A checkpoint from --checkpoint-every resumes like one from --checkpoint-at.
  r = run("run rope --frames 6 --resume every/checkpoints/frame_000004.ckpt --no-frames --out resumed --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(readJson(path("every/summary.json")).at("state_hash"),
            readJson(path("resumed/summary.json")).at("state_hash"));
}

TEST_F(CliCheckpoint, DamagedOrForeignCheckpointExits2) {
  RunResult r = run("run rope --frames 4 --checkpoint-at 2 --no-frames --out A --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  const std::string good = readFile(path("A/checkpoints/frame_000002.ckpt"));
  ASSERT_GT(good.size(), 100u);

  // `scene` is the scene and frame count to resume.
  auto expectRefused = [&](const std::string& name, const std::string& contents, const std::string& scene) {
    SCOPED_TRACE(name);
    writeFile(path(name), contents);
    const RunResult bad = run("run " + scene + " --resume " + name + " --out out --quiet");
    EXPECT_EQ(bad.exitCode, kExitBadInput) << bad.err;
    EXPECT_THAT(bad.err, HasSubstr(name));
    EXPECT_EQ(lines(bad.err).size(), 1u) << bad.err;
    EXPECT_FALSE(fs::exists(path("out"))) << "the output folder was created";
  };
  expectRefused("truncated.ckpt", good.substr(0, good.size() / 2), "rope --frames 4");
  std::string flipped = good;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x10);
  expectRefused("flipped.ckpt", flipped, "rope --frames 4");
  std::string magic = good;
  magic[0] = 'X';
  expectRefused("magic.ckpt", magic, "rope --frames 4");
  expectRefused("empty.ckpt", "", "rope --frames 4");
  expectRefused("foreign.ckpt", good, "cloth --frames 4");  // saved for the rope
  expectRefused("beyond.ckpt", good, "rope --frames 1");    // frame 2 is beyond the 1 frame asked for
  r = run("run rope --resume nowhere.ckpt --out out --quiet");
  EXPECT_EQ(r.exitCode, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("nowhere.ckpt"));
  EXPECT_FALSE(fs::exists(path("out")));
}

}  // namespace

// The example scene with mesh colliders (OBJ files relative to the scene) validates and runs.
TEST_F(CliCommands, ValidateAndRunTheMeshColliderExample) {
  RunResult r = run("validate " + shellQuote(goodScene("mesh_collider.json")));
  EXPECT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("mesh_collider.json: ok (403 particles"));
  r = run("run " + shellQuote(goodScene("mesh_collider.json")) + " --out out --frames 3 --no-frames --quiet");
  EXPECT_EQ(r.exitCode, kExitOk) << r.err;
}

// ---------------------------------------------------------------------------------------------
// pliant bench

using CliBench = CliTest;

const char* const kBenchHeader = "scene,threads,frames,ms_per_frame,mean_strain,p99_strain,state_hash";

// Checks a bench CSV: the header, then one row per scene and thread count, in that order.
void expectBenchCsv(const std::string& csv, const std::vector<std::string>& scenes, const std::vector<int>& threads,
                    int frames) {
  const std::vector<std::string> rows = lines(csv);
  ASSERT_EQ(rows.size(), 1 + scenes.size() * threads.size()) << csv;
  EXPECT_EQ(rows[0], kBenchHeader);
  std::size_t row = 1;
  for (const std::string& scene : scenes)
    for (int t : threads) {
      SCOPED_TRACE(rows[row]);
      const std::vector<std::string> fields = split(rows[row++], ',');
      ASSERT_EQ(fields.size(), 7u);
      EXPECT_EQ(fields[0], scene);
      EXPECT_EQ(fields[1], std::to_string(t));
      EXPECT_EQ(fields[2], std::to_string(frames));
      double ms = -1.0, mean = -1.0, p99 = -1.0;
      EXPECT_TRUE(finiteNumber(fields[3], &ms) && ms > 0.0);
      EXPECT_TRUE(finiteNumber(fields[4], &mean) && mean >= 0.0);
      EXPECT_TRUE(finiteNumber(fields[5], &p99) && p99 >= mean);
      EXPECT_EQ(fields[6].size(), 16u);
      EXPECT_EQ(fields[6].find_first_not_of("0123456789abcdef"), std::string::npos);
    }
}

TEST_F(CliBench, WritesOneCsvRowPerSceneAndThreadCountToStdout) {
  const RunResult r = run("bench --scene rope,cloth-grid-64 --threads 1,2 --frames 2");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  expectBenchCsv(r.out, {"rope", "cloth-grid-64"}, {1, 2}, 2);
  EXPECT_THAT(r.err, HasSubstr("bench: rope, 1 thread, 2 frames"));  // progress goes to stderr
  // Bit-identical for any thread count: the two rows of a scene have the same hash and strain.
  const std::vector<std::string> rows = lines(r.out);
  for (std::size_t first : {1u, 3u}) {
    const auto a = split(rows[first], ','), b = split(rows[first + 1], ',');
    EXPECT_EQ(a[6], b[6]);
    EXPECT_EQ(a[4], b[4]);
  }
  // Threads left unbound (--no-pin) give the same rows but for the time.
  const RunResult unbound = run("bench --scene rope,cloth-grid-64 --threads 1,2 --frames 2 --no-pin --quiet");
  ASSERT_EQ(unbound.exitCode, kExitOk) << unbound.err;
  const std::vector<std::string> unboundRows = lines(unbound.out);
  ASSERT_EQ(unboundRows.size(), rows.size());
  for (std::size_t row = 1; row < rows.size(); ++row)
    EXPECT_EQ(split(unboundRows[row], ',')[6], split(rows[row], ',')[6]);
}

// The contact workloads: the built-in contact scenes with finer cloths (self-collision on), the
// same bits on 1 and 2 threads.
TEST_F(CliBench, ContactScenesRunOnAnyThreadCountWithTheSameBits) {
  const RunResult r = run("bench --scene contact-fold-64,contact-sphere-80 --threads 1,2 --frames 3 --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  expectBenchCsv(r.out, {"contact-fold-64", "contact-sphere-80"}, {1, 2}, 3);
  const std::vector<std::string> rows = lines(r.out);
  for (std::size_t first : {1u, 3u}) EXPECT_EQ(split(rows[first], ',')[6], split(rows[first + 1], ',')[6]);
  const pliant::Scene fold = pliant::makeBenchmarkScene("contact-fold-64");
  EXPECT_EQ(fold.model->particleCount(), 64u * 64u);
  EXPECT_TRUE(fold.model->selfCollision);
  EXPECT_EQ(fold.frames, 120);
  EXPECT_EQ(pliant::makeBenchmarkScene("contact-sphere-80").model->particleCount(), 80u * 80u);
}

TEST_F(CliBench, CsvFileIsWrittenAtomicallyAndMatchesARun) {
  const RunResult r = run("bench --scene cloth-100-2m --threads 1 --frames 3 --csv out.csv --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  expectBenchCsv(readFile(path("out.csv")), {"cloth-100-2m"}, {1}, 3);
  expectNoTemporaryFiles(dir_);
  // The hash is the state `pliant run` reaches after the same frames.
  const RunResult run3 = run("run cloth-100-2m --frames 3 --no-frames --quiet --out runout");
  ASSERT_EQ(run3.exitCode, kExitOk) << run3.err;
  EXPECT_EQ(split(lines(readFile(path("out.csv")))[1], ',')[6],
            readJson(path("runout/summary.json")).at("state_hash").get<std::string>());
}

// --stages adds the step pipeline's stages, ms per frame, and the rest of the step; the first
// seven columns are those of a run without it.
TEST_F(CliBench, StagesAddTheTimeOfEachStagePerFrame) {
  const RunResult r = run("bench --scene cloth-sphere --threads 1 --frames 40 --stages --quiet");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  const std::vector<std::string> rows = lines(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_EQ(rows[0], std::string(kBenchHeader) +
                         ",predict_ms,collider_contacts_ms,particle_contacts_ms,surface_contacts_ms,body_contacts_ms,"
                         "constraints_ms,contact_projection_ms,velocities_ms,step_end_ms,other_ms");
  const std::vector<std::string> fields = split(rows[1], ',');
  ASSERT_EQ(fields.size(), 17u) << rows[1];
  double ms = 0.0;
  ASSERT_TRUE(finiteNumber(fields[3], &ms));
  double sum = 0.0;
  for (std::size_t k = 7; k < 17; ++k) {
    double stage = -1.0;
    ASSERT_TRUE(finiteNumber(fields[k], &stage)) << k;
    if (k + 1 < 17) {  // not other_ms, the difference (rounded)
      EXPECT_GE(stage, 0.0) << k;
    }
    sum += stage;
  }
  EXPECT_NEAR(sum, ms, 1e-3);                                // the columns add up to the step (each rounded to 1e-4 ms)
  for (const std::size_t k : {7u, 8u, 9u, 12u, 13u, 14u}) {  // prediction, contacts found, solve, velocities
    double stage = 0.0;
    ASSERT_TRUE(finiteNumber(fields[k], &stage));
    EXPECT_GT(stage, 0.0) << k;
  }
  const RunResult plain = run("bench --scene cloth-sphere --threads 1 --frames 40 --quiet");
  ASSERT_EQ(plain.exitCode, kExitOk) << plain.err;
  expectBenchCsv(plain.out, {"cloth-sphere"}, {1}, 40);
  EXPECT_EQ(split(lines(plain.out)[1], ',')[6], fields[6]);  // timing changes no bit
}

TEST_F(CliBench, StrainIsTheRelativeEdgeStretch) {
  // At rest (one tiny frame of a stiff cloth) strain is near 0; pliant::edgeStrain on a stretched
  // copy gives the stretch exactly.
  const pliant::Scene scene = pliant::makeBenchmarkScene("cloth-100-2m");
  std::vector<pliant::Vec3> stretched = scene.model->initialPosition;
  for (pliant::Vec3& x : stretched) x *= 1.01;
  const pliant::StrainStatistics s = pliant::edgeStrain(*scene.model, stretched);
  EXPECT_NEAR(s.mean, 0.01, 1e-12);
  EXPECT_NEAR(s.p99, 0.01, 1e-12);
  // 100x100 nodes: 2 x 99 x 100 structural edges and 99 x 99 diagonals.
  EXPECT_EQ(scene.model->distances.size(), 2u * 99u * 100u + 99u * 99u);
}

// A scene file benchmarks like the built-in scene it was printed from: same state after the same frames.
TEST_F(CliBench, SceneFilesRunLikeTheBuiltInSceneAndBadOnesExit2) {
  const RunResult printed = run("scenes rope");
  ASSERT_EQ(printed.exitCode, kExitOk) << printed.err;
  writeFile(path("my-rope.json"), printed.out);
  const RunResult r = run("bench --scene rope,my-rope.json --threads 1 --frames 4");
  ASSERT_EQ(r.exitCode, kExitOk) << r.err;
  expectBenchCsv(r.out, {"rope", "my-rope.json"}, {1}, 4);
  const std::vector<std::string> rows = lines(r.out);
  EXPECT_EQ(split(rows[1], ',')[6], split(rows[2], ',')[6]);

  writeFile(path("broken.json"), "{\"name\": \"broken\", \"particles\": 3}");
  const RunResult bad = run("bench --scene broken.json --csv out.csv");
  EXPECT_EQ(bad.exitCode, kExitBadInput);
  EXPECT_THAT(bad.err, HasSubstr("broken.json"));
  EXPECT_FALSE(fs::exists(path("out.csv")));
}

TEST_F(CliBench, BadArgumentsExit2AndWriteNothing) {
  for (const std::string& args : {std::string("bench --scene no-such-scene"), std::string("bench --threads 0"),
                                  std::string("bench --threads two"), std::string("bench --frames 0"),
                                  std::string("bench --frames -3"), std::string("bench --bogus")}) {
    SCOPED_TRACE(args);
    const RunResult r = run(args + " --csv out.csv");
    EXPECT_EQ(r.exitCode, kExitBadInput) << r.out;
    EXPECT_FALSE(r.err.empty());
    EXPECT_FALSE(fs::exists(path("out.csv")));
  }
  const RunResult folder = run("bench --scene rope --csv no/such/folder/out.csv");
  EXPECT_EQ(folder.exitCode, kExitBadInput);
  EXPECT_THAT(folder.err, HasSubstr("no such folder"));
  const RunResult unknown = run("bench --scene no-such-scene");
  EXPECT_THAT(unknown.err, HasSubstr("unknown benchmark scene 'no-such-scene'"));
  EXPECT_THAT(unknown.err, HasSubstr("cloth-100-10m-bending"));
  EXPECT_EQ(unknown.out, "");
}
