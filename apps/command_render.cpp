// pliant render DIR: write PNG images of frames of an output folder of `pliant run`, headlessly.
#include <exception>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "pliant/error.h"
#include "pliant/io/input_file.h"
#include "pliant/io/output.h"
#include "pliant/viewer/viewer.h"

namespace fs = std::filesystem;

namespace pliant::cli {
namespace {

struct RenderArguments {
  std::string dir;
  std::vector<std::string> frames;  // numbers or "last"; empty: first and last
  std::string out;                  // "" = DIR/render
  std::string size = "960x720";
};

int renderFolder(const std::string& dir, std::vector<std::string> frames, const std::string& out,
                 const std::string& size) {
  pliant::viewer::RenderOptions render;
  {
    const std::size_t x = size.find('x');
    std::size_t used = 0;
    bool ok = x != std::string::npos;
    try {
      if (ok) render.width = std::stoi(size.substr(0, x), &used);
      ok = ok && used == x;
      if (ok) render.height = std::stoi(size.substr(x + 1), &used);
      ok = ok && used == size.size() - x - 1;
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok) throw pliant::Error("--size: expected WIDTHxHEIGHT (e.g. 960x720), got '" + size + "'");
  }
  std::vector<int> numbers;
  if (frames.empty()) frames = {"0", "last"};
  for (const std::string& f : frames) {
    if (f == "last") {
      numbers.push_back(-1);
      continue;
    }
    std::size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(f, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != f.size() || used == 0 || value < 0)
      throw pliant::Error("--frames: expected frame numbers or `last`, got '" + f + "'");
    numbers.push_back(value);
  }
  const fs::path folder(dir);
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw pliant::Error(dir + ": no such folder (expected the output folder of `pliant run`)");
  const fs::path dataFile = folder / pliant::viewer::kDataFileName;
  if (!fs::exists(dataFile, ec))
    throw pliant::Error(dir + ": no " + std::string(pliant::viewer::kDataFileName) +
                        " in it (expected the output folder of `pliant run`)");
  // Only a regular file of bounded size: a FIFO or /dev/zero planted there is refused, not read.
  const std::string data =
      pliant::io::readInputFile(dataFile.string(), "a viewer data file", pliant::io::kMaxRunOutputFileBytes);
  const fs::path outDir = out.empty() ? folder / "render" : fs::path(out);
  fs::create_directories(outDir, ec);
  if (ec || !fs::is_directory(outDir)) throw pliant::Error(outDir.string() + ": cannot create the folder");
  for (int number : numbers) {
    int shown = 0;
    std::string png;
    try {
      png = pliant::viewer::renderPng(data, number, render, &shown);
    } catch (const nlohmann::json::exception& e) {
      throw pliant::Error(dataFile.string() + ": not a valid viewer data file (" + e.what() + ")");
    }
    std::ostringstream name;
    name << "frame_" << std::setw(6) << std::setfill('0') << shown << ".png";
    pliant::io::writeFileAtomically((outDir / name.str()).string(), png);
    std::cout << "render: " << (outDir / name.str()).string() << '\n';
  }
  return 0;
}

}  // namespace

Command addRenderCommand(CLI::App& app) {
  auto options = std::make_shared<RenderArguments>();
  CLI::App* render =
      app.add_subcommand("render", "Write PNG images of frames of an output folder of `pliant run`, headlessly");
  render->add_option("dir", options->dir, "Output folder of `pliant run` (holds viewer-data.json)")->required();
  render
      ->add_option("--frames", options->frames,
                   "Frames to draw: numbers or `last`, comma-separated (default: first,last); the nearest recorded "
                   "frame is drawn")
      ->delimiter(',')
      ->allow_extra_args(false);
  render->add_option("--out", options->out, "Folder for the images (default: DIR/render)");
  render->add_option("--size", options->size, "Image size WIDTHxHEIGHT in pixels")->capture_default_str();
  return {render, [options] { return renderFolder(options->dir, options->frames, options->out, options->size); }};
}

}  // namespace pliant::cli
