// An FC layer's training step (forward, backward data, backward weight with micro-batch
// accumulation) on the mesh, in each row of Table 1, against a serial computation of the same
// global tensors: Y = X W, X' = Y' W^T, W' = sum over micro-batches of X^T Y'.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "gemm/real_executor.hpp"
#include "gemm_reference.hpp"
#include "model/fc_layer.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

constexpr std::size_t kT = 48, kI = 72, kO = 96;  // tokens, inputs, outputs

GlobalMatrix product(const GlobalMatrix& a, bool ta, const GlobalMatrix& b, bool tb) {
  const std::size_t m = ta ? a.shape.cols : a.shape.rows, k = ta ? a.shape.rows : a.shape.cols;
  const std::size_t n = tb ? b.shape.rows : b.shape.cols;
  GlobalMatrix c{{m, n}, std::vector<double>(m * n, 0.0)};
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::size_t l = 0; l < k; ++l) sum += (ta ? a(l, i) : a(i, l)) * (tb ? b(j, l) : b(l, j));
      c.values[i * n + j] = sum;
    }
  return c;
}

GlobalMatrix transpose(const GlobalMatrix& g) {
  GlobalMatrix t{{g.shape.cols, g.shape.rows}, std::vector<double>(g.values.size())};
  for (std::size_t r = 0; r < g.shape.rows; ++r)
    for (std::size_t c = 0; c < g.shape.cols; ++c) t.values[c * g.shape.rows + r] = g(r, c);
  return t;
}

// This chip's block (i, j) of g on the Pr x Pc mesh.
Matrix<double> block(const GlobalMatrix& g) {
  const std::size_t rows = g.shape.rows / torus().size(Axis::row);
  const std::size_t cols = g.shape.cols / torus().size(Axis::col);
  const std::size_t r0 = torus().coord(Axis::row) * rows, c0 = torus().coord(Axis::col) * cols;
  return make_matrix<double>(rows, cols, [&](std::size_t i, std::size_t j) { return g(r0 + i, c0 + j); });
}

double worst_error(const Matrix<double>& got, const GlobalMatrix& want) {
  const auto host = to_host(got);
  const std::size_t r0 = torus().coord(Axis::row) * got.extent(0);
  const std::size_t c0 = torus().coord(Axis::col) * got.extent(1);
  double scale = 0, worst = 0;
  for (double v : want.values) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < got.extent(0); ++i)
    for (std::size_t j = 0; j < got.extent(1); ++j)
      worst = std::max(worst, std::abs(host(i, j) - want(r0 + i, c0 + j)) / scale);
  return worst;
}

class FcLayerRows : public ::testing::TestWithParam<Stationary> {};

TEST_P(FcLayerRows, TrainingStepMatchesSerial) {
  const Stationary s = GetParam();
  // Two micro-batches of the same layer.
  const GlobalMatrix w = global_matrix({kI, kO}, 1, 0, 1.0 / 16);
  const GlobalMatrix x[2] = {global_matrix({kT, kI}, 2, 0, 1.0 / 16),
                             global_matrix({kT, kI}, 2, 1, 1.0 / 16)};
  const GlobalMatrix dy[2] = {global_matrix({kT, kO}, 3, 0, 1.0 / 16),
                              global_matrix({kT, kO}, 3, 1, 1.0 / 16)};
  // The layouts of Table 1's row: X-stn keeps W^T (and W'^T), W-stn takes X^T (and gives X'^T).
  const bool wt = s == Stationary::X, xt = s == Stationary::W;
  const std::array<GemmChoice, 3> collective{GemmChoice{Algorithm::collective, {1, 1}},
                                             GemmChoice{Algorithm::collective, {1, 1}},
                                             GemmChoice{Algorithm::collective, {1, 1}}};
  const std::array<GemmChoice, 3> sliced{GemmChoice{Algorithm::meshslice, {2, 1}},
                                         GemmChoice{Algorithm::summa, {2, 1}},
                                         GemmChoice{Algorithm::meshslice, {2, 1}}};
  for (const auto& choices : {collective, sliced}) {
    RealExecutor<double> ex(torus(), CommOptions{});
    FcLayer<RealExecutor<double>> layer(ex, s, kT, kI, kO, choices);
    const auto w_shard = block(wt ? transpose(w) : w);
    Matrix<double> dw("dw", w_shard.extent(0), w_shard.extent(1));
    GlobalMatrix dw_want{{kI, kO}, std::vector<double>(kI * kO, 0.0)};
    for (int mb = 0; mb < 2; ++mb) {
      const auto x_shard = block(xt ? transpose(x[mb]) : x[mb]);
      const auto dy_shard = block(dy[mb]);
      Matrix<double> y("y", kT / torus().size(Axis::row), kO / torus().size(Axis::col));
      Matrix<double> dx("dx", x_shard.extent(0), x_shard.extent(1));
      layer.forward(x_shard, w_shard, y);
      layer.backward_data(dy_shard, w_shard, dx);
      layer.backward_weight(x_shard, dy_shard, dw, /*accumulate=*/mb > 0);
      const GlobalMatrix dx_want = product(dy[mb], false, w, true);
      const GlobalMatrix step = product(x[mb], true, dy[mb], false);
      for (std::size_t i = 0; i < dw_want.values.size(); ++i) dw_want.values[i] += step.values[i];
      const std::string what = concat(stationary_name(s), " ",
                                      algorithm_name(choices[0].algorithm), " micro-batch ", mb);
      EXPECT_LE(worst_error(y, product(x[mb], false, w, false)), 1e-12) << what << " Y";
      EXPECT_LE(worst_error(dx, xt ? transpose(dx_want) : dx_want), 1e-12) << what << " X'";
      EXPECT_LE(worst_error(dw, wt ? transpose(dw_want) : dw_want), 1e-12) << what << " W'";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table1, FcLayerRows,
                         ::testing::Values(Stationary::Y, Stationary::X, Stationary::W),
                         [](const auto& info) {
                           return std::string(1, "YXW"[static_cast<int>(info.param)]) + "stn";
                         });

TEST(FcLayerErrors, OneDimensionalAlgorithmsAndBadSlicesAreClearErrors) {
  RealExecutor<double> ex(torus(), CommOptions{});
  const GemmChoice ok{Algorithm::collective, {1, 1}};
  using Layer = FcLayer<RealExecutor<double>>;
  EXPECT_THROW(Layer(ex, Stationary::Y, kT, kI, kO, {GemmChoice{Algorithm::tp1d, {1, 1}}, ok, ok}),
               UserError);
  try {
    Layer(ex, Stationary::Y, kT, kI, kO, {ok, ok, GemmChoice{Algorithm::meshslice, {5, 7}}});
    ADD_FAILURE() << "S=5, B=7 accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bwd_weight"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace meshslice::testing
