// What `pliant sweep` hands to a driver of its cases: the threads of this process
// (pliant::sweep::runLocally) or, under mpirun, the ranks of an MPI job (apps/mpi/sweep_mpi.cpp,
// built only with PLIANT_WITH_MPI, so that nothing else in Pliant needs MPI).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "pliant/run/sweep.h"

namespace pliant::cli {

struct SweepRun {
  const pliant::sweep::Sweep* sweep = nullptr;
  std::string out;  // the output folder
  bool force = false;
  int jobs = 1;  // cases at once in this process (per rank under MPI)
  pliant::sweep::StopFlag stop = nullptr;
  // Progress and the closing report, called by the process that writes the table.
  std::function<void(const pliant::sweep::Progress&)> onCase;
  // `runNow`: the cases that were to run when it started (the others were already finished).
  std::function<void(const pliant::sweep::ResultsTable&, std::size_t runNow, bool stopped)> onEnd;
};

// True when this process is one rank of a job started by mpirun/mpiexec (Open MPI, MPICH or a
// PMI launcher such as Slurm's srun set the size of the job in the environment).
bool launchedByMpi();

// Runs the sweep over the ranks of the MPI job: rank 0 prepares the folder, hands out cases one at a
// time to whichever rank asks (its own threads included), receives every result and writes the
// table; each rank runs `jobs` cases at once. Returns this rank's exit code. Throws what
// prepareFolder throws, on rank 0 (the other ranks return that exit code quietly).
int runSweepOverRanks(const SweepRun& run);

}  // namespace pliant::cli
