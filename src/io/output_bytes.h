// Byte-level helpers shared by the output writers (frames and checkpoints): byte order, buffer
// growth, round-trip number text, checksums. Private to the I/O layer.
#pragma once

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>

namespace pliant::io::detail {

constexpr std::uint32_t swap32(std::uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0x0000ff00u) | ((v << 8) & 0x00ff0000u) | (v << 24);
}
constexpr std::uint64_t swap64(std::uint64_t v) {
  return (static_cast<std::uint64_t>(swap32(static_cast<std::uint32_t>(v))) << 32) |
         swap32(static_cast<std::uint32_t>(v >> 32));
}

constexpr bool kLittleEndianHost = std::endian::native == std::endian::little;

inline void storeBig32(char* dst, std::uint32_t v) {
  if constexpr (kLittleEndianHost) v = swap32(v);
  std::memcpy(dst, &v, 4);
}
inline void storeLittle32(char* dst, std::uint32_t v) {
  if constexpr (!kLittleEndianHost) v = swap32(v);
  std::memcpy(dst, &v, 4);
}
inline void storeLittle64(char* dst, std::uint64_t v) {
  if constexpr (!kLittleEndianHost) v = swap64(v);
  std::memcpy(dst, &v, 8);
}
inline std::uint32_t loadLittle32(const char* src) {
  std::uint32_t v;
  std::memcpy(&v, src, 4);
  if constexpr (!kLittleEndianHost) v = swap32(v);
  return v;
}
inline std::uint64_t loadLittle64(const char* src) {
  std::uint64_t v;
  std::memcpy(&v, src, 8);
  if constexpr (!kLittleEndianHost) v = swap64(v);
  return v;
}
inline std::uint32_t floatBits(double value) { return std::bit_cast<std::uint32_t>(static_cast<float>(value)); }

// Appends `bytes` zeroed bytes and returns where they start.
inline char* grow(std::string& out, std::size_t bytes) {
  const std::size_t old = out.size();
  out.resize(old + bytes);
  return out.data() + old;
}

// Shortest text that reads back to the same value (std::to_chars, round-trip exact).
template <class T>
void appendNumber(std::string& out, T value) {
  char text[64];
  const std::to_chars_result r = std::to_chars(text, text + sizeof text, value);
  out.append(text, r.ptr);
}

inline std::string systemMessage(int error) { return std::system_category().message(error); }

// FNV-1a, 64 bit, over bytes (the same function State::hash uses).
inline std::uint64_t fnv1a(const char* data, std::size_t size) {
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace pliant::io::detail
