// Checkpoints (pliant/io/checkpoint.h): the full State in a versioned binary file, written
// atomically (writeFileAtomically, pliant/io/output.h).
//
// Checkpoint layout (version 1, little-endian, every field 8-byte aligned):
//   0   char[8]  "PLIANTCK"
//   8   u32      format version (1)
//   12  u32      flags (0)
//   16  u64      particle count P
//   24  u64      multiplier count L (Model::totalConstraintCount)
//   32  u64      attachment count A
//   40  f64      time (s)
//   48  f64      lastSubstep (s)
//   56  u64      stepCount
//   64  u64      State::hash() of the saved state
//   72  f64[3P]  position, velocity, previousPosition, externalForce (each 3P), f64[L] lambda,
//                f64[3A] attachmentTarget
//   end u64      FNV-1a 64 over every preceding byte
// Version 2, written when the state has rigid bodies or joints (a state without them is written as
// version 1, byte for byte as before): the header goes on with
//   72  u64      body count B
//   80  u64      joint count J
// and the payload starts at 88 with the version 1 arrays, then f64[3B] bodyPosition, f64[4B]
// bodyRotation (x, y, z, w each), f64[3B] bodyVelocity, f64[3B] bodyAngularVelocity, f64[3B]
// bodyPreviousPosition, f64[4B] bodyPreviousRotation, f64[4J] jointLambda (kJointMultipliers per
// joint), f64[3J] jointLinearImpulse, f64[3J] jointAngularImpulse.
// Version 3, written when the state also has body contact anchors (State::bodyContactAnchors): the
// version 2 header goes on with
//   88  u64      anchor count K
// and the payload starts at 96 with the version 2 arrays, then per anchor u64 bodyA, u64 bodyB, i64
// collider, f64[3] a, f64[3] b.
// Version 4, written when the state also has sleep data (a body's sleep timer or island set,
// State::bodySleepTime/bodySleepIsland; without them the older version is written, byte for byte
// as before, and older files read as states with every body awake): the version 3 header (its
// anchor count may be 0) and payload, then f64[B] bodySleepTime, i64[B] bodySleepIsland.
// Version 5, written when an anchor also has a multiplier (State::BodyContactAnchor::lambda, the
// contact solve's warm start; older files read with 0): the version 4 header and payload, then
// f64[K] the anchors' lambda.
// Doubles are stored as their bit patterns, so a restored state is bit-identical to the saved one.
//
// Reading trusts nothing: FNV-1a finds damage, not a crafted file with a recomputed checksum, so
// every decoded field is then checked as strictly as a scene file (checkStateFields): the frame
// counter within kMaxSceneFrames, time and h finite and >= 0 (and, given the solver settings, time
// = frames x time_step), every position, velocity, force, multiplier and target finite.
#include "pliant/io/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "output_bytes.h"
#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/output.h"
#include "pliant/io/scenes.h"

