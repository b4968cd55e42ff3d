#!/usr/bin/env bash
# The pipeline degree sweep of a GPT-3-sized step on 256 emulated TPUv4s: dp x pp x 8x8 with
# dp * pp = 4, the global batch fixed at 64 sequences of 2048 tokens, 8 blocks, 1F1B with
# micro-batches of one sequence per mesh row, each by meshslice-train's data-free emulation
# (one MPI rank per stage). Prints the emulated step, tokens/s and FLOP utilization per pp and
# writes OUT/sweep.csv. Environment: BUILD_DIR (default build), OUT (default
# out/sweep-pipeline-gpt3), BLOCKS (default 8).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
out=${OUT:-$repo/out/sweep-pipeline-gpt3}
blocks=${BLOCKS:-8}
# shellcheck source=scripts/mpi-env.sh
source "$repo/scripts/mpi-env.sh"
mkdir -p "$out"
echo "pp,dp,microbatches,emulated_step_seconds,tokens_per_second,flop_utilization" >"$out/sweep.csv"
printf "%4s %4s %4s %14s %12s %10s\n" pp dp m "step (ms)" "tokens/s" "FLOP util"
for pp in 1 2 4; do
  dp=$((4 / pp))
  sequences=$((64 / dp))
  m=$((sequences / 8))
  mpiexec -np "$pp" $MESHSLICE_MPIEXEC_FLAGS "$build/bin/meshslice-train" \
    "$repo/inputs/train/gpt3.yaml" --set hardware=tpuv4 --set train.emulate_only=true \
    --set mesh.dp=$dp --set mesh.pp=$pp --set model.blocks="$blocks" \
    --set model.sequences=$sequences --set pipeline.microbatches=$m --set train.steps=2 \
    --out "$out/pp$pp" >"$out/pp$pp.log"
  /usr/bin/python3 - "$out" "$pp" "$dp" "$m" <<'PY'
import json, sys
out, pp, dp, m = sys.argv[1:]
e = json.load(open(f"{out}/pp{pp}/summary.json"))["emulated"]
print(f"{pp:>4} {dp:>4} {m:>4} {1e3 * e['best_step_seconds']:14.1f} "
      f"{e['tokens_per_second']:12.0f} {100 * e['flop_utilization']:9.1f}%")
open(f"{out}/sweep.csv", "a").write(
    f"{pp},{dp},{m},{e['best_step_seconds']},{e['tokens_per_second']},{e['flop_utilization']}\n")
PY
done
