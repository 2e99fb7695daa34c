// Headless rendering of viewer data: a small software rasteriser (z-buffer, flat Lambert shading) so
// report images and videos need neither a GPU nor a browser. The camera is the page's default one
// (framed on the positions seen over the run) unless one is asked for; ground planes are drawn around
// the objects, as on the page; lines get a minimum width in pixels; the simulated time is written in
// a corner with a 5 x 7 pixel font.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>

#include "pliant/error.h"
#include "pliant/io/output.h"
#include "pliant/math.h"
#include "pliant/viewer/viewer.h"

namespace pliant::viewer {

namespace {

struct Colour {
  double r, g, b;
};
struct Triangle {
  Vec3 a, b, c;
  Colour colour;
};

constexpr Colour kBackground{0x15 / 255.0, 0x18 / 255.0, 0x1c / 255.0};
constexpr Colour kBody{0.86, 0.55, 0.25};
constexpr Colour kCollider{0.42, 0.47, 0.52};
constexpr Colour kGround{0.23, 0.26, 0.30};
constexpr Colour kGrid{0.27, 0.30, 0.34};
constexpr Colour kAxisX{0.88, 0.38, 0.35}, kAxisY{0.42, 0.75, 0.42}, kAxisZ{0.29, 0.61, 0.88};

std::vector<float> floatsOf(const std::string& base64) {
  const std::string bytes = base64Decode(base64);
  std::vector<float> out(bytes.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t bits = 0;
    for (int k = 3; k >= 0; --k)
      bits = (bits << 8) | static_cast<std::uint8_t>(bytes[4 * i + static_cast<std::size_t>(k)]);
    out[i] = std::bit_cast<float>(bits);
  }
  return out;
}

std::vector<std::uint32_t> indicesOf(const std::string& base64) {
  const std::string bytes = base64Decode(base64);
  std::vector<std::uint32_t> out(bytes.size() / 4);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t v = 0;
    for (int k = 3; k >= 0; --k) v = (v << 8) | static_cast<std::uint8_t>(bytes[4 * i + static_cast<std::size_t>(k)]);
    out[i] = v;
  }
  return out;
}

// The collider shapes as the frame files draw them (io::tessellateRound, io::tessellateBox), posed.
void addPosed(std::vector<Triangle>& out, const std::vector<Vec3>& vertices,
              const std::vector<std::array<std::uint32_t, 3>>& triangles, const Eigen::Affine3d& pose, Colour colour) {
  for (const auto& t : triangles)
    out.push_back({pose * vertices[t[0]], pose * vertices[t[1]], pose * vertices[t[2]], colour});
}

void addRoundShape(std::vector<Triangle>& out, double radius, double halfHeight, const Eigen::Affine3d& pose,
                   Colour colour) {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> triangles;
  io::tessellateRound(radius, halfHeight, vertices, triangles);
  addPosed(out, vertices, triangles, pose, colour);
}

void addBox(std::vector<Triangle>& out, const Vec3& h, const Eigen::Affine3d& pose, Colour colour) {
  std::vector<Vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> triangles;
  io::tessellateBox(h, vertices, triangles);
  addPosed(out, vertices, triangles, pose, colour);
}

// A checkered square of half-width `half` (cells of `cell`) around (u, 0, v) in the plane's frame.
void addPlane(std::vector<Triangle>& out, double half, double cell, double u, double v, const Eigen::Affine3d& pose) {
  const int cells = std::max(1, static_cast<int>(std::lround(2.0 * half / cell)));
  for (int i = 0; i < cells; ++i)
    for (int j = 0; j < cells; ++j) {
      const double x0 = u - half + i * cell, z0 = v - half + j * cell;
      // A checker pattern, so the ground reads as a floor.
      const double shade = (i + j) % 2 == 0 ? 1.0 : 0.85;
      const Colour c{kGround.r * shade, kGround.g * shade, kGround.b * shade};
      const Vec3 a = pose * Vec3(x0, 0, z0), b = pose * Vec3(x0 + cell, 0, z0), d = pose * Vec3(x0, 0, z0 + cell),
                 e = pose * Vec3(x0 + cell, 0, z0 + cell);
      out.push_back({a, b, e, c});
      out.push_back({a, e, d, c});
    }
}

// A 1-2-5 step that cuts `span` into about `count` parts (as the page's niceStep).
double niceStep(double span, int count) {
  const double raw = span / std::max(1, count);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  return (f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0) * magnitude;
}

// The page's default view (viewer/web/viewer.js, runBounds and fitView): the positions seen over the
// run (up to 64 recorded frames spread over it, about 20000 positions kept), looked at in a 3/4 view
// from above that faces the broader vertical side of their bounds; the target is the middle of their
// extent across the view and the distance the least that shows them all with a margin.
struct DefaultView {
  Vec3 eye, target, low, high;
  double footprint = 1.0;  // m, the bounds' larger horizontal size (what the ground is sized by)
};
// `extra`: more points to frame (the rigid bodies' origins over the run).
DefaultView defaultView(const nlohmann::json& positionText, std::size_t particles, const std::vector<Vec3>& extra,
                        double aspect, double fovY) {
  const std::size_t frameCount = positionText.size();
  const std::size_t samples = std::min<std::size_t>(frameCount, 64);
  const std::size_t every = std::max<std::size_t>(1, (samples * particles + 19999) / 20000);
  Vec3 low = Vec3::Constant(std::numeric_limits<double>::infinity()), high = -low;
  std::vector<Vec3> points;
  for (std::size_t s = 0; s < samples; ++s) {
    const std::size_t index =
        samples > 1 ? static_cast<std::size_t>(std::lround(double(s) * double(frameCount - 1) / double(samples - 1)))
                    : 0;
    const std::vector<float> p = floatsOf(positionText.at(index).get<std::string>());
    for (std::size_t i = 0; i < std::min(particles, p.size() / 3); ++i) {
      const Vec3 x(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
      if (!x.allFinite()) continue;
      low = low.cwiseMin(x);
      high = high.cwiseMax(x);
      if ((s * particles + i) % every == 0) points.push_back(x);
    }
  }
  for (const Vec3& x : extra) {
    if (!x.allFinite()) continue;
    low = low.cwiseMin(x);
    high = high.cwiseMax(x);
    points.push_back(x);
  }
  DefaultView view;
  if (!std::isfinite(low.x())) {
    low = Vec3::Constant(-0.5);
    high = Vec3::Constant(0.5);
  }
  view.low = low;
  view.high = high;
  const Vec3 size = high - low, centre = 0.5 * (low + high);
  view.footprint = std::max({size.x(), size.z(), 0.5 * size.y(), 0.05});
  const double radius = std::max(0.05, 0.5 * size.norm());
  // Motion in a vertical plane (a rope swinging) is seen nearly face on, so a thin object fills the
  // picture instead of a corner of it.
  const double broad = std::max(size.x(), size.z());
  const bool planar = std::min(size.x(), size.z()) < 0.1 * broad;
  const double turn = planar ? 0.25 : 0.6;
  const double azimuth = size.z() <= size.x() ? turn : std::numbers::pi / 2 - turn;
  const double elevation = size.y() < 0.2 * broad ? 0.7 : planar ? 0.3 : 0.45;
  const Vec3 direction(std::sin(azimuth) * std::cos(elevation), std::sin(elevation),
                       std::cos(azimuth) * std::cos(elevation));
  const Vec3 right = Vec3(0, 1, 0).cross(direction).normalized();
  const Vec3 up = direction.cross(right);
  const double tanV = std::tan(0.5 * fovY) * 0.85, tanH = tanV * aspect;
  double u0 = std::numeric_limits<double>::infinity(), u1 = -u0, v0 = u0, v1 = -u0;
  for (const Vec3& x : points) {
    u0 = std::min(u0, (x - centre).dot(right));
    u1 = std::max(u1, (x - centre).dot(right));
    v0 = std::min(v0, (x - centre).dot(up));
    v1 = std::max(v1, (x - centre).dot(up));
  }
  view.target = points.empty() ? centre : Vec3(centre + 0.5 * (u0 + u1) * right + 0.5 * (v0 + v1) * up);
  double distance = 0.0;
  for (const Vec3& x : points) {
    const Vec3 d = x - view.target;
    distance = std::max(
        {distance, d.dot(direction) + std::abs(d.dot(right)) / tanH, d.dot(direction) + std::abs(d.dot(up)) / tanV});
  }
  view.eye = view.target + std::max(distance, 0.1 * radius) * direction;
  return view;
}

// A 5 x 7 pixel font for the time overlay: one byte per row, bit 4 the leftmost column.
struct Glyph {
  char character;
  std::array<std::uint8_t, 7> rows;
};
constexpr Glyph kGlyphs[] = {
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}}, {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}}, {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}}, {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}}, {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}}, {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}}, {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}},
    {'=', {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00}}, {'t', {0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06}},
    {'s', {0x00, 0x00, 0x0E, 0x10, 0x0E, 0x01, 0x1E}}, {'e', {0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E}},
};
const std::array<std::uint8_t, 7>* glyphOf(char c) {
  for (const Glyph& g : kGlyphs)
    if (g.character == c) return &g.rows;
  return nullptr;  // a space, or a character the font lacks: left blank
}

