// Times allreduce through tandem's ProcessGroup against a plain blocking
// MPI_Allreduce on the same buffers, for a few sizes. Not a test (timings
// are never asserted); run it by hand:
//
//   mpirun -np 2 build/tests/distributed_allreduce_timing
//
// The program initializes MPI itself (MPI_THREAD_MULTIPLE), which also
// exercises init_process_group() on an MPI the application owns.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "tandem/distributed/distributed.h"
#include "tandem/ops/factory.h"

namespace dist = tandem::distributed;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  auto pg = dist::init_process_group();
  const int rank = pg->rank();
  if (rank == 0) {
    std::printf(
        "%d ranks; float32 allreduce (sum), mean time per call; ratio: tandem over "
        "MPI_Iallreduce\n",
        pg->size());
    std::printf("%12s %14s %14s %14s %8s\n",
                "elements",
                "MPI_Allreduce",
                "MPI_Iallreduce",
                "tandem",
                "ratio");
  }
  for (int64_t n :
       {int64_t{1} << 8, int64_t{1} << 14, int64_t{1} << 18, int64_t{1} << 22}) {
    auto x = tandem::ones({n}, tandem::kFloat32);
    const int reps = n >= (int64_t{1} << 22) ? 10 : 100;
    std::vector<float> raw(static_cast<size_t>(n), 1.0f);
    pg->barrier().wait();
    // Both paths share the machine's MPI; only one runs at a time.
    auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) {
      MPI_Allreduce(MPI_IN_PLACE,
                    raw.data(),
                    static_cast<int>(n),
                    MPI_FLOAT,
                    MPI_SUM,
                    MPI_COMM_WORLD);
    }
    const double mpi = std::chrono::duration<double>(Clock::now() - t0).count() / reps;
    // The same with the non-blocking call tandem uses, polled in a tight
    // loop: what Open MPI's libnbc costs by itself.
    pg->barrier().wait();
    t0 = Clock::now();
    for (int i = 0; i < reps; ++i) {
      MPI_Request request;
      MPI_Iallreduce(MPI_IN_PLACE,
                     raw.data(),
                     static_cast<int>(n),
                     MPI_FLOAT,
                     MPI_SUM,
                     MPI_COMM_WORLD,
                     &request);
      int done = 0;
      while (done == 0) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
    const double nbc = std::chrono::duration<double>(Clock::now() - t0).count() / reps;
    pg->barrier().wait();
    t0 = Clock::now();
    for (int i = 0; i < reps; ++i) pg->allreduce(x).wait();
    const double ours = std::chrono::duration<double>(Clock::now() - t0).count() / reps;
    if (rank == 0) {
      std::printf("%12lld %11.1f us %11.1f us %11.1f us %7.2fx\n",
                  static_cast<long long>(n),
                  mpi * 1e6,
                  nbc * 1e6,
                  ours * 1e6,
                  ours / nbc);
    }
  }
  dist::destroy_process_group();
  MPI_Finalize();
}
