// pliant render DIR: write PNG images of frames of an output folder of `pliant run`, or a video of all
// its recorded frames (--video, through ffmpeg), headlessly.
#include <cmath>
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
  std::string video;           // "" = PNG images
  double fps = 0.0;            // 0 = the run's own pace
  std::string cameraPosition;  // "x,y,z" (m); "" = the default view's
  std::string cameraTarget;    // "x,y,z" (m); "" = the default view's
  double fov = 40.0;           // degrees, vertical
  bool noTime = false;
};

// "x,y,z" -> a vector, or an error naming the option.
pliant::Vec3 parseVector(const std::string& option, const std::string& text) {
  pliant::Vec3 v;
  std::stringstream in(text);
  std::string part;
  int k = 0;
  bool ok = true;
  while (ok && std::getline(in, part, ',')) {
    std::size_t used = 0;
    try {
      if (k < 3) v[k] = std::stod(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    ok = k < 3 && used == part.size() && used > 0 && std::isfinite(v[k]);
    ++k;
  }
  if (!ok || k != 3)
    throw pliant::Error(option + ": expected three numbers x,y,z in metres (e.g. 2,1.5,3), got '" + text + "'");
  return v;
}

int renderFolder(const RenderArguments& options) {
  pliant::viewer::RenderOptions render;
  {
    const std::string& size = options.size;
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
  if (!options.cameraPosition.empty()) render.cameraPosition = parseVector("--camera-position", options.cameraPosition);
  if (!options.cameraTarget.empty()) render.cameraTarget = parseVector("--camera-target", options.cameraTarget);
  if (!(options.fov > 0.0 && options.fov < 180.0))
    throw pliant::Error("--fov: expected a vertical field of view in degrees between 0 and 180, got " +
                        std::to_string(options.fov));
  render.fieldOfViewDegrees = options.fov;
  render.timeOverlay = !options.noTime;
  const bool video = !options.video.empty();
  if (video && !options.frames.empty())
    throw pliant::Error("--frames: a video holds every recorded frame; give --frames for PNG images only");
  if (!video && options.fps != 0.0) throw pliant::Error("--fps: only with --video");
  std::vector<int> numbers;
  std::vector<std::string> frames = options.frames;
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
  const fs::path folder(options.dir);
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw pliant::Error(options.dir + ": no such folder (expected the output folder of `pliant run`)");
  const fs::path dataFile = folder / pliant::viewer::kDataFileName;
  if (!fs::exists(dataFile, ec))
    throw pliant::Error(options.dir + ": no " + std::string(pliant::viewer::kDataFileName) +
                        " in it (expected the output folder of `pliant run`)");
  // The video's path and ffmpeg are checked before anything is drawn.
  if (video) pliant::viewer::checkVideoTarget(options.video);
  // Only a regular file of bounded size: a FIFO or /dev/zero planted there is refused, not read.
  const std::string data =
      pliant::io::readInputFile(dataFile.string(), "a viewer data file", pliant::io::kMaxRunOutputFileBytes);
  std::unique_ptr<pliant::viewer::FrameRenderer> renderer;
  try {
    renderer = std::make_unique<pliant::viewer::FrameRenderer>(data, render);
  } catch (const nlohmann::json::exception& e) {
    throw pliant::Error(dataFile.string() + ": not a valid viewer data file (" + e.what() + ")");
  }
  if (video) {
    const std::size_t count = renderer->frameCount();
    if (count < 3)
      std::cerr << "render: " << dataFile.string() << " holds " << count
                << " recorded frames only (runs with --no-frames keep the first and last); run without it, or "
                   "with --html, for every frame\n";
    pliant::viewer::writeVideo(*renderer, options.video, options.fps, [](std::size_t done, std::size_t total) {
      if (done == total || done % 25 == 0) std::cerr << "\rrender: frame " << done << " / " << total << std::flush;
      if (done == total) std::cerr << '\n';
    });
    std::cout << "render: " << options.video << '\n';
    return 0;
  }
  const fs::path outDir = options.out.empty() ? folder / "render" : fs::path(options.out);
  fs::create_directories(outDir, ec);
  if (ec || !fs::is_directory(outDir)) throw pliant::Error(outDir.string() + ": cannot create the folder");
  for (int number : numbers) {
    const std::size_t index = renderer->nearestIndex(number);
    const std::string png = pliant::viewer::encodePng(render.width, render.height, renderer->rgb(index));
    std::ostringstream name;
    name << "frame_" << std::setw(6) << std::setfill('0') << renderer->frameNumber(index) << ".png";
    pliant::io::writeFileAtomically((outDir / name.str()).string(), png);
    std::cout << "render: " << (outDir / name.str()).string() << '\n';
  }
  return 0;
}

}  // namespace

Command addRenderCommand(CLI::App& app) {
  auto options = std::make_shared<RenderArguments>();
  CLI::App* render =
      app.add_subcommand("render",
                         "Write PNG images of frames of an output folder of `pliant run`, or a video (--video), "
                         "headlessly");
  render->add_option("dir", options->dir, "Output folder of `pliant run` (holds viewer-data.json)")->required();
  render
      ->add_option("--frames", options->frames,
                   "Frames to draw: numbers or `last`, comma-separated (default: first,last); the nearest recorded "
                   "frame is drawn")
      ->delimiter(',')
      ->allow_extra_args(false);
  render->add_option("--out", options->out, "Folder for the images (default: DIR/render)");
  render->add_option("--size", options->size, "Image size WIDTHxHEIGHT in pixels (even for --video)")
      ->capture_default_str();
  render->add_option("--video", options->video,
                     "Write a video of every recorded frame to FILE (.mp4, .mov or .mkv; H.264 through ffmpeg) "
                     "instead of PNG images");
  render->add_option("--fps", options->fps, "Video frames per second (default: the run's own pace, real time)");
  render->add_option("--camera-position", options->cameraPosition,
                     "Camera position x,y,z in metres (default: framed on the objects over the whole run)");
  render->add_option("--camera-target", options->cameraTarget,
                     "Point the camera looks at, x,y,z in metres (default: the middle of the objects)");
  render->add_option("--fov", options->fov, "Vertical field of view in degrees")->capture_default_str();
  render->add_flag("--no-time", options->noTime, "Leave out the time overlay (t = ... s, top left)");
  return {render, [options] { return renderFolder(*options); }};
}

}  // namespace pliant::cli
