// An MPI program that fails on purpose, driven by run_fault_test.py: after
// two good allreduces (#1, #2), rank 1 (or rank 0) misbehaves in the way
// CASE names, and the ranks report what they saw on lines
//   REPORT rank=R event=E [type=T] [elapsed=SECONDS] [what=MESSAGE]
// which the harness checks, along with mpiexec's exit status, its duration
// and that no process is left behind.
//
// Case "ddp_timeout" trains a DistributedDataParallel instead, whose
// buckets are reduced in shared memory.
//
// Usage: distributed_fault CASE   (the group's timeout is 2 s, except for
// case "env", which takes it from TANDEM_DISTRIBUTED_TIMEOUT, and case
// "early_exit", whose 60 s no failure may wait for)
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "tandem/distributed/distributed.h"
#include "tandem/nn/modules/linear.h"
#include "tandem/ops/factory.h"

namespace dist = tandem::distributed;
using Clock = std::chrono::steady_clock;

namespace {

std::string type_of(const std::exception& e) {
  if (dynamic_cast<const dist::CollectiveTimeoutError*>(&e))
    return "CollectiveTimeoutError";
  if (dynamic_cast<const dist::PeerFailureError*>(&e)) return "PeerFailureError";
  if (dynamic_cast<const dist::CollectiveMismatchError*>(&e))
    return "CollectiveMismatchError";
  if (dynamic_cast<const dist::DistributedError*>(&e)) return "DistributedError";
  if (dynamic_cast<const tandem::Error*>(&e)) return "Error";
  return "other";
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void report(int rank, const std::string& event, const std::string& rest = "") {
  std::cout << "REPORT rank=" << rank << " event=" << event << (rest.empty() ? "" : " ")
            << rest << std::endl;
}

void report_error(int rank,
                  const std::string& event,
                  const std::exception& e,
                  Clock::time_point t0) {
  std::cout << "REPORT rank=" << rank << " event=" << event << " type=" << type_of(e)
            << " elapsed=" << since(t0) << " what=" << e.what() << std::endl;
}

// Calls allreduce #3 (optionally with a wait timeout) and reports.
void third_allreduce(
    dist::ProcessGroup& pg,
    const tandem::Tensor& x,
    std::optional<std::chrono::milliseconds> wait_timeout = std::nullopt) {
  const auto t0 = Clock::now();
  try {
    auto work = pg.allreduce(x);
    if (wait_timeout) {
      work.wait(*wait_timeout);
    } else {
      work.wait();
    }
    report(pg.rank(), "completed");
  } catch (const std::exception& e) {
    report_error(pg.rank(), "caught", e, t0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  std::shared_ptr<dist::ProcessGroup> pg;
  try {
    // Case "env": the timeout comes from TANDEM_DISTRIBUTED_TIMEOUT.
    auto options = dist::ProcessGroupOptions();
    if (mode == "early_exit") {
      options.timeout(std::chrono::seconds(60));
    } else if (mode != "env") {
      options.timeout(std::chrono::seconds(2));
    }
    pg = dist::init_process_group(options);
  } catch (const tandem::Error& e) {
    std::cout << "REPORT rank=? event=init_error what=" << e.what() << std::endl;
    return 2;
  }
  const int rank = pg->rank();
  auto x = tandem::ones({4}, tandem::kFloat32);
  pg->allreduce(x).wait();
  pg->allreduce(x).wait();
  report(rank, "warmed_up");

  if (mode == "env") {
    report(rank, "timeout", "what=" + std::to_string(pg->timeout().count()) + " ms");
    return 0;
  }
  if (mode == "clean") {
    pg->barrier().wait();
    // Ranks may leave at different times (within the timeout): the first
    // ones wait for the last at destroy_process_group() (or at exit).
    if (rank == 1) std::this_thread::sleep_for(std::chrono::seconds(1));
    dist::destroy_process_group();
    try {
      dist::init_process_group();
    } catch (const tandem::Error& e) {
      report(rank, "reinit_error", std::string("what=") + e.what());
    }
    try {
      pg->allreduce(x);
    } catch (const tandem::Error& e) {
      report(rank, "after_destroy", std::string("what=") + e.what());
    }
    return 0;
  }
  if (mode == "timeout" || mode == "wait_timeout") {
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(8));  // mpiexec ends it first
      third_allreduce(*pg, x);
      return 0;
    }
    if (mode == "wait_timeout") {
      third_allreduce(*pg, x, std::chrono::milliseconds(500));
    } else {
      third_allreduce(*pg, x);
    }
    // Every later call fails at once with the first failure.
    auto t0 = Clock::now();
    try {
      pg->allreduce(x);
    } catch (const std::exception& e) {
      report_error(rank, "next_call", e, t0);
    }
    // Destroying a failed group does not hang.
    t0 = Clock::now();
    dist::destroy_process_group();
    report(rank, "destroyed", "elapsed=" + std::to_string(since(t0)));
    return 0;  // the process still exits with status 1: its group failed
  }
  if (mode == "exit" || mode == "kill" || mode == "throw") {
    if (rank == 1) {
      report(rank, "dying");
      if (mode == "exit") std::exit(3);
      if (mode == "kill") std::raise(SIGKILL);
      throw std::runtime_error("injected failure on rank 1");
    }
    third_allreduce(*pg, x);
    return 1;
  }
  if (mode == "early_exit") {
    // Rank 1 leaves after #2; rank 0 calls #3 at once, rank 2 a second
    // later. Neither may wait for the 60 s timeout.
    if (rank == 1) {
      report(rank, "leaving");
      std::exit(3);
    }
    if (rank == 2) std::this_thread::sleep_for(std::chrono::seconds(1));
    third_allreduce(*pg, x);
    return 1;
  }
  if (mode == "mismatch" || mode == "detail_mismatch") {
    // Rank 0 reduces 10 elements, the others 20: MPI cannot match them.
    third_allreduce(*pg, tandem::ones({rank == 0 ? 10 : 20}, tandem::kFloat32));
    return 1;
  }
  if (mode == "ddp_timeout") {
    // DDP's buckets are added in shared memory (every rank is on this
    // host); rank 1 never reaches its backward, and rank 0's wait for it
    // times out like any collective's, naming it.
    tandem::nn::Linear model(4, 2);
    tandem::nn::DistributedDataParallel ddp(model);
    report(rank,
           "shared",
           std::string("what=") + (ddp->stats().reduced_in_shared_memory ? "yes" : "no"));
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(8));  // mpiexec ends it first
      return 0;
    }
    const auto t0 = Clock::now();
    try {
      ddp->forward(tandem::ones({3, 4})).sum().backward();
      report(rank, "completed");
    } catch (const std::exception& e) {
      report_error(rank, "caught", e, t0);
    }
    return 1;
  }
  if (mode == "abort") {
    if (rank == 0) {
      report(rank, "aborting");
      pg->abort(7);
    }
    third_allreduce(*pg, x);
    return 1;
  }
  std::cerr << "unknown case \"" << mode << "\"\n";
  return 2;
}
