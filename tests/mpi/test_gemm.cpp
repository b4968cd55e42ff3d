// Every distributed GEMM algorithm against a serial GEMM of the same global matrices: every
// dataflow, float and double, both collective implementations, every valid slice count S and
// two block sizes, on the mesh this binary runs on (ctest runs it on 1x1, 1x4, 4x1, 2x2, 2x3,
// 3x2 and 2x4). Configurations an algorithm cannot run must be clear UserErrors.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/bfloat16.hpp"
#include "core/errors.hpp"
#include "core/trace.hpp"
#include "exec/real_executor.hpp"
#include "gemm/run_gemm.hpp"
#include "gemm_reference.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

// M != N != K, divisible by every mesh side and tensor-parallel group size tested.
constexpr std::size_t kM = 48, kN = 72, kK = 96;

// The dimension MeshSlice slices: K for OS, N for LS, M for RS.
std::size_t sliced_extent(const GemmProblem& p) {
  return p.flow == Dataflow::OS ? p.K : p.flow == Dataflow::LS ? p.N : p.M;
}

// Whether `algorithm` must accept this configuration (else it must raise a UserError). Written
// from the algorithms' definitions, independently of the code under test. With S = 1 nothing
// is sliced, so the block size never matters.
bool expected_supported(Algorithm algorithm, const GemmProblem& p, int rows, int cols, int s, int b,
                        WangRing ring) {
  const std::size_t extent = sliced_extent(p);
  switch (algorithm) {
    case Algorithm::meshslice:
      return s == 1 || ((extent / rows) % (s * b) == 0 && (extent / cols) % (s * b) == 0);
    case Algorithm::collective: return true;
    case Algorithm::summa:
      // lcm(Pr, Pc, S) panels must divide the stepped dimension.
      return extent % rows == 0 && extent % cols == 0 && extent % s == 0;
    case Algorithm::cannon: return rows == cols;  // square meshes only; S and B do not apply
    case Algorithm::wang:
      // S loop iterations divide the ring whose collective is decomposed into shifts (the col
      // ring: A's all-gather in OS/RS, C's reduce-scatter in LS; the row ring: B's all-gather in
      // OS/LS, C's reduce-scatter in RS); B is unused.
      return s >= 1 && (ring == WangRing::col ? cols : rows) % s == 0;
    case Algorithm::tp1d:
      // S*B divides the per-chip share (of P = rows*cols) of the gathered/scattered dimension:
      // M in OS/LS, K in RS.
      return s == 1 || ((p.flow == Dataflow::RS ? p.K : p.M) / (rows * cols)) % (s * b) == 0;
    case Algorithm::fsdp:
      // S*B divides the per-chip share (of P = rows*cols) of the dimension the weight
      // all-gather / gradient reduce-scatter runs over: K in OS, N in LS, M in RS.
      return s == 1 || (extent / (rows * cols)) % (s * b) == 0;
  }
  return false;
}

// Slice counts worth running for an algorithm (S means nothing to Collective).
std::vector<int> slice_counts(Algorithm algorithm) {
  if (algorithm == Algorithm::collective || algorithm == Algorithm::cannon) return {1};
  return {1, 2, 3, 4, 6, 8};
}

template <class T>
double tolerance() {
  return std::is_same_v<T, double> ? 1e-12 : 1e-5;
}

template <class T>
void check_algorithm(Algorithm algorithm) {
  const int rows = torus().size(Axis::row), cols = torus().size(Axis::col);
  int ran = 0;
  for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS}) {
    const GemmProblem p{flow, kM, kN, kK};
    const GlobalMatrix a = global_matrix(p.global_a(), 1, 0, 1.0 / 16);
    const GlobalMatrix b = global_matrix(p.global_b(), 2, 0, 1.0 / 16);
    const GlobalMatrix want = serial_gemm(p, a, b);
    double scale = 0;
    for (double v : want.values) scale = std::max(scale, std::abs(v));
    const ShardRegion c_region = my_region(algorithm, p, 'C');
    for (CollectiveImpl impl : {CollectiveImpl::native, CollectiveImpl::ring})
      for (int slices : slice_counts(algorithm))
        for (int block : {1, 2}) {
          // B means nothing to Wang: its second pass decomposes the other ring instead.
          const WangRing ring =
              algorithm == Algorithm::wang && block == 2 ? WangRing::row : WangRing::col;
          CommOptions comm;
          comm.impl = impl;
          RealExecutor<T> ex(torus(), comm, /*gemm_chunks=*/3);
          ex.set_min_chunk_rows(1);  // the small shards are cut into chunks too
          auto a_shard = shard_of<T>(a, my_region(algorithm, p, 'A'));
          auto b_shard = shard_of<T>(b, my_region(algorithm, p, 'B'));
          auto c_shard = make_matrix<T>(c_region.rows, c_region.cols,
                                        [](std::size_t, std::size_t) { return 12345.0; });
          const std::string what =
              concat(algorithm_name(algorithm), " ", p.str(), " S=", slices, " B=", block,
                     " ring=", wang_ring_name(ring), " impl=", impl_name(impl));
          const GemmOptions options{slices, block, ring};
          if (!expected_supported(algorithm, p, rows, cols, slices, block, ring)) {
            EXPECT_THROW(run_gemm(ex, algorithm, p, a_shard, b_shard, c_shard, options), UserError)
                << what;
            continue;
          }
          run_gemm(ex, algorithm, p, a_shard, b_shard, c_shard, options);
          ++ran;
          auto got = to_host(c_shard);
          double worst = 0;
          for (std::size_t i = 0; i < got.extent(0); ++i)
            for (std::size_t j = 0; j < got.extent(1); ++j)
              worst = std::max(
                  worst, std::abs(got(i, j) - want(c_region.row0 + i, c_region.col0 + j)) / scale);
          EXPECT_LE(worst, tolerance<T>()) << what;
        }
  }
  const bool runs_here = algorithm != Algorithm::cannon || rows == cols;
  if (runs_here) {
    EXPECT_GE(ran, 6) << algorithm_name(algorithm) << ": too few configurations ran on this mesh";
  }
}

