// Headless PNG rendering of viewer data: a small software rasteriser (z-buffer, flat Lambert shading)
// so report images need neither a GPU nor a browser. The camera is the page's default one (framed on
// the positions seen over the run) and ground planes are drawn around the objects, as on the page.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>

#include "pliant/error.h"
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

// A unit UV sphere scaled by `radius`, its upper half raised and lower half lowered by `halfHeight`
// (a capsule; 0 gives a sphere), in the collider frame.
void addRoundShape(std::vector<Triangle>& out, double radius, double halfHeight, const Eigen::Affine3d& pose,
                   Colour colour) {
  constexpr int kRings = 16, kSegments = 32;
  auto vertex = [&](int ring, int segment) {
    const double theta = std::numbers::pi * ring / kRings, phi = 2.0 * std::numbers::pi * segment / kSegments;
    Vec3 p(radius * std::sin(theta) * std::cos(phi), radius * std::cos(theta),
           radius * std::sin(theta) * std::sin(phi));
    p.y() += ring <= kRings / 2 ? halfHeight : -halfHeight;
    return Vec3(pose * p);
  };
  for (int ring = 0; ring < kRings; ++ring)
    for (int s = 0; s < kSegments; ++s) {
      const Vec3 a = vertex(ring, s), b = vertex(ring + 1, s), c = vertex(ring + 1, s + 1), d = vertex(ring, s + 1);
      out.push_back({a, b, c, colour});
      out.push_back({a, c, d, colour});
      if (ring == kRings / 2 - 1 && halfHeight > 0.0) {  // the cylinder between the two halves
        const Vec3 e = vertex(ring + 1, s) - Vec3(pose.linear() * Vec3(0, 2 * halfHeight, 0)),
                   f = vertex(ring + 1, s + 1) - Vec3(pose.linear() * Vec3(0, 2 * halfHeight, 0));
        out.push_back({b, e, f, colour});
        out.push_back({b, f, c, colour});
      }
    }
}

