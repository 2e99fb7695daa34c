// Built-in scenes are the JSON files under scenes/, embedded at build time (cmake/EmbedScenes.cmake),
// so `pliant run` without arguments and `pliant run scenes/cloth.json` build the same thing.
#include "pliant/io/scenes.h"

#include <string_view>

#include "pliant/error.h"

namespace pliant {

namespace detail {
struct EmbeddedScene {
  const char* name;
  const char* description;
  std::string_view text;
};
struct EmbeddedMesh {
  const char* name;
  std::string_view text;
};
// Generated into the build tree from scenes/*.json and the meshes they name.
extern const EmbeddedScene kEmbeddedScenes[];
extern const std::size_t kEmbeddedSceneCount;
extern const EmbeddedMesh kEmbeddedMeshes[];
extern const std::size_t kEmbeddedMeshCount;
}  // namespace detail

namespace {

const detail::EmbeddedScene* findScene(const std::string& name) {
  for (std::size_t i = 0; i < detail::kEmbeddedSceneCount; ++i)
    if (name == detail::kEmbeddedScenes[i].name) return &detail::kEmbeddedScenes[i];
  return nullptr;
}

}  // namespace

std::vector<std::string> builtinSceneNames() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < detail::kEmbeddedSceneCount; ++i) names.emplace_back(detail::kEmbeddedScenes[i].name);
  return names;
}

std::string builtinSceneDescription(const std::string& name) {
  const detail::EmbeddedScene* scene = findScene(name);
  return scene ? scene->description : std::string();
}

std::string builtinSceneText(const std::string& name) {
  const detail::EmbeddedScene* scene = findScene(name);
  if (!scene) return {};
  return std::string(scene->text);
}

std::string_view builtinMeshText(const std::string& path) {
  for (std::size_t i = 0; i < detail::kEmbeddedMeshCount; ++i)
    if (path == detail::kEmbeddedMeshes[i].name) return detail::kEmbeddedMeshes[i].text;
  return {};
}

Scene makeBuiltinScene(const std::string& name) {
  const detail::EmbeddedScene* scene = findScene(name);
  if (!scene) {
    std::string known;
    for (const std::string& n : builtinSceneNames()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown scene '" + name + "' (built-in scenes: " + known + ")");
  }
  return parseScene(std::string(scene->text), "builtin:" + name, "");
}

}  // namespace pliant
