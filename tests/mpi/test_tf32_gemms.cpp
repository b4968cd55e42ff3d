// train.precision tf32 (CUDA builds): a float run whose model GEMMs run on the tensor cores in
// TF32 (exec/local_gemm_tf32.hpp) against the exact serial reference in double. TF32 keeps 10 of
// float's 23 mantissa bits, so the runs agree to TF32's accuracy and, at step 1, differ by more
// than float's: the GEMMs did run in TF32. Skipped in builds without cuBLAS.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/real_executor.hpp"
#include "model/reference_model.hpp"
#include "model/trainer.hpp"
#include "mpi_test_env.hpp"
#include "reference_check.hpp"

namespace meshslice::testing {
namespace {

constexpr int kSteps = 8;
constexpr double kTf32 = 5e-3;   // about 10 x 2^-11, TF32's relative rounding, after 8 steps
constexpr double kFloat = 1e-6;  // what IEEE float GEMMs stay within at step 1

double relative(double got, double want) { return std::abs(got - want) / std::abs(want); }

TEST(Tf32Gemms, SyntheticTaskMatchesTheReferenceToTf32Accuracy) {
  if (!tf32_gemm_available()) GTEST_SKIP() << "TF32 GEMMs need a CUDA build with cuBLAS";
  const ModelShape shape = test_block_shape(4);
  const OptimizerSettings opt = test_adamw(2, kSteps);
  const TaskSeeds seeds{11, 12, 13};
  RealExecutor<float> ex(torus(), CommOptions{}), data_ex(torus(), CommOptions{});
  ex.multiply_gemms_in_tf32();
  const ModelPlan plan = default_model_plan(shape, {Algorithm::meshslice, {2, 1}});
  Trainer<RealExecutor<float>> trainer(ex, shape, plan, opt, seeds, {}, &data_ex);
  ReferenceTrainer<double> exact(shape, seeds, opt);
  const std::size_t tokens = shape.tokens() * static_cast<std::size_t>(torus().size(Axis::dp));
  for (int step = 1; step <= kSteps; ++step) {
    const double got = trainer.step().loss, want = exact.train_step(tokens);
    EXPECT_LE(relative(got, want), kTf32) << "step " << step;
    if (step == 1) {
      EXPECT_GE(relative(got, want), kFloat) << "the GEMMs ran in IEEE float";
    }
  }
}

}  // namespace
}  // namespace meshslice::testing
