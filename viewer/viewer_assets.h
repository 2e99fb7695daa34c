// Web assets embedded at build time by viewer/embed_assets.mjs (base64 text, in chunks).
#pragma once

#include <string_view>
#include <vector>

namespace pliant::viewer::detail {
struct EmbeddedAsset {
  std::string_view name;
  std::vector<std::string_view> base64;  // concatenated, the asset's bytes in base64
};
// Empty when the build had no node_modules (see viewer/CMakeLists.txt).
const std::vector<EmbeddedAsset>& embeddedAssets();
}  // namespace pliant::viewer::detail
