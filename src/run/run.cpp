// A run: everything that can be wrong with the options is checked before the output folder is
// touched; then the scene is stepped frame by frame, frames and checkpoints written as they come,
// and the end-of-run files written once the last frame is done.
#include "pliant/run/run.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pliant/diagnostics.h"
#include "pliant/error.h"
#include "pliant/geometry.h"
#include "pliant/io/checkpoint.h"
#include "pliant/io/manifest.h"
#include "pliant/io/probes.h"
#include "pliant/parallel.h"
#include "pliant/viewer/viewer.h"
#include "run_outputs.h"

namespace pliant {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string capitalised(std::string text) {
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') text[0] = static_cast<char>(text[0] - 'a' + 'A');
  return text;
}

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

std::string stateCsv(const State& state) {
  std::ostringstream out;
  out << std::setprecision(17) << "particle,x,y,z,vx,vy,vz\n";
  for (std::size_t i = 0; i < state.position.size(); ++i) {
    const auto& x = state.position[i];
    const auto& v = state.velocity[i];
    out << i << ',' << x.x() << ',' << x.y() << ',' << x.z() << ',' << v.x() << ',' << v.y() << ',' << v.z() << '\n';
  }
  return out.str();
}

// Each body's pose (its centre of mass and body frame -> world quaternion), velocities, and whether
// it sleeps (1) or not (0, SolverSettings::sleeping).
std::string bodiesCsv(const Model& model, const State& state) {
  std::ostringstream out;
  out << std::setprecision(17) << "body,name,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,asleep\n";
  for (std::size_t b = 0; b < state.bodyPosition.size(); ++b) {
    const Vec3& x = state.bodyPosition[b];
    const Quat& q = state.bodyRotation[b];
    const Vec3& v = state.bodyVelocity[b];
    const Vec3& w = state.bodyAngularVelocity[b];
    // Names are checked by nothing for commas: quote them as CSV does.
    std::string name;
    for (char c : model.bodies[b].name) name += c == '"' ? std::string("\"\"") : std::string(1, c);
    out << b << ",\"" << name << "\"," << x.x() << ',' << x.y() << ',' << x.z() << ',' << q.w() << ',' << q.x() << ','
        << q.y() << ',' << q.z() << ',' << v.x() << ',' << v.y() << ',' << v.z() << ',' << w.x() << ',' << w.y() << ','
        << w.z() << ',' << (state.bodyAsleep(b) ? 1 : 0) << '\n';
  }
  return out.str();
}

// frame_NNNNNN<extension>, the name of checkpoint files.
std::string numberedName(int frame, const char* extension) {
  std::ostringstream name;
  name << "frame_" << std::setw(6) << std::setfill('0') << frame << extension;
  return name.str();
}

void checkOptions(const RunOptions& options) {
  const auto require = [](bool ok, const std::string& what) {
    if (!ok) throw Error("run options: " + what);
  };
  require(options.frames >= -1, "frames must be >= 0 (or -1 for the scene's), got " + std::to_string(options.frames));
  require(options.frameEvery >= 1, "frameEvery must be >= 1, got " + std::to_string(options.frameEvery));
  require(options.threads >= 0,
          "threads must be >= 1 (or 0 for the current count), got " + std::to_string(options.threads));
  require(options.checkpointEvery >= 0,
          "checkpointEvery must be >= 0 (0 = none), got " + std::to_string(options.checkpointEvery));
  for (int frame : options.checkpointAt)
    require(frame >= 1, "checkpointAt frames must be >= 1, got " + std::to_string(frame));
  require(!options.outputFolder.empty(), "outputFolder must not be empty");
}

// Sets the thread count for the run and restores the caller's afterwards, thrown or not.
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int threads) : saved_(threadCount()), changed_(threads > 0 && threads != saved_) {
    if (changed_) setThreadCount(threads);
  }
  ~ThreadCountScope() {
    if (changed_) setThreadCount(saved_);
  }
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int saved_;
  bool changed_;
};

// What stopped a run early, for summary.json.
std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "stopped by the onFrame callback";
  }
}

}  // namespace