class Canvas {
 public:
  Canvas(int width, int height, const Vec3& eye, const Vec3& target, double fovY)
      : width_(width),
        height_(height),
        rgb_(std::size_t(width) * std::size_t(height) * 3),
        depth_(std::size_t(width) * std::size_t(height), std::numeric_limits<double>::infinity()) {
    for (std::size_t i = 0; i < rgb_.size(); i += 3) {
      rgb_[i] = toByte(kBackground.r);
      rgb_[i + 1] = toByte(kBackground.g);
      rgb_[i + 2] = toByte(kBackground.b);
    }
    eye_ = eye;
    forward_ = (target - eye).normalized();
    right_ = forward_.cross(Vec3(0, 1, 0)).normalized();
    up_ = right_.cross(forward_);
    focal_ = 0.5 * height / std::tan(0.5 * fovY);
    near_ = 1e-3 * (target - eye).norm();
  }
  // Screen position (pixels) and view depth of a world point; depth <= near means behind the camera.
  Vec3 project(const Vec3& p) const {
    const Vec3 d = p - eye_;
    const double z = d.dot(forward_);
    if (z <= near_) return Vec3(0, 0, -1);
    return Vec3(0.5 * width_ + focal_ * d.dot(right_) / z, 0.5 * height_ - focal_ * d.dot(up_) / z, z);
  }
  void triangle(const Triangle& t) {
    Vec3 normal = (t.b - t.a).cross(t.c - t.a);
    if (normal.squaredNorm() == 0.0) return;
    normal.normalize();
    // Two-sided: shade by the side facing the camera; a key light plus a soft fill.
    if (normal.dot(eye_ - t.a) < 0.0) normal = -normal;
    const Vec3 light = Vec3(2, 5, 3).normalized();
    const double shade = 0.38 + 0.5 * std::max(0.0, normal.dot(light)) + 0.12 * (0.5 + 0.5 * normal.y());
    const Colour c{t.colour.r * shade, t.colour.g * shade, t.colour.b * shade};
    const Vec3 a = project(t.a), b = project(t.b), d = project(t.c);
    if (a.z() < 0 || b.z() < 0 || d.z() < 0) return;
    const double area = edge(a, b, d);
    if (std::abs(area) < 1e-12) return;
    const int x0 = std::max(0, static_cast<int>(std::floor(std::min({a.x(), b.x(), d.x()}))));
    const int x1 = std::min(width_ - 1, static_cast<int>(std::ceil(std::max({a.x(), b.x(), d.x()}))));
    const int y0 = std::max(0, static_cast<int>(std::floor(std::min({a.y(), b.y(), d.y()}))));
    const int y1 = std::min(height_ - 1, static_cast<int>(std::ceil(std::max({a.y(), b.y(), d.y()}))));
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) {
        const Vec3 p(x + 0.5, y + 0.5, 0);
        const double w0 = edge(b, d, p) / area, w1 = edge(d, a, p) / area, w2 = edge(a, b, p) / area;
        if (w0 < 0 || w1 < 0 || w2 < 0) continue;
        // 1/z is linear in screen space.
        const double depth = 1.0 / (w0 / a.z() + w1 / b.z() + w2 / d.z());
        plot(x, y, depth, c);
      }
  }
  // A line `width` pixels wide (a round brush), so a rope is never a hairline.
  void line(const Vec3& p, const Vec3& q, Colour c, double width) {
    const Vec3 a = project(p), b = project(q);
    if (a.z() < 0 || b.z() < 0) return;
    const int steps =
        std::max(1, static_cast<int>(std::ceil(std::max(std::abs(b.x() - a.x()), std::abs(b.y() - a.y())))));
    const double r = 0.5 * width;
    const int reach = static_cast<int>(std::ceil(r));
    for (int s = 0; s <= steps; ++s) {
      const double u = static_cast<double>(s) / steps;
      const Vec3 m = a + u * (b - a);
      for (int dy = -reach; dy <= reach; ++dy)
        for (int dx = -reach; dx <= reach; ++dx) {
          const int x = static_cast<int>(std::floor(m.x())) + dx, y = static_cast<int>(std::floor(m.y())) + dy;
          const double ex = x + 0.5 - m.x(), ey = y + 0.5 - m.y();
          if (ex * ex + ey * ey <= r * r + 0.25) plot(x, y, m.z() * 0.999, c);
        }
    }
  }
  // `text` (the characters of kGlyphs) at pixel (x, y), `scale` pixels per glyph dot, on a dark
  // translucent box; drawn over everything.
  void text(const std::string& text, int x, int y, int scale) {
    const int advance = 6 * scale, pad = 2 * scale;
    const int boxWidth = static_cast<int>(text.size()) * advance - scale + 2 * pad, boxHeight = 7 * scale + 2 * pad;
    for (int j = y; j < y + boxHeight; ++j)
      for (int i = x; i < x + boxWidth; ++i) blend(i, j, {0, 0, 0}, 0.55);
    for (std::size_t k = 0; k < text.size(); ++k) {
      const std::array<std::uint8_t, 7>* glyph = glyphOf(text[k]);
      if (glyph == nullptr) continue;
      for (int row = 0; row < 7; ++row)
        for (int column = 0; column < 5; ++column)
          if (((*glyph)[static_cast<std::size_t>(row)] >> (4 - column)) & 1u)
            for (int j = 0; j < scale; ++j)
              for (int i = 0; i < scale; ++i)
                blend(x + pad + static_cast<int>(k) * advance + column * scale + i, y + pad + row * scale + j,
                      {0.92, 0.93, 0.95}, 1.0);
    }
  }
  // A round dot `size` pixels across.
  void dot(const Vec3& p, Colour c, double size) {
    const Vec3 a = project(p);
    if (a.z() < 0) return;
    const double r = 0.5 * size;
    const int reach = static_cast<int>(std::ceil(r));
    for (int dy = -reach; dy <= reach; ++dy)
      for (int dx = -reach; dx <= reach; ++dx)
        if (dx * dx + dy * dy <= r * r + 0.25)
          plot(static_cast<int>(a.x()) + dx, static_cast<int>(a.y()) + dy, a.z(), c);
  }
  const std::vector<std::uint8_t>& rgb() const { return rgb_; }

 private:
  static double edge(const Vec3& a, const Vec3& b, const Vec3& p) {
    return (b.x() - a.x()) * (p.y() - a.y()) - (b.y() - a.y()) * (p.x() - a.x());
  }
  static std::uint8_t toByte(double v) { return static_cast<std::uint8_t>(std::clamp(v, 0.0, 1.0) * 255.0 + 0.5); }
  void blend(int x, int y, Colour c, double alpha) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    const std::size_t i = 3 * (std::size_t(y) * std::size_t(width_) + std::size_t(x));
    const double channels[3] = {c.r, c.g, c.b};
    for (std::size_t k = 0; k < 3; ++k) rgb_[i + k] = toByte((1.0 - alpha) * rgb_[i + k] / 255.0 + alpha * channels[k]);
  }
  void plot(int x, int y, double depth, Colour c) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    const std::size_t i = std::size_t(y) * std::size_t(width_) + std::size_t(x);
    if (depth >= depth_[i]) return;
    depth_[i] = depth;
    rgb_[3 * i] = toByte(c.r);
    rgb_[3 * i + 1] = toByte(c.g);
    rgb_[3 * i + 2] = toByte(c.b);
  }
  int width_, height_;
  std::vector<std::uint8_t> rgb_;
  std::vector<double> depth_;
  Vec3 eye_, forward_, right_, up_;
  double focal_ = 1.0, near_ = 1e-3;
};

}  // namespace

