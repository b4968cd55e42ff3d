#pragma once
// The modes of meshslice-bench. Each mode adds its own deck section and runs from the context.
#include <Teuchos_ParameterList.hpp>

#include "core/app.hpp"

namespace meshslice::bench {

void add_collectives_parameters(Teuchos::ParameterList& valid);
int run_collectives(AppContext& context);

void add_gemm_parameters(Teuchos::ParameterList& valid);
int run_gemm_bench(AppContext& context);

void add_local_gemm_parameters(Teuchos::ParameterList& valid);
int run_local_gemm_bench(AppContext& context);

}  // namespace meshslice::bench