RunReport runScene(const Scene& scene, const RunOptions& options) {
  checkOptions(options);
  if (!scene.model) throw Error("run: the scene '" + scene.name + "' has no model");
  const int frames = options.frames >= 0 ? options.frames : scene.frames;
  const io::FrameFormat format = options.frameFormat;
  const ThreadCountScope threadScope(options.threads);
  Solver solver(scene.model, scene.settings);
  State state = State::fromModel(*scene.model);
  if (!options.resumeFrom.empty()) {
    state = io::readCheckpoint(options.resumeFrom, *scene.model, scene.settings);
    if (static_cast<std::int64_t>(state.stepCount) > frames)
      throw Error(options.resumeFrom + ": checkpoint is at frame " + std::to_string(state.stepCount) + ", beyond the " +
                  std::to_string(frames) + " frames asked for");
  }
  const int firstFrame = static_cast<int>(state.stepCount);
  RunReport report;
  report.firstFrame = firstFrame;
  report.lastFrame = frames;

  const std::string& html = options.htmlPage;
  // Every output path, before anything is created; then the previous run's files go.
  const detail::PreviousOutputs previous = detail::checkRunOutputs(scene, options);
  detail::createRunFolders(options, previous);
  // Every file the run writes is named through `outputs` (OutputLog::file or write), which lists
  // it in manifest.json at the end for the next run to remove; the frame files are those the
  // series lists. A previous file kept as an input stays listed.
  io::OutputLog outputs(options.outputFolder);
  for (const std::string& kept : previous.kept) (void)outputs.file(kept);
  // The first exception that stopped the run early (a write failed, onFrame threw): the run stops
  // at the frame it came from, the end-of-run files are still written for the frames that exist,
  // and then it is rethrown.
  std::exception_ptr stopped;
  const auto attempt = [&stopped](const auto& work) {
    try {
      work();
    } catch (...) {
      if (!stopped) stopped = std::current_exception();
    }
  };
  io::FrameSeries frameFiles(options.outputFolder, *scene.model, scene.topology,
                             {format, options.vtuEncoding, options.colliderParts});
  int lastWrittenFrame = -1;
  const auto writeFrame = [&](int frame) {
    lastWrittenFrame = frame;
    if (options.writeFrames) frameFiles.write(frame, state);
  };

  // With no frame files and no page the viewer data keeps the first and last frames only (a frame
  // budget of 0): that is all `pliant view` then shows. A page asked for gets the whole run.
  const bool viewerAnimates = options.writeFrames || !html.empty();
  viewer::ViewerRecorder viewerFrames(scene, firstFrame, frames, viewerAnimates ? viewer::kFrameBudgetBytes : 0);
  viewerFrames.record(firstFrame, state);
  ProbeRecorder probes(scene);
  std::string probeCsv = probes.header();
  std::string substepRows;
  if (scene.probeEverySubstep && !probes.empty())
    solver.setSubstepObserver([&](const State& s) { probes.record(s, substepRows); });
  if (firstFrame == 0 || !scene.probeEverySubstep) probes.record(state, probeCsv);

  double frameSeconds = 0.0, writeSeconds = 0.0;
  std::uint64_t projections = 0;
  if (options.onFrame) attempt([&] { options.onFrame(firstFrame, firstFrame, frames); });
  if (!stopped) {
    const auto t0 = Clock::now();
    attempt([&] { writeFrame(firstFrame); });
    writeSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  int lastGoodFrame = firstFrame;  // the last frame simulated (all of them unless a step is refused)
  // The residual after each frame; frames far from converged joined into stretches, and the
  // advice taken from the frame with the worst strain residual.
  ResidualReport worstResidual;
  const auto noteConvergence = [&](int frame) {
    const ResidualReport r = computeResidual(*scene.model, state, scene.settings);
    viewerFrames.recordResidual(frame, r.strain);
    report.worstRelativeResidual = std::max(report.worstRelativeResidual, r.relative);
    if (r.strain > report.worstStrainResidual) {
      report.worstStrainResidual = r.strain;
      worstResidual = r;
    }
    if (!farFromConverged(r)) return;
    auto& stretches = report.unconvergedFrames;
    if (!stretches.empty() && stretches.back().second == frame - 1) stretches.back().second = frame;
    else stretches.emplace_back(frame, frame);
  };
  const auto finishTimings = [&] {
    const int simulated = lastGoodFrame - firstFrame;
    report.simulateSeconds = frameSeconds;
    report.writeSeconds = writeSeconds;
    report.msPerFrame = simulated > 0 ? 1e3 * frameSeconds / simulated : 0.0;
    report.projections = projections;
    report.framesWritten = frameFiles.framesWritten();
  };
  for (int frame = firstFrame + 1; frame <= frames && !stopped; ++frame) {
    const auto t0 = Clock::now();
    substepRows.clear();
    const StepResult result = solver.step(state);
    const auto t1 = Clock::now();
    frameSeconds += std::chrono::duration<double>(t1 - t0).count();
    if (!result.ok()) {
      // The state is that of the last good frame (a refused step restores it): the end-of-run
      // files below describe it and say the run was refused.
      report.failure = result.message;
      report.refusal = result;
      break;
    }
    lastGoodFrame = frame;
    projections += solver.lastProjectionCount();
    noteConvergence(frame);
    if (scene.probeEverySubstep) probeCsv += substepRows;
    else probes.record(state, probeCsv);
    if ((frame - firstFrame) % options.frameEvery == 0 || frame == frames) attempt([&] { writeFrame(frame); });
    viewerFrames.record(frame, state);
    const bool checkpointHere =
        (options.checkpointEvery > 0 && frame % options.checkpointEvery == 0) ||
        std::find(options.checkpointAt.begin(), options.checkpointAt.end(), frame) != options.checkpointAt.end();
    if (checkpointHere && !stopped)
      attempt([&] { io::writeCheckpoint(outputs.file("checkpoints/" + numberedName(frame, ".ckpt")), state); });
    writeSeconds += std::chrono::duration<double>(Clock::now() - t1).count();
    if (options.onFrame && !stopped) attempt([&] { options.onFrame(frame, firstFrame, frames); });
  }
  report.lastFrame = lastGoodFrame;
  if (lastWrittenFrame != lastGoodFrame) {
    // Refused or stopped between two written frames: the last good one is the run's last frame.
    const auto t0 = Clock::now();
    attempt([&] { writeFrame(lastGoodFrame); });
    writeSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  finishTimings();

  // The end-of-run files, each attempted even when one before it failed.
  if (options.writeFrames) attempt([&] { frameFiles.finish(); });
  for (const std::string& file : frameFiles.files()) (void)outputs.file(file);
  if (!probes.empty()) attempt([&] { outputs.write("probes.csv", probeCsv); });
  attempt([&] { outputs.write("final_state.csv", stateCsv(state)); });
  if (scene.model->bodyCount() > 0) attempt([&] { outputs.write("final_bodies.csv", bodiesCsv(*scene.model, state)); });
  const std::string viewerData = viewerFrames.json();
  attempt([&] { outputs.write(viewer::kDataFileName, viewerData); });
  report.viewerFrames = viewerFrames.recordedFrames();
  report.viewerFrameStride = viewerFrames.stride();

  const EnergyReport energy = computeEnergy(*scene.model, state, scene.settings);
  const ResidualReport residual = computeResidual(*scene.model, state, scene.settings);
  nlohmann::json summary;
  summary["scene"] = scene.name;
  summary["description"] = scene.description;
  summary["source"] = options.source.empty() ? scene.name : options.source;
  summary["frames"] = frames;
  summary["first_frame"] = firstFrame;
  summary["last_frame"] = lastGoodFrame;
  const bool refused = !report.failure.empty();
  summary["status"] = refused ? "refused" : stopped ? "stopped" : "completed";
  if (stopped) summary["error"] = describe(stopped);
  if (refused) {
    const StepResult& r = report.refusal;
    nlohmann::json refusal;
    refusal["frame"] = lastGoodFrame + 1;  // the frame whose step was refused
    refusal["last_good_frame"] = lastGoodFrame;
    refusal["time_s"] = state.time;
    refusal["reason"] = r.status == StepStatus::NonFinite               ? "non-finite"
                        : r.status == StepStatus::ExcessiveDisplacement ? "excessive-displacement"
                        : r.status == StepStatus::ExcessiveStrain       ? "excessive-strain"
                                                                        : "contact-overflow";
    refusal["message"] = r.message;
    if (r.particle >= 0) refusal["particle"] = r.particle;
    if (r.hasConstraint)
      refusal["constraint"] = {{"family", familyName(r.constraint.family)}, {"index", r.constraint.index}};
    if (r.hasContact) {
      if (r.contactCollider >= 0) refusal["collider"] = r.contactCollider;
      else refusal["contact_particle"] = r.contactParticle;
    }
    if (r.hasSurfaceContact) refusal["surface_contact_particles"] = r.surfaceContactParticles;
    summary["refusal"] = refusal;
  }
  summary["time_s"] = state.time;
  summary["settings"] = {
      {"mode", scene.settings.mode == SolverMode::Xpbd ? "xpbd" : "pbd"},
      {"time_step_s", scene.settings.timeStep},
      {"substeps", scene.settings.substeps},
      {"iterations", scene.settings.iterations},
      {"gravity_m_s2", {scene.settings.gravity.x(), scene.settings.gravity.y(), scene.settings.gravity.z()}},
      {"threads", threadCount()}};
  summary["particles"] = scene.model->particleCount();
  summary["bodies"] = scene.model->bodyCount();
  summary["joints"] = scene.model->joints.size();
  nlohmann::json counts;
  for (int f = 0; f < kConstraintFamilyCount; ++f) {
    const auto family = static_cast<ConstraintFamily>(f);
    counts[familyName(family)] = scene.model->constraintCount(family);
  }
  summary["constraints"] = counts;
  summary["timings"] = {
      {"simulate_s", frameSeconds},
      {"write_s", writeSeconds},
      {"ms_per_frame", report.msPerFrame},
      {"ns_per_projection", projections > 0 ? 1e9 * frameSeconds / static_cast<double>(projections) : 0.0}};
  summary["final_energy_J"] = {{"kinetic", energy.kinetic},
                               {"gravitational", energy.gravitational},
                               {"elastic", energy.elastic},
                               {"total", energy.total()}};
  summary["final_residual"] = {
      {"max", residual.max}, {"rms", residual.rms}, {"relative", residual.relative}, {"strain", residual.strain}};
  report.convergenceWarning = convergenceWarning(worstResidual, scene.settings);
  {
    nlohmann::json stretches = nlohmann::json::array();
    for (const auto& [first, last] : report.unconvergedFrames) stretches.push_back({first, last});
    summary["convergence"] = {{"converged", report.unconvergedFrames.empty()},
                              {"measure", "strain_residual"},
                              {"threshold", kFarFromConvergedStrain},
                              {"worst_strain_residual", report.worstStrainResidual},
                              {"worst_relative_residual", report.worstRelativeResidual},
                              {"unconverged_frames", stretches}};
    if (!report.convergenceWarning.empty())
      summary["convergence"]["advice"] = capitalised(report.convergenceWarning) + ".";
  }
  summary["final_intersecting_triangle_pairs"] =
      countIntersectingTrianglePairs(state.position, scene.topology.triangles);
  summary["state_hash"] = hex(state.hash());
  summary["outputs"] = {{"format", io::frameFormatName(format)},
                        {"frames_written", frameFiles.framesWritten()},
                        {"frame_files", frameFiles.files().size()},
                        {"frame_bytes", frameFiles.bytes()},
                        {"parts", options.writeFrames ? frameFiles.partNames() : std::vector<std::string>{}},
                        {"viewer_frames", viewerFrames.recordedFrames()},
                        {"viewer_frame_stride", viewerFrames.stride()}};
  if (!html.empty()) summary["outputs"]["html"] = html;
  // The page shows the summary as written to summary.json, so `pliant view` rebuilds the same page.
  report.summaryJson = summary.dump(2) + "\n";
  if (!html.empty()) {
    const bool stoppedBefore = static_cast<bool>(stopped);
    attempt([&] {
      outputs.note(html);
      io::writeFileAtomically(
          html, viewer::buildPage(viewerData, probes.empty() ? std::string() : probeCsv, report.summaryJson));
    });
    if (stopped && !stoppedBefore) {
      // The page could not be written: the summary says so instead of naming it.
      summary["outputs"].erase("html");
      if (!refused) summary["status"] = "stopped";
      summary["error"] = describe(stopped);
      report.summaryJson = summary.dump(2) + "\n";
    }
  }
  attempt([&] { outputs.write("summary.json", report.summaryJson); });
  attempt([&] { outputs.writeManifest(); });
  if (stopped) std::rethrow_exception(stopped);
  report.completed = !refused;
  report.stateHash = state.hash();
  report.finalState = std::move(state);
  return report;
}

}  // namespace pliant
