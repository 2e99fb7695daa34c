// Mesh readers (src/io/mesh_io.cpp): the unit cube split into five tets, written as TetGen, Gmsh 2.2
// and Gmsh 4.1 and as an OBJ surface, must read back identically with volume 1 m^3 and an outward
// surface; every malformed file in tests/data/meshes/bad must give one pliant::Error that names the
// file, the line and what was expected; mutated files must never crash a reader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>

#include "pliant/error.h"
#include "pliant/geometry.h"
#include "pliant/io/mesh_io.h"

namespace {

using pliant::Vec3;
using pliant::io::TetMesh;
using pliant::io::TriangleMesh;
using Triangles = std::vector<std::array<std::uint32_t, 3>>;

std::string dataDir() {
#ifdef PLIANT_TEST_DATA_DIR
  return std::string(PLIANT_TEST_DATA_DIR) + "/meshes/";
#else
  return (std::filesystem::path(__FILE__).parent_path().parent_path() / "data" / "meshes").string() + "/";
#endif
}
std::string mesh(const std::string& name) { return dataDir() + name; }
std::string bad(const std::string& name) { return dataDir() + "bad/" + name; }

double tetVolume(const std::vector<Vec3>& x, const std::array<std::uint32_t, 4>& t) {
  return (x[t[1]] - x[t[0]]).dot((x[t[2]] - x[t[0]]).cross(x[t[3]] - x[t[0]])) / 6.0;
}

// Volume enclosed by a closed triangle surface (divergence theorem); positive when it faces outward.
double enclosedVolume(const std::vector<Vec3>& x, const Triangles& triangles) {
  double volume = 0.0;
  for (const auto& t : triangles) volume += x[t[0]].dot(x[t[1]].cross(x[t[2]])) / 6.0;
  return volume;
}

// Checks a closed surface of the unit cube: n triangles of area 1/2 each, all facing away from
// the centre, enclosing 1 m^3.
void expectOutwardUnitCube(const std::vector<Vec3>& x, const Triangles& triangles) {
  ASSERT_EQ(triangles.size(), 12u);
  const Vec3 centre(0.5, 0.5, 0.5);
  for (const auto& t : triangles) {
    const Vec3 n = (x[t[1]] - x[t[0]]).cross(x[t[2]] - x[t[0]]);
    EXPECT_NEAR(0.5 * n.norm(), 0.5, 1e-14);
    EXPECT_GT(n.dot((x[t[0]] + x[t[1]] + x[t[2]]) / 3.0 - centre), 0.4) << t[0] << " " << t[1] << " " << t[2];
  }
  EXPECT_NEAR(enclosedVolume(x, triangles), 1.0, 1e-14);
}

// The reference decomposition the files encode: the cube's corners i -> (i&1, i>>1&1, i>>2&1),
// four corner tets of 1/6 m^3 and a central one of 1/3 m^3.
const std::vector<std::array<std::uint32_t, 4>> kCubeTets = {
    {0, 1, 2, 4}, {3, 2, 1, 7}, {5, 1, 4, 7}, {6, 4, 2, 7}, {1, 2, 4, 7}};

void expectUnitCube(const TetMesh& m) {
  ASSERT_EQ(m.vertices.size(), 8u);
  for (std::uint32_t i = 0; i < 8; ++i)
    EXPECT_EQ(m.vertices[i], Vec3(i & 1, (i >> 1) & 1, (i >> 2) & 1)) << "vertex " << i;
  EXPECT_EQ(m.tets, kCubeTets);
  double total = 0.0;
  for (const auto& t : m.tets) {
    EXPECT_GT(tetVolume(m.vertices, t), 1.0 / 6.0 - 1e-15);
    total += tetVolume(m.vertices, t);
  }
  EXPECT_NEAR(total, 1.0, 1e-14);
}

// The read must throw pliant::Error whose message contains every fragment (the first names the
// file and line, e.g. "node_nan.node:3:").
void expectError(const std::function<void()>& read, std::initializer_list<std::string> fragments) {
  try {
    read();
    ADD_FAILURE() << "expected pliant::Error containing '" << *fragments.begin() << "'";
  } catch (const pliant::Error& e) {
    const std::string message = e.what();
    for (const std::string& f : fragments)
      EXPECT_NE(message.find(f), std::string::npos) << "'" << f << "' not in: " << message;
  }
}
void expectTetGenError(const std::string& name, std::initializer_list<std::string> fragments) {
  expectError([&] { pliant::io::readTetGen(bad(name)); }, fragments);
}
void expectGmshError(const std::string& name, std::initializer_list<std::string> fragments) {
  expectError([&] { pliant::io::readGmsh(bad(name)); }, fragments);
}
void expectObjError(const std::string& name, std::initializer_list<std::string> fragments) {
  expectError([&] { pliant::io::readObj(bad(name)); }, fragments);
}

// ---------------------------------------------------------------------------------------------
// Valid files

TEST(MeshIo_TetGen, ReadsUnitCubeWithCommentsAttributesAndMarkers) {
  expectUnitCube(pliant::io::readTetGen(mesh("cube.node")));
  expectUnitCube(pliant::io::readTetGen(mesh("cube.ele")));
  expectUnitCube(pliant::io::readTetGen(mesh("cube")));
}

TEST(MeshIo_TetGen, ZeroBasedFileWithAllTetsReversedIsFlippedAsAWhole) {
  expectUnitCube(pliant::io::readTetGen(mesh("cube_zero_based")));
}

TEST(MeshIo_TetGen, QuadraticTetKeepsItsFourCorners) {
  const TetMesh m = pliant::io::readTetGen(mesh("tet10"));
  ASSERT_EQ(m.vertices.size(), 10u);  // edge midpoints stay, unused, so indices match the file
  ASSERT_EQ(m.tets.size(), 1u);
  EXPECT_EQ(m.tets[0], (std::array<std::uint32_t, 4>{0, 1, 2, 3}));
  EXPECT_NEAR(tetVolume(m.vertices, m.tets[0]), 1.0 / 6.0, 1e-15);
}

TEST(MeshIo_Gmsh, ReadsAscii22AndIgnoresOtherElementTypes) {
  expectUnitCube(pliant::io::readGmsh(mesh("cube_v22.msh")));
}

TEST(MeshIo_Gmsh, ReadsAscii41WithSparseTagsAndParametricBlock) {
  expectUnitCube(pliant::io::readGmsh(mesh("cube_v41.msh")));
}

TEST(MeshIo_TetMesh, AllFormatsGiveTheSameMesh) {
  const TetMesh reference = pliant::io::readTetMesh(mesh("cube.ele"));
  for (const char* name : {"cube.node", "cube_zero_based.node", "cube_v22.msh", "cube_v41.msh"}) {
    const TetMesh m = pliant::io::readTetMesh(mesh(name));
    EXPECT_EQ(m.vertices, reference.vertices) << name;
    EXPECT_EQ(m.tets, reference.tets) << name;
  }
  expectError([] { pliant::io::readTetMesh(mesh("cube.obj")); },
              {"cube.obj: unknown tetrahedral mesh extension", ".msh"});
}

TEST(MeshIo_Surface, CubeSurfaceHasTwelveOutwardTriangles) {
  const TetMesh m = pliant::io::readGmsh(mesh("cube_v41.msh"));
  expectOutwardUnitCube(m.vertices, pliant::boundaryTriangles(m.tets));
}

TEST(MeshIo_Surface, SingleTetAndTwoTetsSharingAFace) {
  const std::vector<Vec3> x = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
  const std::vector<std::array<std::uint32_t, 4>> one = {{0, 1, 2, 3}};
  const Triangles s1 = pliant::boundaryTriangles(one);
  ASSERT_EQ(s1.size(), 4u);
  EXPECT_NEAR(enclosedVolume(x, s1), 1.0 / 6.0, 1e-15);
  // A second tet on the face (1, 2, 3), across from vertex 0, of volume 1/3.
  const std::vector<std::array<std::uint32_t, 4>> two = {{0, 1, 2, 3}, {4, 3, 2, 1}};
  ASSERT_GT(tetVolume(x, two[1]), 0.0);
  const Triangles s2 = pliant::boundaryTriangles(two);
  ASSERT_EQ(s2.size(), 6u);  // the shared face is interior
  EXPECT_NEAR(enclosedVolume(x, s2), tetVolume(x, two[0]) + tetVolume(x, two[1]), 1e-15);
}

TEST(MeshIo_Orient, FlipsAllNegativeMeshAndRejectsMinorityDegenerateEmptyAndOutOfRange) {
  TetMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
  m.tets = {{0, 2, 1, 3}, {4, 2, 3, 1}};  // both negative
  pliant::io::orientTets(m, "made.msh");
  for (const auto& t : m.tets) EXPECT_GT(tetVolume(m.vertices, t), 0.0);
  EXPECT_NEAR(tetVolume(m.vertices, m.tets[0]) + tetVolume(m.vertices, m.tets[1]), 1.0 / 6.0 + 1.0 / 3.0, 1e-15);

  TetMesh minority = m;
  minority.tets.push_back({1, 2, 4, 3});  // negative: (4, 3, 2, 1) is positive and this is an odd permutation of it
  ASSERT_LT(tetVolume(m.vertices, minority.tets[2]), 0.0);
  const TetMesh before = minority;
  expectError([&] { pliant::io::orientTets(minority, "made.msh"); },
              {"made.msh: tet 2 is inverted", "2 of the 3 tets"});
  EXPECT_EQ(minority.tets, before.tets);  // a throw leaves the mesh untouched

  TetMesh flippedMinority = minority;  // all reversed but one: the one is the inverted tet
  for (auto& t : flippedMinority.tets) std::swap(t[2], t[3]);
  expectError([&] { pliant::io::orientTets(flippedMinority, "made.msh"); },
              {"made.msh: tet 2 is inverted", "2 of the 3 tets"});
  EXPECT_EQ(flippedMinority.tets[0], (std::array<std::uint32_t, 4>{0, 1, 3, 2}));

  TetMesh flat = m;
  flat.vertices[4] = Vec3(0.5, 0.5, 0.0);  // tet 0 = (0, 1, 2, 4) lies in the plane z = 0
  flat.tets = {{0, 1, 2, 4}, {0, 1, 2, 3}};
  expectError([&] { pliant::io::orientTets(flat, "made.msh"); },
              {"made.msh: tet 0 is degenerate", "expected four vertices not in one plane"});

  TetMesh empty;
  empty.vertices = m.vertices;
  expectError([&] { pliant::io::orientTets(empty, "made.msh"); }, {"made.msh: empty mesh: no tetrahedra"});

  TetMesh outside = m;
  outside.tets[1][0] = 5;
  expectError([&] { pliant::io::orientTets(outside, "made.msh"); },
              {"made.msh: tet 1 uses vertex 5; expected an index below 5"});
}

TEST(MeshIo_Obj, ReadsCubeQuadsWithTexturesNormalsGroupsAndRelativeIndices) {
  const TriangleMesh m = pliant::io::readObj(mesh("cube.obj"));
  ASSERT_EQ(m.vertices.size(), 8u);
  for (std::uint32_t i = 0; i < 8; ++i)
    EXPECT_EQ(m.vertices[i], Vec3(i & 1, (i >> 1) & 1, (i >> 2) & 1)) << "vertex " << i;
  expectOutwardUnitCube(m.vertices, m.triangles);
  // The first quad 'f 1 3 4 2' is fanned from its first corner.
  EXPECT_EQ(m.triangles[0], (std::array<std::uint32_t, 3>{0, 2, 3}));
  EXPECT_EQ(m.triangles[1], (std::array<std::uint32_t, 3>{0, 3, 1}));
  // The relative face 'f -8 -4 -2 -6' after eight vertices is 'f 1 5 7 3'.
  EXPECT_EQ(m.triangles[10], (std::array<std::uint32_t, 3>{0, 4, 6}));
  EXPECT_TRUE(m.texcoords.empty());  // some corners name no vt
}

TEST(MeshIo_Obj, TexcoordsPerVertexWhenEveryCornerNamesOne) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("pliant_uv_" + std::to_string(::getpid()) + ".obj")).string();
  {
    std::ofstream out(path);
    // A quad of two triangles; vertex 1 is on a seam (corners name vt 1 and vt 4): it keeps vt 1.
    out << "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0.1 0.2\nvt 0.9 0.2\nvt 0.9 0.8\nvt 0.5 0.5\n"
        << "f 1/1 2/2 3/3\nf 1/4 3/3 4/2\n";
  }
  const TriangleMesh m = pliant::io::readObj(path);
  std::filesystem::remove(path);
  ASSERT_EQ(m.texcoords.size(), 4u);
  EXPECT_EQ(m.texcoords[0], (std::array<double, 2>{0.1, 0.2}));
  EXPECT_EQ(m.texcoords[2], (std::array<double, 2>{0.9, 0.8}));
  EXPECT_EQ(m.texcoords[3], (std::array<double, 2>{0.9, 0.2}));
}

