#pragma once
// OpenBLAS chooses its kernels for the CPU it finds when it loads (a DYNAMIC_ARCH build, as
// Debian's is). A CPU newer than the library is taken for a Prescott: Debian 12's OpenBLAS
// 0.3.21 on Intel's Emerald Rapids (family 6, model 207) runs every GEMM in SSE3 kernels, 32
// GFLOP/s on one core for a 2048^3 sgemm where its AVX-512 (SkylakeX) kernels run 148 (measured;
// the laptop language model's step 2.8x faster). Before the first BLAS call, meshslice asks
// OpenBLAS again for the kernels the CPU's instruction set runs, unless OPENBLAS_CORETYPE
// already chooses them. Any other BLAS, and an OpenBLAS that knows its CPU, is left alone.
//
//     avoid_fallback_blas_kernels();        // in main, before any BLAS call
//     log_info("BLAS: ", blas_kernels());   // "OpenBLAS 0.3.21 ... with its SkylakeX kernels"
#include <string>

namespace meshslice {

void avoid_fallback_blas_kernels();

// Which BLAS the GEMMs run in and with which kernels, for the log ("" when it is not OpenBLAS,
// which names neither).
std::string blas_kernels();

}  // namespace meshslice
