#!/usr/bin/env bash
# The training performance benchmark, two decks on 2 ranks, every figure from one run on the
# same cores:
#   teacher  inputs/train/bench-h1024.yaml (H = 1024, 2 blocks, 4 x 512 tokens, AdamW, float;
#            targets: step time <= 1.2x the ideal, tokens/s >= 1.35x PyTorch);
#   lm       inputs/train/bench-lm.yaml, the same blocks with RoPE as a language model (V =
#            32768, untied head) on the byte-level licence texts (targets: <= 1.25x the ideal,
#            >= 1.5x PyTorch); the dataset is made in OUT/data with meshslice-data if missing.
# For each deck:
#   1. meshslice-train's best step time against the ideal: the step's dense GEMM FLOPs (the
#      LM head's included) at 2 x the local GEMM peak it measured at start-up;
#   2. the same model in PyTorch (scripts/bench_train_torch.py) on each peer found: Debian's
#      python3-torch (TORCH_PYTHON, default /usr/bin/python3; apt-get install python3-torch) and
#      a PyTorch 2.x (TORCH2_PYTHON, the python of a virtual environment: python3 -m venv DIR &&
#      DIR/bin/pip install torch; unset: none), each at 1 and 2 threads with OpenMP's, OpenBLAS's and
#      MKL's thread counts all set to it (not mpi-env.sh's OPENBLAS_NUM_THREADS=1, which keeps
#      an OpenBLAS torch on one core whatever torch.set_num_threads says), the best of the two;
#      the tokens/s ratio against each, naming its torch, BLAS, attention and threads.
# Prints the ratios and writes OUT/bench-train.json. Environment: BUILD_DIR (default build), OUT
# (default out/bench-train), STEPS (default 6: the first of each run is not timed), DECKS
# (default "teacher lm"), TORCH_PYTHON, TORCH2_PYTHON (empty: skip that peer).
set -euo pipefail

# shellcheck source=scripts/bench-setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-setup.sh" meshslice-train meshslice-data
out=${OUT:-$repo/out/bench-train}
steps=${STEPS:-6}
decks=${DECKS:-teacher lm}
mkdir -p "$out"

# Python with torch: Debian's own python3 (a pyenv one earlier on PATH has no python3-torch),
# then a PyTorch 2.x in a virtual environment.
peers=()
for python in "${TORCH_PYTHON-/usr/bin/python3}" "${TORCH2_PYTHON-}"; do
  [[ -n $python && -x $python ]] || continue
  version=$("$python" -c "import torch; print(torch.__version__)" 2>/dev/null) || continue
  peers+=("$python")
  echo "== PyTorch peer: $python, torch $version"
done
[ ${#peers[@]} -gt 0 ] || echo "== PyTorch: none found (apt-get install python3-torch), no tokens/s ratio"

for name in $decks; do
  case $name in
    teacher) deck=$repo/inputs/train/bench-h1024.yaml; settings=(); model=(--task teacher) ;;
    lm)
      deck=$repo/inputs/train/bench-lm.yaml
      data=$out/data/licenses
      [ -f "$data.idx" ] || "$build/bin/meshslice-data" /usr/share/common-licenses --out "$data"
      settings=(--set data.prefix="$data")
      # 16: meshslice pads the vocabulary to a multiple of 8 x lcm(mesh rows, cols) = 8 x 2.
      model=(--task lm --vocab 32768 --vocab-multiple 16) ;;
    *) echo "unknown deck '$name' (DECKS: teacher, lm)" >&2; exit 1 ;;
  esac
  # The shape of both decks (bench_train_torch.py's must match the deck's).
  model+=(--hidden 1024 --heads 8 --blocks 2 --seq-len 512 --sequences 4)
  dir=$out/$name
  mkdir -p "$dir"
  rm -f "$dir"/torch-*.json
  echo "== $name: meshslice-train, 2 ranks, $deck"
  # shellcheck disable=SC2086  # the flags are words
  mpiexec -np 2 $MESHSLICE_MPIEXEC_FLAGS "$build/bin/meshslice-train" "$deck" \
    --set train.steps="$steps" --set checkpoint.at_end=false "${settings[@]}" \
    --out "$dir/meshslice" | grep -E "local GEMM peak|^.*step [0-9]+/|best step"
  for i in "${!peers[@]}"; do
    for threads in 1 2; do
      echo "== $name: PyTorch ${peers[$i]}, $threads thread(s)"
      result=$dir/torch-$i-$threads.json
      env -u OMP_PROC_BIND OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads" \
        MKL_NUM_THREADS="$threads" "${peers[$i]}" "$repo/scripts/bench_train_torch.py" \
        "${model[@]}" --steps "$steps" --threads "$threads" >"$result" 2>"$dir/torch-$i-$threads.log" ||
        { cat "$dir/torch-$i-$threads.log" >&2; exit 1; }
      cat "$result"
    done
  done
done

# The summary needs no torch: any python3.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" - "$out" "$decks" <<'PY'
import glob, json, os, sys
out, decks = sys.argv[1], sys.argv[2].split()
targets = {"teacher": (1.2, 1.35), "lm": (1.25, 1.5)}
result = {}
for name in decks:
    s = json.load(open(f"{out}/{name}/meshslice/summary.json"))
    step_target, torch_target = targets[name]
    r = {"step_seconds": s["best_step_seconds"], "ideal_step_seconds": s["ideal_step_seconds"],
         "step_over_ideal": s["best_step_seconds"] / s["ideal_step_seconds"],
         "step_over_ideal_target": step_target,
         "local_gemm_peak_gflops": s["local_gemm_peak_gflops"],
         "tokens_per_second": s["tokens_per_second"], "peers": []}
    print(f"== {name}: step time {r['step_seconds']:.3f} s, ideal {r['ideal_step_seconds']:.3f} s "
          f"(2 x {r['local_gemm_peak_gflops']:.1f} GFLOP/s): {r['step_over_ideal']:.2f}x the "
          f"ideal (target <= {step_target}x)")
    runs = [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{name}/torch-*.json"))]
    for python in sorted({run["python"] for run in runs}, key=lambda p: p != "/usr/bin/python3"):
        best = max((run for run in runs if run["python"] == python),
                   key=lambda run: run["tokens_per_second"])
        ratio = s["tokens_per_second"] / best["tokens_per_second"]
        r["peers"].append({"torch": best["torch"], "python": python, "best": best,
                           "runs": [run for run in runs if run["python"] == python],
                           "tokens_over_torch": ratio, "target": torch_target})
        print(f"   tokens/s {s['tokens_per_second']:.0f} vs PyTorch {best['torch']} "
              f"{best['tokens_per_second']:.0f} ({best['blas']}, {best['cpu_capability']}, "
              f"{best['attention']} attention; best at {best['threads']} thread(s): torch "
              f"{best['torch_threads']}, BLAS {best.get('blas_threads', '?')}): "
              f"{ratio:.2f}x (target >= {torch_target}x)")
    if not runs:
        print("   no PyTorch peer: no tokens/s ratio")
    result[name] = r
json.dump(result, open(os.path.join(out, "bench-train.json"), "w"), indent=2)
print(f"wrote {out}/bench-train.json")
PY
