// main() of the unit tests: Kokkos must be initialized for the tests that touch views; MPI is
// not used (the library links it, but nothing here calls it).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "core/blas_kernels.hpp"

int main(int argc, char** argv) {
  meshslice::avoid_fallback_blas_kernels();  // as the apps do
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
