// Model bytes (version 4, little-endian). After the header ("PLIANTMD", u32 version, u32 flags 0)
// every Model field follows in declaration order: arrays as a u64 count then their elements,
// doubles as their bit patterns (so a decoded model is bit-identical), indices as u32, flags as u8,
// strings as a u64 length then their bytes, a mesh collider's signed distance grid in full (its
// distances are not recomputed). Functions are not written; lambda offsets are recomputed. The last
// 8 bytes are FNV-1a 64 over every preceding byte. Version 2 appends the neo-Hookean tets, the rigid bodies (their
// shapes in full: a hull's faces and edges, a mesh's grid) and the joints; version 3 the shape
// matching clusters and their members (after the joints); version 4 the body attachments (last).
#include "pliant/io/model_bytes.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include "output_bytes.h"
#include "pliant/error.h"
#include "pliant/model.h"

namespace pliant::io {

namespace {

constexpr char kMagic[8] = {'P', 'L', 'I', 'A', 'N', 'T', 'M', 'D'};
constexpr std::uint32_t kVersion = 4;

// A field added to these structs must be written and read below; the sizes (x86-64 with libstdc++,
// the platform Pliant targets) make the compiler say so.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(Model) == 960, "Model changed: update encodeModel and decodeModel");
static_assert(sizeof(Collider) == 176, "Collider changed: update encodeModel and decodeModel");
static_assert(sizeof(SignedDistanceGrid) == 128, "SignedDistanceGrid changed: update encodeModel and decodeModel");
static_assert(sizeof(AttachmentConstraint) == 72 && sizeof(DistanceConstraint) == 40 &&
                  sizeof(MaxDistanceConstraint) == 40 && sizeof(DihedralBendingConstraint) == 48 &&
                  sizeof(IsometricBendingConstraint) == 72 && sizeof(TetVolumeConstraint) == 48 &&
                  sizeof(GlobalVolumeConstraint) == 56 && sizeof(SimObject) == 64 &&
                  sizeof(NeoHookeanConstraint) == 160 && sizeof(ShapeMatchingConstraint) == 200,
              "a constraint or object struct changed: update encodeModel and decodeModel");
static_assert(sizeof(RigidBody) == 400 && sizeof(Joint) == 224 && sizeof(BodyShape) == 80 &&
                  sizeof(ConvexHull) == 224 && sizeof(BodyAttachment) == 64,
              "a body, joint or shape struct changed: update encodeModel and decodeModel");
#endif

class Writer {
 public:
  void bytes(const void* data, std::size_t size) { out_.append(static_cast<const char*>(data), size); }
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) {
    for (int k = 0; k < 4; ++k) u8(static_cast<std::uint8_t>(v >> (8 * k)));
  }
  void u64(std::uint64_t v) {
    for (int k = 0; k < 8; ++k) u8(static_cast<std::uint8_t>(v >> (8 * k)));
  }
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  void vec3(const Vec3& v) {
    for (int k = 0; k < 3; ++k) f64(v[k]);
  }
  void quat(const Quat& q) {
    f64(q.w());
    f64(q.x());
    f64(q.y());
    f64(q.z());
  }
  void str(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void params(const ConstraintParameters& p) {
    f64(p.compliance);
    f64(p.damping);
    f64(p.stiffness);
  }
  void material(const ContactMaterial& m) {
    f64(m.staticFriction);
    f64(m.dynamicFriction);
    f64(m.restitution);
  }
  template <class T, class F>
  void array(const std::vector<T>& items, F&& each) {
    u64(items.size());
    for (const T& item : items) each(item);
  }
  std::string finish() {
    const std::uint64_t sum = detail::fnv1a(out_.data(), out_.size());
    u64(sum);
    return std::move(out_);
  }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(std::string_view in, std::string source) : in_(in), source_(std::move(source)) {}
  [[noreturn]] void fail(const std::string& what) const { throw Error("model bytes '" + source_ + "': " + what); }
  const char* take(std::size_t size) {
    if (size > in_.size() - pos_) fail("truncated at byte " + std::to_string(pos_));
    const char* at = in_.data() + pos_;
    pos_ += size;
    return at;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(*take(1)); }
  bool flag() {
    const std::uint8_t v = u8();
    if (v > 1) fail("flag byte " + std::to_string(v) + " at byte " + std::to_string(pos_ - 1) + "; expected 0 or 1");
    return v == 1;
  }
  std::uint32_t u32() {
    const auto* p = reinterpret_cast<const unsigned char*>(take(4));
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<std::uint32_t>(p[k]) << (8 * k);
    return v;
  }
  std::uint64_t u64() {
    const auto* p = reinterpret_cast<const unsigned char*>(take(8));
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<std::uint64_t>(p[k]) << (8 * k);
    return v;
  }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  double f64() { return std::bit_cast<double>(u64()); }
  Vec3 vec3() {
    Vec3 v;
    for (int k = 0; k < 3; ++k) v[k] = f64();
    return v;
  }
  Quat quat() {
    const double w = f64(), x = f64(), y = f64(), z = f64();
    return Quat(w, x, y, z);
  }
  std::string str() {
    const std::uint64_t size = count(1, "string");
    const char* at = take(size);
    return std::string(at, size);
  }
  ConstraintParameters params() {
    ConstraintParameters p;
    p.compliance = f64();
    p.damping = f64();
    p.stiffness = f64();
    return p;
  }
  ContactMaterial material() {
    ContactMaterial m;
    m.staticFriction = f64();
    m.dynamicFriction = f64();
    m.restitution = f64();
    return m;
  }
  // An array's count, refused when its elements (at least `minBytes` each) cannot fit in what is
  // left, so a corrupted count cannot make the reader allocate without bound.
  std::uint64_t count(std::size_t minBytes, const char* what) {
    const std::uint64_t n = u64();
    if (n > (in_.size() - pos_) / minBytes)
      fail(std::string(what) + " count " + std::to_string(n) + " at byte " + std::to_string(pos_ - 8) +
           " exceeds the bytes left (truncated or corrupted)");
    return n;
  }
  template <class T, class F>
  void array(std::vector<T>& items, std::size_t minBytes, const char* what, F&& each) {
    items.resize(count(minBytes, what));
    for (T& item : items) each(item);
  }
  std::size_t left() const { return in_.size() - pos_; }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
  std::string source_;
};

void plural(std::string& out, std::size_t n, const char* what) {
  if (n == 0) return;
  out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
}

}  // namespace

std::string describeModelFunctions(const Model& model) {
  std::string out;
  plural(out, model.kinematicParticles.size(), "kinematic particle path(s)");
  plural(out, model.attachmentPaths.size(), "attachment target path(s)");
  plural(out, model.colliderPaths.size() + model.colliderRotationPaths.size(), "collider path(s)");
  plural(out, model.genericFunctions.size(), "user constraint function(s)");
  plural(out, model.generics.size(), "user (generic) constraint(s)");
  plural(out, model.bodyPaths.size() + model.bodyRotationPaths.size(), "kinematic body path(s)");
  return out;
}

std::string encodeModel(const Model& model) {
  const std::string functions = describeModelFunctions(model);
  if (!functions.empty())
    throw Error("model: holds " + functions + ", which cannot be written as bytes (functions are code)");
  Writer w;
  w.bytes(kMagic, sizeof kMagic);
  w.u32(kVersion);
  w.u32(0);
  w.array(model.initialPosition, [&](const Vec3& v) { w.vec3(v); });
  w.array(model.initialVelocity, [&](const Vec3& v) { w.vec3(v); });
  w.array(model.mass, [&](double v) { w.f64(v); });
  w.array(model.inverseMass, [&](double v) { w.f64(v); });
  w.array(model.objects, [&](const SimObject& o) {
    w.str(o.name);
    w.array(o.particles, [&](ParticleIndex p) { w.u32(p); });
    w.f64(o.dampingFactor);
  });
  w.array(model.particleRadius, [&](double v) { w.f64(v); });
  w.array(model.colliders, [&](const Collider& c) {
    w.u8(static_cast<std::uint8_t>(c.shape));
    w.vec3(c.pose.position);
    w.quat(c.pose.rotation);
    w.f64(c.radius);
    w.f64(c.halfHeight);
    w.vec3(c.halfExtents);
    w.u8(c.grid ? 1 : 0);
    if (c.grid) {
      const SignedDistanceGrid& g = *c.grid;
      w.array(g.vertices, [&](const Vec3& v) { w.vec3(v); });
      w.array(g.triangles, [&](const std::array<std::uint32_t, 3>& t) {
        for (std::uint32_t i : t) w.u32(i);
      });
      w.vec3(g.origin);
      w.f64(g.cellSize);
      for (int n : g.nodes) w.i32(n);
      w.array(g.distance, [&](double v) { w.f64(v); });
      w.u8(g.flipped ? 1 : 0);
    }
    w.material(c.material);
  });
  w.u8(model.particleCollisions ? 1 : 0);
  w.material(model.particleContactMaterial);
  w.array(model.collisionTriangles, [&](const CollisionTriangle& t) {
    for (ParticleIndex p : t.particles) w.u32(p);
  });
  w.u8(model.selfCollision ? 1 : 0);
  w.f64(model.surfaceThickness);
  w.material(model.surfaceContactMaterial);
  w.array(model.attachments, [&](const AttachmentConstraint& a) {
    w.u32(a.particle);
    w.vec3(a.target);
    w.f64(a.restDistance);
    w.params(a.params);
  });
  auto pairs = [&](const auto& c, double value) {
    for (ParticleIndex p : c.particles) w.u32(p);
    w.f64(value);
    w.params(c.params);
  };
  w.array(model.distances, [&](const DistanceConstraint& c) { pairs(c, c.restLength); });
  w.array(model.maxDistances, [&](const MaxDistanceConstraint& c) { pairs(c, c.maxLength); });
  w.array(model.dihedralBendings, [&](const DihedralBendingConstraint& c) { pairs(c, c.restAngle); });
  w.array(model.isometricBendings, [&](const IsometricBendingConstraint& c) {
    for (ParticleIndex p : c.particles) w.u32(p);
    for (double k : c.weights) w.f64(k);
    w.params(c.params);
  });
  w.array(model.tetVolumes, [&](const TetVolumeConstraint& c) { pairs(c, c.restVolume); });
  w.array(model.globalVolumes, [&](const GlobalVolumeConstraint& c) {
    w.u32(c.firstTriangle);
    w.u32(c.triangleCount);
    w.u32(c.firstVertex);
    w.u32(c.vertexCount);
    w.f64(c.restVolume);
    w.f64(c.pressure);
    w.params(c.params);
  });
  w.array(model.volumeTriangles, [&](const std::array<std::uint32_t, 3>& t) {
    for (std::uint32_t i : t) w.u32(i);
  });
  w.array(model.volumeVertices, [&](ParticleIndex p) { w.u32(p); });
  w.array(model.neoHookeans, [&](const NeoHookeanConstraint& c) {
    for (ParticleIndex p : c.particles) w.u32(p);
    for (int k = 0; k < 9; ++k) w.f64(c.restInverse.data()[k]);
    w.f64(c.restVolume);
    w.f64(c.gamma);
    w.params(c.deviatoric);
    w.params(c.hydrostatic);
    w.u8(c.coupled ? 1 : 0);
  });
  const auto triangles = [&](const std::vector<std::array<std::uint32_t, 3>>& list) {
    w.array(list, [&](const std::array<std::uint32_t, 3>& t) {
      for (std::uint32_t i : t) w.u32(i);
    });
  };
  const auto indices = [&](const std::vector<std::uint32_t>& list) {
    w.array(list, [&](std::uint32_t i) { w.u32(i); });
  };
  w.array(model.bodies, [&](const RigidBody& b) {
    w.str(b.name);
    const BodyShape& s = b.shape;
    w.u8(static_cast<std::uint8_t>(s.kind));
    w.f64(s.radius);
    w.f64(s.halfHeight);
    w.vec3(s.halfExtents);
    w.u8(s.hull ? 1 : 0);
    if (s.hull) {
      const ConvexHull& h = *s.hull;
      w.array(h.vertices, [&](const Vec3& v) { w.vec3(v); });
      triangles(h.triangles);
      w.array(h.faceNormals, [&](const Vec3& v) { w.vec3(v); });
      w.array(h.faceOffsets, [&](double v) { w.f64(v); });
      indices(h.faceStart);
      indices(h.faceVertices);
      indices(h.triangleFace);
      w.array(h.edges, [&](const std::array<std::uint32_t, 2>& e) {
        w.u32(e[0]);
        w.u32(e[1]);
      });
      w.array(h.edgeFaces, [&](const std::array<std::uint32_t, 2>& e) {
        w.u32(e[0]);
        w.u32(e[1]);
      });
      w.i32(h.maxFaceVertices);
    }
    w.u8(s.grid ? 1 : 0);
    if (s.grid) {
      const SignedDistanceGrid& g = *s.grid;
      w.array(g.vertices, [&](const Vec3& v) { w.vec3(v); });
      triangles(g.triangles);
      w.vec3(g.origin);
      w.f64(g.cellSize);
      for (int n : g.nodes) w.i32(n);
      w.array(g.distance, [&](double v) { w.f64(v); });
      w.u8(g.flipped ? 1 : 0);
    }
    w.vec3(b.shapeOffset);
    w.quat(b.shapeRotation);
    w.f64(b.mass);
    w.f64(b.inverseMass);
    w.vec3(b.inertia);
    w.vec3(b.inverseInertia);
    w.material(b.material);
    w.u8(static_cast<std::uint8_t>(b.motion));
    w.vec3(b.initialPosition);
    w.quat(b.initialRotation);
    w.vec3(b.initialVelocity);
    w.vec3(b.initialAngularVelocity);
  });
  w.array(model.joints, [&](const Joint& j) {
    w.u8(static_cast<std::uint8_t>(j.kind));
    for (BodyIndex b : j.bodies) w.u32(b);
    for (const Vec3& a : j.localAnchor) w.vec3(a);
    for (const Quat& q : j.localFrame) w.quat(q);
    w.f64(j.restLength);
    w.params(j.params);
    w.f64(j.lower);
    w.f64(j.upper);
    w.f64(j.swingLimit);
    w.u8(static_cast<std::uint8_t>(j.drive));
    w.f64(j.driveTarget);
    w.params(j.driveParams);
  });
  w.array(model.shapeMatchings, [&](const ShapeMatchingConstraint& c) {
    w.u32(c.firstMember);
    w.u32(c.memberCount);
    w.u8(static_cast<std::uint8_t>(c.mode));
    w.u8(c.restRank);
    w.u8(c.preserveVolume ? 1 : 0);
    w.f64(c.beta);
    w.f64(c.totalWeight);
    for (int k = 0; k < 9; ++k) w.f64(c.restInverse.data()[k]);
    for (int k = 0; k < 9; ++k) w.f64(c.restNullProjector.data()[k]);
    w.params(c.params);
  });
  w.array(model.shapeMatchingParticles, [&](ParticleIndex p) { w.u32(p); });
  w.array(model.shapeMatchingRestOffsets, [&](const Vec3& v) { w.vec3(v); });
  w.array(model.shapeMatchingWeights, [&](double m) { w.f64(m); });
  w.array(model.bodyAttachments, [&](const BodyAttachment& a) {
    w.u32(a.particle);
    w.u32(a.body);
    w.vec3(a.localPoint);
    w.f64(a.restDistance);
    w.params(a.params);
  });
  return w.finish();
}

Model decodeModel(std::string_view bytes, const std::string& source) {
  Reader r(bytes, source);
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    r.fail("not Pliant model bytes; expected them to start with \"PLIANTMD\"");
  if (bytes.size() < 24) r.fail("truncated: " + std::to_string(bytes.size()) + " bytes");
  const std::uint64_t stored = [&] {
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[bytes.size() - 8 + k])) << (8 * k);
    return v;
  }();
  r.take(8);
  const std::uint32_t version = r.u32();
  if (version != kVersion)
    r.fail("format version " + std::to_string(version) + ", expected version " + std::to_string(kVersion));
  if (r.u32() != 0) r.fail("unknown flags set in the header; expected 0");
  if (detail::fnv1a(bytes.data(), bytes.size() - 8) != stored) r.fail("checksum mismatch; the bytes are corrupted");
  Reader body(bytes.substr(0, bytes.size() - 8), source);
  body.take(16);

  Model m;
  body.array(m.initialPosition, 24, "particle", [&](Vec3& v) { v = body.vec3(); });
  body.array(m.initialVelocity, 24, "particle velocity", [&](Vec3& v) { v = body.vec3(); });
  body.array(m.mass, 8, "mass", [&](double& v) { v = body.f64(); });
  body.array(m.inverseMass, 8, "inverse mass", [&](double& v) { v = body.f64(); });
  if (m.initialVelocity.size() != m.initialPosition.size() || m.mass.size() != m.initialPosition.size() ||
      m.inverseMass.size() != m.initialPosition.size())
    body.fail("particle arrays have different lengths");
  body.array(m.objects, 24, "object", [&](SimObject& o) {
    o.name = body.str();
    body.array(o.particles, 4, "object particle", [&](ParticleIndex& p) { p = body.u32(); });
    o.dampingFactor = body.f64();
  });
  body.array(m.particleRadius, 8, "particle radius", [&](double& v) { v = body.f64(); });
  body.array(m.colliders, 100, "collider", [&](Collider& c) {
    const std::uint8_t shape = body.u8();
    if (shape > static_cast<std::uint8_t>(ColliderShape::Mesh))
      body.fail("collider shape " + std::to_string(shape) + "; expected 0 to 4");
    c.shape = static_cast<ColliderShape>(shape);
    c.pose.position = body.vec3();
    c.pose.rotation = body.quat();
    c.radius = body.f64();
    c.halfHeight = body.f64();
    c.halfExtents = body.vec3();
    if (body.flag()) {
      auto g = std::make_shared<SignedDistanceGrid>();
      body.array(g->vertices, 24, "mesh vertex", [&](Vec3& v) { v = body.vec3(); });
      body.array(g->triangles, 12, "mesh triangle", [&](std::array<std::uint32_t, 3>& t) {
        for (std::uint32_t& i : t) {
          i = body.u32();
          if (i >= g->vertices.size())
            body.fail("mesh collider triangle vertex " + std::to_string(i) + " out of range");
        }
      });
      g->origin = body.vec3();
      g->cellSize = body.f64();
      for (int& n : g->nodes) n = body.i32();
      body.array(g->distance, 8, "grid distance", [&](double& v) { v = body.f64(); });
      g->flipped = body.flag();
      c.grid = std::move(g);
    }
    c.material = body.material();
  });
  m.particleCollisions = body.flag();
  m.particleContactMaterial = body.material();
  body.array(m.collisionTriangles, 12, "collision triangle", [&](CollisionTriangle& t) {
    for (ParticleIndex& p : t.particles) p = body.u32();
  });
  m.selfCollision = body.flag();
  m.surfaceThickness = body.f64();
  m.surfaceContactMaterial = body.material();
  body.array(m.attachments, 60, "attachment", [&](AttachmentConstraint& a) {
    a.particle = body.u32();
    a.target = body.vec3();
    a.restDistance = body.f64();
    a.params = body.params();
  });
  auto stencil = [&](auto& c, double& value) {
    for (ParticleIndex& p : c.particles) p = body.u32();
    value = body.f64();
    c.params = body.params();
  };
  body.array(m.distances, 40, "distance constraint", [&](DistanceConstraint& c) { stencil(c, c.restLength); });
  body.array(m.maxDistances, 40, "max-distance constraint", [&](MaxDistanceConstraint& c) { stencil(c, c.maxLength); });
  body.array(m.dihedralBendings, 48, "dihedral bending constraint",
             [&](DihedralBendingConstraint& c) { stencil(c, c.restAngle); });
  body.array(m.isometricBendings, 72, "isometric bending constraint", [&](IsometricBendingConstraint& c) {
    for (ParticleIndex& p : c.particles) p = body.u32();
    for (double& k : c.weights) k = body.f64();
    c.params = body.params();
  });
  body.array(m.tetVolumes, 48, "tet volume constraint", [&](TetVolumeConstraint& c) { stencil(c, c.restVolume); });
  body.array(m.globalVolumes, 56, "global volume constraint", [&](GlobalVolumeConstraint& c) {
    c.firstTriangle = body.u32();
    c.triangleCount = body.u32();
    c.firstVertex = body.u32();
    c.vertexCount = body.u32();
    c.restVolume = body.f64();
    c.pressure = body.f64();
    c.params = body.params();
  });
  body.array(m.volumeTriangles, 12, "volume triangle", [&](std::array<std::uint32_t, 3>& t) {
    for (std::uint32_t& i : t) i = body.u32();
  });
  body.array(m.volumeVertices, 4, "volume vertex", [&](ParticleIndex& p) { p = body.u32(); });
  body.array(m.neoHookeans, 153, "neo-Hookean tet", [&](NeoHookeanConstraint& c) {
    for (ParticleIndex& p : c.particles) p = body.u32();
    for (int k = 0; k < 9; ++k) c.restInverse.data()[k] = body.f64();
    c.restVolume = body.f64();
    c.gamma = body.f64();
    c.deviatoric = body.params();
    c.hydrostatic = body.params();
    c.coupled = body.flag();
  });
  const auto triangles = [&](std::vector<std::array<std::uint32_t, 3>>& list, std::size_t vertices, const char* what) {
    body.array(list, 12, what, [&](std::array<std::uint32_t, 3>& t) {
      for (std::uint32_t& i : t) {
        i = body.u32();
        if (i >= vertices) body.fail(std::string(what) + " vertex " + std::to_string(i) + " out of range");
      }
    });
  };
  const auto indices = [&](std::vector<std::uint32_t>& list, std::size_t bound, const char* what) {
    body.array(list, 4, what, [&](std::uint32_t& i) {
      i = body.u32();
      if (i > bound) body.fail(std::string(what) + " " + std::to_string(i) + " out of range");
    });
  };
  body.array(m.bodies, 200, "body", [&](RigidBody& b) {
    b.name = body.str();
    BodyShape& s = b.shape;
    const std::uint8_t kind = body.u8();
    if (kind > static_cast<std::uint8_t>(BodyShapeKind::Plane))
      body.fail("body shape " + std::to_string(kind) + "; expected 0 to 5");
    s.kind = static_cast<BodyShapeKind>(kind);
    s.radius = body.f64();
    s.halfHeight = body.f64();
    s.halfExtents = body.vec3();
    if (body.flag()) {
      auto h = std::make_shared<ConvexHull>();
      body.array(h->vertices, 24, "hull vertex", [&](Vec3& v) { v = body.vec3(); });
      triangles(h->triangles, h->vertices.size(), "hull triangle");
      body.array(h->faceNormals, 24, "hull face", [&](Vec3& v) { v = body.vec3(); });
      body.array(h->faceOffsets, 8, "hull face offset", [&](double& v) { v = body.f64(); });
      const std::size_t faces = h->faceNormals.size();
      indices(h->faceStart, std::numeric_limits<std::uint32_t>::max(), "hull face start");
      indices(h->faceVertices, h->vertices.size() - 1, "hull face vertex");
      indices(h->triangleFace, faces - 1, "hull triangle face");
      body.array(h->edges, 8, "hull edge", [&](std::array<std::uint32_t, 2>& e) {
        for (std::uint32_t& i : e) {
          i = body.u32();
          if (i >= h->vertices.size()) body.fail("hull edge vertex " + std::to_string(i) + " out of range");
        }
      });
      body.array(h->edgeFaces, 8, "hull edge face", [&](std::array<std::uint32_t, 2>& e) {
        for (std::uint32_t& i : e) {
          i = body.u32();
          if (i >= faces) body.fail("hull edge face " + std::to_string(i) + " out of range");
        }
      });
      h->maxFaceVertices = body.i32();
      // The face polygons must tile faceVertices in order, and no face be longer than maxFaceVertices.
      bool consistent = h->faceOffsets.size() == faces && h->faceStart.size() == faces + 1 &&
                        h->triangleFace.size() == h->triangles.size() && h->edgeFaces.size() == h->edges.size() &&
                        !h->faceStart.empty() && h->faceStart.front() == 0 &&
                        h->faceStart.back() == h->faceVertices.size();
      for (std::size_t f = 0; consistent && f < faces; ++f)
        consistent =
            h->faceStart[f] <= h->faceStart[f + 1] &&
            h->faceStart[f + 1] - h->faceStart[f] <= static_cast<std::uint32_t>(std::max(h->maxFaceVertices, 0));
      if (!consistent) body.fail("body " + b.name + ": inconsistent convex hull faces");
      s.hull = std::move(h);
    }
    if (body.flag()) {
      auto g = std::make_shared<SignedDistanceGrid>();
      body.array(g->vertices, 24, "mesh vertex", [&](Vec3& v) { v = body.vec3(); });
      triangles(g->triangles, g->vertices.size(), "body mesh triangle");
      g->origin = body.vec3();
      g->cellSize = body.f64();
      for (int& n : g->nodes) n = body.i32();
      body.array(g->distance, 8, "grid distance", [&](double& v) { v = body.f64(); });
      g->flipped = body.flag();
      if (g->nodes[0] < 0 || g->nodes[1] < 0 || g->nodes[2] < 0 ||
          g->distance.size() != std::uint64_t(g->nodes[0]) * std::uint64_t(g->nodes[1]) * std::uint64_t(g->nodes[2]))
        body.fail("body " + b.name + ": the grid's distances do not match its node counts");
      s.grid = std::move(g);
    }
    if ((s.kind == BodyShapeKind::ConvexHull) != bool(s.hull) || (s.kind == BodyShapeKind::Mesh) != bool(s.grid))
      body.fail("body " + b.name + ": its shape's hull or grid does not match its kind");
    b.shapeOffset = body.vec3();
    b.shapeRotation = body.quat();
    b.mass = body.f64();
    b.inverseMass = body.f64();
    b.inertia = body.vec3();
    b.inverseInertia = body.vec3();
    b.material = body.material();
    const std::uint8_t motion = body.u8();
    if (motion > static_cast<std::uint8_t>(BodyMotion::Kinematic))
      body.fail("body motion " + std::to_string(motion) + "; expected 0 to 2");
    b.motion = static_cast<BodyMotion>(motion);
    b.initialPosition = body.vec3();
    b.initialRotation = body.quat();
    b.initialVelocity = body.vec3();
    b.initialAngularVelocity = body.vec3();
  });
  body.array(m.joints, 200, "joint", [&](Joint& j) {
    const std::uint8_t kind = body.u8();
    if (kind > static_cast<std::uint8_t>(JointKind::Distance))
      body.fail("joint kind " + std::to_string(kind) + "; expected 0 to 4");
    j.kind = static_cast<JointKind>(kind);
    for (BodyIndex& b : j.bodies) b = body.u32();
    for (Vec3& a : j.localAnchor) a = body.vec3();
    for (Quat& q : j.localFrame) q = body.quat();
    j.restLength = body.f64();
    j.params = body.params();
    j.lower = body.f64();
    j.upper = body.f64();
    j.swingLimit = body.f64();
    const std::uint8_t drive = body.u8();
    if (drive > static_cast<std::uint8_t>(JointDrive::Speed))
      body.fail("joint drive " + std::to_string(drive) + "; expected 0 to 2");
    j.drive = static_cast<JointDrive>(drive);
    j.driveTarget = body.f64();
    j.driveParams = body.params();
  });
  body.array(m.shapeMatchings, 195, "shape matching cluster", [&](ShapeMatchingConstraint& c) {
    c.firstMember = body.u32();
    c.memberCount = body.u32();
    const std::uint8_t mode = body.u8();
    if (mode > static_cast<std::uint8_t>(ShapeMatchingMode::Linear))
      body.fail("shape matching mode " + std::to_string(mode) + "; expected 0 or 1");
    c.mode = static_cast<ShapeMatchingMode>(mode);
    c.restRank = body.u8();
    c.preserveVolume = body.flag();
    c.beta = body.f64();
    c.totalWeight = body.f64();
    for (int k = 0; k < 9; ++k) c.restInverse.data()[k] = body.f64();
    for (int k = 0; k < 9; ++k) c.restNullProjector.data()[k] = body.f64();
    c.params = body.params();
  });
  body.array(m.shapeMatchingParticles, 4, "shape matching member", [&](ParticleIndex& p) { p = body.u32(); });
  body.array(m.shapeMatchingRestOffsets, 24, "shape matching rest offset", [&](Vec3& v) { v = body.vec3(); });
  body.array(m.shapeMatchingWeights, 8, "shape matching weight", [&](double& v) { v = body.f64(); });
  body.array(m.bodyAttachments, 64, "body attachment", [&](BodyAttachment& a) {
    a.particle = body.u32();
    a.body = body.u32();
    a.localPoint = body.vec3();
    a.restDistance = body.f64();
    a.params = body.params();
  });
  if (body.left() != 0) body.fail(std::to_string(body.left()) + " bytes of trailing data");
  // Global volumes index their triangle and vertex ranges; Model::validate checks the particles.
  for (std::size_t i = 0; i < m.globalVolumes.size(); ++i) {
    const GlobalVolumeConstraint& c = m.globalVolumes[i];
    if (std::uint64_t{c.firstTriangle} + c.triangleCount > m.volumeTriangles.size() ||
        std::uint64_t{c.firstVertex} + c.vertexCount > m.volumeVertices.size())
      body.fail("global volume constraint " + std::to_string(i) + ": triangle or vertex range out of bounds");
    for (std::uint32_t t = c.firstTriangle; t < c.firstTriangle + c.triangleCount; ++t)
      for (std::uint32_t v : m.volumeTriangles[t])
        if (v >= c.vertexCount)
          body.fail("global volume constraint " + std::to_string(i) + ": triangle " + std::to_string(t) +
                    " vertex out of range");
  }
  // The builder fills the multiplier offsets and validates, as for a model built in memory.
  ModelBuilder builder;
  builder.model() = std::move(m);
  ModelPtr built;
  try {
    built = builder.build();
  } catch (const Error& e) {
    body.fail(std::string("invalid model: ") + e.what());
  }
  return *built;
}

}  // namespace pliant::io