namespace pliant::io {

using namespace detail;

namespace {

constexpr char kCheckpointMagic[8] = {'P', 'L', 'I', 'A', 'N', 'T', 'C', 'K'};
constexpr std::uint32_t kCheckpointVersion = 1;         // particles only
constexpr std::uint32_t kCheckpointBodiesVersion = 2;   // with bodies and joints
constexpr std::uint32_t kCheckpointAnchorsVersion = 3;  // and body contact anchors
constexpr std::uint32_t kCheckpointSleepVersion = 4;    // and bodies' sleep timers and islands
constexpr std::uint32_t kCheckpointWarmVersion = 5;     // and the anchors' multipliers
constexpr std::size_t kCheckpointHeaderSize = 72;
constexpr std::size_t kCheckpointBodiesHeaderSize = 88;
constexpr std::size_t kCheckpointAnchorsHeaderSize = 96;
constexpr std::size_t kChecksumSize = 8;
// Doubles per body and per joint in a version 2 payload.
constexpr std::uint64_t kBodyDoubles = 20;
constexpr std::uint64_t kJointDoubles = kJointMultipliers + 6;
constexpr std::uint64_t kAnchorWords = 9;  // per anchor in a version 3 payload
constexpr std::uint64_t kSleepWords = 2;   // per body in a version 4 payload

std::size_t headerSize(std::uint32_t version) {
  if (version >= kCheckpointAnchorsVersion) return kCheckpointAnchorsHeaderSize;
  return version == kCheckpointBodiesVersion ? kCheckpointBodiesHeaderSize : kCheckpointHeaderSize;
}

std::uint64_t checkpointSize(std::uint32_t version, std::uint64_t particles, std::uint64_t lambdas,
                             std::uint64_t attachments, std::uint64_t bodies, std::uint64_t joints,
                             std::uint64_t anchors) {
  return headerSize(version) +
         8 * (12 * particles + lambdas + 3 * attachments + kBodyDoubles * bodies + kJointDoubles * joints +
              kAnchorWords * anchors + (version >= kCheckpointSleepVersion ? kSleepWords * bodies : 0) +
              (version >= kCheckpointWarmVersion ? anchors : 0)) +
         kChecksumSize;
}

[[noreturn]] void checkpointError(const std::string& path, const std::string& what) {
  throw Error("checkpoint '" + path + "': " + what);
}

}  // namespace

namespace {

void checkStateFields(const State& state, const std::string& path, const SolverSettings* settings);

// The checkpoint bytes of `state`; `path` names it in errors. A state the reader would refuse is
// refused here, so a checkpoint written is always one that can be read.
std::string checkpointBytes(const std::string& path, const State& state) {
  const std::size_t n = state.position.size();
  if (state.velocity.size() != n || state.previousPosition.size() != n || state.externalForce.size() != n)
    checkpointError(path, "state arrays disagree: " + std::to_string(n) + " positions, " +
                              std::to_string(state.velocity.size()) + " velocities, " +
                              std::to_string(state.previousPosition.size()) + " previous positions, " +
                              std::to_string(state.externalForce.size()) + " external forces; expected equal counts");
  const std::size_t bodies = state.bodyPosition.size();
  const std::size_t joints = state.jointLinearImpulse.size();
  for (const std::size_t count :
       {state.bodyRotation.size(), state.bodyVelocity.size(), state.bodyAngularVelocity.size(),
        state.bodyPreviousPosition.size(), state.bodyPreviousRotation.size()})
    if (count != bodies)
      checkpointError(path, "body arrays disagree: " + std::to_string(bodies) + " body positions and an array of " +
                                std::to_string(count) + "; expected equal counts");
  if (state.jointAngularImpulse.size() != joints || state.jointLambda.size() != kJointMultipliers * joints)
    checkpointError(path, "joint arrays disagree: " + std::to_string(joints) + " linear impulses, " +
                              std::to_string(state.jointAngularImpulse.size()) + " angular impulses, " +
                              std::to_string(state.jointLambda.size()) + " multipliers; expected " +
                              std::to_string(joints) + ", " + std::to_string(joints) + " and " +
                              std::to_string(kJointMultipliers * joints));
  checkStateFields(state, path, nullptr);
  const std::size_t lambdas = state.lambda.size();
  const std::size_t attachments = state.attachmentTarget.size();
  const std::size_t anchors = state.bodyContactAnchors.size();
  const bool sleepData =
      std::any_of(state.bodySleepTime.begin(), state.bodySleepTime.end(), [](double t) { return t != 0.0; }) ||
      std::any_of(state.bodySleepIsland.begin(), state.bodySleepIsland.end(), [](std::int32_t i) { return i != -1; });
  if (sleepData && (state.bodySleepTime.size() != bodies || state.bodySleepIsland.size() != bodies))
    checkpointError(path, "sleep arrays disagree: " + std::to_string(bodies) + " bodies, " +
                              std::to_string(state.bodySleepTime.size()) + " sleep timers and " +
                              std::to_string(state.bodySleepIsland.size()) + " sleep islands; expected equal counts");
  const bool warmData = std::any_of(state.bodyContactAnchors.begin(), state.bodyContactAnchors.end(),
                                    [](const State::BodyContactAnchor& k) { return k.lambda != 0.0; });
  const std::uint32_t version = warmData              ? kCheckpointWarmVersion
                                : sleepData           ? kCheckpointSleepVersion
                                : anchors > 0         ? kCheckpointAnchorsVersion
                                : bodies + joints > 0 ? kCheckpointBodiesVersion
                                                      : kCheckpointVersion;
  std::string out(checkpointSize(version, n, lambdas, attachments, bodies, joints, anchors), '\0');
  char* dst = out.data();
  std::memcpy(dst, kCheckpointMagic, 8);
  storeLittle32(dst + 8, version);
  storeLittle32(dst + 12, 0);
  storeLittle64(dst + 16, n);
  storeLittle64(dst + 24, lambdas);
  storeLittle64(dst + 32, attachments);
  storeLittle64(dst + 40, std::bit_cast<std::uint64_t>(state.time));
  storeLittle64(dst + 48, std::bit_cast<std::uint64_t>(state.lastSubstep));
  storeLittle64(dst + 56, state.stepCount);
  storeLittle64(dst + 64, state.hash());
  if (version != kCheckpointVersion) {
    storeLittle64(dst + 72, bodies);
    storeLittle64(dst + 80, joints);
  }
  if (version >= kCheckpointAnchorsVersion) storeLittle64(dst + 88, anchors);
  dst += headerSize(version);
  auto putDouble = [&dst](double value) {
    storeLittle64(dst, std::bit_cast<std::uint64_t>(value));
    dst += 8;
  };
  for (const std::vector<Vec3>* array :
       {&state.position, &state.velocity, &state.previousPosition, &state.externalForce})
    for (const Vec3& v : *array)
      for (int k = 0; k < 3; ++k) putDouble(v[k]);
  for (double l : state.lambda) putDouble(l);
  for (const Vec3& v : state.attachmentTarget)
    for (int k = 0; k < 3; ++k) putDouble(v[k]);
  const auto putVectors = [&](const std::vector<Vec3>& array) {
    for (const Vec3& v : array)
      for (int k = 0; k < 3; ++k) putDouble(v[k]);
  };
  const auto putQuats = [&](const std::vector<Quat>& array) {
    for (const Quat& q : array)
      for (int k = 0; k < 4; ++k) putDouble(q.coeffs()[k]);
  };
  putVectors(state.bodyPosition);
  putQuats(state.bodyRotation);
  putVectors(state.bodyVelocity);
  putVectors(state.bodyAngularVelocity);
  putVectors(state.bodyPreviousPosition);
  putQuats(state.bodyPreviousRotation);
  for (double l : state.jointLambda) putDouble(l);
  putVectors(state.jointLinearImpulse);
  putVectors(state.jointAngularImpulse);
  for (const State::BodyContactAnchor& k : state.bodyContactAnchors) {
    storeLittle64(dst, k.bodyA);
    storeLittle64(dst + 8, k.bodyB);
    storeLittle64(dst + 16, static_cast<std::uint64_t>(static_cast<std::int64_t>(k.collider)));
    dst += 24;
    for (int c = 0; c < 3; ++c) putDouble(k.a[c]);
    for (int c = 0; c < 3; ++c) putDouble(k.b[c]);
  }
  if (version >= kCheckpointSleepVersion) {
    const bool sized = state.bodySleepTime.size() == bodies && state.bodySleepIsland.size() == bodies;
    for (std::size_t b = 0; b < bodies; ++b) putDouble(sized ? state.bodySleepTime[b] : 0.0);
    for (std::size_t b = 0; b < bodies; ++b) {
      const std::int32_t island = sized ? state.bodySleepIsland[b] : -1;
      storeLittle64(dst, static_cast<std::uint64_t>(static_cast<std::int64_t>(island)));
      dst += 8;
    }
  }
  if (version >= kCheckpointWarmVersion)
    for (const State::BodyContactAnchor& k : state.bodyContactAnchors) putDouble(k.lambda);
  const std::size_t payload = static_cast<std::size_t>(dst - out.data());
  storeLittle64(dst, fnv1a(out.data(), payload));
  return out;
}

}  // namespace

std::string encodeCheckpoint(const State& state) { return checkpointBytes("state", state); }

void writeCheckpoint(const std::string& path, const State& state) {
  writeFileAtomically(path, checkpointBytes(path, state));
}

namespace {

struct CheckpointCounts {
  std::uint32_t version = kCheckpointVersion;
  std::uint64_t particles = 0, lambdas = 0, attachments = 0, bodies = 0, joints = 0, anchors = 0;
  std::string text;
};

// Checks the header (its first `headerBytes` bytes, at most kCheckpointBodiesHeaderSize) of a checkpoint of
// `size` bytes: magic, version, flags, and that the counts fit the size exactly. Sizes first (a
// cut-off file is the common failure), then the model's counts (a damaged count almost never fits
// the size exactly, so a mismatch then really is a different model; reading a file, this comes
// before the body is read, so the model bounds what is read), then the checksum, then the fields.
CheckpointCounts checkCheckpointHeader(const char* header, std::size_t headerBytes, std::uint64_t size,
                                       const std::string& path) {
  constexpr std::uint64_t kMinimum = kCheckpointHeaderSize + kChecksumSize;
  if (headerBytes < 8 || std::memcmp(header, kCheckpointMagic, 8) != 0)
    checkpointError(path, "not a Pliant checkpoint; expected the file to start with \"PLIANTCK\"");
  if (size < kMinimum)
    checkpointError(path,
                    "truncated: " + std::to_string(size) + " bytes, expected at least " + std::to_string(kMinimum));
  const std::uint32_t version = loadLittle32(header + 8);
  if (version < kCheckpointVersion || version > kCheckpointWarmVersion)
    checkpointError(path, "format version " + std::to_string(version) + ", expected version " +
                              std::to_string(kCheckpointVersion) + " to " + std::to_string(kCheckpointWarmVersion));
  if (loadLittle32(header + 12) != 0) checkpointError(path, "unknown flags set in the header; expected 0");
  CheckpointCounts c;
  c.version = version;
  if (version != kCheckpointVersion &&
      (size < headerSize(version) + kChecksumSize || headerBytes < headerSize(version)))
    checkpointError(path, "truncated: " + std::to_string(size) + " bytes, expected at least " +
                              std::to_string(headerSize(version) + kChecksumSize) + " for version " +
                              std::to_string(version));
  c.particles = loadLittle64(header + 16);
  c.lambdas = loadLittle64(header + 24);
  c.attachments = loadLittle64(header + 32);
  if (version != kCheckpointVersion) {
    c.bodies = loadLittle64(header + 72);
    c.joints = loadLittle64(header + 80);
  }
  if (version >= kCheckpointAnchorsVersion) c.anchors = loadLittle64(header + 88);
  c.text = std::to_string(c.particles) + " particles, " + std::to_string(c.lambdas) + " constraint multipliers and " +
           std::to_string(c.attachments) + " attachments";
  if (version != kCheckpointVersion)
    c.text += ", " + std::to_string(c.bodies) + " bodies and " + std::to_string(c.joints) + " joints";
  if (version >= kCheckpointAnchorsVersion) c.text += " (" + std::to_string(c.anchors) + " contact anchors)";
  if (c.particles > size || c.lambdas > size || c.attachments > size || c.bodies > size || c.joints > size ||
      c.anchors > size)
    checkpointError(path, "header claims " + c.text + ", more than a file of " + std::to_string(size) +
                              " bytes can hold (truncated or corrupted)");
  const std::uint64_t expected =
      checkpointSize(version, c.particles, c.lambdas, c.attachments, c.bodies, c.joints, c.anchors);
  if (size < expected)
    checkpointError(
        path, "truncated: " + std::to_string(size) + " bytes, expected " + std::to_string(expected) + " for " + c.text);
  if (size > expected)
    checkpointError(path, std::to_string(size) + " bytes, expected " + std::to_string(expected) + " for " + c.text +
                              " (trailing data)");
  return c;
}

}  // namespace

namespace {

std::string modelCountsText(const Model& model) {
  std::string text = std::to_string(model.particleCount()) + " particles, " +
                     std::to_string(model.totalConstraintCount()) + " constraint multipliers and " +
                     std::to_string(model.attachments.size()) + " attachments";
  if (model.bodyCount() + model.joints.size() > 0)
    text += ", " + std::to_string(model.bodyCount()) + " bodies and " + std::to_string(model.joints.size()) + " joints";
  return text;
}

void checkCountsAgainstModel(const CheckpointCounts& counts, const Model& model, const std::string& path) {
  if (counts.particles != model.particleCount() || counts.lambdas != model.totalConstraintCount() ||
      counts.attachments != model.attachments.size() || counts.bodies != model.bodyCount() ||
      counts.joints != model.joints.size())
    checkpointError(
        path, "saved for a model with " + counts.text + "; expected " + modelCountsText(model) + " (the model given)");
}

std::string number(double value) {
  std::ostringstream text;
  text.precision(17);
  text << value;
  return text.str();
}

// Every decoded field, as strictly as a scene file checks its fields: a checkpoint that passes
// its checksum may still be crafted (issue 12 item 3). `settings`, when given, are the ones the
// state will be stepped with: its time must then be its frame count times their time step.
void checkStateFields(const State& state, const std::string& path, const SolverSettings* settings) {
  if (state.stepCount > static_cast<std::uint64_t>(kMaxSceneFrames))
    checkpointError(path, "frame counter (stepCount, header byte 56) is " + std::to_string(state.stepCount) +
                              "; expected 0 to " + std::to_string(kMaxSceneFrames) + " frames");
  if (!std::isfinite(state.time) || state.time < 0.0)
    checkpointError(path, "time (header byte 40) is " + number(state.time) + " s; expected a finite number >= 0");
  if (!std::isfinite(state.lastSubstep) || state.lastSubstep < 0.0)
    checkpointError(
        path, "last substep h (header byte 48) is " + number(state.lastSubstep) + " s; expected a finite number >= 0");
  if (settings) {
    // The solver sets time = start + time_step once per frame, so after n frames time is n time
    // steps up to rounding (at most ~n x 1e-16 relative); 1e-6 leaves room for that and nothing else.
    const double frames = static_cast<double>(state.stepCount);
    const double expected = frames * settings->timeStep;
    if (!(std::abs(state.time - expected) <= 1e-6 * std::max(expected, settings->timeStep)))
      checkpointError(path, "time (header byte 40) is " + number(state.time) + " s at frame " +
                                std::to_string(state.stepCount) + "; expected " + number(expected) + " s (" +
                                std::to_string(state.stepCount) + " frames of the scene's time_step " +
                                number(settings->timeStep) + " s)");
    if (state.lastSubstep > settings->timeStep * (1.0 + 1e-12))
      checkpointError(path, "last substep h (header byte 48) is " + number(state.lastSubstep) +
                                " s; expected at most the scene's time_step " + number(settings->timeStep) + " s");
  }
  const auto checkVectors = [&](const std::vector<Vec3>& array, const char* field, const char* unit) {
    for (std::size_t i = 0; i < array.size(); ++i)
      if (!array[i].allFinite())
        checkpointError(path, std::string(field) + "[" + std::to_string(i) + "] is (" + number(array[i].x()) + ", " +
                                  number(array[i].y()) + ", " + number(array[i].z()) + "); expected finite numbers (" +
                                  unit + ")");
  };
  checkVectors(state.position, "position", "m");
  checkVectors(state.velocity, "velocity", "m/s");
  checkVectors(state.previousPosition, "previous position", "m");
  checkVectors(state.externalForce, "external force", "N");
  for (std::size_t i = 0; i < state.lambda.size(); ++i)
    if (!std::isfinite(state.lambda[i]))
      checkpointError(path, "constraint multiplier lambda[" + std::to_string(i) + "] is " + number(state.lambda[i]) +
                                "; expected a finite number");
  checkVectors(state.attachmentTarget, "attachment target", "m");
  checkVectors(state.bodyPosition, "body position", "m");
  checkVectors(state.bodyVelocity, "body velocity", "m/s");
  checkVectors(state.bodyAngularVelocity, "body angular velocity", "rad/s");
  checkVectors(state.bodyPreviousPosition, "body previous position", "m");
  // Rotations are unit quaternions (the solver normalises them every substep).
  const auto checkRotations = [&](const std::vector<Quat>& array, const char* field) {
    for (std::size_t i = 0; i < array.size(); ++i)
      if (!array[i].coeffs().allFinite() || !(std::abs(array[i].norm() - 1.0) <= 1e-6))
        checkpointError(path, std::string(field) + "[" + std::to_string(i) + "] is (" + number(array[i].w()) + ", " +
                                  number(array[i].x()) + ", " + number(array[i].y()) + ", " + number(array[i].z()) +
                                  "); expected a unit quaternion (w, x, y, z)");
  };
  checkRotations(state.bodyRotation, "body rotation");
  checkRotations(state.bodyPreviousRotation, "body previous rotation");
  for (std::size_t i = 0; i < state.jointLambda.size(); ++i)
    if (!std::isfinite(state.jointLambda[i]))
      checkpointError(path, "joint multiplier jointLambda[" + std::to_string(i) + "] is " +
                                number(state.jointLambda[i]) + "; expected a finite number");
  checkVectors(state.jointLinearImpulse, "joint linear impulse", "kg m");
  checkVectors(state.jointAngularImpulse, "joint angular impulse", "kg m^2");
  const std::size_t bodies = state.bodyPosition.size();
  for (std::size_t i = 0; i < state.bodyContactAnchors.size(); ++i) {
    const State::BodyContactAnchor& k = state.bodyContactAnchors[i];
    const bool collider = k.collider >= 0;
    if (k.bodyA >= bodies || (collider ? k.bodyB != kWorldBody : k.bodyB >= bodies || k.bodyB <= k.bodyA) ||
        k.collider < -1)
      checkpointError(path, "body contact anchor " + std::to_string(i) + " names bodies " + std::to_string(k.bodyA) +
                                " and " + std::to_string(k.bodyB) + ", collider " + std::to_string(k.collider) +
                                "; expected a body below " + std::to_string(bodies) +
                                " and a higher one, or the world (" + std::to_string(kWorldBody) +
                                ") with a collider >= 0");
    if (!k.a.allFinite() || !k.b.allFinite())
      checkpointError(
          path, "body contact anchor " + std::to_string(i) + " has a non-finite point; expected finite numbers (m)");
    if (!std::isfinite(k.lambda) || k.lambda < 0.0)
      checkpointError(path, "body contact anchor " + std::to_string(i) + " has multiplier " + number(k.lambda) +
                                "; expected a finite number >= 0 (kg m)");
  }
  for (std::size_t i = 0; i < state.bodySleepTime.size(); ++i)
    if (!std::isfinite(state.bodySleepTime[i]) || state.bodySleepTime[i] < 0.0)
      checkpointError(path, "body sleep time[" + std::to_string(i) + "] is " + number(state.bodySleepTime[i]) +
                                " s; expected a finite number >= 0");
  for (std::size_t i = 0; i < state.bodySleepIsland.size(); ++i) {
    const std::int32_t island = state.bodySleepIsland[i];
    if (island < -1 || (island >= 0 && static_cast<std::size_t>(island) >= bodies))
      checkpointError(path, "body sleep island[" + std::to_string(i) + "] is " + std::to_string(island) +
                                "; expected -1 (awake) or a body index below " + std::to_string(bodies));
  }
}

State decodeState(std::string_view bytes, const std::string& path, const Model* model, const SolverSettings* settings) {
  const char* header = bytes.data();
  const CheckpointCounts counts = checkCheckpointHeader(
      header, std::min<std::size_t>(bytes.size(), kCheckpointAnchorsHeaderSize), bytes.size(), path);
  const std::uint64_t particles = counts.particles, lambdas = counts.lambdas, attachments = counts.attachments;
  const std::size_t payload = bytes.size() - kChecksumSize;
  const std::uint64_t stored = loadLittle64(bytes.data() + payload);
  if (fnv1a(bytes.data(), payload) != stored) checkpointError(path, "checksum mismatch; the file is corrupted");
  if (model) checkCountsAgainstModel(counts, *model, path);

  State state;
  state.time = std::bit_cast<double>(loadLittle64(header + 40));
  state.lastSubstep = std::bit_cast<double>(loadLittle64(header + 48));
  state.stepCount = loadLittle64(header + 56);
  const char* src = bytes.data() + headerSize(counts.version);
  auto getDouble = [&src]() {
    const double value = std::bit_cast<double>(loadLittle64(src));
    src += 8;
    return value;
  };
  auto getVectors = [&](std::vector<Vec3>& array, std::size_t count) {
    array.resize(count);
    for (Vec3& v : array)
      for (int k = 0; k < 3; ++k) v[k] = getDouble();
  };
  const auto n = static_cast<std::size_t>(particles);
  getVectors(state.position, n);
  getVectors(state.velocity, n);
  getVectors(state.previousPosition, n);
  getVectors(state.externalForce, n);
  state.lambda.resize(static_cast<std::size_t>(lambdas));
  for (double& l : state.lambda) l = getDouble();
  getVectors(state.attachmentTarget, static_cast<std::size_t>(attachments));
  const auto bodies = static_cast<std::size_t>(counts.bodies), joints = static_cast<std::size_t>(counts.joints);
  auto getQuats = [&](std::vector<Quat>& array) {
    array.resize(bodies);
    for (Quat& q : array)
      for (int k = 0; k < 4; ++k) q.coeffs()[k] = getDouble();
  };
  getVectors(state.bodyPosition, bodies);
  getQuats(state.bodyRotation);
  getVectors(state.bodyVelocity, bodies);
  getVectors(state.bodyAngularVelocity, bodies);
  getVectors(state.bodyPreviousPosition, bodies);
  getQuats(state.bodyPreviousRotation);
  state.jointLambda.resize(kJointMultipliers * joints);
  for (double& l : state.jointLambda) l = getDouble();
  getVectors(state.jointLinearImpulse, joints);
  getVectors(state.jointAngularImpulse, joints);
  state.bodyContactAnchors.resize(static_cast<std::size_t>(counts.anchors));
  for (State::BodyContactAnchor& k : state.bodyContactAnchors) {
    k.bodyA = static_cast<BodyIndex>(std::min<std::uint64_t>(loadLittle64(src), kWorldBody));
    k.bodyB = static_cast<BodyIndex>(std::min<std::uint64_t>(loadLittle64(src + 8), kWorldBody));
    const auto collider = static_cast<std::int64_t>(loadLittle64(src + 16));
    k.collider =
        static_cast<std::int32_t>(std::clamp<std::int64_t>(collider, -2, std::numeric_limits<std::int32_t>::max()));
    src += 24;
    for (int c = 0; c < 3; ++c) k.a[c] = getDouble();
    for (int c = 0; c < 3; ++c) k.b[c] = getDouble();
  }
  // Older versions: every body awake.
  state.bodySleepTime.assign(bodies, 0.0);
  state.bodySleepIsland.assign(bodies, -1);
  if (counts.version >= kCheckpointSleepVersion) {
    for (double& t : state.bodySleepTime) t = getDouble();
    for (std::int32_t& island : state.bodySleepIsland) {
      const auto value = static_cast<std::int64_t>(loadLittle64(src));
      src += 8;
      island = static_cast<std::int32_t>(std::clamp<std::int64_t>(value, -2, std::numeric_limits<std::int32_t>::max()));
    }
  }
  if (counts.version >= kCheckpointWarmVersion)
    for (State::BodyContactAnchor& k : state.bodyContactAnchors) k.lambda = getDouble();
  // An end-to-end check of the decoding against the hash taken when the state was saved.
  if (state.hash() != loadLittle64(header + 64))
    checkpointError(path, "restored state hash differs from the saved one; expected a bit-identical state");
  checkStateFields(state, path, settings);
  return state;
}

State readState(const std::string& path, const Model& model, const SolverSettings* settings) {
  // Opened without blocking and checked to be a regular file (pliant/io/input_file.h). No fixed
  // size limit: the header is read first and its counts must equal the model's, which fixes the
  // file's size, before anything past the header is read.
  InputFile file(path, "a Pliant checkpoint (.ckpt)", std::numeric_limits<std::uint64_t>::max());
  const std::uint64_t size = file.size();
  std::string bytes(static_cast<std::size_t>(std::min<std::uint64_t>(size, kCheckpointAnchorsHeaderSize)), '\0');
  const std::size_t headerRead = bytes.size();
  file.read(bytes.data(), headerRead);
  checkCountsAgainstModel(checkCheckpointHeader(bytes.data(), headerRead, size, path), model, path);
  // Exactly the size checked (a file that grows meanwhile cannot make us read more).
  bytes.resize(static_cast<std::size_t>(size));
  file.read(bytes.data() + headerRead, size - headerRead);
  return decodeState(bytes, path, &model, settings);
}

}  // namespace

State decodeCheckpoint(std::string_view bytes, const std::string& path, const Model* model) {
  return decodeState(bytes, path, model, nullptr);
}

State readCheckpoint(const std::string& path, const Model& model) { return readState(path, model, nullptr); }

State readCheckpoint(const std::string& path, const Model& model, const SolverSettings& settings) {
  return readState(path, model, &settings);
}

}  // namespace pliant::io
