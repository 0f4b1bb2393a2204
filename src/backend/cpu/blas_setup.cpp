// Note [OpenBLAS kernels]
// ~~~~~~~~~~~~~~~~~~~~~~~
// OpenBLAS built with DYNAMIC_ARCH (Debian's) chooses its kernels when it is
// loaded, from the CPU's family and model numbers. A CPU newer than the
// release is not in its tables and gets the fallback, the SSE3 kernels of
// a Prescott: OpenBLAS 0.3.21 does this on Emerald Rapids (family 6, model
// 207), where the MLP step's GEMMs then run 4x slower than with its AVX-512
// kernels (bench/vs_pytorch's note). The model number is the wrong question:
// what matters is which instruction sets the CPU and the OS support, and
// those are known. So before the first product tandem asks which of
// OpenBLAS's x86 kernel sets the CPU can run, and when OpenBLAS chose an
// older one of the same line, it reinitialises OpenBLAS with the newer one,
// through OpenBLAS's own entry points (gotoblas_dynamic_quit/init, which
// read OPENBLAS_CORETYPE as a user's setting would). A kernel set of
// another line (Zen, ...) or a user's OPENBLAS_CORETYPE is left alone.
//
// The choice is made while the library is loaded (static initialisation,
// before a program normally starts threads) and, should that not have run,
// before the first product. It changes the kernels of the whole process,
// which is what a user's OPENBLAS_CORETYPE would do too: a program that
// loads tandem with dlopen while other threads run BLAS should set
// OPENBLAS_CORETYPE itself. With OpenBLAS linked statically, tandem's
// initialiser may run before OpenBLAS's own; gotoblas_dynamic_init is called
// first for that case (it returns at once when OpenBLAS is set up).
//
// One OpenBLAS thread per call (Note [GEMM blocks]) is set before the first
// product, not at load: OpenBLAS's own initialiser would reset it if it ran
// later, and a program that never multiplies keeps OpenBLAS as it was.
#include "backend/cpu/blas_setup.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>

#include "tandem/core/blas.h"

// OpenBLAS's DYNAMIC_ARCH entry points, which cblas.h does not declare. Weak:
// an OpenBLAS built for one CPU lacks them, and then its choice stands.
extern "C" {
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

namespace tandem::backend::cpu {
namespace {

// OpenBLAS's Intel-line x86-64 kernel sets as openblas_get_corename() names
// them, oldest first; each runs on any CPU that runs the ones after it.
constexpr std::array<std::string_view, 9> kKernelLine = {"Prescott",
                                                         "Core2",
                                                         "Penryn",
                                                         "Dunnington",
                                                         "Nehalem",
                                                         "Sandybridge",
                                                         "Haswell",
                                                         "SkylakeX",
                                                         "Cooperlake"};

// Position in kKernelLine, or -1 for a kernel set of another line.
std::ptrdiff_t line_position(std::string_view kernels) {
  const auto* it = std::find(kKernelLine.begin(), kKernelLine.end(), kernels);
  return it == kKernelLine.end() ? -1 : std::distance(kKernelLine.begin(), it);
}

// The newest kernel set of the line this CPU and OS can run (the
// instruction sets OpenBLAS's own detection requires for each), or "".
std::string_view newest_runnable_kernels() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    return __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return "";
}

// OPENBLAS_CORETYPE is set only while OpenBLAS reads it; an empty value the
// user had is put back.
void reselect_kernels(std::string_view kernels, const char* previous) {
  const std::string name(kernels);
  setenv("OPENBLAS_CORETYPE", name.c_str(), 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  if (previous != nullptr) {
    setenv("OPENBLAS_CORETYPE", "", 1);
  } else {
    unsetenv("OPENBLAS_CORETYPE");
  }
}

const blas::Info& choose_kernels() {
  static const blas::Info info = [] {
    const bool dynamic =
        gotoblas_dynamic_init != nullptr && gotoblas_dynamic_quit != nullptr;
    if (dynamic) gotoblas_dynamic_init();
    blas::Info result;
    result.detected = openblas_get_corename();
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    result.chosen_by_environment = coretype != nullptr && *coretype != '\0';
    const std::string_view newest = newest_runnable_kernels();
    const std::ptrdiff_t chosen = line_position(result.detected);
    if (dynamic && !result.chosen_by_environment && chosen >= 0 &&
        line_position(newest) > chosen) {
      reselect_kernels(newest, coretype);
    }
    result.library = openblas_get_config();
    result.kernels = openblas_get_corename();
    return result;
  }();
  return info;
}

[[maybe_unused]] const blas::Info& chosen_at_load = choose_kernels();

}  // namespace

void prepare_blas() {
  static const bool once = [] {
    choose_kernels();
    openblas_set_num_threads(1);
    return true;
  }();
  (void)once;
}

}  // namespace tandem::backend::cpu

namespace tandem::blas {

Info info() { return backend::cpu::choose_kernels(); }

}  // namespace tandem::blas
