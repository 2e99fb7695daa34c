// The two rigid body scenes of issue 17's speed comparison, defined once for every engine that runs
// them (Bullet in bullet_rigid_bench.cpp; Pliant's side reads the same numbers). bench/bullet/README.md
// describes them in words. SI units; y is up; the ground is the plane y = 0.
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace pliant::bench::rigid {

// A pile: 1,000 cubes in a 10 x 10 x 10 lattice, dropped from rest onto the ground.
struct PileScene {
  static constexpr double kFrameRate = 60.0;    // Hz, one frame = one step of 1/60 s
  static constexpr double kGravity = 9.81;      // m/s^2, along -y
  static constexpr double kFriction = 0.5;      // Coulomb coefficient, box-box and box-ground
  static constexpr int kBoxCount = 1000;        // 10 x 10 x 10
  static constexpr double kHalfExtent = 0.2;    // m, cubes of 0.4 m
  static constexpr double kMass = 1.0;          // kg each (density 15.625 kg/m^3)
  static constexpr double kSpacing = 0.5;       // m, lattice pitch in x, y and z
  static constexpr double kBottom = 0.5;        // m, centre height of the lowest layer
  static constexpr double kLayerShift = 0.125;  // m, odd layers moved by this in x and z
  struct Box {
    std::array<double, 3> position;  // m, centre
    double yaw;                      // rad, rotation about +y
  };
  // Box i: lattice cell (i % 10, i / 100, (i / 10) % 10) in (x, layer, z), the lattice centred on
  // the y axis; odd layers shifted so that boxes straddle the ones below; a small yaw of
  // 0.05 * ((i % 7) - 3) rad so that the pile does not stay a neat column.
  // kg m^2, a cube's moment of inertia about any axis through its centre: m (2 h)^2 / 6.
  static constexpr double kInertia = kMass * 4.0 * kHalfExtent * kHalfExtent / 6.0;
  static Box box(int i) {
    const int x = i % 10, z = (i / 10) % 10, layer = i / 100;
    const double shift = (layer % 2) ? kLayerShift : 0.0;
    return Box{{(x - 4.5) * kSpacing + shift, kBottom + layer * kSpacing, (z - 4.5) * kSpacing + shift},
               0.05 * ((i % 7) - 3)};
  }
  // Box i with its centre at (x, y, z) (m) has left its place in the standing pile: its centre is more
  // than a quarter of a box (0.1 m) from where the lattice stacked without gaps puts it, over its cell at
  // the height of its layer's boxes resting on each other. A collapse moves most; a pile that stands, none.
  static bool offPlace(int i, double x, double y, double z) {
    const Box b = box(i);
    const int layer = i / 100;
    const double dx = x - b.position[0], dz = z - b.position[2];
    const double dy = y - (2 * layer + 1) * kHalfExtent;
    return dx * dx + dy * dy + dz * dz > (0.5 * kHalfExtent) * (0.5 * kHalfExtent);
  }
};

// A chain: 100 box links joined end to end by hinges about z, the first one hinged to a fixed pivot;
// released from rest lying horizontally along +x, it swings down under gravity (no ground contact:
// it hangs 5 m above the ground at full length). Links do not collide with their neighbours.
struct ChainScene {
  static constexpr double kFrameRate = 60.0;  // Hz
  static constexpr double kGravity = 9.81;    // m/s^2, along -y
  static constexpr int kLinkCount = 100;
  static constexpr double kHalfLength = 0.25;                        // m, links 0.5 m long along their x axis
  static constexpr double kHalfWidth = 0.05;                         // m, 0.1 m x 0.1 m cross-section
  static constexpr double kMass = 1.0;                               // kg each
  static constexpr std::array<double, 3> kPivot = {0.0, 55.0, 0.0};  // m, fixed hinge of link 0's -x end
  // Frames of damped settling (velocities scaled by 0.9 each frame) before drift at rest is measured.
  static constexpr int kSettleFrames = 600;
  // Link i's centre at release: the chain straight along +x from the pivot.
  static std::array<double, 3> linkCentre(int i) {
    return {kPivot[0] + (2 * i + 1) * kHalfLength, kPivot[1], kPivot[2]};
  }
};

// The pile's motion at one instant, for --trace (one line per simulated second on stderr): how much
// is still moving, and whether the pile stands (top centre near 4.85 m) or has collapsed into a heap.
struct PileMotion {
  double kinetic = 0.0;   // J, sum of 1/2 m |v|^2 + 1/2 I |omega|^2 over the boxes
  double maxSpeed = 0.0;  // m/s, the fastest box centre
  double top = 0.0;       // m, the highest box centre
  int awake = 0;          // boxes not asleep (Pliant) or active (Bullet)
  void add(double speed, double angularSpeed, double height, bool isAwake) {
    kinetic += 0.5 * PileScene::kMass * speed * speed + 0.5 * PileScene::kInertia * angularSpeed * angularSpeed;
    maxSpeed = speed > maxSpeed ? speed : maxSpeed;
    top = height > top ? height : top;
    awake += isAwake ? 1 : 0;
  }
  void print(const char* engine, int second) const {
    std::fprintf(stderr, "%s pile t=%d s: kinetic %.4g J, fastest %.3g m/s, top %.3f m, awake %d\n", engine, second,
                 kinetic, maxSpeed, top, awake);
  }
};

// One engine's measurements on one scene: a row of the comparison's CSV.
struct Row {
  std::string scene;
  int bodies = 0;
  int frames = 0;
  double msPerFrame = 0.0;      // ms, mean wall time of a frame
  double maxPenetration = 0.0;  // m
  double maxJointError = 0.0;   // m
  double drift = 0.0;           // m
};

// The CSV text of `rows` measured by `engine`, header first.
inline std::string csvText(const std::vector<Row>& rows, const char* engine) {
  std::string csv = "scene,engine,bodies,frames,ms_per_frame,max_penetration_m,max_joint_error_m,drift_m\n";
  for (const Row& r : rows) {
    char line[256];
    std::snprintf(line, sizeof line, "%s,%s,%d,%d,%.4f,%.6g,%.6g,%.6g\n", r.scene.c_str(), engine, r.bodies, r.frames,
                  r.msPerFrame, r.maxPenetration, r.maxJointError, r.drift);
    csv += line;
  }
  return csv;
}

}  // namespace pliant::bench::rigid
