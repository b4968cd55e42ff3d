# End-to-end tests of the executables: what runs, and the result files (bad inputs have a suite
# of their own: bad_inputs.txt). Included from tests/CMakeLists.txt.
set(BENCH $<TARGET_FILE:meshslice-bench>)
set(DECK ${PROJECT_SOURCE_DIR}/inputs/bench/collectives.yaml)

function(meshslice_app_test name ranks)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES PROCESSORS ${ranks} TIMEOUT 300
                       ENVIRONMENT "${MESHSLICE_MPI_ENV}" LABELS app)
endfunction()

set(MPI2 ${MESHSLICE_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${MESHSLICE_MPIEXEC_FLAGS})
set(MPI4 ${MESHSLICE_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 4 ${MESHSLICE_MPIEXEC_FLAGS})
set(MPI8 ${MESHSLICE_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 8 ${MESHSLICE_MPIEXEC_FLAGS})


meshslice_app_test(bench_collectives_runs 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_bench_collectives.sh ${CMAKE_CURRENT_BINARY_DIR}/bench-out
  ${MPI2} ${BENCH} ${DECK} --set collectives.max_kib=16 --set collectives.repetitions=2)

# Local GEMM mode: float and every bf16 route of the build, two small shapes, on one rank.
meshslice_app_test(bench_local_gemm 1
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_bench_local_gemm.sh ${CMAKE_CURRENT_BINARY_DIR}/bench-local-gemm
  ${BENCH} ${PROJECT_SOURCE_DIR}/inputs/bench/local-gemm.yaml --set local_gemm.M=96,64
  --set local_gemm.N=80,128 --set local_gemm.K=64,200 --set local_gemm.repetitions=1)

meshslice_app_test(bench_help 1 ${BENCH} --help)
set_tests_properties(bench_help PROPERTIES PASS_REGULAR_EXPRESSION "collectives\\.max_kib")


# GEMM mode: small shapes, every algorithm of the default deck, verified, traced, on 1x2 (with
# the TPUv4 emulation of the same ops: combined mode) and 2x1.
set(GEMM_DECK ${PROJECT_SOURCE_DIR}/inputs/bench/gemm.yaml)
set(SMALL_GEMM --set gemm.M=256,512 --set gemm.N=192,384 --set gemm.K=128,256 --set gemm.repetitions=1)
meshslice_app_test(bench_gemm_1x2 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_bench_gemm.sh ${CMAKE_CURRENT_BINARY_DIR}/bench-gemm-1x2 12 yes
  ${MPI2} ${BENCH} ${GEMM_DECK} ${SMALL_GEMM} --set gemm.hardware=tpuv4-sim)
meshslice_app_test(bench_gemm_2x1 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_bench_gemm.sh ${CMAKE_CURRENT_BINARY_DIR}/bench-gemm-2x1 12 no
  ${MPI2} ${BENCH} ${GEMM_DECK} ${SMALL_GEMM} --set mesh.rows=2)

# meshslice-train: short runs of the laptop deck (1x2 and 2x1, one with an explicit plan that
# re-lays activations out) and of the dp x tp deck, with their result files; bad input.
set(TRAIN $<TARGET_FILE:meshslice-train>)
set(CHECK_TRAIN ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_train.sh)
set(SHORT_TRAIN --set train.steps=40 --set train.eval_every=20 --set train.log_every=10)
meshslice_app_test(train_help 1 ${TRAIN} --help)
set_tests_properties(train_help PROPERTIES PASS_REGULAR_EXPRESSION
  "plan\\.layers.*--plan VALUE .or --set plan=VALUE.  means --set plan.source=file --set plan.file=VALUE.*--resume VALUE .or --set resume=VALUE.  means --set checkpoint.resume=VALUE.*checkpointing\\.blocks is now recompute\\.blocks")
meshslice_app_test(train_laptop_1x2 2 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-1x2 40
  ${MPI2} ${TRAIN} ${SHORT_TRAIN})
meshslice_app_test(train_explicit_plan_2x1 2 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-plan 40
  ${MPI2} ${TRAIN} ${SHORT_TRAIN} --set mesh.rows=2 --set plan.source=layers
  "--set=plan.layers=qkv W meshslice S=2,attn_out Yt collective,ff1 Wt summa S=2,ff2 Yt wang")
meshslice_app_test(train_dp_tp 4 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-dp-tp 20
  ${MPI4} ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/dp-tp.yaml --set train.steps=20
  --set train.eval_every=10 --set train.trace_steps=[5,6])
# Hardware mode: the dp x tp deck's steps also timed on an emulated TPUv4, with a trace of both.
# Pipeline stages with dp, micro-batches, ZeRO-1 and a checkpointed block: dp 2 x pp 2 x 1x2.
meshslice_app_test(train_pipeline_dp_pp 8 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-dp-pp 20
  ${MPI8} ${TRAIN} --set mesh.dp=2 --set mesh.pp=2 --set pipeline.microbatches=4
  --set optimizer.zero=true --set recompute.blocks=1 --set train.steps=20
  --set train.eval_every=10 --set train.trace_steps=[5])
# Hardware mode with pipeline stages: the emulated chips wait for each other's emulated work.
meshslice_app_test(train_hardware_pipeline 4 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-tpuv4-pp
  10 ${MPI4} ${TRAIN} --set mesh.pp=2 --set pipeline.microbatches=4 --set train.steps=10
  --set train.eval_every=5 --set train.trace_steps=[4] --set hardware=tpuv4-sim)
# The data-free emulation of a GPT-3-sized step on 256 chips (dp 2 x pp 2 x 8x8): one rank per
# stage, nothing run for real.
meshslice_app_test(train_emulate_only_gpt3 2 ${MPI2} ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/gpt3.yaml
  --set hardware=tpuv4-sim --set train.emulate_only=true --set mesh.dp=2 --set mesh.pp=2
  --set model.blocks=8 --set model.sequences=32 --set pipeline.microbatches=4 --set train.steps=2
  --out ${CMAKE_CURRENT_BINARY_DIR}/train-emulate-only)
# A float run is timed at 4-byte elements, whatever the machine file's (2).
set_tests_properties(train_emulate_only_gpt3 PROPERTIES PASS_REGULAR_EXPRESSION
  "at 4-byte elements \\(train.precision float\\).*step 2/2  \\| TPUv4-sim [0-9.]+ ms, comm exposed [0-9]+%, [0-9]+ tokens/s")
meshslice_app_test(train_hardware_tpuv4 4 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-tpuv4 10
  ${MPI4} ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/dp-tp.yaml --set train.steps=10
  --set train.eval_every=5 --set train.trace_steps=[4] --set hardware=tpuv4-sim)

# meshslice-tune: the GPT-3 deck's tables, emulator check and files, its plan run by the
# data-free emulation of meshslice-train; the joint planner likewise; and the laptop tune deck's
# plan (this machine's calibrated description) trained for real on 2 ranks (its losses fall).
set(TUNE $<TARGET_FILE:meshslice-tune>)
set(CHECK_TUNE ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_tune.sh)
meshslice_app_test(tune_help 1 ${TUNE} --help)
set_tests_properties(tune_help PROPERTIES PASS_REGULAR_EXPRESSION "search\\.gemm_rate")
meshslice_app_test(tune_gpt3_plan_emulated 1 ${CHECK_TUNE} ${CMAKE_CURRENT_BINARY_DIR}/tune-gpt3
  ${TUNE} ${PROJECT_SOURCE_DIR}/inputs/tune/gpt3-256.yaml --
  ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/gpt3.yaml --set hardware=tpuv4-sim
  --set train.emulate_only=true --set model.sequences=128 --set train.steps=2
  --out ${CMAKE_CURRENT_BINARY_DIR}/tune-gpt3/train)
set_tests_properties(tune_gpt3_plan_emulated PROPERTIES PASS_REGULAR_EXPRESSION
  "the choice is [0-9.]+% slower.*step 2/2  \\| TPUv4-sim [0-9.]+ ms.*PASS")
# The joint planner for GPT-3's 96 blocks on 256 chips, planned for a bf16 run (2-byte elements,
# recorded in the plan); its plan's step emulated without data in bf16.
meshslice_app_test(tune_planner_gpt3_emulated 1 ${CHECK_TUNE} ${CMAKE_CURRENT_BINARY_DIR}/tune-planner
  ${TUNE} ${PROJECT_SOURCE_DIR}/inputs/tune/gpt3-256.yaml --set mode=plan --set precision=bf16 --
  ${MESHSLICE_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} @PP@ ${MESHSLICE_MPIEXEC_FLAGS}
  ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/gpt3.yaml --set hardware=tpuv4-sim
  --set train.emulate_only=true --set model.blocks=96 --set train.steps=2
  --set train.precision=bf16 --out ${CMAKE_CURRENT_BINARY_DIR}/tune-planner/train)
set_tests_properties(tune_planner_gpt3_emulated PROPERTIES PASS_REGULAR_EXPRESSION
  "planned at 2-byte elements \\(precision bf16\\).*configurations fit. rejected: .*memory.*best: dp.*at 2-byte elements \\(train.precision bf16\\).*step 2/2  \\| TPUv4-sim [0-9.]+ ms.*PASS")
# Calibration of this machine (short), and the tuner and the emulator on its description.
meshslice_app_test(tune_calibrate 2 ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_calibrate.sh
  ${CMAKE_CURRENT_BINARY_DIR}/tune-calibrate ${TUNE} $<TARGET_FILE:meshslice-sim> ${MPI2})
meshslice_app_test(tune_laptop_plan_trains 2 ${CHECK_TUNE} ${CMAKE_CURRENT_BINARY_DIR}/tune-laptop
  ${TUNE} ${PROJECT_SOURCE_DIR}/inputs/tune/laptop.yaml --
  ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/tune-laptop/train 20 ${MPI2} ${TRAIN} ${SHORT_TRAIN}
  --set train.steps=20)

# A run that fails into the output folder of a finished one leaves that run's files as they were
# (deck.yaml is put in place only when a run succeeds) and no partial file behind.
meshslice_app_test(failed_run_keeps_previous_outputs 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_failed_run_keeps_outputs.sh
  ${CMAKE_CURRENT_BINARY_DIR}/keep-outputs ${MPI2} ${TRAIN} --set train.steps=2)
# An exception inside a plan's run on one rank (rank 1 of 4, its 30th collective: mid-step,
# with MeshSlice's slices in flight and its peers waiting) ends the whole job within 30 s.
meshslice_app_test(fault_in_plan_ends_job 4
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_fault_ends_job.sh ${CMAKE_CURRENT_BINARY_DIR}/fault 30
  ${MPI4} ${TRAIN} --set mesh.rows=2 --set mesh.cols=2 --set train.steps=20
  --set debug.fail_at_collective=30 --set debug.fail_on_rank=1)
# An interrupted run stops after a step with a checkpoint, status 75 and no summary: SIGUSR1 to
# mpiexec (passed on to every rank, as the Slurm script does before the time limit), and SIGTERM
# to one rank of four (the ranks agree to stop together).
set(INTERRUPTED ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_interrupted_run.sh)
meshslice_app_test(interrupted_run_saves_a_checkpoint 2
  ${INTERRUPTED} ${CMAKE_CURRENT_BINARY_DIR}/interrupted USR1 launcher
  ${MPI2} ${TRAIN} --set train.steps=100000 --set train.log_every=1)
meshslice_app_test(terminated_rank_stops_every_rank 4
  ${INTERRUPTED} ${CMAKE_CURRENT_BINARY_DIR}/terminated TERM one-rank
  ${MPI4} ${TRAIN} --set mesh.rows=2 --set train.steps=100000 --set train.log_every=1)
# Ranks that disagree on what to run (another --set, another file of the same name) end the job
# before it starts, naming what differs (core/agreement.hpp).
meshslice_app_test(ranks_that_disagree_end_the_job 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_ranks_disagree.sh ${CMAKE_CURRENT_BINARY_DIR}/disagree
  $<TARGET_FILE:meshslice-train> ${PROJECT_SOURCE_DIR}/inputs/train/laptop.yaml
  ${MESHSLICE_MPIEXEC} ${MESHSLICE_MPIEXEC_FLAGS})
# A diverging run (a learning rate that blows the weights up) stops with one error naming the
# step and the first non-finite gradient, or skips the bad updates up to train.max_skipped.
meshslice_app_test(nonfinite_steps_stop_or_skip 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_nonfinite.sh ${CMAKE_CURRENT_BINARY_DIR}/nonfinite
  ${MPI2} ${TRAIN})
# A long hardware-mode run (real and emulated executors together) holds no more memory than a
# short one: executors retire their operations when waited.
meshslice_app_test(train_hardware_memory_stays_flat 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_memory_stays_flat.sh
  ${CMAKE_CURRENT_BINARY_DIR}/memory-flat 1000 ${MPI2} ${TRAIN} --set hardware=tpuv4-sim)
# What a training step launches is a budget (core/device_work_counter.hpp; a GPU pays each
# launch and fence in latency): bench-h1024 on one rank at most 200 kernel launches + BLAS calls
# per step, none per head, sequence or row block, at most 60 per block. With the GPU's attention
# kernel (fused): a CPU build's default, the BLAS blocks, makes a BLAS call per sequence, head and
# row block, which a CPU absorbs.
meshslice_app_test(train_step_launch_budget 1
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_step_budget.sh ${CMAKE_CURRENT_BINARY_DIR}/step-budget
  200 60 ${MESHSLICE_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 1 ${MESHSLICE_MPIEXEC_FLAGS} ${TRAIN}
  ${PROJECT_SOURCE_DIR}/inputs/train/bench-h1024.yaml --set mesh.cols=1 --set plan.attention=fused)
# A step waits on instances, never on the whole device: no global fence on 2 ranks, with its
# collectives in place and staged through host memory as on a GPU without a GPU-aware MPI.
meshslice_app_test(train_step_fences_on_instances 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_step_fences.sh ${CMAKE_CURRENT_BINARY_DIR}/step-fences
  ${MPI2} ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/bench-h1024.yaml)
# A hang becomes an error (core/flight_recorder.hpp): a fault injected on rank 1 (a skipped
# collective, one posted one element short, a sleep past the timeout) ends every rank within
# comm.timeout_seconds + 30 s, and meshslice-flight-report names the operation.
meshslice_app_test(flight_recorder_ends_hangs 4
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_flight_recorder.sh ${CMAKE_CURRENT_BINARY_DIR}/flight 5
  $<TARGET_FILE_DIR:meshslice-train>/meshslice-flight-report
  ${MPI4} ${TRAIN} --set mesh.rows=2 --set mesh.cols=2)
# Checkpoints end to end: a resume bit-identical to the straight run, another layout, SIGUSR1,
# a full disk, a rank killed while saving (tests/scripts/check_checkpoints.sh).
meshslice_app_test(checkpoints_resume 4
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_checkpoints.sh ${CMAKE_CURRENT_BINARY_DIR}/checkpoints
  $<TARGET_FILE:meshslice-train> ${PROJECT_SOURCE_DIR}/inputs/train/laptop.yaml
  ${MESHSLICE_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${MESHSLICE_MPIEXEC_FLAGS})

# TensorBoard event files, the loss plot and the time left, through a resume
# (tests/scripts/check_tensorboard_run.sh; the TensorBoard reader's check skips without it).
meshslice_app_test(train_tensorboard_and_plot 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_tensorboard_run.sh ${CMAKE_CURRENT_BINARY_DIR}/tensorboard
  ${MPI2} -- ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/laptop.yaml)
set_tests_properties(train_tensorboard_and_plot PROPERTIES SKIP_RETURN_CODE 77)

# meshslice-data: a folder of texts (with a copy, an empty file, links) becomes an indexed
# dataset that a Python reader of Megatron's format reads back as the files' bytes.
set(DATA_APP $<TARGET_FILE:meshslice-data>)
meshslice_app_test(data_prepares_text 1
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_data.sh ${CMAKE_CURRENT_BINARY_DIR}/data-out ${DATA_APP})
set_tests_properties(data_prepares_text PROPERTIES SKIP_RETURN_CODE 77)
# The language-model task end to end: a dataset of the repository's own text made by
# meshslice-data, then 40 steps of the LM deck on 1x2 (with greedy samples) and on 2x1 with a
# tied head (samples drawn at temperature 0.8; the held-out loss falls).
add_test(NAME train_lm_data COMMAND ${DATA_APP} ${PROJECT_SOURCE_DIR}/README.md
         ${PROJECT_SOURCE_DIR}/LICENSE --out ${CMAKE_CURRENT_BINARY_DIR}/lm-data/text)
set_tests_properties(train_lm_data PROPERTIES FIXTURES_SETUP lm_data LABELS app TIMEOUT 60)
set(LM_TRAIN ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/laptop-lm.yaml ${SHORT_TRAIN}
    --set data.prefix=${CMAKE_CURRENT_BINARY_DIR}/lm-data/text)
meshslice_app_test(train_lm_1x2 2 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-lm-1x2 40
  ${MPI2} ${LM_TRAIN} --set train.sample_every=20 --set train.sample_tokens=16)
meshslice_app_test(train_lm_tied_2x1 2 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-lm-2x1 40
  ${MPI2} ${LM_TRAIN} --set mesh.rows=2 --set model.tied_head=true --set train.sample_every=20
  --set train.sample_temperature=0.8)
# The tuner's plan for the LM deck's model, its head included, trained.
meshslice_app_test(tune_laptop_lm_plan_trains 2 ${CHECK_TUNE} ${CMAKE_CURRENT_BINARY_DIR}/tune-lm
  ${TUNE} ${PROJECT_SOURCE_DIR}/inputs/tune/laptop.yaml --set model.hidden=128
  --set model.seq_len=64 --set model.global_sequences=8 --set model.vocab=257 --
  ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/tune-lm/train 20 ${MPI2} ${LM_TRAIN}
  --set train.steps=20)
set_tests_properties(tune_laptop_lm_plan_trains PROPERTIES PASS_REGULAR_EXPRESSION
  "lm_head .128 -> 272, the vocabulary of 257 padded.*lm_head .128 -> 257.: Y-stn.*PASS")
# Llama's block (a SwiGLU MLP, grouped-query attention): the deck on 2x1, and the tuner's plan
# for it (QKV of 128 + 2 x 64 outputs, FF1 of 2 x 384, recorded in the plan) trained on 1x2.
set(LLAMA_TRAIN ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/laptop-llama.yaml ${SHORT_TRAIN}
    --set data.prefix=${CMAKE_CURRENT_BINARY_DIR}/lm-data/text)
meshslice_app_test(train_llama_2x1 2 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-llama-2x1 40
  ${MPI2} ${LLAMA_TRAIN} --set mesh.rows=2 --set train.sample_every=20 --set train.sample_tokens=16)
meshslice_app_test(tune_laptop_llama_plan_trains 2 ${CHECK_TUNE}
  ${CMAKE_CURRENT_BINARY_DIR}/tune-llama ${TUNE} ${PROJECT_SOURCE_DIR}/inputs/tune/laptop.yaml
  --set model.hidden=128 --set model.seq_len=64 --set model.global_sequences=8
  --set model.vocab=257 --set model.heads=4 --set model.kv_heads=2 --set model.mlp=swiglu
  --set model.ffn_hidden=384 --
  ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/tune-llama/train 20 ${MPI2} ${LLAMA_TRAIN}
  --set train.steps=20)
set_tests_properties(tune_laptop_llama_plan_trains PROPERTIES PASS_REGULAR_EXPRESSION
  "swiglu MLP of width 384.*qkv .*M=512 N=256 K=128.*ff1 .*M=512 N=768 K=128.*PASS")
# The Llama deck's checkpoint exported (meshslice-export) and run by Hugging Face transformers:
# its logits, loss and greedy continuation are meshslice's (skipped without torch and
# transformers: tests/scripts/check_export_llama.sh says where it looks for them).
meshslice_app_test(export_llama_runs_in_transformers 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_export_llama.sh ${CMAKE_CURRENT_BINARY_DIR}/export-llama
  $<TARGET_FILE:meshslice-export> $<TARGET_FILE:meshslice-test-reference-logits> ${MPI2} --
  ${LLAMA_TRAIN})
set_tests_properties(export_llama_runs_in_transformers PROPERTIES SKIP_RETURN_CODE 77)
set_tests_properties(train_lm_1x2 train_lm_tied_2x1 tune_laptop_lm_plan_trains train_llama_2x1
  export_llama_runs_in_transformers
  tune_laptop_llama_plan_trains PROPERTIES FIXTURES_REQUIRED lm_data)
meshslice_app_test(data_help 1 ${DATA_APP} --help)
set_tests_properties(data_help PROPERTIES PASS_REGULAR_EXPRESSION
  "usage: meshslice-data .--out PREFIX. .--held-out FRACTION. .--seed N. FILE_OR_DIR.*MMIDIDX")

# The deck reference pages docs/decks/<app>.md are generated from each app's --help
# (scripts/deck-reference.sh): a page that differs from what its app prints fails, with the diff
# and the command that regenerates the pages.
meshslice_app_test(deck_reference_pages 1
  ${PROJECT_SOURCE_DIR}/scripts/deck-reference.sh --check $<TARGET_FILE_DIR:meshslice-train>
  ${PROJECT_SOURCE_DIR}/docs/decks)
set_tests_properties(deck_reference_pages PROPERTIES TIMEOUT 60)
