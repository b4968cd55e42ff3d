#include "gemm/scalapack_gemm.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "gemm/gemm_problem.hpp"

// How the row-major shards meet column-major ScaLAPACK
// ----------------------------------------------------
// A row-major r x c array is, byte for byte, the column-major c x r array of its transpose. So
// the shards of X (R x C, chip (i, j) holding block (i, j)) are exactly the shards of
// X^ = Xᵀ (C x R) in ScaLAPACK's column-major block-cyclic layout with block size c x r, on a
// grid whose process (p, q) holds block (p, q) of X^ = block (q, p) of X. The grid therefore has
// nprow = Pc, npcol = Pr, and its process (p, q) must be mesh chip (row q, col p): the BLACS
// grid is built with an explicit map rather than BLACS's own "row"/"col" orders. Each matrix then
// needs no copy, and the product is computed transposed, C^ = Cᵀ = op(B)ᵀ op(A)ᵀ:
//   OS: C = A B    ->  C^ (NxM) = B^ (NxK) · A^ (KxM)     p?gemm('N', 'N')
//   LS: C = A Bᵀ   ->  C^ (NxM) = B^ᵀ      · A^ (KxM)     p?gemm('T', 'N'), B^ is K x N
//   RS: C = Aᵀ B   ->  C^ (NxM) = B^ (NxK) · A^ᵀ          p?gemm('N', 'T'), A^ is M x K
// The inner dimension K is blocked differently in the two operands when Pr != Pc (K/Pr in one,
// K/Pc in the other); PBLAS 2 handles any such blocking.

#ifdef MESHSLICE_HAVE_SCALAPACK
// BLACS (C interface), PBLAS and ScaLAPACK's descinit, declared here because Debian ships no
// header for them. Integers are 32-bit (the default LP64 builds of Debian and spack); the PBLAS
// routines are written in C, so their character arguments carry no hidden Fortran lengths.
extern "C" {
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridmap(int* context, int* usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myprow, int* mypcol);
void Cblacs_gridexit(int context);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* context, const int* lld, int* info);
void psgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const float* alpha, const float* a, const int* ia, const int* ja, const int* desca,
             const float* b, const int* ib, const int* jb, const int* descb, const float* beta,
             float* c, const int* ic, const int* jc, const int* descc);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc);
}
#endif