struct FrameRenderer::Impl {
  RenderOptions options;
  std::vector<int> numbers;
  std::vector<double> times;
  std::vector<std::string> positions;  // base64 float32 xyz per recorded frame
  std::size_t particles = 0;
  std::vector<std::uint32_t> triangles, lines;
  struct ColliderShape {
    std::string shape;
    double radius = 0.0, halfHeight = 0.0;
    Vec3 halfExtents = Vec3::Zero();
    std::vector<Vec3> vertices;  // mesh, collider frame
    std::vector<std::uint32_t> meshTriangles;
    std::vector<std::array<double, 7>> poses;  // x y z, quaternion x y z w
    bool body = false;                         // a rigid body (drawn in the objects' colour)
  };
  std::vector<ColliderShape> colliders;  // the colliders, then the rigid bodies (as meshes)
  bool hasColliders = false;
  Vec3 eye, target, low, high;
  double fovY = 0.0;
  double cell = 1.0, half = 1.0;  // m, ground grid cell and half-width
  double footprint = 1.0;         // m
  int timeDigits = 3;             // decimals of the time overlay

  std::vector<std::uint8_t> draw(std::size_t index) const;
};

namespace {
std::optional<Vec3> finiteOrThrow(const std::optional<Vec3>& v, const char* what) {
  if (v && !v->allFinite()) throw Error(std::string(what) + " must be finite");
  return v;
}
}  // namespace

