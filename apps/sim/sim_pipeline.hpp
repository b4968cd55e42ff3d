#pragma once
// meshslice-sim's pipeline sweep (the deck's pipeline_sweep): a training step at each pipeline
// degree by the training driver's data-free emulation, one MPI rank per stage. Collective over
// the job; rank 0 prints the table and writes OUT/sim_pipeline.csv.
#include "core/app.hpp"
#include "hardware/model.hpp"
#include "sim_settings.hpp"

namespace meshslice::simapp {

int run_pipeline_sweep(const AppContext& context, const SimSettings& settings,
                       const hw::MachineModel& machine);

}  // namespace meshslice::simapp
