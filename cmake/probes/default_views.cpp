// Configure-time probe (cmake/MeshsliceKokkosProbe.cmake): whether this compiler builds default
// Views correctly with this Kokkos. g++ 12 skips the constexpr constructor of the new View's
// reference-count tracker when Views are default-initialized in an array or as an aggregate's
// elements (kokkos#7464, #8187, #9262): the tracker is left zero, which means "a null
// allocation record, counted", and the first copy, assignment or destruction of such a View
// dereferences it. meshslice keeps Views in arrays and structs everywhere, so every GEMM crashes.
// A default View tracks nothing: use_count() is 0 without touching memory; from a zeroed
// tracker it reads through the null record and the probe crashes.
#include <Kokkos_Core.hpp>

#include <array>

namespace {
struct Pair {
  std::array<Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>, 2> views;
};
}  // namespace

int main() {
  const Pair pair;
  return pair.views[0].use_count() == 0 && pair.views[1].use_count() == 0 ? 0 : 1;
}
