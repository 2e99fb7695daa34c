// pinThreadsToCores (pliant/parallel.h): each worker thread on a CPU of its own, also when called
// a second time, after the calling thread is bound to one CPU.
#include <gtest/gtest.h>
#include <omp.h>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "pliant/parallel.h"

namespace pliant {
namespace {

TEST(PinThreads, CalledAgainEachThreadKeepsACpuOfItsOwn) {
#if !defined(__linux__)
  GTEST_SKIP() << "binding threads is implemented on Linux";
#else
  if (availableCores() < 2) GTEST_SKIP() << "needs two CPUs";
  const int saved = threadCount();
  setThreadCount(2);
  ASSERT_EQ(pinThreadsToCores(), 2);
  ASSERT_EQ(pinThreadsToCores(), 2);  // the calling thread now has one CPU: the process has more
  EXPECT_GE(availableCores(), 2);
  int cpu[2] = {-1, -1};
#pragma omp parallel num_threads(2)
  {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpu[omp_get_thread_num()] = c;
  }
  setThreadCount(saved);
  EXPECT_NE(cpu[0], -1);
  EXPECT_NE(cpu[1], -1);
  EXPECT_NE(cpu[0], cpu[1]);
#endif
}

}  // namespace
}  // namespace pliant
