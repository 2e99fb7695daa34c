#include "pliant/parallel.h"

#include <omp.h>

#include "pliant/error.h"

namespace pliant {

void setThreadCount(int threads) {
  if (threads < 1) throw Error("thread count must be >= 1, got " + std::to_string(threads));
  omp_set_num_threads(threads);
}

int threadCount() { return omp_get_max_threads(); }

}  // namespace pliant