// Values that bf16 must round (thirds of the small integers global_matrix makes), and the same
// rounded as a bf16 run rounds its operands: to float, then to bf16.
GlobalMatrix needing_rounding(GlobalMatrix g) {
  for (double& v : g.values) v = v / 3.0 + 0.1;
  return g;
}
GlobalMatrix rounded_to_bf16(GlobalMatrix g) {
  for (double& v : g.values) v = to_float(to_bfloat16(static_cast<float>(v)));
  return g;
}

// Bytes the partial all-gathers of a traced run sent.
double partial_gather_bytes(const Trace& trace) {
  double bytes = 0;
  for (const TraceEvent& e : trace.events())
    if (e.name == "partial_all_gather") bytes += e.bytes;
  return bytes;
}

// A float shard as a bf16 run keeps an operand in bf16 (exec/gemm_operand.hpp): rounded, in the
// memory of half as many floats.
GemmOperand<float> kept_in_bf16(const Matrix<float>& m) {
  GemmOperand<float> kept;
  kept.value = Matrix<float>("kept_in_bf16", 1, (elements(m) + 1) / 2);
  kept.rounded =
      Matrix<bfloat16>(reinterpret_cast<bfloat16*>(kept.value.data()), m.extent(0), m.extent(1));
  to_bfloat16(ExecSpace(), m, kept.rounded, Matrix<float>(), Matrix<bfloat16>());
  Kokkos::fence();
  return kept;
}

// train.precision bf16's GEMMs: a float executor that rounds every operand to bf16 and sums in
// float, its sliced gathers moving bf16 (exec/gemm_operand.hpp). Against the serial GEMM of the
// rounded operands, to float's accuracy; the algorithms that gather slices (MeshSlice, 1D TP,
// FSDP) send half the bytes of the same run in float. The algorithms that take operands kept in
// bf16 (GemmPlan::takes_bf16_operands) give the same bits from them as from the float operands
// rounded on the way, sending the same bytes.
void check_bf16_algorithm(Algorithm algorithm) {
  const int rows = torus().size(Axis::row), cols = torus().size(Axis::col);
  int ran = 0, ran_kept = 0;
  for (Dataflow flow : {Dataflow::OS, Dataflow::LS, Dataflow::RS}) {
    const GemmProblem p{flow, kM, kN, kK};
    const GlobalMatrix a = needing_rounding(global_matrix(p.global_a(), 1, 0, 1.0 / 16));
    const GlobalMatrix b = needing_rounding(global_matrix(p.global_b(), 2, 0, 1.0 / 16));
    const GlobalMatrix want = serial_gemm(p, rounded_to_bf16(a), rounded_to_bf16(b));
    const GlobalMatrix unrounded = serial_gemm(p, a, b);
    double scale = 0;
    for (double v : want.values) scale = std::max(scale, std::abs(v));
    const ShardRegion c_region = my_region(algorithm, p, 'C');
    for (int slices : slice_counts(algorithm)) {
      const GemmOptions options{slices, 2, WangRing::col};
      if (!expected_supported(algorithm, p, rows, cols, slices, options.block, options.wang_ring))
        continue;
      const std::string what = concat(algorithm_name(algorithm), " ", p.str(), " S=", slices);
      enum Run { in_float, in_bf16, kept_bf16 };
      std::array<double, 3> sent{};
      std::array<Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>, 3> got;
      for (const Run run : {in_float, in_bf16, kept_bf16}) {
        Trace trace;
        // The bf16 runs' GEMMs whole: how a GEMM is cut while a collective flies depends on
        // timing, and a cut of K changes the order of the sums (chunking is the float run's).
        RealExecutor<float> ex(torus(), CommOptions{}, /*gemm_chunks=*/run == in_float ? 3 : 1,
                               &trace);
        ex.set_min_chunk_rows(1);
        if (run != in_float) ex.round_gemm_operands_to_bf16(fastest_bf16_route());
        GemmPlan<RealExecutor<float>> plan(ex, algorithm, p, options);
        auto a_shard = shard_of<float>(a, my_region(algorithm, p, 'A'));
        auto b_shard = shard_of<float>(b, my_region(algorithm, p, 'B'));
        Matrix<float> c_shard("c", c_region.rows, c_region.cols);
        if (run == kept_bf16) {
          if (!plan.takes_bf16_operands()) continue;
          plan.run(kept_in_bf16(a_shard), kept_in_bf16(b_shard), c_shard);
          ++ran_kept;
        } else {
          plan.run(a_shard, b_shard, c_shard);
        }
        ex.wait_all();
        sent[run] = partial_gather_bytes(trace);
        got[run] = to_host(c_shard);
      }
      ++ran;
      double worst = 0, off_unrounded = 0;
      for (std::size_t i = 0; i < got[in_bf16].extent(0); ++i)
        for (std::size_t j = 0; j < got[in_bf16].extent(1); ++j) {
          const std::size_t r = c_region.row0 + i, c = c_region.col0 + j;
          worst = std::max(worst, std::abs(got[in_bf16](i, j) - want(r, c)) / scale);
          off_unrounded =
              std::max(off_unrounded, std::abs(got[in_bf16](i, j) - unrounded(r, c)) / scale);
        }
      EXPECT_LE(worst, 1e-5) << what;
      EXPECT_GE(off_unrounded, 100 * worst) << what << ": bf16 rounding made no difference";
      EXPECT_EQ(sent[in_bf16], sent[in_float] / 2) << what << ": bytes of the sliced gathers";
      if (got[kept_bf16].data() == nullptr) continue;
      EXPECT_EQ(sent[kept_bf16], sent[in_bf16]) << what << ": bytes of operands kept in bf16";
      std::size_t differing = 0;
      for (std::size_t i = 0; i < got[in_bf16].extent(0); ++i)
        for (std::size_t j = 0; j < got[in_bf16].extent(1); ++j)
          differing += got[kept_bf16](i, j) != got[in_bf16](i, j);
      EXPECT_EQ(differing, 0u) << what << ": operands kept in bf16 gave other bits";
    }
  }
  const bool runs_here = algorithm != Algorithm::cannon || rows == cols;
  if (runs_here) {
    EXPECT_GE(ran, 3) << algorithm_name(algorithm) << ": too few ran on this mesh";
  }
  // MeshSlice and Collective take kept operands on every mesh; every algorithm does on one chip.
  const bool takes_kept = algorithm == Algorithm::meshslice || algorithm == Algorithm::collective ||
                          (rows == 1 && cols == 1);
  if (runs_here && takes_kept) {
    EXPECT_GE(ran_kept, 3) << algorithm_name(algorithm) << ": too few ran with kept operands";
  }
}

