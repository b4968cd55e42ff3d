// An FC layer's training step (forward, backward data, backward weight with micro-batch
// accumulation) on the mesh, in each row of Table 1, against a serial computation of the same
// global tensors: Y = X W, X' = Y' W^T, W' = sum over micro-batches of X^T Y'.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <tuple>

#include "core/errors.hpp"
#include "exec/local_gemm_bf16.hpp"
#include "exec/real_executor.hpp"
#include "gemm_reference.hpp"
#include "model/fc_layer.hpp"
#include "mpi_test_env.hpp"

namespace meshslice::testing {
namespace {

constexpr std::size_t kT = 48, kI = 72, kO = 96;  // tokens, inputs, outputs

// A row of Table 1, and whether its transposed variant runs.
class FcLayerRows : public ::testing::TestWithParam<std::tuple<Stationary, bool>> {};

TEST_P(FcLayerRows, TrainingStepMatchesSerial) {
  const auto [s, transposed_variant] = GetParam();
  // Two micro-batches of the same layer.
  const GlobalMatrix w = global_matrix({kI, kO}, 1, 0, 1.0 / 16);
  const GlobalMatrix x[2] = {global_matrix({kT, kI}, 2, 0, 1.0 / 16),
                             global_matrix({kT, kI}, 2, 1, 1.0 / 16)};
  const GlobalMatrix dy[2] = {global_matrix({kT, kO}, 3, 0, 1.0 / 16),
                              global_matrix({kT, kO}, 3, 1, 1.0 / 16)};
  // The layouts of Table 1's row: X-stn keeps W^T (and W'^T), W-stn takes X^T (and gives X'^T);
  // the transposed variant keeps every tensor transposed.
  const bool wt = (s == Stationary::X) != transposed_variant;
  const bool xt = (s == Stationary::W) != transposed_variant;
  const bool yt = transposed_variant;
  const std::array<GemmChoice, 3> collective{GemmChoice{Algorithm::collective, {1, 1}},
                                             GemmChoice{Algorithm::collective, {1, 1}},
                                             GemmChoice{Algorithm::collective, {1, 1}}};
  const std::array<GemmChoice, 3> sliced{GemmChoice{Algorithm::meshslice, {2, 1}},
                                         GemmChoice{Algorithm::summa, {2, 1}},
                                         GemmChoice{Algorithm::meshslice, {2, 1}}};
  for (const auto& choices : {collective, sliced}) {
    RealExecutor<double> ex(torus(), CommOptions{});
    FcLayer<RealExecutor<double>> layer(ex, s, transposed_variant, kT, kI, kO, choices);
    const auto w_shard = block(wt ? transpose(w) : w);
    Matrix<double> dw("dw", w_shard.extent(0), w_shard.extent(1));
    GlobalMatrix dw_want{{kI, kO}, std::vector<double>(kI * kO, 0.0)};
    for (int mb = 0; mb < 2; ++mb) {
      const auto x_shard = block(xt ? transpose(x[mb]) : x[mb]);
      const auto dy_shard = block(yt ? transpose(dy[mb]) : dy[mb]);
      const std::size_t y_rows = yt ? kO : kT, y_cols = yt ? kT : kO;
      Matrix<double> y("y", y_rows / torus().size(Axis::row), y_cols / torus().size(Axis::col));
      Matrix<double> dx("dx", x_shard.extent(0), x_shard.extent(1));
      layer.forward(x_shard, w_shard, y);
      layer.backward_data(dy_shard, w_shard, dx);
      layer.backward_weight(x_shard, dy_shard, dw, /*accumulate=*/mb > 0);
      const GlobalMatrix dx_want = product(dy[mb], false, w, true);
      const GlobalMatrix step = product(x[mb], true, dy[mb], false);
      for (std::size_t i = 0; i < dw_want.values.size(); ++i) dw_want.values[i] += step.values[i];
      const std::string what = concat(stationary_name(s), transposed_variant ? " transposed " : " ",
                                      algorithm_name(choices[0].algorithm), " micro-batch ", mb);
      const GlobalMatrix y_want = product(x[mb], false, w, false);
      EXPECT_LE(worst_error(y, yt ? transpose(y_want) : y_want), 1e-12) << what << " Y";
      EXPECT_LE(worst_error(dx, xt ? transpose(dx_want) : dx_want), 1e-12) << what << " X'";
      EXPECT_LE(worst_error(dw, wt ? transpose(dw_want) : dw_want), 1e-12) << what << " W'";
    }
  }
}

// This chip's block of g in float, with values that bf16 must round.
Matrix<float> float_block(const GlobalMatrix& g) {
  const std::size_t rows = g.shape.rows / torus().size(Axis::row);
  const std::size_t cols = g.shape.cols / torus().size(Axis::col);
  const std::size_t r0 = torus().coord(Axis::row) * rows, c0 = torus().coord(Axis::col) * cols;
  return make_matrix<float>(rows, cols, [&](std::size_t i, std::size_t j) {
    return g(r0 + i, c0 + j) / 3.0 + 0.1;
  });
}

// A bf16 run rounds the output gradient once for both backward GEMMs where both plans take
// operands kept in bf16 (FcLayer::output_gradient), and the GEMMs give the same bits as when
// each rounded it; where one does not (SUMMA on a mesh), the gradient stays as it is.
TEST_P(FcLayerRows, Bf16OutputGradientRoundedOnceGivesTheSameBits) {
  const auto [s, transposed_variant] = GetParam();
  const bool wt = (s == Stationary::X) != transposed_variant;
  const bool xt = (s == Stationary::W) != transposed_variant;
  const bool yt = transposed_variant;
  const auto w =
      float_block(global_matrix(wt ? MatrixShape{kO, kI} : MatrixShape{kI, kO}, 1, 0, 1.0 / 16));
  const auto x =
      float_block(global_matrix(xt ? MatrixShape{kI, kT} : MatrixShape{kT, kI}, 2, 0, 1.0 / 16));
  const auto dy =
      float_block(global_matrix(yt ? MatrixShape{kO, kT} : MatrixShape{kT, kO}, 3, 0, 1.0 / 16));
  const GemmChoice meshslice{Algorithm::meshslice, {2, 1}}, summa{Algorithm::summa, {2, 1}};
  for (const bool with_summa : {false, true}) {
    RealExecutor<float> ex(torus(), CommOptions{}, /*gemm_chunks=*/1);
    ex.round_gemm_operands_to_bf16(fastest_bf16_route());
    FcLayer<RealExecutor<float>> layer(ex, s, transposed_variant, kT, kI, kO,
                                       {meshslice, with_summa ? summa : meshslice, meshslice});
    std::array<Matrix<float>, 2> dx, dw;  // dy as it is; dy rounded once
    for (int once = 0; once < 2; ++once) {
      dx[once] = Matrix<float>("dx", x.extent(0), x.extent(1));
      dw[once] = Matrix<float>("dw", w.extent(0), w.extent(1));
      const GemmOperand<float> g = once ? layer.output_gradient(dy) : GemmOperand<float>(dy);
      if (once) {
        const bool one_chip = torus().size(Axis::row) * torus().size(Axis::col) == 1;
        EXPECT_EQ(g.in_bf16(), !with_summa || one_chip);  // one chip: every plan is its GEMM
      }
      layer.backward_weight(x, g, dw[once], false);
      layer.backward_data(g, w, dx[once]);
    }
    ex.wait_all();
    const std::string what = concat(stationary_name(s), transposed_variant ? " transposed" : "",
                                    with_summa ? " with SUMMA" : "");
    for (auto* pair : {&dx, &dw}) {
      const auto before = to_host((*pair)[0]), after = to_host((*pair)[1]);
      std::size_t differing = 0;
      for (std::size_t i = 0; i < before.extent(0); ++i)
        for (std::size_t j = 0; j < before.extent(1); ++j) differing += before(i, j) != after(i, j);
      EXPECT_EQ(differing, 0u) << what << (pair == &dx ? " X'" : " W'");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table1, FcLayerRows,
                         ::testing::Combine(::testing::Values(Stationary::Y, Stationary::X,
                                                              Stationary::W),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           const int row = static_cast<int>(std::get<0>(info.param));
                           return std::string(1, "YXW"[row]) + "stn" +
                                  (std::get<1>(info.param) ? "_transposed" : "");
                         });

TEST(FcLayerErrors, OneDimensionalAlgorithmsAndBadSlicesAreClearErrors) {
  RealExecutor<double> ex(torus(), CommOptions{});
  const GemmChoice ok{Algorithm::collective, {1, 1}};
  using Layer = FcLayer<RealExecutor<double>>;
  EXPECT_THROW(Layer(ex, Stationary::Y, false, kT, kI, kO,
                     {GemmChoice{Algorithm::tp1d, {1, 1}}, ok, ok}),
               UserError);
  try {
    Layer(ex, Stationary::Y, false, kT, kI, kO, {ok, ok, GemmChoice{Algorithm::meshslice, {5, 7}}});
    ADD_FAILURE() << "S=5, B=7 accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bwd_weight"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace meshslice::testing
