// pliant view DIR: write the HTML viewer page of an output folder of `pliant run`, or the charts and
// table of a sweep's output folder (`pliant sweep`).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "pliant/viewer/viewer.h"

namespace fs = std::filesystem;

namespace pliant::cli {
namespace {

struct ViewArguments {
  std::string dir;
  std::string html;  // "" = DIR/viewer.html
};

int viewCommand(const ViewArguments& options) {
  if (pliant::viewer::isSweepFolder(options.dir)) {
    const std::string page = options.html.empty() ? (fs::path(options.dir) / "sweep.html").string() : options.html;
    pliant::viewer::writeSweepPage(options.dir, page);
    std::cout << "sweep page: " << fs::absolute(page).lexically_normal().string() << '\n';
    return 0;
  }
  const std::string html = options.html.empty() ? (fs::path(options.dir) / "viewer.html").string() : options.html;
  pliant::viewer::writePageFromFolder(options.dir, html);
  std::cout << "viewer: " << fs::absolute(html).lexically_normal().string() << '\n';
  return 0;
}

}  // namespace

Command addViewCommand(CLI::App& app) {
  auto options = std::make_shared<ViewArguments>();
  CLI::App* view = app.add_subcommand(
      "view", "Write the HTML viewer page of an output folder of `pliant run` (or of `pliant sweep`: its charts)");
  view->add_option("dir", options->dir,
                   "Output folder of `pliant run` (holds viewer-data.json) or of `pliant sweep` (results.csv)")
      ->required();
  view->add_option("--html", options->html, "Page to write (default: DIR/viewer.html; DIR/sweep.html for a sweep)");
  return {view, [options] { return viewCommand(*options); }};
}

}  // namespace pliant::cli
