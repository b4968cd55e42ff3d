#!/usr/bin/env bash
# The training performance benchmark (issue targets: step time <= 1.2x the ideal, tokens/s >=
# 1.35x PyTorch), both ratios from one run on the same cores:
#   1. meshslice-train on inputs/train/bench-h1024.yaml with 2 ranks: its best step time against
#      the ideal, the step's dense GEMM FLOPs at 2 x the local GEMM peak it measured at start-up;
#   2. when Debian's python3-torch is installed, the same model in PyTorch (best of 1 and 2
#      threads: torch.set_num_threads(1) does not keep oneDNN off the second core), and the
#      tokens/s ratio.
# Prints both and writes OUT/bench-train.json. Environment: BUILD_DIR (default build), OUT
# (default out/bench-train), STEPS (default 6).
set -euo pipefail

# shellcheck source=scripts/bench-setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-setup.sh" meshslice-train
out=${OUT:-$repo/out/bench-train}
steps=${STEPS:-6}
deck=$repo/inputs/train/bench-h1024.yaml
mkdir -p "$out"

echo "== meshslice-train, 2 ranks, $deck"
mpiexec -np 2 $MESHSLICE_MPIEXEC_FLAGS "$build/bin/meshslice-train" "$deck" \
  --set train.steps="$steps" --out "$out/meshslice" | grep -E "local GEMM peak|^.*step [0-9]+/|best step"

# Debian's own python3 (a pyenv one earlier on PATH has no python3-torch).
python=/usr/bin/python3
torch_runs=()
if "$python" -c "import torch" 2>/dev/null; then
  for threads in 1 2; do
    echo "== PyTorch, $threads thread(s)"
    torch_runs+=("$(OMP_NUM_THREADS=$threads "$python" "$repo/scripts/bench_train_torch.py" \
      --hidden 1024 --heads 8 --blocks 2 --seq-len 512 --sequences 4 --steps "$steps" \
      --threads "$threads")")
    echo "${torch_runs[-1]}"
  done
else
  echo "== PyTorch: not installed (apt-get install python3-torch), no tokens/s ratio"
fi

"$python" - "$out" "${torch_runs[@]}" <<'PY'
import json, sys
out = sys.argv[1]
s = json.load(open(out + "/meshslice/summary.json"))
result = {"step_seconds": s["best_step_seconds"], "ideal_step_seconds": s["ideal_step_seconds"],
          "step_over_ideal": s["best_step_seconds"] / s["ideal_step_seconds"],
          "local_gemm_peak_gflops": s["local_gemm_peak_gflops"],
          "tokens_per_second": s["tokens_per_second"]}
print(f"step time {result['step_seconds']:.3f} s, ideal {result['ideal_step_seconds']:.3f} s "
      f"(2 x {result['local_gemm_peak_gflops']:.1f} GFLOP/s): "
      f"{result['step_over_ideal']:.2f}x the ideal (target <= 1.2x)")
torch_runs = [json.loads(line) for line in sys.argv[2:]]
if torch_runs:
    best = max(torch_runs, key=lambda r: r["tokens_per_second"])
    result["torch"] = best
    result["tokens_over_torch"] = s["tokens_per_second"] / best["tokens_per_second"]
    print(f"tokens/s {s['tokens_per_second']:.0f} vs PyTorch {best['torch']} "
          f"{best['tokens_per_second']:.0f} ({best['threads']} thread(s)): "
          f"{result['tokens_over_torch']:.2f}x (target >= 1.35x)")
json.dump(result, open(out + "/bench-train.json", "w"), indent=2)
PY
