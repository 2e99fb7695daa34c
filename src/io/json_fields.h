// JSON reading for scene files, private to the I/O layer: Node (a value with its JSON path) and
// SceneReader, whose every accessor checks the type and range and fails naming the source, the path
// and what was expected.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "pliant/constraints.h"
#include "pliant/error.h"
#include "pliant/math.h"

namespace pliant::scenefile {

using Json = nlohmann::json;

// "null", "a boolean", "a number", ... for messages.
std::string typeName(const Json& j);
// "line:column" (1-based) of byte `offset` of `text`.
std::string lineColumn(const std::string& text, std::size_t offset);
// A range in words: "of at least 0", "greater than 0", "from 0 to 1", "greater than 0 and at most 10";
// an infinite bound is left out.
std::string describeRange(double min, double max, bool exclusiveMin);
// Offset of the first occurrence of number token `token` outside string literals, or npos.
std::size_t findNumberToken(const std::string& text, const std::string& token);

// A JSON value together with its path, for error messages.
struct Node {
  const Json& json;
  std::string path;
};

class SceneReader {
 public:
  SceneReader(std::string source, std::string baseDirectory)
      : source_(std::move(source)), base_(std::move(baseDirectory)) {}

  [[noreturn]] void fail(const Node& node, const std::string& what) const {
    throw Error(source_ + ": " + (node.path.empty() ? "/" : node.path) + ": " + what);
  }

  void requireObject(const Node& node) const {
    if (!node.json.is_object()) fail(node, "expected an object, got " + typeName(node.json));
  }

  void allowOnly(const Node& node, std::initializer_list<const char*> keys) const {
    allowOnly(node, std::vector<const char*>(keys));
  }

  void allowOnly(const Node& node, const std::vector<const char*>& keys) const {
    requireObject(node);
    for (const auto& [key, value] : node.json.items()) {
      bool known = false;
      for (const char* k : keys) known = known || key == k;
      if (!known) {
        std::string list;
        for (const char* k : keys) list += std::string(list.empty() ? "" : ", ") + k;
        fail(node, "unknown field '" + key + "' (expected one of: " + list + ")");
      }
    }
  }

  bool has(const Node& node, const char* key) const { return node.json.contains(key); }

  Node child(const Node& node, const char* key) const {
    requireObject(node);  // else a number where an object belongs reads as "missing field"
    if (!node.json.contains(key)) fail(node, std::string("missing required field '") + key + "'");
    return {node.json.at(key), node.path + "/" + key};
  }

  Node element(const Node& node, std::size_t index) const {
    return {node.json.at(index), node.path + "/" + std::to_string(index)};
  }

  // Calls parse(element) for each element of the array node.json[key], which must hold at least
  // minSize elements. An absent key is an empty list unless minSize > 0, when it is an error.
  template <class Parse>
  void forEachElement(const Node& node, const char* key, Parse&& parse, std::size_t minSize = 0) const {
    if (minSize == 0 && !has(node, key)) return;
    const Node list = child(node, key);
    array(list, minSize);
    for (std::size_t i = 0; i < list.json.size(); ++i) parse(element(list, i));
  }

  const Json& array(const Node& node, std::size_t minSize = 0) const {
    if (!node.json.is_array()) fail(node, "expected an array, got " + typeName(node.json));
    if (node.json.size() < minSize)
      fail(node,
           "expected an array of at least " + std::to_string(minSize) + (minSize == 1 ? " element" : " elements"));
    return node.json;
  }

  double number(const Node& node, double min = -std::numeric_limits<double>::infinity(),
                double max = std::numeric_limits<double>::infinity(), bool exclusiveMin = false) const {
    if (!node.json.is_number()) fail(node, "expected a number, got " + typeName(node.json));
    const double v = node.json.get<double>();
    if (!std::isfinite(v)) fail(node, "expected a finite number, got " + node.json.dump());
    if ((exclusiveMin ? !(v > min) : !(v >= min)) || !(v <= max))
      fail(node, "expected a number " + describeRange(min, max, exclusiveMin) + ", got " + node.json.dump());
    return v;
  }

  double number(const Node& parent, const char* key, double fallback, double min, double max,
                bool exclusiveMin = false) const {
    return has(parent, key) ? number(child(parent, key), min, max, exclusiveMin) : fallback;
  }

  std::int64_t integer(const Node& node, std::int64_t min, std::int64_t max) const {
    if (!node.json.is_number_integer())
      fail(node, "expected an integer, got " + (node.json.is_number() ? node.json.dump() : typeName(node.json)));
    const bool tooLarge =
        node.json.is_number_unsigned() && node.json.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
    const std::int64_t v = tooLarge ? max : node.json.get<std::int64_t>();
    if (tooLarge || v < min || v > max)
      fail(node, "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                     node.json.dump());
    return v;
  }

  bool boolean(const Node& node) const {
    if (!node.json.is_boolean()) fail(node, "expected true or false, got " + typeName(node.json));
    return node.json.get<bool>();
  }

  std::string string(const Node& node) const {
    if (!node.json.is_string()) fail(node, "expected a string, got " + typeName(node.json));
    return node.json.get<std::string>();
  }

  Vec3 vec3(const Node& node) const {
    if (!node.json.is_array() || node.json.size() != 3)
      fail(node, "expected an array of 3 numbers [x, y, z], got " + typeName(node.json));
    return Vec3(number(element(node, 0)), number(element(node, 1)), number(element(node, 2)));
  }

  Vec3 vec3(const Node& parent, const char* key, const Vec3& fallback) const {
    return has(parent, key) ? vec3(child(parent, key)) : fallback;
  }

  ConstraintParameters material(const Node& node, std::initializer_list<const char*> extra = {}) const {
    std::vector<const char*> keys = {"compliance", "damping", "stiffness"};
    keys.insert(keys.end(), extra.begin(), extra.end());
    allowOnly(node, keys);
    ConstraintParameters p;
    p.compliance = number(node, "compliance", 0.0, 0.0, std::numeric_limits<double>::infinity());
    p.damping = number(node, "damping", 0.0, 0.0, std::numeric_limits<double>::infinity());
    p.stiffness = number(node, "stiffness", 1.0, 0.0, 1.0);
    return p;
  }

  // The path of a file the scene names, relative to the scene's folder; remembered as an input of
  // the scene (a TetGen mesh with both its .node and .ele), so a run can refuse to write over it.
  std::string resolve(const std::string& file) const {
    const std::filesystem::path p(file);
    const std::string path =
        p.is_absolute() || base_.empty() ? p.string() : (std::filesystem::path(base_) / p).string();
    resolved_.push_back(path);
    const std::filesystem::path ext = p.extension();
    if (ext == ".node" || ext == ".ele")
      resolved_.push_back(std::filesystem::path(path).replace_extension(ext == ".node" ? ".ele" : ".node").string());
    return path;
  }
  const std::vector<std::string>& resolvedFiles() const { return resolved_; }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::string base_;
  mutable std::vector<std::string> resolved_;
};

}  // namespace pliant::scenefile
