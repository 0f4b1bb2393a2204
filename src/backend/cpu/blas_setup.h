// Private: the one-time setup of the BLAS library behind the CPU products
// (Note [OpenBLAS kernels] in blas_setup.cpp; Note [GEMM blocks] in
// matmul.cpp for why every call is single-threaded).
#pragma once

namespace tandem::backend::cpu {

/// Runs the setup if it has not run yet: OpenBLAS's kernels checked against
/// the CPU (done at load already, normally), and one OpenBLAS thread per
/// call. Cheap after the first call; every product calls it first.
void prepare_blas();

}  // namespace tandem::backend::cpu
