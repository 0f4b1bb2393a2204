// `tandem devices`: the devices this process can place work on. One line per
// logical CPU device of the core budget (--threads), each with its cores and
// the host's memory, the BLAS kernels the CPU products use, then the CUDA
// devices.
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "commands.h"
#include "tandem/tandem.h"

namespace tandem::cli {
namespace {

std::string gib(int64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1 << 30)
      << " GiB";
  return out.str();
}

int run_devices() {
  std::cout << "core budget: " << num_threads() << " of " << available_cores()
            << " cores this process may use (" << std::thread::hardware_concurrency()
            << " on the machine)\n";
  const blas::Info blas = blas::info();
  std::cout << "blas: " << blas.kernels << " kernels, " << blas.library;
  if (blas.kernels != blas.detected) {
    std::cout
        << " (tandem's choice from the CPU's instruction sets; OpenBLAS took this CPU"
        << " for " << blas.detected << ")";
  } else if (blas.chosen_by_environment) {
    std::cout << " (as OPENBLAS_CORETYPE asks)";
  }
  std::cout << "\n";
  int64_t gpus = 0;
  for (const DeviceInfo& info : list_devices()) {
    if (info.device.is_cpu()) {
      std::cout << info.device << "  " << info.cores
                << (info.cores == 1 ? " core" : " cores") << ", host memory "
                << gib(info.total_memory) << "\n";
      continue;
    }
    ++gpus;
    const auto p = cuda::get_device_properties(info.device.index());
    std::cout << info.device << "  " << info.name << ", " << gib(info.total_memory)
              << ", compute capability " << p.major << "." << p.minor << ", "
              << info.cores << " multiprocessors\n";
  }
  if (gpus == 0) {
    std::cout << (cuda::is_built() ? "cuda: none (no GPU or driver found)\n"
                                   : "cuda: none (this build has no CUDA backend)\n");
  }
  return 0;
}

}  // namespace

// No flags of its own: the global --threads sets the budget it shows.
Action devices_command(CLI::App&) { return run_devices; }

}  // namespace tandem::cli