FrameRenderer::FrameRenderer(const std::string& dataJson, const RenderOptions& options) {
  if (options.width < 16 || options.height < 16 || options.width > 8192 || options.height > 8192)
    throw Error("render size must be between 16x16 and 8192x8192 pixels");
  if (!(options.fieldOfViewDegrees > 0.0 && options.fieldOfViewDegrees < 180.0))
    throw Error("field of view must be between 0 and 180 degrees (exclusive)");
  finiteOrThrow(options.cameraPosition, "camera position");
  finiteOrThrow(options.cameraTarget, "camera target");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  const nlohmann::json data = nlohmann::json::parse(dataJson);
  const auto& frames = data.at("frames");
  impl->numbers = frames.at("numbers").get<std::vector<int>>();
  impl->times = frames.at("times_s").get<std::vector<double>>();
  impl->positions = frames.at("positions").get<std::vector<std::string>>();
  if (impl->numbers.empty()) throw Error("the viewer data holds no frames");
  if (impl->times.size() != impl->numbers.size() || impl->positions.size() != impl->numbers.size())
    throw Error("the viewer data's frame numbers, times and positions differ in count");
  impl->particles = floatsOf(impl->positions.front()).size() / 3;
  const auto& topology = data.at("topology");
  impl->triangles = indicesOf(topology.at("triangles").get<std::string>());
  impl->lines = indicesOf(topology.at("lines").get<std::string>());
  for (const auto& c : data.at("colliders")) {
    Impl::ColliderShape shape;
    shape.shape = c.at("shape").get<std::string>();
    shape.poses = c.at("poses").get<std::vector<std::array<double, 7>>>();
    if (shape.shape == "sphere") shape.radius = c.at("radius").get<double>();
    else if (shape.shape == "capsule") {
      shape.radius = c.at("radius").get<double>();
      shape.halfHeight = c.at("half_height").get<double>();
    } else if (shape.shape == "box") {
      const auto h = c.at("half_extents").get<std::array<double, 3>>();
      shape.halfExtents = Vec3(h[0], h[1], h[2]);
    } else if (shape.shape == "mesh" && c.contains("vertices") && c.contains("triangles")) {
      const std::vector<float> v = floatsOf(c.at("vertices").get<std::string>());
      for (std::size_t i = 0; i + 2 < v.size(); i += 3) shape.vertices.emplace_back(v[i], v[i + 1], v[i + 2]);
      shape.meshTriangles = indicesOf(c.at("triangles").get<std::string>());
    }
    impl->colliders.push_back(std::move(shape));
  }
  impl->hasColliders = !impl->colliders.empty();
  // Rigid bodies: their triangles in their shape frame, posed per recorded frame (as mesh colliders).
  std::vector<Vec3> bodyPoints;
  if (data.contains("bodies"))
    for (const auto& b : data.at("bodies")) {
      Impl::ColliderShape shape;
      shape.shape = "mesh";
      shape.body = true;
      shape.poses = b.at("poses").get<std::vector<std::array<double, 7>>>();
      const std::vector<float> v = floatsOf(b.at("vertices").get<std::string>());
      for (std::size_t i = 0; i + 2 < v.size(); i += 3) shape.vertices.emplace_back(v[i], v[i + 1], v[i + 2]);
      shape.meshTriangles = indicesOf(b.at("triangles").get<std::string>());
      // Framed by their origins at up to 64 frames over the run.
      const std::size_t every = std::max<std::size_t>(1, shape.poses.size() / 64);
      for (std::size_t f = 0; f < shape.poses.size(); f += every)
        bodyPoints.emplace_back(shape.poses[f][0], shape.poses[f][1], shape.poses[f][2]);
      impl->colliders.push_back(std::move(shape));
    }

  impl->fovY = options.fieldOfViewDegrees * std::numbers::pi / 180.0;
  const DefaultView view = defaultView(frames.at("positions"), impl->particles, bodyPoints,
                                       double(options.width) / options.height, impl->fovY);
  // A camera asked for replaces the default one: a target alone keeps the default direction and distance.
  impl->target = options.cameraTarget.value_or(view.target);
  impl->eye = options.cameraPosition.value_or(impl->target + (view.eye - view.target));
  if ((impl->eye - impl->target).norm() < 1e-9) throw Error("the camera position and target must differ");
  impl->low = view.low;
  impl->high = view.high;
  impl->footprint = view.footprint;
  // Ground planes are squares around the objects, as on the page.
  impl->cell = niceStep(2.2 * view.footprint, 16);
  impl->half = std::ceil(1.6 * view.footprint / impl->cell) * impl->cell;
  // Enough decimals to tell recorded frames apart (at least 2, at most 6).
  if (impl->times.size() > 1) {
    const double dt = (impl->times.back() - impl->times.front()) / double(impl->times.size() - 1);
    if (dt > 0.0) impl->timeDigits = std::clamp(static_cast<int>(std::ceil(-std::log10(dt) + 0.5)), 2, 6);
  }
  impl_ = std::move(impl);
}