namespace meshslice {

namespace {

constexpr const char* kNoScalapack =
    "built without ScaLAPACK; install libscalapack-openmpi-dev and reconfigure";

// UserError unless `shard` is the block of the R x C operand `name` this chip holds, and
// ScaLAPACK's int indices can address the operand (divisibility is check_distributable's).
template <class T>
void check_shard(const GemmProblem& problem, const char* name, MatrixShape global,
                 const Matrix<T>& shard, int rows, int cols) {
  const auto where =
      concat("scalapack_gemm ", problem.str(), ": ", name, " is ", global.rows, "x", global.cols);
  require(global.rows <= INT_MAX && global.cols <= INT_MAX, where,
          ", beyond ScaLAPACK's 32-bit indices");
  require(shard.extent(0) == global.rows / rows && shard.extent(1) == global.cols / cols, where,
          " on a ", rows, "x", cols, " mesh, so its shard must be ", global.rows / rows, "x",
          global.cols / cols, ", not ", shard.extent(0), "x", shard.extent(1));
}

template <class T>
void check_gemm(const GemmProblem& problem, int rows, int cols, const Matrix<T>& A,
                const Matrix<T>& B, const Matrix<T>& C) {
  check_distributable(problem, rows, cols);
  check_shard(problem, "A", problem.global_a(), A, rows, cols);
  check_shard(problem, "B", problem.global_b(), B, rows, cols);
  check_shard(problem, "C", problem.global_c(), C, rows, cols);
}

#ifdef MESHSLICE_HAVE_SCALAPACK

struct Descriptor {
  int desc[9];
};

// Descriptor of X^ = Xᵀ for the operand X (global R x C) whose row-major shard is `shard`
// (see the top of this file). lld is the row pitch, so padded views work too.
template <class View>
Descriptor describe(const ScalapackGrid& grid, MatrixShape global, const View& shard) {
  const int m = static_cast<int>(global.cols);
  const int n = static_cast<int>(global.rows);
  const int mb = static_cast<int>(shard.extent(1));
  const int nb = static_cast<int>(shard.extent(0));
  const int zero = 0;
  const int context = grid.context();
  const int lld = std::max(1, static_cast<int>(shard.stride(0)));
  Descriptor d{};
  int info = 0;
  descinit_(d.desc, &m, &n, &mb, &nb, &zero, &zero, &context, &lld, &info);
  // check_shard has already made these valid, so a rejection is a bug here, not user input.
  if (info != 0) throw std::logic_error(concat("descinit_ rejected argument ", -info));
  return d;
}

void pgemm(const char* ta, const char* tb, int m, int n, int k, const float* a, const int* da,
           const float* b, const int* db, float* c, const int* dc) {
  const float one = 1.0f, zero = 0.0f;
  const int i1 = 1;
  psgemm_(ta, tb, &m, &n, &k, &one, a, &i1, &i1, da, b, &i1, &i1, db, &zero, c, &i1, &i1, dc);
}

void pgemm(const char* ta, const char* tb, int m, int n, int k, const double* a, const int* da,
           const double* b, const int* db, double* c, const int* dc) {
  const double one = 1.0, zero = 0.0;
  const int i1 = 1;
  pdgemm_(ta, tb, &m, &n, &k, &one, a, &i1, &i1, da, b, &i1, &i1, db, &zero, c, &i1, &i1, dc);
}

#endif  // MESHSLICE_HAVE_SCALAPACK

}  // namespace

#ifdef MESHSLICE_HAVE_SCALAPACK

bool scalapack_available() { return true; }

ScalapackGrid::ScalapackGrid(const Torus& torus)
    : rows_(torus.size(Axis::row)),
      cols_(torus.size(Axis::col)),
      row_(torus.coord(Axis::row)),
      col_(torus.coord(Axis::col)) {
  comm_ = torus.sub_comm({Axis::row, Axis::col});
  // BLACS process (p, q) is chip (row q, col p); usermap is column-major with leading dim nprow.
  // Ranks come from the sub-communicator's own Cartesian coordinates (row, col), not a formula.
  const int nprow = cols_, npcol = rows_;
  std::vector<int> usermap(static_cast<std::size_t>(nprow) * npcol);
  for (int i = 0; i < rows_; ++i)
    for (int j = 0; j < cols_; ++j) {
      int coords[2] = {i, j};
      MPI_Cart_rank(comm_, coords, &usermap[static_cast<std::size_t>(j) + i * nprow]);
    }
  system_ = Csys2blacs_handle(comm_);
  context_ = system_;  // gridmap reads the system handle from here and writes the context back
  Cblacs_gridmap(&context_, usermap.data(), nprow, nprow, npcol);

  int got_nprow = 0, got_npcol = 0, myprow = -1, mypcol = -1;
  Cblacs_gridinfo(context_, &got_nprow, &got_npcol, &myprow, &mypcol);
  if (got_nprow != nprow || got_npcol != npcol || myprow != col_ || mypcol != row_) {
    release();  // the destructor does not run when a constructor throws
    throw std::logic_error(concat("BLACS placed chip (", row_, ",", col_, ") at process (", myprow,
                                  ",", mypcol, ") of a ", got_nprow, "x", got_npcol, " grid"));
  }
}

ScalapackGrid::~ScalapackGrid() { release(); }

void ScalapackGrid::release() {
  // Context first (it owns communicators derived from comm_), then the system handle slot, then
  // comm_ itself. Cblacs_exit is never called: it would tear down BLACS for the whole process.
  if (context_ >= 0) Cblacs_gridexit(context_);
  if (system_ >= 0) Cfree_blacs_system_handle(system_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);  // resets comm_ to MPI_COMM_NULL
  context_ = system_ = -1;
}

template <class T>
void scalapack_gemm(const ScalapackGrid& grid, Dataflow flow, std::size_t M, std::size_t N,
                    std::size_t K, const Matrix<T>& A, const Matrix<T>& B, const Matrix<T>& C) {
  const GemmProblem problem{flow, M, N, K};
  check_gemm(problem, grid.rows(), grid.cols(), A, B, C);
  // Host-accessible views come back unchanged (no copy); device views are staged.
  auto hA = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
  auto hB = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), B);
  auto hC = Kokkos::create_mirror_view(Kokkos::HostSpace(), C);
  Kokkos::fence();  // kernels that filled A and B must be done before BLAS reads them

  const Descriptor dA = describe(grid, problem.global_a(), hA);
  const Descriptor dB = describe(grid, problem.global_b(), hB);
  const Descriptor dC = describe(grid, problem.global_c(), hC);
  const char* ta = flow == Dataflow::LS ? "T" : "N";  // op on B^
  const char* tb = flow == Dataflow::RS ? "T" : "N";  // op on A^
  pgemm(ta, tb, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), hB.data(), dB.desc,
        hA.data(), dA.desc, hC.data(), dC.desc);
  Kokkos::deep_copy(C, hC);
}

#else  // built without ScaLAPACK

bool scalapack_available() { return false; }

ScalapackGrid::ScalapackGrid(const Torus&) { throw UserError(kNoScalapack); }

ScalapackGrid::~ScalapackGrid() = default;

void ScalapackGrid::release() {}

template <class T>
void scalapack_gemm(const ScalapackGrid&, Dataflow, std::size_t, std::size_t, std::size_t,
                    const Matrix<T>&, const Matrix<T>&, const Matrix<T>&) {
  throw UserError(kNoScalapack);
}

#endif

template <class T>
void scalapack_gemm(const Torus& torus, Dataflow flow, std::size_t M, std::size_t N, std::size_t K,
                    const Matrix<T>& A, const Matrix<T>& B, const Matrix<T>& C) {
  require(scalapack_available(), kNoScalapack);
  // Validate before building the grid, whose construction communicates.
  check_gemm(GemmProblem{flow, M, N, K}, torus.size(Axis::row), torus.size(Axis::col), A, B, C);
  ScalapackGrid grid(torus);
  scalapack_gemm(grid, flow, M, N, K, A, B, C);
}

#define MESHSLICE_INSTANTIATE(T)                                                                 \
  template void scalapack_gemm<T>(const ScalapackGrid&, Dataflow, std::size_t, std::size_t,      \
                                  std::size_t, const Matrix<T>&, const Matrix<T>&,               \
                                  const Matrix<T>&);                                             \
  template void scalapack_gemm<T>(const Torus&, Dataflow, std::size_t, std::size_t, std::size_t, \
                                  const Matrix<T>&, const Matrix<T>&, const Matrix<T>&);
MESHSLICE_INSTANTIATE(float)
MESHSLICE_INSTANTIATE(double)
#undef MESHSLICE_INSTANTIATE

}  // namespace meshslice
