// `pliant sweep` over the ranks of an MPI job (built with PLIANT_WITH_MPI only; the one file of
// Pliant that includes mpi.h).
//
// Dynamic load balancing by a work queue on rank 0: every worker thread, on any rank, asks rank 0
// for a case, runs it (pliant::sweep::runCase, into the case's folder on the shared file system),
// and asks again with the case's result attached; rank 0 answers with the next pending case, or
// with -1 when none is left (or the sweep was stopped). Slow cases therefore hold up nobody: a
// rank that finishes early gets the next case. Rank 0's own threads take cases from the same queue
// without messages, while its main thread serves the requests and writes results.csv, so every
// result reaches the one table. Messages:
//   tag kRequest  worker -> 0   the previous case's result as JSON (CaseResult::toJson), or empty
//   tag kAssign   0 -> worker   one 64-bit case index, or -1: no more work
// Only one thread per rank calls MPI at a time (MPI_THREAD_SERIALIZED when --jobs > 1 on a rank,
// guarded by a mutex; on rank 0 only the main thread calls MPI).
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "../sweep_driver.h"
#include "pliant/error.h"

namespace pliant::cli {
namespace {

constexpr int kRequest = 1;
constexpr int kAssign = 2;
constexpr int kExitInternal = 1;  // as commands.h: an internal failure
using Clock = std::chrono::steady_clock;

// MPI_Init_thread / MPI_Finalize, also when what runs between them throws.
class MpiSession {
 public:
  explicit MpiSession(int required) {
    MPI_Init_thread(nullptr, nullptr, required, &provided_);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  int provided() const { return provided_; }

 private:
  int provided_ = 0, rank_ = 0, size_ = 1;
};

// Rank 0: the queue of pending cases, the table and the progress, shared by its worker threads and
// its main thread (which serves the other ranks).
class Coordinator {
 public:
  Coordinator(const SweepRun& run, pliant::sweep::ResultsTable& table)
      : run_(run), table_(table), pending_(pliant::sweep::pendingCases(table.results())) {
    progress_.total = pending_.size();
    progress_.failed = failures();
    lastWrite_ = start_;
  }
  // The next case to run, or -1.
  std::int64_t next() {
    const std::lock_guard lock(mutex_);
    if (next_ >= pending_.size() || run_.stop->load() || failure_) return -1;
    return static_cast<std::int64_t>(pending_[next_++]);
  }
  void record(const pliant::sweep::CaseResult& result) {
    const std::lock_guard lock(mutex_);
    table_.record(result);
    if (result.status != "pending") ++progress_.done;
    progress_.failed = failures();
    const auto now = Clock::now();
    progress_.elapsedSeconds = std::chrono::duration<double>(now - start_).count();
    if (now - lastWrite_ > std::chrono::milliseconds(250)) {
      table_.write();
      lastWrite_ = now;
    }
    if (run_.onCase) run_.onCase(progress_);
  }
  // One of rank 0's worker threads. A failure to record (results.csv cannot be written) stops the
  // handing out; the main thread rethrows it once the other ranks are told.
  void localWorker() {
    try {
      for (std::int64_t index; (index = next()) >= 0;)
        record(pliant::sweep::runCase(*run_.sweep, static_cast<std::size_t>(index), run_.out, run_.stop));
    } catch (...) {
      const std::lock_guard lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
    }
  }
  void rethrowFailure() {
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  std::size_t failures() const { return table_.count("refused") + table_.count("failed") + table_.count("error"); }
  const SweepRun& run_;
  pliant::sweep::ResultsTable& table_;
  std::vector<std::size_t> pending_;
  std::size_t next_ = 0;
  std::mutex mutex_;
  std::exception_ptr failure_;
  pliant::sweep::Progress progress_;
  Clock::time_point start_ = Clock::now(), lastWrite_;
};

int serve(const SweepRun& run, const MpiSession& mpi, std::vector<pliant::sweep::CaseResult> results) {
  pliant::sweep::ResultsTable table(*run.sweep, run.out, std::move(results));
  const std::size_t runNow = pliant::sweep::pendingCases(table.results()).size();
  table.write();
  Coordinator coordinator(run, table);
  std::vector<std::thread> local;
  for (int t = 0; t < run.jobs; ++t) local.emplace_back([&coordinator] { coordinator.localWorker(); });
  // Every worker thread of the other ranks gets one -1 before rank 0 stops serving.
  const int remoteWorkers = (mpi.size() - 1) * run.jobs;
  std::string buffer;
  for (int stopped = 0; stopped < remoteWorkers;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kRequest, MPI_COMM_WORLD, &flag, &status);
    if (!flag) {
      // Polling with a short sleep: a blocking receive in Open MPI spins and would take a core
      // from rank 0's own worker threads.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    int bytes = 0;
    MPI_Get_count(&status, MPI_CHAR, &bytes);
    buffer.assign(static_cast<std::size_t>(bytes), '\0');
    MPI_Recv(buffer.data(), bytes, MPI_CHAR, status.MPI_SOURCE, kRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (!buffer.empty()) coordinator.record(pliant::sweep::CaseResult::fromJson(buffer));
    std::int64_t index = coordinator.next();
    if (index < 0) ++stopped;
    MPI_Send(&index, 1, MPI_INT64_T, status.MPI_SOURCE, kAssign, MPI_COMM_WORLD);
  }
  for (std::thread& t : local) t.join();
  coordinator.rethrowFailure();
  table.write();
  const bool stopped = run.stop->load();
  if (run.onEnd) run.onEnd(table, runNow, stopped);
  if (stopped) return 130;
  return table.count("error") > 0 ? kExitInternal : 0;
}

void work(const SweepRun& run, std::mutex& mpiMutex) {
  std::string result;  // the previous case's, sent with the next request
  for (;;) {
    std::int64_t index = -1;
    {
      const std::lock_guard lock(mpiMutex);
      MPI_Send(result.data(), static_cast<int>(result.size()), MPI_CHAR, 0, kRequest, MPI_COMM_WORLD);
      MPI_Recv(&index, 1, MPI_INT64_T, 0, kAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (index < 0) return;
    result = pliant::sweep::runCase(*run.sweep, static_cast<std::size_t>(index), run.out, run.stop).toJson();
  }
}

}  // namespace

int runSweepOverRanks(const SweepRun& run) {
  const MpiSession mpi(run.jobs > 1 ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED);
  // Rank 0 checks and prepares the folder; every rank learns the outcome: 0 go on, 2 bad input
  // (rank 0 rethrows, so the CLI prints it), 1 another failure.
  int code = 0;
  if (mpi.provided() < (run.jobs > 1 ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED)) code = 2;
  std::exception_ptr failure;
  std::vector<pliant::sweep::CaseResult> results;
  std::unique_ptr<pliant::sweep::FolderLock> lock;
  if (mpi.rank() == 0 && code == 0) {
    try {
      results = pliant::sweep::prepareFolder(*run.sweep, run.out, run.force, &lock);
    } catch (const pliant::SystemError&) {
      failure = std::current_exception();
      code = 1;
    } catch (const pliant::Error&) {
      failure = std::current_exception();
      code = 2;
    } catch (...) {
      failure = std::current_exception();
      code = 1;
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (code != 0) {
    if (mpi.rank() != 0) return code;
    if (failure) std::rethrow_exception(failure);
    throw pliant::Error("--jobs " + std::to_string(run.jobs) +
                        ": this MPI library does not allow several threads of a rank to call it "
                        "(MPI_THREAD_SERIALIZED); use --jobs 1 and more ranks");
  }
  if (mpi.rank() == 0) {
    try {
      return serve(run, mpi, std::move(results));
    } catch (const std::exception& e) {
      // The other ranks wait on rank 0: end the job rather than leave them hanging.
      std::cerr << "pliant: " << e.what() << '\n';
      MPI_Abort(MPI_COMM_WORLD, kExitInternal);
      return kExitInternal;
    }
  }
  std::mutex mpiMutex;
  std::vector<std::thread> threads;
  for (int t = 1; t < run.jobs; ++t) threads.emplace_back([&] { work(run, mpiMutex); });
  work(run, mpiMutex);
  for (std::thread& t : threads) t.join();
  return run.stop->load() ? 130 : 0;
}

}  // namespace pliant::cli
