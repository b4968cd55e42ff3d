#!/usr/bin/env bash
# The GPU check in one call, within about 8 minutes, on a GPU machine that has CUDA, MPI and a
# PyTorch but nothing of meshslice's: it runs a CUDA build made elsewhere and copied here.
#
#   scripts/gpu-check.sh pack BUILD_DIR [PREFIX...]   on the build machine: BUILD_DIR's binaries
#                                                     and tests, the install PREFIXes (Kokkos,
#                                                     KokkosKernels, Teuchos) and ScaLAPACK's
#                                                     library into .device/ (about 22 MB)
#   scripts/gpu-check.sh run                          on the GPU machine, in the repository root
#   scripts/gpu-check.sh profile                      there: step 3 alone, for more decks
#
# Build first with -DMESHSLICE_NATIVE=OFF (the GPU machine's CPU is another):
#   BUILD_DIR=build-cuda CMAKE_ARGS=-DMESHSLICE_NATIVE=OFF scripts/check-kokkos.sh PREFIX cuda ...
# `run` restores the prefixes and the build at the paths they were made at, then, each step under
# its own time limit, prints:
#   1. the GPU and a fast subset of the suite (the unit tests with the attention kernels', the
#      one-rank transformer and language-model tests, a 2x1 transformer, the vocabulary, one GEMM,
#      FC-layer and collectives test, the launch budget: about a minute on an H200);
#   2. scripts/bench-train.sh DEVICE=cuda for bench-h1024 and bench-h4096 on 1 rank and on 2
#      ranks sharing the GPU (through MPS where the machine has it): step time against the ideal at the cuBLAS rate measured in the same
#      run, tokens/s against PyTorch in float32 without TF32 on the same GPU, the device work per
#      step;
#   3. where the time of a bench-h1024 step goes: each kernel's, BLAS call's and fence's time in
#      the best step, by name, with CUDA_LAUNCH_BLOCKING=1 (launches wait for their kernels, so a
#      launch's host time is its kernel's; `profile` adds bench-h1024 on 2 ranks, bench-h4096 and
#      the laptop language-model deck);
#   4. the laptop language-model deck (inputs/train/laptop-lm.yaml, 2 ranks, 300 steps) on the
#      GPU, to set beside the same command on 2 CPU cores;
#   5. meshslice-bench at 8192 x 8192 x 2048 on 1x2: MeshSlice against Collective and the share
#      of communication hidden (hidden_comm_fraction);
#   6. the bf16 local GEMM (cublasGemmEx, and bf16 widened to float) against cuBLAS's sgemm at
#      8192 x 8192 x 4096 (meshslice-bench's local_gemm mode), and in step 1 the bf16 tests.
#   7. bench-h4096 on 1 rank in bf16 and tf32 beside float, against PyTorch's bf16 autocast and
#      its TF32 (after step 2);
#   8. bench-h1024 and bench-h4096 on 1 rank with each attention kernel (plan.attention: the
#      fused kernels, and the BLAS blocks as one strided-batched cuBLAS call per block and
#      product), the BLAS blocks' step over the fused one's: which is the GPU's default to be
#      (block/block_work.cpp's default_attention_kernel).
# Every figure is a ratio from this one run (the laptop deck's CPU time excepted). A summary at
# the end repeats each step's figures and failures (the whole output is in
# /tmp/gpu-check-run.log or -profile.log). Environment:
# BUDGET_S (seconds for all, default 470), TORCH_PYTHON (default the python3 on PATH).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pack=$repo/.device

