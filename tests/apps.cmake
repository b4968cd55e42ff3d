# End-to-end tests of the executables: user-facing behaviour (exit codes, one clear error from
# rank 0, no hangs, result files). Included from tests/CMakeLists.txt.
set(BENCH $<TARGET_FILE:meshslice-bench>)
set(DECK ${PROJECT_SOURCE_DIR}/inputs/bench/collectives.yaml)
set(EXPECT_ERROR ${CMAKE_CURRENT_SOURCE_DIR}/scripts/expect_error.sh)

function(meshslice_app_test name ranks)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES PROCESSORS ${ranks} TIMEOUT 300
                       ENVIRONMENT "${MESHSLICE_MPI_ENV}" LABELS app)
endfunction()

set(MPI2 ${MESHSLICE_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 2 ${MESHSLICE_MPIEXEC_FLAGS})
set(MPI4 ${MESHSLICE_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} 4 ${MESHSLICE_MPIEXEC_FLAGS})

# A bad input that only some ranks may see: APP ARGS... on RANKS ranks must print PATTERN once,
# end without a hang, and exit non-zero on every rank (each rank's status recorded through
# rank_status.sh). IN_THE_WAY: a directory created first where an output file should go ("" for
# none).
set(RANK_STATUS ${CMAKE_CURRENT_SOURCE_DIR}/scripts/rank_status.sh)
function(meshslice_error_case name ranks pattern in_the_way app)
  set(status_dir ${CMAKE_CURRENT_BINARY_DIR}/rank-status/${name})
  add_test(NAME ${name} COMMAND ${EXPECT_ERROR} ${pattern} ${MESHSLICE_MPIEXEC}
           ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${MESHSLICE_MPIEXEC_FLAGS} ${RANK_STATUS} ${status_dir}
           ${app} ${ARGN})
  set_tests_properties(${name} PROPERTIES PROCESSORS ${ranks} TIMEOUT 300 LABELS app
    ENVIRONMENT "${MESHSLICE_MPI_ENV};RANK_STATUS_DIR=${status_dir};IN_THE_WAY=${in_the_way}")
endfunction()

meshslice_app_test(bench_collectives_runs 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_bench_collectives.sh ${CMAKE_CURRENT_BINARY_DIR}/bench-out
  ${MPI2} ${BENCH} ${DECK} --set collectives.max_kib=16 --set collectives.repetitions=2)

meshslice_app_test(bench_help 1 ${BENCH} --help)
set_tests_properties(bench_help PROPERTIES PASS_REGULAR_EXPRESSION "collectives\\.max_kib")

meshslice_app_test(error_mesh_mismatch 4 ${EXPECT_ERROR} "has 6 devices but the job has 4 MPI ranks"
  ${MPI4} ${BENCH} ${DECK} --set mesh.rows=2 --set mesh.cols=3 --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)
meshslice_app_test(error_unknown_key 2 ${EXPECT_ERROR} "mesh\\.rowz"
  ${MPI2} ${BENCH} ${DECK} --set mesh.rowz=2 --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)
meshslice_app_test(error_wrong_type 2 ${EXPECT_ERROR} "collectives\\.repetitions"
  ${MPI2} ${BENCH} ${DECK} --set collectives.repetitions=many --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)
meshslice_app_test(error_bad_choice 2 ${EXPECT_ERROR} "collectives\\.axis"
  ${MPI2} ${BENCH} ${DECK} --set collectives.axis=diagonal --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)
meshslice_app_test(error_bad_operation 2 ${EXPECT_ERROR} "unknown entry 'gossip'"
  ${MPI2} ${BENCH} ${DECK} --set collectives.operations=all_gather,gossip --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)
meshslice_app_test(error_missing_deck 2 ${EXPECT_ERROR} "no-such-deck\\.yaml"
  ${MPI2} ${BENCH} ${CMAKE_CURRENT_SOURCE_DIR}/no-such-deck.yaml --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)

# GEMM mode: small shapes, every algorithm of the default deck, verified, traced, on 1x2 (with
# the TPUv4 emulation of the same ops: combined mode) and 2x1.
set(GEMM_DECK ${PROJECT_SOURCE_DIR}/inputs/bench/gemm.yaml)
set(SMALL_GEMM --set gemm.M=256,512 --set gemm.N=192,384 --set gemm.K=128,256 --set gemm.repetitions=1)
meshslice_app_test(bench_gemm_1x2 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_bench_gemm.sh ${CMAKE_CURRENT_BINARY_DIR}/bench-gemm-1x2 12 yes
  ${MPI2} ${BENCH} ${GEMM_DECK} ${SMALL_GEMM} --set gemm.hardware=tpuv4)
meshslice_app_test(bench_gemm_2x1 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_bench_gemm.sh ${CMAKE_CURRENT_BINARY_DIR}/bench-gemm-2x1 12 no
  ${MPI2} ${BENCH} ${GEMM_DECK} ${SMALL_GEMM} --set mesh.rows=2)
meshslice_app_test(error_gemm_shape_lengths 2 ${EXPECT_ERROR} "must have the same length"
  ${MPI2} ${BENCH} ${GEMM_DECK} --set gemm.M=256 --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)
meshslice_app_test(error_gemm_unknown_algorithm 2 ${EXPECT_ERROR} "unknown GEMM algorithm 'fox'"
  ${MPI2} ${BENCH} ${GEMM_DECK} --set gemm.algorithms=meshslice,fox --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)
meshslice_app_test(error_gemm_unknown_machine 2 ${EXPECT_ERROR} "gemm.hardware = tpu99: no machine description named 'tpu99'"
  ${MPI2} ${BENCH} ${GEMM_DECK} --set gemm.hardware=tpu99 --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)

# meshslice-train: short runs of the laptop deck (1x2 and 2x1, one with an explicit plan that
# re-lays activations out) and of the dp x tp deck, with their result files; bad input.
set(TRAIN $<TARGET_FILE:meshslice-train>)
set(CHECK_TRAIN ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_train.sh)
set(SHORT_TRAIN --set train.steps=40 --set train.eval_every=20 --set train.log_every=10)
meshslice_app_test(train_help 1 ${TRAIN} --help)
set_tests_properties(train_help PROPERTIES PASS_REGULAR_EXPRESSION "plan\\.layers")
meshslice_app_test(train_laptop_1x2 2 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-1x2 40
  ${MPI2} ${TRAIN} ${SHORT_TRAIN})
meshslice_app_test(train_explicit_plan_2x1 2 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-plan 40
  ${MPI2} ${TRAIN} ${SHORT_TRAIN} --set mesh.rows=2 --set plan.source=layers
  "--set=plan.layers=qkv W meshslice S=2,attn_out Yt collective,ff1 Wt summa S=2,ff2 Yt wang")
meshslice_app_test(train_dp_tp 4 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-dp-tp 20
  ${MPI4} ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/dp-tp.yaml --set train.steps=20
  --set train.eval_every=10 --set train.trace_steps=[5,6])
# Hardware mode: the dp x tp deck's steps also timed on an emulated TPUv4, with a trace of both.
meshslice_app_test(train_hardware_tpuv4 4 ${CHECK_TRAIN} ${CMAKE_CURRENT_BINARY_DIR}/train-tpuv4 10
  ${MPI4} ${TRAIN} ${PROJECT_SOURCE_DIR}/inputs/train/dp-tp.yaml --set train.steps=10
  --set train.eval_every=5 --set train.trace_steps=[4] --set hardware=tpuv4)
set(TRAIN_ERR_OUT --out ${CMAKE_CURRENT_BINARY_DIR}/train-err-out)
meshslice_app_test(train_error_unknown_machine 2 ${EXPECT_ERROR} "hardware = tpu9: no machine description named 'tpu9'"
  ${MPI2} ${TRAIN} --set hardware=tpu9 ${TRAIN_ERR_OUT})
meshslice_app_test(train_error_heads_over_cols 2 ${EXPECT_ERROR} "heads do not divide over the 2 mesh columns"
  ${MPI2} ${TRAIN} --set model.hidden=60 --set model.heads=3 ${TRAIN_ERR_OUT})
meshslice_app_test(train_error_sequences_over_rows 2 ${EXPECT_ERROR} "sequences per replica do not divide over the 2 mesh rows"
  ${MPI2} ${TRAIN} --set mesh.rows=2 --set model.sequences=3 ${TRAIN_ERR_OUT})
meshslice_app_test(train_error_hidden_over_heads 2 ${EXPECT_ERROR} "not divisible by the 5 heads"
  ${MPI2} ${TRAIN} --set model.heads=5 ${TRAIN_ERR_OUT})
meshslice_app_test(train_error_bad_slices 2 ${EXPECT_ERROR} "layer qkv: FC layer"
  ${MPI2} ${TRAIN} --set plan.slices=7 ${TRAIN_ERR_OUT})
meshslice_app_test(train_error_unknown_algorithm 2 ${EXPECT_ERROR} "plan entry 'ff1 Y gossip'"
  ${MPI2} ${TRAIN} --set plan.source=layers
  "--set=plan.layers=qkv Y meshslice,attn_out Y meshslice,ff1 Y gossip,ff2 X meshslice" ${TRAIN_ERR_OUT})
meshslice_app_test(train_error_unknown_row 2 ${EXPECT_ERROR} "unknown row of Table 1 'Q'"
  ${MPI2} ${TRAIN} --set plan.source=layers
  "--set=plan.layers=qkv Q meshslice,attn_out Y meshslice,ff1 Y meshslice,ff2 X meshslice" ${TRAIN_ERR_OUT})
meshslice_app_test(train_error_plan_other_mesh 2 ${EXPECT_ERROR} "was made for mesh_cols = 4"
  ${MPI2} ${TRAIN} --set plan.source=file
  --set plan.file=${CMAKE_CURRENT_SOURCE_DIR}/data/plan-other-mesh.yaml ${TRAIN_ERR_OUT})

# Outputs only rank 0 writes, made impossible by a directory in their way; inputs that are
# directories. Rank 0 alone sees these while its peers go on: the job must still end on every
# rank with the one message.
set(IN_THE_WAY_OUT ${CMAKE_CURRENT_BINARY_DIR}/in-the-way)
meshslice_error_case(error_collectives_csv_is_a_directory 2
  "collectives.csv': a directory of that name is in the way" ${IN_THE_WAY_OUT}/collectives/collectives.csv
  ${BENCH} ${DECK} --set collectives.max_kib=16 --out ${IN_THE_WAY_OUT}/collectives)
meshslice_error_case(error_gemm_csv_is_a_directory 2
  "gemm.csv': a directory of that name is in the way" ${IN_THE_WAY_OUT}/gemm/gemm.csv
  ${BENCH} ${GEMM_DECK} ${SMALL_GEMM} --out ${IN_THE_WAY_OUT}/gemm)
meshslice_error_case(error_gemm_trace_is_a_directory 2
  "trace-collective-OS-1x2-M256N192K128-S1.json': a directory of that name is in the way"
  ${IN_THE_WAY_OUT}/trace/trace-collective-OS-1x2-M256N192K128-S1.json
  ${BENCH} ${GEMM_DECK} --set gemm.algorithms=collective --set gemm.M=256 --set gemm.N=192
  --set gemm.K=128 --set gemm.slices=1 --set gemm.repetitions=1 --out ${IN_THE_WAY_OUT}/trace)
meshslice_error_case(error_train_csv_is_a_directory 2
  "train.csv': a directory of that name is in the way" ${IN_THE_WAY_OUT}/train/train.csv
  ${TRAIN} --set train.steps=2 --out ${IN_THE_WAY_OUT}/train)
meshslice_error_case(error_deck_is_a_directory 2 "is not a regular file" ""
  ${BENCH} ${CMAKE_CURRENT_SOURCE_DIR} --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)
meshslice_error_case(error_machine_is_a_directory 2
  "hardware = .*: machine description '.*' is not a regular file" ""
  ${TRAIN} --set hardware=${CMAKE_CURRENT_SOURCE_DIR}/ --out ${CMAKE_CURRENT_BINARY_DIR}/err-out)
# A run that fails into the output folder of a finished one leaves that run's files as they were
# (deck.yaml is put in place only when a run succeeds) and no partial file behind.
meshslice_app_test(failed_run_keeps_previous_outputs 2
  ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_failed_run_keeps_outputs.sh
  ${CMAKE_CURRENT_BINARY_DIR}/keep-outputs ${MPI2} ${TRAIN} --set train.steps=2)
