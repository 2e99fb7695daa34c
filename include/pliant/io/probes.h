// Probe recording: turns a Scene's probes into CSV columns, one row per frame or substep.
#pragma once

#include <string>
#include <vector>

#include "pliant/io/scenes.h"
#include "pliant/state.h"

namespace pliant {

class ProbeRecorder {
 public:
  explicit ProbeRecorder(const Scene& scene);
  // "time" followed by each probe's columns (see Probe::Kind), comma-separated, with newline.
  std::string header() const;
  // The same column names, one entry each.
  std::vector<std::string> columns() const;
  // Appends one CSV row for `state` to `out`.
  void record(const State& state, std::string& out) const;
  // Appends the row's values (one per column, time first) to `out`.
  void values(const State& state, std::vector<double>& out) const;
  bool empty() const { return scene_->probes.empty(); }

 private:
  const Scene* scene_;
  std::vector<std::vector<ParticleIndex>> objectParticles_;
};

}  // namespace pliant
