// Output writers: frames (VTK, OBJ, PLY, glTF) and ParaView collections; checkpoints are in
// pliant/io/checkpoint.h. Every file is written to a temporary file in the same folder and renamed
// into place, so a reader (or a crash) never leaves a half-written file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pliant/builders.h"
#include "pliant/math.h"
#include "pliant/model.h"
#include "pliant/state.h"

namespace pliant::io {

namespace detail {
struct GltfRecording;
}

// Writes `contents` to `path` atomically: into a new temporary file "<path>.tmp-<pid>-<16 random hex
// digits>" in the same folder, created with O_CREAT | O_EXCL | O_NOFOLLOW (a name that exists, a
// planted symlink included, is never opened: another is drawn), then renamed over `path` (which
// replaces a symlink at `path` rather than writing through it). Throws pliant::Error naming `path`;
// pliant::SystemError when the machine is at fault (disk full, I/O error, file-size limit).
void writeFileAtomically(const std::string& path, const std::string& contents);

// `text` made safe inside XML or HTML markup and quoted attributes: & < > " ' become entities.
std::string escapeMarkup(std::string_view text);

// FNV-1a 64 of `bytes`: the identity of a text or a file's contents (not a cryptographic hash).
std::uint64_t hashBytes(std::string_view bytes);

// Removes the temporaries that killed writers left in `folder` (not its subfolders): the regular
// files, owned by this user, named "<name>.tmp-<pid>-<16 hex digits>" whose <pid> is no running
// process. A temporary of a live process (this one included) is kept, so two runs into one folder
// do not remove each other's files. Returns how many were removed; a missing folder removes none.
std::size_t removeStaleTemporaries(const std::string& folder);

namespace detail {
// The temporary name writeFileAtomically tries for `path` with random bits `bits`:
// "<path>.tmp-<this pid>-<bits as 16 hex digits>".
std::string temporaryName(const std::string& path, std::uint64_t bits);
// For tests: draws the random bits of temporary names from `source` (nullptr: the kernel's
// generator again), so a test can plant files at the names the writer will choose.
void setTemporaryRandomSource(std::uint64_t (*source)());
}  // namespace detail

// One object of a scene as the frame writers draw it (a "part"): a contiguous range of particles
// and, in its Topology's arrays, the contiguous ranges of its cells.
struct TopologyPart {
  std::string name;  // the object's name (SimObject::name)
  ParticleIndex firstParticle = 0;
  std::uint32_t particleCount = 0;
  std::size_t trianglesBegin = 0, trianglesEnd = 0;  // [begin, end) in Topology::triangles
  std::size_t linesBegin = 0, linesEnd = 0;          // in Topology::lines
  std::size_t tetsBegin = 0, tetsEnd = 0;            // in Topology::tets
  // Its lines join its particles in order, first to last (a rope): OBJ writes them as one polyline.
  bool chain = false;
  // Texture coordinates (u, v), dimensionless, one per particle of the part, or empty for none.
  std::vector<std::array<float, 2>> uv;
  // A soft body from a surface (addSoftBodyFromSurface): its skin, drawn by FrameSeries instead of
  // the part's triangles, lines and tets (its points are the skin's vertices, posed from the
  // particles each frame; uv unused). Null for every other object.
  std::shared_ptr<const SurfaceSkin> skin;
};

// What to draw of a state: triangles, line segments and tetrahedra over particle indices, and the
// objects they belong to. With no parts the whole topology is drawn as one mesh.
struct Topology {
  std::vector<std::array<ParticleIndex, 3>> triangles;
  std::vector<std::array<ParticleIndex, 2>> lines;
  std::vector<std::array<ParticleIndex, 4>> tets;
  std::vector<TopologyPart> parts;  // in particle order; each object's cells follow the previous one's
};

enum class FrameFormat { Vtk, Obj, Ply, Glb };
// "vtk", "obj", "ply" or "glb".
const char* frameFormatName(FrameFormat format);

// How a VTK XML (.vtu) frame stores its arrays: zlib-compressed (VTK's vtkZLibDataCompressor, the
// default: about half the size for a moving cloth, a fifth near rest) or raw (faster to write).
enum class VtuEncoding { Zlib, Raw };

// Writes one frame of the whole topology as one mesh (its parts ignored: a part's skin is not drawn,
// its tet boundary triangles are). Vtk: an unstructured grid
// (points, triangles, lines, tets; point data velocity (m/s) and speed (m/s); field TIME (s)) as
// legacy VTK 3.0 binary, or as VTK XML with appended data (encoded as `encoding` says) when `path`
// ends in ".vtu". An empty topology draws every particle as a vertex cell.
// Obj: vertices (shortest text that reads back to the same float), triangles and lines ("l").
// Ply: binary little-endian; vertices with float x y z vx vy vz and triangle faces (PLY has no
// polyline that common readers take: lines are left out, see docs/output.md).
// Tets are written only to VTK; pass the surface triangles for OBJ and PLY. Glb is one file for a
// whole run: FrameSeries writes it, writeFrame refuses it.
// Throws pliant::Error naming `path` for an index past the last particle or mismatched arrays.
void writeFrame(const std::string& path, FrameFormat format, const Topology& topology, const State& state,
                VtuEncoding encoding = VtuEncoding::Zlib);

// ParaView collection (.pvd) listing frame files (paths relative to the .pvd) with their times (s);
// written atomically. ParaView's PVD reader opens only VTK XML files, so list .vtu (or .vtm) frames:
// legacy .vtk frames load as a file series (File > Open on the numbered group) but not through a .pvd.
void writePvd(const std::string& path, const std::vector<std::pair<double, std::string>>& frames);

// Triangle meshes of the round and box collider shapes in their own frame (m), outward
// counter-clockwise, appended to `vertices` / `triangles`: a sphere (halfHeight 0) or a capsule along
// y of 32 segments by 16 rings, and a box of half extents `halfExtents` with 4 vertices per face.
// The frame writers (ColliderSurfaces) and the PNG/video renderer draw the same shapes.
void tessellateRound(double radius, double halfHeight, std::vector<Vec3>& vertices,
                     std::vector<std::array<std::uint32_t, 3>>& triangles);
void tessellateBox(const Vec3& halfExtents, std::vector<Vec3>& vertices,
                   std::vector<std::array<std::uint32_t, 3>>& triangles);

// The colliders of a model as triangle meshes, for the frame writers: a sphere, capsule or box
// tessellated, a mesh collider's own triangles, and a plane as a square of side 2 planeHalfSize
// centred on the point of the plane nearest `centre`. Built once; posed at any time.
class ColliderSurfaces {
 public:
  ColliderSurfaces() = default;
  ColliderSurfaces(const Model& model, const Vec3& centre, double planeHalfSize);
  std::size_t size() const { return names_.size(); }
  // "<shape>_<index in Model::colliders>", e.g. "plane_0", "sphere_1".
  const std::string& name(std::size_t c) const { return names_[c]; }
  const std::vector<std::array<std::uint32_t, 3>>& triangles(std::size_t c) const { return triangles_[c]; }
  // Vertices in the collider's own frame (m).
  const std::vector<Vec3>& localVertices(std::size_t c) const { return vertices_[c]; }
  // Collider c's vertices in the world at `time` (s), into `out` (m).
  void pose(const Model& model, std::size_t c, double time, std::vector<Vec3>& out) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<Vec3>> vertices_;
  std::vector<std::vector<std::array<std::uint32_t, 3>>> triangles_;
};

// The rigid bodies of a model as triangle meshes (pliant/bodies.h), for the frame writers and the
// viewer: spheres, capsules and boxes tessellated as colliders are, a convex hull's or a mesh's own
// triangles. Vertices in the body's shape frame; posed by the body frame's pose in a State.
class BodySurfaces {
 public:
  BodySurfaces() = default;
  explicit BodySurfaces(const Model& model);
  std::size_t size() const { return names_.size(); }
  // The body's name (RigidBody::name).
  const std::string& name(std::size_t b) const { return names_[b]; }
  const std::vector<std::array<std::uint32_t, 3>>& triangles(std::size_t b) const { return triangles_[b]; }
  // Vertices in the body's shape frame (m).
  const std::vector<Vec3>& localVertices(std::size_t b) const { return vertices_[b]; }
  // Body b's shape frame in the world for `state` (RigidBody::shapePose).
  static ColliderPose shapePose(const Model& model, const State& state, std::size_t b);
  // Body b's vertices in the world for `state`, into `out` (m).
  void pose(const Model& model, const State& state, std::size_t b, std::vector<Vec3>& out) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<Vec3>> vertices_;
  std::vector<std::vector<std::array<std::uint32_t, 3>>> triangles_;
};

// The frames of a run, written as they come into `folder` (see pliant/run/run.h for the layout):
//  - one part per object of the topology (one mesh when it has no parts and the model has particles
//    or no bodies), one per rigid body named after it, posed by the state, and, unless `colliders`
//    is false, one per collider, posed at the frame's time; an object with a skin
//    (TopologyPart::skin) is drawn as its skin (the surface it was made from, posed from its tets),
//    not its tets;
//  - Vtk: frames/frame_NNNNNN.vtu when there is one part, else frames/frame_NNNNNN.vtm, a VTK
//    multiblock whose blocks are named after the parts, over frames/frame_NNNNNN_<part>.vtu; and
//    scene.pvd, the collection of the frames (finish());
//  - Obj: frames/frame_NNNNNN.obj, one named object ("o <part>") per part;
//  - Ply: frames/frame_NNNNNN.ply when there is one part, else frames/frame_NNNNNN_<part>.ply;
//  - Glb: nothing per frame; scene.glb, the whole run as one animated glTF 2.0 file (finish()): each
//    object a mesh with a morph target per frame after the first, bodies and colliders as rigid
//    nodes. The
//    frames are kept in memory (12 bytes per point and frame) until then.
// <part> is the part's name with every character other than a letter, digit, '-' or '_' replaced by
// '_' (and a number appended when two parts would share a file name).
struct FrameSeriesOptions {
  FrameFormat format = FrameFormat::Vtk;
  VtuEncoding encoding = VtuEncoding::Zlib;
  bool colliders = true;
};
class FrameSeries {
 public:
  // `model` and `topology` must outlive the series.
  FrameSeries(std::string folder, const Model& model, const Topology& topology, const FrameSeriesOptions& options);
  // Writes frame number `frame` (its files, atomically). Throws pliant::Error naming the file.
  void write(int frame, const State& state);
  // Writes the run's collection (scene.pvd, Vtk) or animation (scene.glb, Glb) for the frames
  // written so far (again, replacing it, when called again).
  void finish();
  // The files written so far, as paths relative to the folder, and their total size (bytes).
  const std::vector<std::string>& files() const { return files_; }
  std::uint64_t bytes() const { return bytes_; }
  std::size_t framesWritten() const { return times_.size(); }
  // The part names, objects first, then bodies, then colliders.
  std::vector<std::string> partNames() const;

  ~FrameSeries();
  FrameSeries(const FrameSeries&) = delete;
  FrameSeries& operator=(const FrameSeries&) = delete;

 private:
  void record(const std::string& relative, const std::string& contents);
  std::string folder_;
  const Model& model_;
  const Topology& topology_;
  FrameSeriesOptions options_;
  Topology whole_;  // one part over the whole topology when it has none
  ColliderSurfaces colliders_;
  BodySurfaces bodies_;
  std::vector<std::string> stems_;        // file-name stem of each part (objects, bodies, then colliders)
  std::vector<std::vector<Vec3>> posed_;  // colliders
  std::vector<std::vector<Vec3>> posedBodies_;
  // Per part, the skin's posed vertices (m) and velocities (m/s); empty for a part without a skin.
  std::vector<std::vector<Vec3>> skinPosition_, skinVelocity_;
  std::vector<std::string> files_;
  std::uint64_t bytes_ = 0, finishedBytes_ = 0;
  std::vector<std::pair<double, std::string>> times_;  // each frame's time (s) and file for the .pvd
  std::unique_ptr<detail::GltfRecording> recording_;   // Glb: the frames so far
};

}  // namespace pliant::io