void addBox(std::vector<Triangle>& out, const Vec3& h, const Eigen::Affine3d& pose, Colour colour) {
  auto corner = [&](int i) {
    return Vec3(pose * Vec3((i & 1) ? h.x() : -h.x(), (i & 2) ? h.y() : -h.y(), (i & 4) ? h.z() : -h.z()));
  };
  const int faces[6][4] = {{0, 1, 3, 2}, {4, 6, 7, 5}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 5, 7, 3}};
  for (const auto& f : faces) {
    out.push_back({corner(f[0]), corner(f[1]), corner(f[2]), colour});
    out.push_back({corner(f[0]), corner(f[2]), corner(f[3]), colour});
  }
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
DefaultView defaultView(const nlohmann::json& positionText, std::size_t particles, double aspect, double fovY) {
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
  const double azimuth = size.z() <= size.x() ? 0.6 : std::numbers::pi / 2 - 0.6;
  const double elevation = size.y() < 0.2 * std::max(size.x(), size.z()) ? 0.7 : 0.45;
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
  void line(const Vec3& p, const Vec3& q, Colour c) {
    const Vec3 a = project(p), b = project(q);
    if (a.z() < 0 || b.z() < 0) return;
    const int steps =
        std::max(1, static_cast<int>(std::ceil(std::max(std::abs(b.x() - a.x()), std::abs(b.y() - a.y())))));
    for (int s = 0; s <= steps; ++s) {
      const double u = static_cast<double>(s) / steps;
      const Vec3 m = a + u * (b - a);
      for (int dy = 0; dy <= 1; ++dy)
        for (int dx = 0; dx <= 1; ++dx)
          plot(static_cast<int>(m.x()) + dx, static_cast<int>(m.y()) + dy, m.z() * 0.999, c);
    }
  }
  void dot(const Vec3& p, Colour c) {
    const Vec3 a = project(p);
    if (a.z() < 0) return;
    for (int dy = -2; dy <= 2; ++dy)
      for (int dx = -2; dx <= 2; ++dx) plot(static_cast<int>(a.x()) + dx, static_cast<int>(a.y()) + dy, a.z(), c);
  }
  const std::vector<std::uint8_t>& rgb() const { return rgb_; }

 private:
  static double edge(const Vec3& a, const Vec3& b, const Vec3& p) {
    return (b.x() - a.x()) * (p.y() - a.y()) - (b.y() - a.y()) * (p.x() - a.x());
  }
  static std::uint8_t toByte(double v) { return static_cast<std::uint8_t>(std::clamp(v, 0.0, 1.0) * 255.0 + 0.5); }
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

std::string renderPng(const std::string& dataJson, int frame, const RenderOptions& options, int* shownFrame) {
  if (options.width < 16 || options.height < 16 || options.width > 8192 || options.height > 8192)
    throw Error("render size must be between 16x16 and 8192x8192 pixels");
  const nlohmann::json data = nlohmann::json::parse(dataJson);
  const auto& frames = data.at("frames");
  const std::vector<int> numbers = frames.at("numbers").get<std::vector<int>>();
  if (numbers.empty()) throw Error("the viewer data holds no frames");
  // The recorded frame nearest to the one asked for.
  std::size_t index = numbers.size() - 1;
  if (frame >= 0) {
    index = 0;
    for (std::size_t i = 1; i < numbers.size(); ++i)
      if (std::abs(numbers[i] - frame) < std::abs(numbers[index] - frame)) index = i;
  }
  if (shownFrame != nullptr) *shownFrame = numbers[index];
  const auto& positionText = frames.at("positions");
  const std::vector<float> x = floatsOf(positionText.at(index).get<std::string>());
  auto point = [&](const std::vector<float>& p, std::uint32_t i) { return Vec3(p[3 * i], p[3 * i + 1], p[3 * i + 2]); };
  const std::size_t particles = x.size() / 3;

  const double fovY = 40.0 * std::numbers::pi / 180.0;
  const DefaultView view = defaultView(positionText, particles, double(options.width) / options.height, fovY);
  Canvas canvas(options.width, options.height, view.eye, view.target, fovY);
  // Ground planes are squares around the objects, as on the page.
  const double cell = niceStep(2.2 * view.footprint, 16);
  const double half = std::ceil(1.6 * view.footprint / cell) * cell;
  const Vec3 centre = 0.5 * (view.low + view.high);

  std::vector<Triangle> triangles;
  for (const auto& c : data.at("colliders")) {
    const auto& poses = c.at("poses");
    if (poses.empty()) continue;
    const auto pose = poses.at(std::min<std::size_t>(index, poses.size() - 1)).get<std::array<double, 7>>();
    Eigen::Affine3d transform = Eigen::Affine3d::Identity();
    transform.translate(Vec3(pose[0], pose[1], pose[2]));
    transform.rotate(Eigen::Quaterniond(pose[6], pose[3], pose[4], pose[5]).normalized());
    const std::string shape = c.at("shape").get<std::string>();
    if (shape == "plane") {
      const Vec3 local = transform.inverse() * centre;
      addPlane(triangles, half, cell, std::round(local.x() / cell) * cell, std::round(local.z() / cell) * cell,
               transform);
    } else if (shape == "sphere") addRoundShape(triangles, c.at("radius").get<double>(), 0.0, transform, kCollider);
    else if (shape == "capsule")
      addRoundShape(triangles, c.at("radius").get<double>(), c.at("half_height").get<double>(), transform, kCollider);
    else if (shape == "box") {
      const auto h = c.at("half_extents").get<std::array<double, 3>>();
      addBox(triangles, Vec3(h[0], h[1], h[2]), transform, kCollider);
    } else if (shape == "mesh" && c.contains("vertices") && c.contains("triangles")) {
      const std::vector<float> v = floatsOf(c.at("vertices").get<std::string>());
      const std::vector<std::uint32_t> t = indicesOf(c.at("triangles").get<std::string>());
      const std::size_t count = v.size() / 3;
      for (std::size_t k = 0; k + 2 < t.size(); k += 3)
        if (std::max({t[k], t[k + 1], t[k + 2]}) < count)
          triangles.push_back(
              {transform * point(v, t[k]), transform * point(v, t[k + 1]), transform * point(v, t[k + 2]), kCollider});
    }
    // Other shapes: not drawn (as in the page).
  }
  const auto& topology = data.at("topology");
  const std::vector<std::uint32_t> tris = indicesOf(topology.at("triangles").get<std::string>());
  const std::vector<std::uint32_t> lines = indicesOf(topology.at("lines").get<std::string>());
  for (std::size_t t = 0; t + 2 < tris.size(); t += 3)
    if (std::max({tris[t], tris[t + 1], tris[t + 2]}) < particles)
      triangles.push_back({point(x, tris[t]), point(x, tris[t + 1]), point(x, tris[t + 2]), kBody});
  for (const Triangle& t : triangles) canvas.triangle(t);
  if (data.at("colliders").empty()) {
    // The page's reference floor: a grid under the objects (at y = 0 when they stay a little above
    // it) and the x, y, z axes, one cell long, at the origin when it lies on the grid.
    const double lowY = view.low.y();
    const double groundY = lowY < 0.0 || lowY > 0.5 * view.footprint ? lowY : 0.0;
    const double u = std::round(centre.x() / cell) * cell, v = std::round(centre.z() / cell) * cell;
    const int n = static_cast<int>(std::lround(half / cell));
    for (int k = -n; k <= n; ++k) {
      canvas.line(Vec3(u + k * cell, groundY, v - half), Vec3(u + k * cell, groundY, v + half), kGrid);
      canvas.line(Vec3(u - half, groundY, v + k * cell), Vec3(u + half, groundY, v + k * cell), kGrid);
    }
    const bool onGrid =
        std::abs(groundY) <= 0.05 * view.footprint && std::abs(u) <= 0.7 * half && std::abs(v) <= 0.7 * half;
    const Vec3 origin = onGrid ? Vec3(0, groundY, 0) : Vec3(u - 0.6 * half, groundY, v - 0.6 * half);
    canvas.line(origin, origin + Vec3(cell, 0, 0), kAxisX);
    canvas.line(origin, origin + Vec3(0, cell, 0), kAxisY);
    canvas.line(origin, origin + Vec3(0, 0, cell), kAxisZ);
  }
  for (std::size_t l = 0; l + 1 < lines.size(); l += 2)
    if (std::max(lines[l], lines[l + 1]) < particles) canvas.line(point(x, lines[l]), point(x, lines[l + 1]), kBody);
  if (tris.empty() && lines.empty())
    for (std::uint32_t i = 0; i < particles; ++i) canvas.dot(point(x, i), kBody);
  return encodePng(options.width, options.height, canvas.rgb());
}

}  // namespace pliant::viewer
