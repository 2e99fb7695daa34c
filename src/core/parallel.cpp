#include "pliant/parallel.h"

#include <omp.h>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "pliant/error.h"

namespace pliant {

namespace {
// The OpenMP default before any setThreadCount (0: not read yet), and whether the count is fixed.
std::atomic<int> defaultThreads{0};
std::atomic<bool> fixedThreads{false};

// The CPUs the process may run on, read once: sched_getaffinity(0) answers for the calling thread,
// which pinThreadsToCores binds to one of them, so a later read would see that one only.
const std::vector<int>& allowedCpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> list;
#if defined(__linux__)
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &allowed)) list.push_back(cpu);
#endif
    return list;
  }();
  return cpus;
}

int openMpDefault() {
  int threads = defaultThreads.load();
  if (threads == 0) {
    threads = omp_get_max_threads();
    defaultThreads.store(threads);
  }
  return threads;
}
}  // namespace

void setThreadCount(int threads) {
  if (threads < 1) throw Error("thread count must be >= 1, got " + std::to_string(threads));
  openMpDefault();  // remember the default before changing it
  omp_set_num_threads(threads);
  fixedThreads.store(true);
}

void setAutomaticThreadCount() {
  omp_set_num_threads(openMpDefault());
  fixedThreads.store(false);
}

bool automaticThreadCount() { return !fixedThreads.load(); }

int threadCount() { return omp_get_max_threads(); }

int availableCores() {
  const std::vector<int>& cpus = allowedCpus();
  return cpus.empty() ? std::max(1, omp_get_num_procs()) : static_cast<int>(cpus.size());
}

int pinThreadsToCores() {
#if defined(__linux__)
  const std::vector<int>& cpus = allowedCpus();
  if (cpus.empty()) return 0;
  // The OpenMP runtime keeps its worker threads between parallel regions, so binding them once
  // here holds for every later region of up to threadCount() threads.
  int bound = 0;
#pragma omp parallel reduction(+ : bound)
  {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[static_cast<std::size_t>(omp_get_thread_num()) % cpus.size()], &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0) bound = 1;
  }
  return bound == 0 ? 0 : static_cast<int>(std::min<std::size_t>(cpus.size(), static_cast<std::size_t>(threadCount())));
#else
  return 0;
#endif
}

}  // namespace pliant
