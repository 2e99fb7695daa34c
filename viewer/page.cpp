// The self-contained page: viewer/web/viewer.html with its CSS, its script, three.js (base64, loaded
// through blob: URLs so that nothing is fetched), the data, the probes and the run's summary inlined
// at @PLACEHOLDERS@.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/output.h"
#include "pliant/viewer/viewer.h"
#include "viewer_assets.h"

namespace fs = std::filesystem;

namespace pliant::viewer {

namespace {

const detail::EmbeddedAsset* findAsset(std::string_view name) {
  for (const detail::EmbeddedAsset& asset : detail::embeddedAssets())
    if (asset.name == name) return &asset;
  return nullptr;
}

std::string assetBase64(std::string_view name) {
  const detail::EmbeddedAsset* asset = findAsset(name);
  if (asset == nullptr)
    throw Error(
        "this pliant was built without the HTML viewer (node_modules was missing when it was configured); run "
        "scripts/run.sh, or `npm ci` in the source folder and configure again");
  std::string text;
  for (std::string_view piece : asset->base64) text += piece;
  return text;
}

std::string assetText(std::string_view name) { return base64Decode(assetBase64(name)); }

// Text inside a <script> element must not contain "</" (it could close the element) nor "<!--".
std::string scriptSafe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '!')) out += "\\u003c";
    else out += text[i];
  }
  return out;
}

// Replaces each @NAME@ of `text` by values[NAME] in one pass, so an inserted value is never searched.
std::string fillTemplate(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t open = text.find('@', from);
    const std::size_t close = open == std::string::npos ? open : text.find('@', open + 1);
    if (close == std::string::npos) break;
    const auto value = values.find(text.substr(open + 1, close - open - 1));
    if (value == values.end()) {  // a lone '@': keep it and look on from the next one
      out.append(text, from, close - from);
      from = close;
      continue;
    }
    out.append(text, from, open - from);
    out += value->second;
    from = close + 1;
  }
  out.append(text, from);
  return out;
}

// Only a regular file of bounded size (a FIFO or /dev/zero planted in the folder is refused).
std::string readWhole(const fs::path& path, const std::string& kind) {
  return io::readInputFile(path.string(), kind, io::kMaxRunOutputFileBytes);
}

}  // namespace

bool pageAvailable() { return findAsset("three.core") != nullptr; }

std::string buildPage(const std::string& dataJson, const std::string& probesCsv, const std::string& summaryJson) {
  const nlohmann::json data = nlohmann::json::parse(dataJson);
  const std::string script = assetText("viewer.js");
  if (script.find("</") != std::string::npos)
    throw Error("viewer.js must not contain \"</\" (it is inlined in a script element)");
  // Data, probes and summary go in as JSON, where "<" may be written \u003c, so they can never close
  // their element. The summary goes in as written (checked JSON), so `pliant view` rebuilds the same page.
  if (!summaryJson.empty() && !nlohmann::json::accept(summaryJson)) throw Error("the run summary is not valid JSON");
  return fillTemplate(assetText("viewer.html"),
                      {{"TITLE", io::escapeMarkup("Pliant: " + data.value("scene", std::string("scene")))},
                       {"CSS", assetText("viewer.css")},
                       {"DATA", scriptSafe(dataJson)},
                       {"PROBES", scriptSafe(nlohmann::json(probesCsv).dump())},
                       {"SUMMARY", summaryJson.empty() ? std::string("null") : scriptSafe(summaryJson)},
                       {"THREE_CORE", assetBase64("three.core")},
                       {"THREE_MODULE", assetBase64("three.module")},
                       {"VIEWER_JS", script}});
}

void checkWritable(const std::string& file) {
  const fs::path path(file);
  if (path.filename().empty()) throw Error(file + ": not a file name");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error(file + ": is a folder, expected an HTML file name");
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::is_directory(parent, ec)) throw Error(file + ": folder " + parent.string() + " does not exist");
  if (access(parent.c_str(), W_OK) != 0) throw Error(file + ": folder " + parent.string() + " is not writable");
}

void writePageFromFolder(const std::string& folder, const std::string& htmlFile) {
  const fs::path dir(folder);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(folder + ": no such folder (expected the output folder of `pliant run`)");
  const fs::path dataFile = dir / kDataFileName;
  if (!fs::is_regular_file(dataFile, ec))
    throw Error(folder + ": no " + kDataFileName + " in it (expected the output folder of `pliant run`)");
  if (!pageAvailable()) assetBase64("three.core");  // throws, saying how to get the viewer
  checkWritable(htmlFile);
  // The page is never written over one of the files it is built from.
  for (const fs::path& input : {dataFile, dir / "probes.csv", dir / "summary.json"})
    if (fs::exists(htmlFile, ec) && fs::exists(input, ec) && fs::equivalent(htmlFile, input, ec))
      throw Error(htmlFile + ": is the input file " + input.string() + "; expected another name for the page");
  const std::string dataJson = readWhole(dataFile, "a viewer data file");
  nlohmann::json data;
  try {
    data = nlohmann::json::parse(dataJson);
  } catch (const nlohmann::json::exception& e) {
    throw Error(dataFile.string() + ": not valid JSON (" + e.what() + ")");
  }
  if (data.value("format", std::string()) != "pliant-viewer")
    throw Error(dataFile.string() + ": not a viewer data file (\"format\" is not \"pliant-viewer\")");
  const fs::path probesFile = dir / "probes.csv";
  const std::string probes = fs::exists(probesFile, ec) ? readWhole(probesFile, "a probe file") : std::string();
  const fs::path summaryFile = dir / "summary.json";
  const std::string summary = fs::exists(summaryFile, ec) ? readWhole(summaryFile, "a run summary") : std::string();
  if (!summary.empty()) {
    const nlohmann::json parsed = nlohmann::json::parse(summary, nullptr, false);
    if (parsed.is_discarded())
      throw Error(summaryFile.string() + ": not valid JSON (expected the summary written by `pliant run`)");
    if (!parsed.is_object())
      throw Error(summaryFile.string() + ": not a JSON object (expected the summary written by `pliant run`)");
  }
  io::writeFileAtomically(htmlFile, buildPage(dataJson, probes, summary));
}

}  // namespace pliant::viewer