TEST(MeshIo_Obj, PentagonIsFanned) {
  const TriangleMesh m = pliant::io::readObj(mesh("pentagon.obj"));
  ASSERT_EQ(m.vertices.size(), 5u);
  const Triangles expected = {{0, 1, 2}, {0, 2, 3}, {0, 3, 4}};
  EXPECT_EQ(m.triangles, expected);
  double area = 0.0;
  for (const auto& t : m.triangles)
    area += 0.5 * (m.vertices[t[1]] - m.vertices[t[0]]).cross(m.vertices[t[2]] - m.vertices[t[0]]).z();
  EXPECT_NEAR(area, 2.0, 1e-15);  // shoelace area of the pentagon
}

TEST(MeshIo_Obj, KeepsCoordinatesCorrectlyRounded) {
  // tinyobjloader alone reads 0.30000000000000004 as 0.3000000000000001.
  const std::string path = ::testing::TempDir() + "pliant_meshio_rounding_" + std::to_string(::getpid()) + ".obj";
  {
    std::ofstream out(path);
    out << "v 0.30000000000000004 2.2250738585072014e-308 1e-400\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  }
  const TriangleMesh m = pliant::io::readObj(path);
  std::filesystem::remove(path);
  EXPECT_EQ(m.vertices[0].x(), 0.30000000000000004);
  EXPECT_EQ(m.vertices[0].y(), 2.2250738585072014e-308);
  EXPECT_EQ(m.vertices[0].z(), 0.0);
}

// ---------------------------------------------------------------------------------------------
// Malformed TetGen files: each names the file, the line and what was expected.

TEST(MeshIo_TetGenErrors, NodeFileSyntax) {
  expectTetGenError("node_token_count.node",
                    {"node_token_count.node:4:", "3 numbers on a node line; expected 4 numbers"});
  expectTetGenError("node_non_numeric.node",
                    {"node_non_numeric.node:5:", "'abc' is not a number; expected the y coordinate"});
  expectTetGenError("node_nan.node", {"node_nan.node:3:", "'nan' is not a finite number; expected the x coordinate"});
  expectTetGenError("node_inf.node", {"node_inf.node:6:", "'-inf' is not a finite number; expected the z coordinate"});
  expectTetGenError("node_huge_number.node", {"node_huge_number.node:7:", "'1e999' is not a finite number"});
  expectTetGenError("node_binary.node", {"node_binary.node:3:", "binary data"});
}

TEST(MeshIo_TetGenErrors, NodeIndicesAndCounts) {
  expectTetGenError("node_duplicate.node", {"node_duplicate.node:6:", "node 3 is defined twice (first at line 4)"});
  expectTetGenError("node_out_of_range.node",
                    {"node_out_of_range.node:9:", "node index '9' is out of range; expected 1 to 8"});
  expectTetGenError("node_first_index.node", {"node_first_index.node:2:", "first node index '5'; expected 0 or 1"});
  expectTetGenError("node_truncated.node", {"node_truncated.node:7:", "file ends after 6 of the 8 nodes"});
  expectTetGenError("node_trailing.node", {"node_trailing.node:10:", "unexpected data after the 8 nodes"});
  expectTetGenError("node_negative_count.node",
                    {"node_negative_count.node:1:", "'-8' is out of range; expected a node count from 0"});
  expectTetGenError("node_count_overflow.node",
                    {"node_count_overflow.node:1:", "is out of range; expected a node count"});
  // A header claiming two billion nodes must fail at the end of the file, not allocate for them.
  expectTetGenError("node_count_larger_than_file.node",
                    {"node_count_larger_than_file.node:9:", "file ends after 8 of the 2000000000 nodes"});
  expectTetGenError("node_dimension.node", {"node_dimension.node:1:", "dimension '2'; expected 3"});
  expectTetGenError("node_empty.node", {"node_empty.node:2:", "declares 0 nodes", "empty"});
}

TEST(MeshIo_TetGenErrors, EleFile) {
  expectTetGenError("ele_out_of_range", {"ele_out_of_range.ele:4:", "node index '9' is out of range; expected 1 to 8"});
  expectTetGenError("ele_token_count", {"ele_token_count.ele:3:", "4 numbers on a tetrahedron line; expected 5"});
  expectTetGenError("ele_nodes_per_tet", {"ele_nodes_per_tet.ele:1:", "'3' nodes per tetrahedron; expected 4 or 10"});
  expectTetGenError("ele_truncated", {"ele_truncated.ele:4:", "file ends after 3 of the 5 tetrahedra"});
  expectTetGenError("ele_non_numeric",
                    {"ele_non_numeric.ele:6:", "'x' is not an integer; expected a node index from 1 to 8"});
  expectTetGenError("ele_empty", {"ele_empty.ele:1:", "declares 0 tetrahedra", "empty"});
  expectTetGenError("ele_missing.node", {"ele_missing.ele: cannot open"});
  expectTetGenError("does_not_exist", {"does_not_exist.node: cannot open"});
}

TEST(MeshIo_TetGenErrors, InvertedAndDegenerateTets) {
  expectTetGenError("ele_inverted", {"ele_inverted.ele:5: tetrahedron is inverted", "4 of the 5 tets"});
  expectTetGenError("ele_degenerate", {"ele_degenerate.ele:3: tetrahedron is degenerate", "volume 0 m^3"});
}

// ---------------------------------------------------------------------------------------------
// Malformed Gmsh files

TEST(MeshIo_GmshErrors, FormatHeader) {
  expectGmshError("msh_binary22.msh", {"msh_binary22.msh:2:", "binary .msh is not supported; save as ASCII"});
  expectGmshError("msh_binary41.msh", {"msh_binary41.msh:2:", "binary .msh is not supported; save as ASCII"});
  expectGmshError("msh_version.msh",
                  {"msh_version.msh:2:", "format version '3.0' is not supported; expected 2.2 or 4.1"});
  expectGmshError("msh_no_format.msh", {"msh_no_format.msh:1:", "expected $MeshFormat"});
  expectGmshError("msh22_unclosed_section.msh",
                  {"msh22_unclosed_section.msh:5:", "'$PhysicalNames' opened at line 4", "$EndPhysicalNames"});
  expectError([] { pliant::io::readGmsh(mesh("missing.msh")); }, {"missing.msh: cannot open"});
  expectError([] { pliant::io::readGmsh(dataDir()); }, {"is a folder"});
}

TEST(MeshIo_GmshErrors, Version22Records) {
  expectGmshError("msh22_unknown_node.msh",
                  {"msh22_unknown_node.msh:25:", "node tag 99, which $Nodes does not define"});
  expectGmshError("msh22_nan.msh", {"msh22_nan.msh:12:", "'NaN' is not a finite number; expected the y coordinate"});
  expectGmshError("msh22_non_numeric.msh",
                  {"msh22_non_numeric.msh:13:", "'0,5' is not a number; expected the z coordinate"});
  expectGmshError("msh22_duplicate_node.msh",
                  {"msh22_duplicate_node.msh:14:", "node tag 4 is defined twice (first at line 13)"});
  expectGmshError("msh22_tet_nodes.msh", {"msh22_tet_nodes.msh:24:", "3 nodes for a tetrahedron (type 4); expected 4"});
  expectGmshError("msh22_truncated.msh",
                  {"msh22_truncated.msh:13:", "file ends inside $Nodes after 4 of the 8 nodes the section declares"});
  expectGmshError("msh22_count_mismatch.msh",
                  {"msh22_count_mismatch.msh:17:", "found '8'; expected $EndNodes after the 7 nodes"});
  expectGmshError("msh22_elements_truncated.msh",
                  {"msh22_elements_truncated.msh:24:",
                   "found '$EndElements' after 3 of the 8 elements the section declares; expected another"});
  expectGmshError("msh22_only_triangles.msh",
                  {"msh22_only_triangles.msh:19:", "empty mesh: no 4-node tetrahedra (element type 4)"});
}

TEST(MeshIo_GmshErrors, Version41Blocks) {
  expectGmshError(
      "msh41_block_overflow.msh",
      {"msh41_block_overflow.msh:19:", "'9' is out of range; expected at most the 5 nodes left of the declared 8"});
  expectGmshError("msh41_truncated.msh", {"msh41_truncated.msh:27:",
                                          "file ends inside $Nodes after 3 of the 5 coordinate lines the block needs"});
  expectGmshError("msh41_tag_range.msh",
                  {"msh41_tag_range.msh:20:", "node tag '400' is outside 3 to 100 declared at line 10"});
  expectGmshError("msh41_sum_mismatch.msh", {"msh41_sum_mismatch.msh:10:", "declares 9 nodes but its blocks hold 8"});
  expectGmshError("msh41_inverted.msh", {"msh41_inverted.msh:39: tetrahedron is inverted", "4 of the 5 tets"});
}

// ---------------------------------------------------------------------------------------------
// Malformed OBJ files

TEST(MeshIo_ObjErrors, Numbers) {
  expectObjError("obj_nan.obj", {"obj_nan.obj:2:", "'nan' is not a finite number; expected the y coordinate"});
  expectObjError("obj_inf.obj", {"obj_inf.obj:3:", "'1e999' is not a finite number; expected the z coordinate"});
  expectObjError("obj_non_numeric.obj", {"obj_non_numeric.obj:4:", "'one' is not a number; expected the z coordinate"});
  expectObjError("obj_too_few_coordinates.obj",
                 {"obj_too_few_coordinates.obj:2:", "2 numbers after 'v'; expected three coordinates"});
  expectObjError("obj_binary.obj", {"obj_binary.obj:2:", "binary data"});
}

TEST(MeshIo_ObjErrors, Faces) {
  expectObjError("obj_index_out_of_range.obj",
                 {"obj_index_out_of_range.obj:7:", "vertex index 9 is out of range; the file defines 4 vertices"});
  expectObjError("obj_zero_index.obj", {"obj_zero_index.obj:6:", "vertex index 0; OBJ indices start at 1"});
  expectObjError("obj_relative_out_of_range.obj",
                 {"obj_relative_out_of_range.obj:5:", "relative vertex index '-7' reaches before the first vertex"});
  expectObjError("obj_two_vertex_face.obj",
                 {"obj_two_vertex_face.obj:8:", "2 vertices in a face; expected at least three"});
  expectObjError("obj_bad_corner.obj", {"obj_bad_corner.obj:6:", "'1/a/1' is not a vertex reference"});
  expectObjError("obj_repeated_vertex.obj", {"obj_repeated_vertex.obj:5:", "uses vertex 1 twice"});
}

TEST(MeshIo_ObjErrors, EmptyAndUnreadable) {
  expectObjError("obj_no_faces.obj", {"obj_no_faces.obj: empty mesh: no faces"});
  expectObjError("obj_no_vertices.obj", {"obj_no_vertices.obj: empty mesh: no vertices"});
  expectObjError("missing.obj", {"missing.obj: cannot open"});
  expectError([] { pliant::io::readObj(dataDir() + "bad"); }, {"bad: is a folder"});
}

// ---------------------------------------------------------------------------------------------
// Mutated files: every truncation and a single-byte edit at every other position of the valid files either
// read or throw pliant::Error; nothing else escapes (and under ASan/UBSan nothing misbehaves).

// Each mutation goes to a new file (rewriting one file in place makes ext4 flush it on close), in
// memory-backed /dev/shm where there is one: thousands of small files on a busy disk take seconds.
class MutationDir {
 public:
  MutationDir() : dir_(base() / ("pliant_meshio_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~MutationDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Writes `content` to <dir>/m<k><extension> for a fresh k and returns the path.
  std::string write(const std::string& content, const std::string& extension, bool fresh = true) {
    if (fresh) ++count_;
    const std::string path = (dir_ / ("m" + std::to_string(count_) + extension)).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

 private:
  static std::filesystem::path base() {
    std::error_code ec;
    if (std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
    return ::testing::TempDir();
  }

  std::filesystem::path dir_;
  int count_ = 0;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Reads every mutation of `original`; returns how many read successfully.
int readMutations(const std::string& original, const std::function<void(const std::string&)>& read) {
  int ok = 0;
  auto attempt = [&](const std::string& content) {
    try {
      read(content);
      ++ok;
    } catch (const pliant::Error&) {
    }
  };
  static constexpr char kEdits[] = {'9', '-', 'x', '\n', ' ', '$', '\0', '.'};
  for (std::size_t n = 0; n < original.size(); ++n) attempt(original.substr(0, n));
  for (std::size_t i = 1; i < original.size(); i += 2) {  // every other byte keeps the test at a few seconds under ASan
    std::string s = original;
    s[i] = kEdits[(i / 2) % sizeof(kEdits)];
    attempt(s);
  }
  return ok;
}

TEST(MeshIo_Robustness, WindowsLineEndingsRead) {
  MutationDir dir;
  auto crlf = [](const std::string& text) {
    std::string out;
    for (char c : text) out += c == '\n' ? std::string("\r\n") : std::string(1, c);
    return out;
  };
  expectUnitCube(pliant::io::readGmsh(dir.write(crlf(slurp(mesh("cube_v41.msh"))), ".msh")));
  const std::string node = dir.write(crlf(slurp(mesh("cube.node"))), ".node");
  dir.write(crlf(slurp(mesh("cube.ele"))), ".ele", false);
  expectUnitCube(pliant::io::readTetGen(node));
  const TriangleMesh m = pliant::io::readObj(dir.write(crlf(slurp(mesh("cube.obj"))), ".obj"));
  expectOutwardUnitCube(m.vertices, m.triangles);
}

TEST(MeshIo_Robustness, MutatedFilesReadOrThrowPliantError) {
  MutationDir dir;
  const std::string node = slurp(mesh("cube.node"));
  const std::string ele = slurp(mesh("cube.ele"));
  const int nodeOk = readMutations(node, [&](const std::string& c) {
    const std::string path = dir.write(c, ".node");
    dir.write(ele, ".ele", false);
    pliant::io::readTetGen(path);
  });
  const int eleOk = readMutations(ele, [&](const std::string& c) {
    const std::string path = dir.write(c, ".ele");
    dir.write(node, ".node", false);
    pliant::io::readTetGen(path);
  });
  const int v22Ok = readMutations(slurp(mesh("cube_v22.msh")),
                                  [&](const std::string& c) { pliant::io::readGmsh(dir.write(c, ".msh")); });
  const int v41Ok = readMutations(slurp(mesh("cube_v41.msh")),
                                  [&](const std::string& c) { pliant::io::readGmsh(dir.write(c, ".msh")); });
  const int objOk =
      readMutations(slurp(mesh("cube.obj")), [&](const std::string& c) { pliant::io::readObj(dir.write(c, ".obj")); });
  // Some edits are harmless (a digit in a comment, a space for a space), so some reads succeed.
  EXPECT_GT(nodeOk, 0);
  EXPECT_GT(eleOk, 0);
  EXPECT_GT(v22Ok, 0);
  EXPECT_GT(v41Ok, 0);
  EXPECT_GT(objOk, 0);
}

}  // namespace
