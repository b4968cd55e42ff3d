#pragma once
// meshslice-train's run: builds the mesh, the plan and the trainer from the settings, trains,
// prints progress and writes OUT/train.csv and OUT/summary.json.
#include "core/app.hpp"

namespace meshslice::train {

int run_training(AppContext& context);

}  // namespace meshslice::train
