// tandem::blas: which BLAS library and kernels the CPU matrix products use.
//
// OpenBLAS picks its kernels from the CPU model number, and a release older
// than the CPU does not know it: OpenBLAS 0.3.21 (Debian 12) takes an Emerald
// Rapids Xeon for a 2004 Prescott and multiplies with SSE3 kernels, about 4x
// slower than its AVX-512 ones. When tandem is loaded (at the latest before
// its first product) it checks the CPU's instruction sets and, when OpenBLAS
// fell back to kernels older than the CPU supports, selects the newest ones
// it can run, for the whole process. Setting OPENBLAS_CORETYPE yourself turns
// this off (OpenBLAS then uses what you name).
//
//   const tandem::blas::Info info = tandem::blas::info();
//   std::cout << info.library << ": " << info.kernels << " kernels\n";
//   if (info.kernels != info.detected)
//     std::cout << "(OpenBLAS chose " << info.detected << ")\n";
#pragma once

#include <string>

namespace tandem::blas {

struct Info {
  /// The library and its build, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ...".
  std::string library;
  /// The kernel set the products use now, e.g. "SkylakeX".
  std::string kernels;
  /// The kernel set OpenBLAS chose on its own (equal to `kernels` unless
  /// tandem chose newer ones).
  std::string detected;
  /// Whether OPENBLAS_CORETYPE names kernels (tandem then leaves the choice
  /// alone).
  bool chosen_by_environment = false;
};

/// Describes the BLAS library and the kernels chosen.
Info info();

}  // namespace tandem::blas
