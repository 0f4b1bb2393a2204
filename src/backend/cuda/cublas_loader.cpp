// cuBLAS, opened with dlopen on tandem's first cuBLAS call.
//
// Note [Loading cuBLAS lazily]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A program linked with cuBLAS maps libcublas and the libcublasLt it needs
// at start-up, and that alone costs about 200 MiB of resident memory (an
// empty main() linked with -lcublas peaks at 206 MiB; with -lcudnn, -lnccl
// or -lcudart, under 4 MiB). Every command of a CUDA build, `tandem --help`
// and CPU-only training included, started at ~220 MiB; now at ~10 MiB.
//
// So tandem does not link cuBLAS. This file defines, with C linkage and the
// signatures of <cublas_v2.h> (included, so the compiler checks that they
// match), each cuBLAS function tandem calls, under the name the library
// exports (the header maps cublasCreate to cublasCreate_v2, cublasSgemm_64
// to cublasSgemm_v2_64, ...). Each forwards to the real function. The first
// call opens libcublas.so.<major of the headers built against>, by that
// name (LD_LIBRARY_PATH, the loader's cache, the program's RUNPATH) and
// else from the toolkit's library folder found at configure time, and looks
// up every function at once, so a cuBLAS that lacks one fails on the first
// call with an error naming it. Callers use cuBLAS as usual.
//
// The definitions are hidden: they serve tandem's calls and never stand in
// for the real functions of another library in the process (PyTorch's). A
// new cuBLAS call in tandem needs its definition here; until then the link
// fails with an undefined reference.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "tandem/core/error.h"

#ifndef TANDEM_CUDA_LIBRARY_DIR
#error "src/CMakeLists.txt defines TANDEM_CUDA_LIBRARY_DIR, the toolkit's library folder"
#endif

namespace tandem::backend::cuda {
namespace {

#define TANDEM_CUBLAS_STR_(x) #x
#define TANDEM_CUBLAS_STR(x) TANDEM_CUBLAS_STR_(x)
constexpr const char* kLibrary = "libcublas.so." TANDEM_CUBLAS_STR(CUBLAS_VER_MAJOR);
constexpr const char* kVersion =
    TANDEM_CUBLAS_STR(CUBLAS_VER_MAJOR) "." TANDEM_CUBLAS_STR(CUBLAS_VER_MINOR);

// Every cuBLAS function tandem calls, by its exported name.
#define TANDEM_CUBLAS_FUNCTIONS(X) \
  X(cublasCreate_v2)               \
  X(cublasSetStream_v2)            \
  X(cublasSetMathMode)             \
  X(cublasGetStatusName)           \
  X(cublasGetStatusString)         \
  X(cublasSscal_v2_64)             \
  X(cublasDscal_v2_64)             \
  X(cublasSgemm_v2_64)             \
  X(cublasDgemm_v2_64)             \
  X(cublasSgemmStridedBatched_64)  \
  X(cublasDgemmStridedBatched_64)

struct Cublas {
#define TANDEM_CUBLAS_POINTER(name) decltype(&::name) name = nullptr;
  TANDEM_CUBLAS_FUNCTIONS(TANDEM_CUBLAS_POINTER)
#undef TANDEM_CUBLAS_POINTER
};

void* open_library() {
  void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library != nullptr) return library;
  const std::string by_name = dlerror();
  const std::string path = std::string(TANDEM_CUDA_LIBRARY_DIR) + "/" + kLibrary;
  library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library != nullptr) return library;
  throw Error(detail::str("cuBLAS: cannot load ",
                          kLibrary,
                          " (",
                          by_name,
                          "; ",
                          dlerror(),
                          "): install CUDA's cuBLAS ",
                          CUBLAS_VER_MAJOR,
                          ", or put its folder on LD_LIBRARY_PATH"));
}

Cublas load() {
  void* library = open_library();
  Cublas functions;
  const auto find = [&](auto& function, const char* name) {
    dlerror();
    void* address = dlsym(library, name);
    if (address == nullptr) {
      const char* error = dlerror();  // copied: dlclose may reuse its buffer
      const std::string why = error != nullptr ? error : "null address";
      dlclose(library);
      throw Error(detail::str("cuBLAS: ",
                              kLibrary,
                              " has no function ",
                              name,
                              " (",
                              why,
                              "): tandem was built with cuBLAS ",
                              kVersion,
                              "; install that version or a newer one, or put its folder "
                              "on LD_LIBRARY_PATH"));
    }
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(address);
  };
#define TANDEM_CUBLAS_FIND(name) find(functions.name, #name);
  TANDEM_CUBLAS_FUNCTIONS(TANDEM_CUBLAS_FIND)
#undef TANDEM_CUBLAS_FIND
  return functions;
}