case "${1:-}" in
  pack)
    build=$(cd "${2:?usage: $0 pack BUILD_DIR [PREFIX...]}" && pwd)
    shift 2
    mkdir -p "$pack"
    echo "$build" >"$pack/build-path"
    # The binaries, the test files ctest reads and the prefixes, at their absolute paths.
    tar -C / -cJf "$pack/build.tar.xz" --exclude='*.o' --exclude='*.a' --exclude='CMakeFiles/*.dir' \
      "${build#/}" "${@#/}"
    # ScaLAPACK (meshslice-bench's peer), which a GPU machine rarely has: looked for last there.
    rm -rf "${pack:?}/lib" && mkdir -p "$pack/lib"
    ldd "$build"/bin/* 2>/dev/null | awk '/libscalapack/ {print $3}' | sort -u |
      xargs -r cp -L -t "$pack/lib"
    du -sh "$pack"
    exit 0 ;;
  run | profile) ;;
  *) echo "usage: $0 pack BUILD_DIR [PREFIX...] | run | profile" >&2; exit 2 ;;
esac

[ -f "$pack/build.tar.xz" ] || { echo "gpu-check: no $pack/build.tar.xz (run '$0 pack' first)" >&2; exit 2; }
start=$SECONDS
# The whole output also goes to a log, so that the summary at the end can repeat its figures: a
# caller that keeps only the output's tail (a remote runner) still gets every step's result.
log=/tmp/gpu-check-$1.log
exec > >(tee "$log") 2>&1
summary() {
  sleep 1  # tee's last lines
  cp "$log" "$log.done"
  echo "== gpu-check: summary (the full output: $log)"
  grep -E "tests passed|tests failed|Failed|^== [a-z0-9]+, [a-z0-9]+, [0-9] rank|over float: |tokens/s [0-9]+ vs|^-- |busiest step:|^ +[0-9.]+ ms  |step 300/|communication hidden|speed-up|  bf16 |exit [1-9][0-9]* after" \
    "$log.done" || true
}
budget=${BUDGET_S:-470}
left() { echo $((budget - (SECONDS - start))); }
step() {  # step NAME SHARE COMMAND...: runs COMMAND within SHARE of the seconds left
  local name=$1 share=$2
  shift 2
  local limit=$(($(left) * share / 100))
  echo "== gpu-check: $name (at most ${limit} s)"
  timeout --signal=TERM --kill-after=10 "$limit" "$@"
  echo "== gpu-check: $name: exit $? after $((SECONDS - start)) s in all"
}

tar -C / -xJf "$pack/build.tar.xz"
build=$(cat "$pack/build-path")
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
# The build names its sources by the path it was configured at.
if [ "$source_dir" != "$repo" ] && [ ! -e "$source_dir" ]; then
  mkdir -p "$(dirname "$source_dir")"
  ln -s "$repo" "$source_dir"
fi
# KokkosKernels' CMake names cuBLAS under /usr/local/cuda/lib.
[ -e /usr/local/cuda/lib ] || ln -s targets/x86_64-linux/lib /usr/local/cuda/lib 2>/dev/null

# The CUDA runtime and cuBLAS from the toolkit where the loader does not know them.
if ldd "$build/bin/meshslice-train" | grep -q "libcu.*not found"; then
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$pack/lib
ldd "$build/bin/meshslice-train" "$build/bin/meshslice-bench" | grep "not found"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# Ranks that share the GPU run through one MPS server: without it their processes' contexts take
# turns on the GPU (on an H200 the laptop LM deck on 2 ranks took 99 ms a step without MPS, 15.8
# ms with it).
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/gpu-check-mps CUDA_MPS_LOG_DIRECTORY=/tmp/gpu-check-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && echo "gpu-check: ranks share the GPU through MPS"
  trap 'echo quit | nvidia-cuda-mps-control' EXIT
else
  echo "gpu-check: no nvidia-cuda-mps-control: ranks sharing the GPU take turns on it"
fi
source "$repo/scripts/mpi-env.sh"
train="$build/bin/meshslice-train"
lm=/tmp/gpu-check-lm
lm_data() { "$build/bin/meshslice-data" /usr/share/common-licenses --out $lm/data/licenses >/dev/null; }
# kernel_times NAME RANKS DECK [ARGS...]: the deck's best step with every launch waiting for its
# kernel, its 12 largest times by name.
kernel_times() {
  local name=$1 ranks=$2 deck=$3
  shift 3
  echo "-- $name, $ranks rank(s), CUDA_LAUNCH_BLOCKING=1"
  CUDA_LAUNCH_BLOCKING=1 mpiexec -np "$ranks" $MESHSLICE_MPIEXEC_FLAGS "$train" "$repo/$deck" \
    --set checkpoint.at_end=false --set train.sample_every=0 "$@" --out "/tmp/gpu-check-times/$name" |
    grep -E "best step"
  python3 - "/tmp/gpu-check-times/$name/summary.json" <<'PY'
import json, sys
work = json.load(open(sys.argv[1]))["device_work_per_step"]
times = sorted(work["best_step_seconds_by_name"].items(), key=lambda kv: -kv[1])
print(f"   busiest step: {work['kernel_launches']} launches, {work['blas_calls']} BLAS calls, "
      f"{work['fences']} fences, {work['host_device_copies']} host-device copies; the step that "
      f"allocated most: {work.get('allocations_by_name') or 'none'}")
for name, seconds in times[:12]:
    print(f"   {seconds * 1e3:9.2f} ms  {name}")
PY
}
# attention_kernels DECK...: each deck's best step on 1 rank with either attention kernel.
attention_kernels() {
  local deck kernel
  for deck in "$@"; do
    for kernel in fused blas_blocks; do
      mpiexec -np 1 $MESHSLICE_MPIEXEC_FLAGS "$train" "$repo/inputs/train/$deck.yaml" \
        --set train.steps=4 --set checkpoint.at_end=false --set plan.attention=$kernel \
        --out "/tmp/gpu-check-attention/$deck-$kernel" | grep -E "best step"
    done
    python3 - "/tmp/gpu-check-attention/$deck" <<'PY'
import json, sys
run = {k: json.load(open(f"{sys.argv[1]}-{k}/summary.json")) for k in ("fused", "blas_blocks")}
f, b = run["fused"], run["blas_blocks"]
print(f"-- attention kernels, {sys.argv[1].rsplit('/', 1)[1]}: blas_blocks step "
      f"{b['best_step_seconds'] * 1e3:.1f} ms, fused {f['best_step_seconds'] * 1e3:.1f} ms: "
      f"blas_blocks {f['best_step_seconds'] / b['best_step_seconds']:.2f}x as fast; "
      f"{b['device_work_per_step']['blas_calls']} against {f['device_work_per_step']['blas_calls']} "
      f"BLAS calls a step")
PY
  done
}
export -f kernel_times lm_data attention_kernels
export train repo build lm MESHSLICE_MPIEXEC_FLAGS
if [ "${1:-}" = profile ]; then
  step "kernel times" 100 bash -c "lm_data && \
    kernel_times h1024-1 1 inputs/train/bench-h1024.yaml --set train.steps=3 && \
    kernel_times h1024-2 2 inputs/train/bench-h1024.yaml --set train.steps=3 && \
    kernel_times lm-2 2 inputs/train/laptop-lm.yaml --set data.prefix=$lm/data/licenses \
      --set train.steps=20 --set train.eval_every=0 && \
    kernel_times h4096-1 1 inputs/train/bench-h4096.yaml --set train.steps=3"
  echo "== gpu-check: done in $((SECONDS - start)) s"
  summary
  exit 0
fi
step "fast suite" 25 bash -c "cd '$build' && ctest --output-on-failure -j 8 --timeout 100 -R \
  '^(unit|train_step_launch_budget|train_step_fences_on_instances|transformer_1_1_1_1|transformer_1_1_2_1|language_model_1_1_1_1|vocab_parallel_1_1_2_2|gemm_1_1_2_2|fc_layer_1_1_2_2|collectives_1_1_2_2|bf16_gemm_operands_1_1_1_1|tf32_gemms_1_1_1_1|bench_local_gemm)\$'"
step "training benchmark" 50 env BUILD_DIR="$build" DEVICE=cuda RANKS="1 2" DECKS="teacher h4096" \
  PRECISIONS=float STEPS=4 TORCH2_PYTHON= OUT=/tmp/gpu-check-train bash "$repo/scripts/bench-train.sh"
step "bf16 and tf32 training benchmark" 30 env BUILD_DIR="$build" DEVICE=cuda RANKS=1 DECKS=h4096 \
  PRECISIONS="float bf16 tf32" STEPS=4 TORCH2_PYTHON= OUT=/tmp/gpu-check-train-bf16 \
  bash "$repo/scripts/bench-train.sh"
step "kernel times" 25 bash -c "kernel_times h1024-1 1 inputs/train/bench-h1024.yaml \
  --set train.steps=3"
step "attention kernels" 30 bash -c "attention_kernels bench-h1024 bench-h4096"
step "bf16 local GEMM" 10 "$build/bin/meshslice-bench" "$repo/inputs/bench/local-gemm.yaml" \
  --set local_gemm.M=[8192] --set local_gemm.N=[8192] --set local_gemm.K=[4096] \
  --out /tmp/gpu-check-local-gemm
step "laptop language model" 40 bash -c "lm_data && mpiexec -np 2 $MESHSLICE_MPIEXEC_FLAGS '$train' \
  '$repo/inputs/train/laptop-lm.yaml' --set data.prefix=$lm/data/licenses --set train.steps=300 \
  --set train.sample_every=0 --set checkpoint.at_end=false --out $lm/run | \
  grep -E 'step (1|250|300)/|best step|device work'"
step "GEMM benchmark" 95 bash -c "mpiexec -np 2 \$MESHSLICE_MPIEXEC_FLAGS \
  '$build/bin/meshslice-bench' '$repo/inputs/bench/gemm-gpu.yaml' --set gemm.M=[8192] \
  --set gemm.N=[8192] --set gemm.K=[2048] --set gemm.slices=[1,2,4] --out /tmp/gpu-check-gemm"
echo "== gpu-check: done in $((SECONDS - start)) s"
summary
