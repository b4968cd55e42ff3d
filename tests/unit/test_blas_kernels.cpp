// OpenBLAS's kernels after avoid_fallback_blas_kernels() (unit_main.cpp calls it, as the apps'
// main does): never its Prescott fallback on a CPU that runs AVX2, unless the user chose it.
#include "core/blas_kernels.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace meshslice {
namespace {

TEST(BlasKernels, NoFallbackOnACpuWithAvx2) {
  const std::string blas = blas_kernels();
  if (blas.empty()) GTEST_SKIP() << "the BLAS is not OpenBLAS";
  if (std::getenv("OPENBLAS_CORETYPE")) GTEST_SKIP() << "OPENBLAS_CORETYPE chooses the kernels";
#if defined(__x86_64__) && defined(__GNUC__)
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "the CPU has no AVX2";
#else
  GTEST_SKIP() << "not an x86-64 CPU";
#endif
  EXPECT_EQ(blas.find("with its Prescott kernels"), std::string::npos) << blas;
}

}  // namespace
}  // namespace meshslice