// Opened once; a failed attempt throws and the next call tries again.
const Cublas& cublas() {
  static const Cublas functions = load();
  return functions;
}

}  // namespace
}  // namespace tandem::backend::cuda

#define TANDEM_CUBLAS_DEFINITION extern "C" __attribute__((visibility("hidden")))
using tandem::backend::cuda::cublas;

TANDEM_CUBLAS_DEFINITION cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  return cublas().cublasCreate_v2(handle);
}

TANDEM_CUBLAS_DEFINITION cublasStatus_t cublasSetStream_v2(cublasHandle_t handle,
                                                           cudaStream_t stream) {
  return cublas().cublasSetStream_v2(handle, stream);
}

TANDEM_CUBLAS_DEFINITION cublasStatus_t cublasSetMathMode(cublasHandle_t handle,
                                                          cublasMath_t mode) {
  return cublas().cublasSetMathMode(handle, mode);
}

TANDEM_CUBLAS_DEFINITION const char* cublasGetStatusName(cublasStatus_t status) {
  return cublas().cublasGetStatusName(status);
}

TANDEM_CUBLAS_DEFINITION const char* cublasGetStatusString(cublasStatus_t status) {
  return cublas().cublasGetStatusString(status);
}

TANDEM_CUBLAS_DEFINITION cublasStatus_t cublasSscal_v2_64(
    cublasHandle_t handle, int64_t n, const float* alpha, float* x, int64_t incx) {
  return cublas().cublasSscal_v2_64(handle, n, alpha, x, incx);
}

TANDEM_CUBLAS_DEFINITION cublasStatus_t cublasDscal_v2_64(
    cublasHandle_t handle, int64_t n, const double* alpha, double* x, int64_t incx) {
  return cublas().cublasDscal_v2_64(handle, n, alpha, x, incx);
}

TANDEM_CUBLAS_DEFINITION cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle,
                                                          cublasOperation_t transa,
                                                          cublasOperation_t transb,
                                                          int64_t m,
                                                          int64_t n,
                                                          int64_t k,
                                                          const float* alpha,
                                                          const float* A,
                                                          int64_t lda,
                                                          const float* B,
                                                          int64_t ldb,
                                                          const float* beta,
                                                          float* C,
                                                          int64_t ldc) {
  return cublas().cublasSgemm_v2_64(
      handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

TANDEM_CUBLAS_DEFINITION cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle,
                                                          cublasOperation_t transa,
                                                          cublasOperation_t transb,
                                                          int64_t m,
                                                          int64_t n,
                                                          int64_t k,
                                                          const double* alpha,
                                                          const double* A,
                                                          int64_t lda,
                                                          const double* B,
                                                          int64_t ldb,
                                                          const double* beta,
                                                          double* C,
                                                          int64_t ldc) {
  return cublas().cublasDgemm_v2_64(
      handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

TANDEM_CUBLAS_DEFINITION cublasStatus_t
cublasSgemmStridedBatched_64(cublasHandle_t handle,
                             cublasOperation_t transa,
                             cublasOperation_t transb,
                             int64_t m,
                             int64_t n,
                             int64_t k,
                             const float* alpha,
                             const float* A,
                             int64_t lda,
                             long long int strideA,
                             const float* B,
                             int64_t ldb,
                             long long int strideB,
                             const float* beta,
                             float* C,
                             int64_t ldc,
                             long long int strideC,
                             int64_t batchCount) {
  return cublas().cublasSgemmStridedBatched_64(handle,
                                               transa,
                                               transb,
                                               m,
                                               n,
                                               k,
                                               alpha,
                                               A,
                                               lda,
                                               strideA,
                                               B,
                                               ldb,
                                               strideB,
                                               beta,
                                               C,
                                               ldc,
                                               strideC,
                                               batchCount);
}

TANDEM_CUBLAS_DEFINITION cublasStatus_t
cublasDgemmStridedBatched_64(cublasHandle_t handle,
                             cublasOperation_t transa,
                             cublasOperation_t transb,
                             int64_t m,
                             int64_t n,
                             int64_t k,
                             const double* alpha,
                             const double* A,
                             int64_t lda,
                             long long int strideA,
                             const double* B,
                             int64_t ldb,
                             long long int strideB,
                             const double* beta,
                             double* C,
                             int64_t ldc,
                             long long int strideC,
                             int64_t batchCount) {
  return cublas().cublasDgemmStridedBatched_64(handle,
                                               transa,
                                               transb,
                                               m,
                                               n,
                                               k,
                                               alpha,
                                               A,
                                               lda,
                                               strideA,
                                               B,
                                               ldb,
                                               strideB,
                                               beta,
                                               C,
                                               ldc,
                                               strideC,
                                               batchCount);
}
