// Configure-time probe (cmake/MeshsliceKokkosProbe.cmake): whether nvcc hands a kernel the same
// bytes of a Kokkos View that the host compiler laid out. nvcc 12.9 and later drop a member
// marked [[no_unique_address]] from a kernel's parameter buffer while the host object keeps its
// bytes, so a kernel reads a rank-1 View's pointer and extent from the wrong places: kernels
// write zeros or far outside every allocation (kokkos/mdspan#435, fixed in mdspan in November
// 2025; the Kokkos of June 2025 with CUDA 13 has it). Nothing here runs: the probe is compiled
// with --keep, and the CMake side reads, from the kernel's PTX, the size of its parameter (what
// the device receives) and the sizeof constant the kernel stores (what the host passes).
#include <Kokkos_Core.hpp>

using ProbeBuffer = Kokkos::View<float*, Kokkos::DefaultExecutionSpace::memory_space>;

// 0x5eed0000 marks the constant in the PTX: sizeof follows in its low bits.
__global__ void meshslice_probe_view_argument(ProbeBuffer view, unsigned long long* host_bytes) {
  (void)view;  // only its size as a parameter matters
  *host_bytes = 0x5eed0000ull + sizeof(ProbeBuffer);
}

int main() { return 0; }
