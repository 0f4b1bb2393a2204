// The core budget of one benchmark: set for its run and restored afterwards,
// so the other benchmarks of the program keep theirs.
//
//   void BM_Something(benchmark::State& state) {
//     ThreadBudget threads(state.range(0));
//     for (auto _ : state) ...
//   }
#pragma once

#include <cstdint>

#include "tandem/core/cpu_budget.h"

class ThreadBudget {
 public:
  explicit ThreadBudget(int64_t n) : saved_(tandem::num_threads()) {
    tandem::set_num_threads(n);
  }
  ~ThreadBudget() { tandem::set_num_threads(saved_); }
  ThreadBudget(const ThreadBudget&) = delete;
  ThreadBudget& operator=(const ThreadBudget&) = delete;

 private:
  int64_t saved_;
};
