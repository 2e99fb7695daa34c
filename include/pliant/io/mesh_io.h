// Mesh input: triangle meshes (Wavefront OBJ) and tetrahedral meshes (TetGen .node/.ele, Gmsh .msh
// ASCII 2.2 and 4.1). Every reader throws pliant::Error whose message names the file, the line (or
// element) and what was expected, as "<file>:<line>: <what was found>; expected <what>"; none crashes
// on malformed input (bad numbers, NaN/inf, out-of-range indices, lying counts, truncation, binary data).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pliant/colliders.h"
#include "pliant/math.h"

namespace pliant::io {

struct TriangleMesh {
  std::vector<Vec3> vertices;                           // m
  std::vector<std::array<std::uint32_t, 3>> triangles;  // counter-clockwise = front; polygons are fanned
                                                        // from their first corner
  // Texture coordinates (u, v) per vertex from the file's `vt` lines, when every face corner names
  // one; else empty. A vertex on a UV seam (corners naming different ones) keeps its first.
  std::vector<std::array<double, 2>> texcoords;
};

struct TetMesh {
  // In file order (Gmsh: order of appearance, its sparse node tags mapped to 0..n-1), including nodes
  // no tet uses (e.g. the edge midpoints of 10-node tets), so indices follow the file.
  std::vector<Vec3> vertices;  // m
  // Every tet has positive volume (x1-x0).((x2-x0)x(x3-x0)) > 0: a file whose tets are all of the
  // other orientation is flipped as a whole; a tet of the minority orientation is an error.
  std::vector<std::array<std::uint32_t, 4>> tets;
};

// Reads an OBJ file (tinyobjloader); faces with more than three vertices are triangulated.
// Throws for an unreadable file, a syntax error, an empty mesh, an out-of-range index or a
// non-finite coordinate. Only 'v' and 'f' statements matter (texture and normal references in a face
// are checked for syntax, then ignored); other statements (vt, vn, g, o, usemtl, mtllib, l, ...) are
// skipped. A face that repeats a vertex is an error. Coordinates are correctly rounded doubles.
TriangleMesh readObj(const std::string& path);
// The same from the text of an OBJ file; errors name `path` (e.g. a built-in mesh's name).
TriangleMesh readObjText(const std::string& text, const std::string& path);

// Reads a TetGen mesh from `base`.node and `base`.ele (either path may be given with or without
// its extension). Indices may start at 0 or 1 as the .node file declares. '#' starts a comment.
// 10-node (quadratic) tets keep their first four nodes, the corners.
TetMesh readTetGen(const std::string& path);

// Reads a Gmsh .msh file, ASCII format 2.2 or 4.1; keeps the 4-node tetrahedra (element type 4) and
// ignores other element types and sections. A binary .msh is refused with a message saying so.
TetMesh readGmsh(const std::string& path);

// Picks the reader by extension: .node/.ele -> TetGen, .msh -> Gmsh.
TetMesh readTetMesh(const std::string& path);

// Makes every tet positive as described above; throws pliant::Error naming `path` and the tet when
// a tet is degenerate (|V| below 1e-12 of the bounding box volume) or inverted relative to the
// majority (a tie keeps the file's order, its negative tets being the inverted ones), or the mesh is
// empty. Used by every tet reader, whose messages also give the tet's line.
void orientTets(TetMesh& mesh, const std::string& path);

// A triangle-mesh collider from a Wavefront OBJ file (readObj), its vertices multiplied by `scale`
// (per axis, finite and > 0) first; then as Collider::mesh (pliant/colliders.h). Errors name the file.
Collider readMeshCollider(const std::string& objPath, const Vec3& position = Vec3::Zero(),
                          const Quat& rotation = Quat::Identity(), const SignedDistanceGridOptions& options = {},
                          const ContactMaterial& material = {}, const Vec3& scale = Vec3::Ones());

}  // namespace pliant::io
