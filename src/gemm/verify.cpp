#include "gemm/verify.hpp"

#include <KokkosBlas3_gemm.hpp>
#include <cmath>

#include "gemm/operand_data.hpp"

namespace meshslice {

// (Kokkos 3.4 has no Kokkos::fabs/fmax in device code, hence the explicit ternaries below.)
namespace {
ShardRegion my_region(Algorithm algorithm, const GemmProblem& p, char matrix, const Torus& t) {
  return shard_region(algorithm, p, matrix, t.size(Axis::row), t.size(Axis::col),
                      t.coord(Axis::row), t.coord(Axis::col));
}
}  // namespace

template <class T>
void fill_gemm_operands(Algorithm algorithm, const GemmProblem& p, const Torus& torus,
                        const Matrix<T>& a, const Matrix<T>& b) {
  fill_operand(a, kSaltA, my_region(algorithm, p, 'A', torus));
  fill_operand(b, kSaltB, my_region(algorithm, p, 'B', torus));
  ExecSpace().fence();
}

template <class T>
double max_relative_error(Algorithm algorithm, const GemmProblem& p, const Torus& torus,
                          const Matrix<T>& c) {
  const ShardRegion region = my_region(algorithm, p, 'C', torus);
  // op(A) rows of this region (rows x K) and op(B) columns (K x cols), in double.
  Matrix<double> a_rows("verify_a", region.rows, p.K), b_cols("verify_b", p.K, region.cols);
  const bool a_transposed = p.flow == Dataflow::RS;  // op(A)(r, k) = A(k, r)
  const bool b_transposed = p.flow == Dataflow::LS;  // op(B)(k, c) = B(c, k)
  fill_operand(a_rows, kSaltA, ShardRegion{region.row0, region.rows, 0, p.K}, a_transposed);
  fill_operand(b_cols, kSaltB, ShardRegion{0, p.K, region.col0, region.cols}, b_transposed);
  Matrix<double> reference("verify_c", region.rows, region.cols);
  KokkosBlas::gemm("N", "N", 1.0, a_rows, b_cols, 0.0, reference);

  double local[2] = {0, 0};  // max |difference|, max |reference|
  Kokkos::parallel_reduce(
      "meshslice::verify_diff", Kokkos::RangePolicy<ExecSpace>(0, elements(c)),
      KOKKOS_LAMBDA(const std::size_t index, double& worst) {
        const std::size_t r = index / c.extent(1), col = index % c.extent(1);
        const double difference = static_cast<double>(c(r, col)) - reference(r, col);
        const double magnitude = difference < 0 ? -difference : difference;
        if (magnitude > worst) worst = magnitude;
      },
      Kokkos::Max<double>(local[0]));
  Kokkos::parallel_reduce(
      "meshslice::verify_scale", Kokkos::RangePolicy<ExecSpace>(0, elements(reference)),
      KOKKOS_LAMBDA(const std::size_t index, double& largest) {
        const double value = reference(index / reference.extent(1), index % reference.extent(1));
        const double magnitude = value < 0 ? -value : value;
        if (magnitude > largest) largest = magnitude;
      },
      Kokkos::Max<double>(local[1]));
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, torus.axis(Axis::tp).comm());
  return global[1] > 0 ? global[0] / global[1] : global[0];
}

template void fill_gemm_operands<float>(Algorithm, const GemmProblem&, const Torus&,
                                        const Matrix<float>&, const Matrix<float>&);
template void fill_gemm_operands<double>(Algorithm, const GemmProblem&, const Torus&,
                                         const Matrix<double>&, const Matrix<double>&);
template double max_relative_error<float>(Algorithm, const GemmProblem&, const Torus&,
                                          const Matrix<float>&);
template double max_relative_error<double>(Algorithm, const GemmProblem&, const Torus&,
                                           const Matrix<double>&);

}  // namespace meshslice