class GemmAlgorithms : public ::testing::TestWithParam<Algorithm> {};

TEST_P(GemmAlgorithms, DoubleMatchesSerial) { check_algorithm<double>(GetParam()); }
TEST_P(GemmAlgorithms, FloatMatchesSerial) { check_algorithm<float>(GetParam()); }
TEST_P(GemmAlgorithms, Bf16MatchesSerialOfRoundedOperands) { check_bf16_algorithm(GetParam()); }

INSTANTIATE_TEST_SUITE_P(All, GemmAlgorithms, ::testing::ValuesIn(all_algorithms()),
                         [](const auto& info) {
                           return std::string(algorithm_name(info.param)) == "1dtp"
                                      ? std::string("tp1d")
                                      : std::string(algorithm_name(info.param));
                         });

TEST(GemmErrors, IndivisibleShapesAndSlicesAreClearErrorsOnEveryRank) {
  const int rows = torus().size(Axis::row), cols = torus().size(Axis::col);
  RealExecutor<double> ex(torus(), CommOptions{});
  const GemmProblem p{Dataflow::OS, kM, kN, kK};
  Matrix<double> a("a", kM / rows, kK / cols), b("b", kK / rows, kN / cols);
  Matrix<double> c("c", kM / rows, kN / cols);
  // S*B = 5*7 divides no shard of K = 96.
  try {
    run_gemm(ex, Algorithm::meshslice, p, a, b, c, {5, 7});
    ADD_FAILURE() << "S=5, B=7 accepted for K=96";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("S*B = 5*7 = 35"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_gemm(ex, Algorithm::meshslice, p, a, b, c, {0, 1}), UserError);
  // SUMMA: lcm(Pr, Pc, S=64) never divides K=96.
  try {
    run_gemm(ex, Algorithm::summa, p, a, b, c, {64, 1});
    ADD_FAILURE() << "SUMMA accepted S=64 for K=96";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("does not divide K=96"), std::string::npos) << e.what();
  }
  const GemmProblem odd{Dataflow::OS, kM + 1, kN, kK};
  if (rows > 1) {
    EXPECT_THROW(run_gemm(ex, Algorithm::meshslice, odd, a, b, c, {1, 1}), UserError);
  }
  Matrix<double> wrong("wrong", kM / rows + 1, kK / cols);
  try {
    run_gemm(ex, Algorithm::collective, p, wrong, b, c, {1, 1});
    ADD_FAILURE() << "a wrong shard shape was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("the shard of A"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace meshslice::testing
