#include "sim_pipeline.hpp"

#include <mpi.h>

#include <memory>
#include <vector>

#include "core/csv.hpp"
#include "core/log.hpp"
#include "train_emulation/data_free_training.hpp"

namespace meshslice::simapp {
namespace {

struct Row {
  int pp = 0, dp = 0;
  std::size_t micro_batches = 0;
  train::EmulatedSteps::Step best;
  double tokens_per_second = 0;
};

}  // namespace

int run_pipeline_sweep(const AppContext& context, const SimSettings& settings,
                       const hw::MachineModel& machine) {
  const PipelineSweep& sweep = settings.pipeline;
  std::vector<Row> rows;
  for (const int pp : sweep.pp) {
    if (pp > context.size) {
      log_info("pipeline sweep: pp = ", pp, " needs ", pp,
               " MPI ranks (one per stage), the job "
               "has ",
               context.size, "; skipped (mpiexec -np ", pp, ")");
      continue;
    }
    train::DataFreeRun run;
    run.mesh = {sweep.chips / (pp * sweep.rows * sweep.cols), pp, sweep.rows, sweep.cols};
    run.model.hidden = sweep.model->hidden;
    run.model.heads = static_cast<std::size_t>(sweep.model->heads);
    run.model.blocks = static_cast<std::size_t>(sweep.blocks);
    run.model.seq_len = static_cast<std::size_t>(settings.workload.sequence);
    run.model.sequences = static_cast<std::size_t>(sweep.global_sequences / run.mesh.dp);
    run.plan = default_model_plan(run.model, GemmChoice{Algorithm::meshslice,
                                                        {sweep.slices, settings.sweep.block}});
    run.step.schedule = sweep.schedule;
    run.step.micro_batches = run.model.sequences / static_cast<std::size_t>(sweep.rows);
    Row row{pp, run.mesh.dp, run.step.micro_batches, {}, 0};
    MPI_Comm stage_ranks;
    MPI_Comm_split(MPI_COMM_WORLD, context.rank < pp ? 0 : MPI_UNDEFINED, context.rank,
                   &stage_ranks);
    if (context.rank < pp) {
      {
        const Torus stages(stage_ranks, MeshShape{1, pp, 1, 1});
        train::EmulatedSteps emulated(machine, static_cast<double>(sweep.global_sequences) *
                                                   run.model.seq_len);
        train::emulate_without_data(stages, machine, run, emulated);
        row.best = emulated.best();
        row.tokens_per_second = emulated.tokens_per_step() / row.best.seconds;
      }
      MPI_Comm_free(&stage_ranks);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rows.push_back(row);
  }
  if (context.rank != 0 || rows.empty()) return 0;
  log_info("pipeline sweep: ", sweep.model->label, ", ", sweep.blocks, " blocks, ",
           sweep.global_sequences, " sequences x ", settings.workload.sequence,
           " tokens per step on ", sweep.chips, " emulated ", machine.machine.name, "s, dp x pp x ",
           sweep.rows, "x", sweep.cols, ", ", schedule_name(sweep.schedule),
           " (training driver, data-free)");
  log_info("    pp    dp     m    step (ms)     tokens/s   FLOP util   comm exposed");
  CsvWriter csv(context.out_dir + "/sim_pipeline.csv",
                {"model", "chips", "pp", "dp", "rows", "cols", "microbatches", "schedule",
                 "step_seconds", "tokens_per_s", "flop_utilization", "exposed_comm_fraction"});
  for (const Row& r : rows) {
    log_info(concat("  ", r.pp, "  ", r.dp, "  ", r.micro_batches, "  ", r.best.seconds * 1e3, "  ",
                    static_cast<long>(r.tokens_per_second), "  ", 100 * r.best.flop_utilization,
                    "%  ", 100 * r.best.exposed_fraction, "%"));
    csv.row(sweep.model->name, sweep.chips, r.pp, r.dp, sweep.rows, sweep.cols, r.micro_batches,
            schedule_name(sweep.schedule), r.best.seconds, r.tokens_per_second,
            r.best.flop_utilization, r.best.exposed_fraction);
  }
  csv.finish();
  log_info("pipeline sweep in ", context.out_dir, "/sim_pipeline.csv");
  return 0;
}

}  // namespace meshslice::simapp
