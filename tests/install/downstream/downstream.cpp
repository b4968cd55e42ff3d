// A program built against an installed meshslice through find_package(meshslice): it runs
// through meshslice's app runner (MPI, Kokkos, a Teuchos deck, --version) and multiplies two
// matrices with meshslice's KokkosBlas wrapper, checked against a plain loop. Exit 0 on success.
#include <cmath>

#include "core/app.hpp"
#include "core/deck.hpp"
#include "core/kokkos_compat.hpp"
#include "core/kokkos_types.hpp"
#include "core/log.hpp"
#include "core/version.hpp"

namespace {

Teuchos::ParameterList valid_parameters() {
  Teuchos::ParameterList valid("meshslice-downstream");
  valid.set("n", 32, "size of the square matrices multiplied");
  return valid;
}

// C = A B with A(i,k) = i + k, B(k,j) = k - j on the default execution space; returns the
// largest difference from the same product computed by three loops on the host.
double gemm_error(int n) {
  using meshslice::Matrix;
  Matrix<double> a("a", n, n), b("b", n, n), c("c", n, n);
  auto ha = Kokkos::create_mirror_view(a);
  auto hb = Kokkos::create_mirror_view(b);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      ha(i, j) = i + j;
      hb(i, j) = i - j;
    }
  Kokkos::deep_copy(a, ha);
  Kokkos::deep_copy(b, hb);
  meshslice::blas_gemm(meshslice::ExecSpace(), "N", "N", 1.0, a, b, 0.0, c);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  double error = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double expected = 0;
      for (int k = 0; k < n; ++k) expected += ha(i, k) * hb(k, j);
      error = std::max(error, std::abs(hc(i, j) - expected));
    }
  return error;
}

}  // namespace

int main(int argc, char** argv) {
  meshslice::AppSpec spec{
      "meshslice-downstream", "Checks an installed meshslice.", "", valid_parameters, {}, {}};
  return meshslice::run_app(argc, argv, spec, [](meshslice::AppContext& context) {
    const int n = meshslice::get_param<int>(context.deck, "n");
    const double error = gemm_error(n);
    meshslice::log_info("downstream: ", n, "x", n, " GEMM max error ", error, "; built with ",
                        meshslice::version_line());
    return error < 1e-9 ? 0 : 1;
  });
}
