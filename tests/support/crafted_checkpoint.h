// Crafting checkpoint files for tests (issue 12 item 3): the bytes of any State (version 2 when it
// has bodies or joints), however absurd its
// fields, laid out as src/io/checkpoint.cpp documents, with the state hash and the FNV-1a checksum
// computed here exactly as the writer computes them. Such a file passes every check that finds
// damage (size, checksum, hash), so only the reader's field checks can refuse it; the writer
// itself refuses to write such states.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "pliant/state.h"

namespace pliant::testing {

inline std::string craftCheckpoint(const State& s) {
  std::string out = "PLIANTCK";
  const auto u32 = [&out](std::uint32_t v) {
    for (int k = 0; k < 4; ++k) out += static_cast<char>((v >> (8 * k)) & 0xff);
  };
  const auto u64 = [&out](std::uint64_t v) {
    for (int k = 0; k < 8; ++k) out += static_cast<char>((v >> (8 * k)) & 0xff);
  };
  const auto f64 = [&u64](double v) { u64(std::bit_cast<std::uint64_t>(v)); };
  const bool bodies = !s.bodyPosition.empty() || !s.jointLinearImpulse.empty();
  u32(bodies ? 2 : 1);  // version: 2 with bodies and joints
  u32(0);               // flags
  u64(s.position.size());
  u64(s.lambda.size());
  u64(s.attachmentTarget.size());
  f64(s.time);
  f64(s.lastSubstep);
  u64(s.stepCount);
  u64(s.hash());
  if (bodies) {
    u64(s.bodyPosition.size());
    u64(s.jointLinearImpulse.size());
  }
  for (const std::vector<Vec3>* array : {&s.position, &s.velocity, &s.previousPosition, &s.externalForce})
    for (const Vec3& v : *array)
      for (int k = 0; k < 3; ++k) f64(v[k]);
  for (double l : s.lambda) f64(l);
  for (const Vec3& v : s.attachmentTarget)
    for (int k = 0; k < 3; ++k) f64(v[k]);
  for (const std::vector<Vec3>* array : {&s.bodyPosition})
    for (const Vec3& v : *array)
      for (int k = 0; k < 3; ++k) f64(v[k]);
  for (const Quat& q : s.bodyRotation)
    for (int k = 0; k < 4; ++k) f64(q.coeffs()[k]);
  for (const std::vector<Vec3>* array : {&s.bodyVelocity, &s.bodyAngularVelocity, &s.bodyPreviousPosition})
    for (const Vec3& v : *array)
      for (int k = 0; k < 3; ++k) f64(v[k]);
  for (const Quat& q : s.bodyPreviousRotation)
    for (int k = 0; k < 4; ++k) f64(q.coeffs()[k]);
  for (double l : s.jointLambda) f64(l);
  for (const std::vector<Vec3>* array : {&s.jointLinearImpulse, &s.jointAngularImpulse})
    for (const Vec3& v : *array)
      for (int k = 0; k < 3; ++k) f64(v[k]);
  // FNV-1a 64 (Fowler, Noll, Vo) over every byte so far.
  std::uint64_t h = 14695981039346656037ull;
  for (char c : out) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  u64(h);
  return out;
}

}  // namespace pliant::testing