FrameRenderer::~FrameRenderer() = default;
std::size_t FrameRenderer::frameCount() const { return impl_->numbers.size(); }
int FrameRenderer::frameNumber(std::size_t index) const { return impl_->numbers.at(index); }
double FrameRenderer::frameTime(std::size_t index) const { return impl_->times.at(index); }
const RenderOptions& FrameRenderer::options() const { return impl_->options; }
std::size_t FrameRenderer::nearestIndex(int frame) const {
  const std::vector<int>& numbers = impl_->numbers;
  if (frame < 0) return numbers.size() - 1;
  std::size_t index = 0;
  for (std::size_t i = 1; i < numbers.size(); ++i)
    if (std::abs(numbers[i] - frame) < std::abs(numbers[index] - frame)) index = i;
  return index;
}
std::vector<std::uint8_t> FrameRenderer::rgb(std::size_t index) const { return impl_->draw(index); }

std::vector<std::uint8_t> FrameRenderer::Impl::draw(std::size_t index) const {
  const std::vector<float> x = floatsOf(positions.at(index));
  auto point = [](const std::vector<float>& p, std::uint32_t i) { return Vec3(p[3 * i], p[3 * i + 1], p[3 * i + 2]); };
  const std::size_t count = std::min(particles, x.size() / 3);
  Canvas canvas(options.width, options.height, eye, target, fovY);
  // Line widths grow with the image: a rope stays a visible band at any size, grid lines stay thin.
  const double bodyWidth = std::max(2.0, std::round(options.height / 180.0));
  const double gridWidth = std::max(1.0, std::round(options.height / 480.0));
  const Vec3 centre = 0.5 * (low + high);

  std::vector<Triangle> shapes;
  for (const ColliderShape& c : colliders) {
    if (c.poses.empty()) continue;
    const std::array<double, 7>& pose = c.poses[std::min(index, c.poses.size() - 1)];
    Eigen::Affine3d transform = Eigen::Affine3d::Identity();
    transform.translate(Vec3(pose[0], pose[1], pose[2]));
    transform.rotate(Eigen::Quaterniond(pose[6], pose[3], pose[4], pose[5]).normalized());
    if (c.shape == "plane") {
      const Vec3 local = transform.inverse() * centre;
      addPlane(shapes, half, cell, std::round(local.x() / cell) * cell, std::round(local.z() / cell) * cell, transform);
    } else if (c.shape == "sphere") addRoundShape(shapes, c.radius, 0.0, transform, kCollider);
    else if (c.shape == "capsule") addRoundShape(shapes, c.radius, c.halfHeight, transform, kCollider);
    else if (c.shape == "box") addBox(shapes, c.halfExtents, transform, kCollider);
    else if (c.shape == "mesh") {
      const std::vector<std::uint32_t>& t = c.meshTriangles;
      for (std::size_t k = 0; k + 2 < t.size(); k += 3)
        if (std::max({t[k], t[k + 1], t[k + 2]}) < c.vertices.size())
          shapes.push_back({transform * c.vertices[t[k]], transform * c.vertices[t[k + 1]],
                            transform * c.vertices[t[k + 2]], c.body ? kBody : kCollider});
    }
    // Other shapes: not drawn (as in the page).
  }
  for (std::size_t t = 0; t + 2 < triangles.size(); t += 3)
    if (std::max({triangles[t], triangles[t + 1], triangles[t + 2]}) < count)
      shapes.push_back({point(x, triangles[t]), point(x, triangles[t + 1]), point(x, triangles[t + 2]), kBody});
  for (const Triangle& t : shapes) canvas.triangle(t);
  if (!hasColliders) {
    // The page's reference floor: a grid under the objects (at y = 0 when they stay a little above
    // it) and the x, y, z axes, one cell long, at the origin when it lies on the grid.
    const double lowY = low.y();
    const double groundY = lowY < 0.0 || lowY > 0.5 * footprint ? lowY : 0.0;
    const double u = std::round(centre.x() / cell) * cell, v = std::round(centre.z() / cell) * cell;
    const int n = static_cast<int>(std::lround(half / cell));
    for (int k = -n; k <= n; ++k) {
      canvas.line(Vec3(u + k * cell, groundY, v - half), Vec3(u + k * cell, groundY, v + half), kGrid, gridWidth);
      canvas.line(Vec3(u - half, groundY, v + k * cell), Vec3(u + half, groundY, v + k * cell), kGrid, gridWidth);
    }
    const bool onGrid = std::abs(groundY) <= 0.05 * footprint && std::abs(u) <= 0.7 * half && std::abs(v) <= 0.7 * half;
    const Vec3 origin = onGrid ? Vec3(0, groundY, 0) : Vec3(u - 0.6 * half, groundY, v - 0.6 * half);
    canvas.line(origin, origin + Vec3(cell, 0, 0), kAxisX, bodyWidth);
    canvas.line(origin, origin + Vec3(0, cell, 0), kAxisY, bodyWidth);
    canvas.line(origin, origin + Vec3(0, 0, cell), kAxisZ, bodyWidth);
  }
  for (std::size_t l = 0; l + 1 < lines.size(); l += 2)
    if (std::max(lines[l], lines[l + 1]) < count)
      canvas.line(point(x, lines[l]), point(x, lines[l + 1]), kBody, bodyWidth);
  if (triangles.empty() && lines.empty())
    for (std::uint32_t i = 0; i < count; ++i) canvas.dot(point(x, i), kBody, 2.0 * bodyWidth);
  if (options.timeOverlay) {
    char label[64];
    std::snprintf(label, sizeof label, "t = %.*f s", timeDigits, times.at(index));
    const int scale = std::max(1, options.height / 180);
    canvas.text(label, 2 * scale, 2 * scale, scale);
  }
  return canvas.rgb();
}

std::string renderPng(const std::string& dataJson, int frame, const RenderOptions& options, int* shownFrame) {
  const FrameRenderer renderer(dataJson, options);
  const std::size_t index = renderer.nearestIndex(frame);
  if (shownFrame != nullptr) *shownFrame = renderer.frameNumber(index);
  return encodePng(options.width, options.height, renderer.rgb(index));
}

}  // namespace pliant::viewer
