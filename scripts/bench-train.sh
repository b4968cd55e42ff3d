#!/usr/bin/env bash
# The training performance benchmark: meshslice-train against the same model in PyTorch, every
# figure from one run on the same cores (or the same GPU). Decks:
#   teacher  inputs/train/bench-h1024.yaml (H = 1024, 2 blocks, 4 x 512 tokens, AdamW, float;
#            CPU targets on 2 ranks: step time <= 1.15x the ideal, tokens/s >= 1.35x PyTorch);
#   lm       inputs/train/bench-lm.yaml, the same blocks with RoPE as a language model (V =
#            32768, untied head) on the byte-level licence texts (CPU targets: <= 1.05x the ideal,
#            >= 1.5x PyTorch); the dataset is made in OUT/data with meshslice-data if missing;
#   h4096    inputs/train/bench-h4096.yaml, a GPU-sized teacher (H = 4096, 32 heads, 2 blocks,
#            8 x 2048 tokens; GPU target on one rank: tokens/s >= 0.9x PyTorch).
# For each deck and each rank count in RANKS (a 1 x N mesh):
#   1. meshslice-train's best step time against the ideal: the step's dense GEMM FLOPs (the
#      LM head's included) at N x the local GEMM peak: the best of the lone GEMM timed at
#      start-up, the same timed again after the last step and, on a CPU, the rate the steps'
#      own GEMMs reached (apps/train/gemm_rates.hpp; ranks sharing one GPU time the lone GEMM
#      together, so N x theirs is the GPU's);
#   2. the same model in PyTorch (scripts/bench_train_torch.py) on each peer found: Debian's
#      python3-torch (TORCH_PYTHON, default /usr/bin/python3; apt-get install python3-torch) and
#      a PyTorch 2.x (TORCH2_PYTHON, the python of a virtual environment: python3 -m venv DIR &&
#      DIR/bin/pip install torch; unset: none). On the CPU each runs at 1 and 2 threads with
#      OpenMP's, OpenBLAS's and MKL's thread counts all set to it (not mpi-env.sh's
#      OPENBLAS_NUM_THREADS=1, which keeps an OpenBLAS torch on one core whatever
#      torch.set_num_threads says), the best of the two; on the GPU once, float32 without TF32;
#      the tokens/s ratio against each, naming its torch, BLAS, attention and threads;
#   3. each of these for each precision in PRECISIONS: float, and bf16 (meshslice-train's
#      train.precision bf16 against PyTorch's forward under torch.autocast in bfloat16, each
#      naming its bf16 GEMM library), and the bf16 step's speed-up over float's for both.
# Prints the ratios and writes OUT/bench-train.json. Environment: BUILD_DIR (default build), OUT
# (default out/bench-train), STEPS (default 6: the first of each run is not timed), DECKS
# (default "teacher lm"), RANKS (default 2), PRECISIONS (default "float bf16"; tf32 with
# DEVICE=cuda), DEVICE (cpu, or cuda for a CUDA build: the PyTorch peers run on the GPU,
# TORCH_PYTHON defaults to the python3 on PATH), TORCH_PYTHON,
# TORCH2_PYTHON (empty: skip that peer), TRAIN_ARGS (more meshslice-train arguments, e.g.
# "--set plan.attention=blas_blocks").
set -euo pipefail

# shellcheck source=scripts/bench-setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-setup.sh" meshslice-train meshslice-data
out=${OUT:-$repo/out/bench-train}
steps=${STEPS:-6}
decks=${DECKS:-teacher lm}
rank_counts=${RANKS:-2}
precisions=${PRECISIONS:-float bf16}
device=${DEVICE:-cpu}
case $device in
  cpu) default_python=/usr/bin/python3; peer_threads=(1 2) ;;
  cuda) default_python=$(command -v python3 || true); peer_threads=(1) ;;
  *) echo "DEVICE=$device: use cpu or cuda" >&2; exit 1 ;;
esac
for precision in $precisions; do
  case $precision in
    float | bf16) ;;
    tf32)
      [ "$device" = cuda ] ||
        { echo "PRECISIONS: tf32 is for DEVICE=cuda (a GPU tensor-core format)" >&2; exit 1; } ;;
    *) echo "PRECISIONS: unknown precision '$precision' (float, bf16, tf32)" >&2; exit 1 ;;
  esac
done
mkdir -p "$out"

# Python with torch: Debian's own python3 (a pyenv one earlier on PATH has no python3-torch),
# then a PyTorch 2.x in a virtual environment.
peers=()
for python in "${TORCH_PYTHON-$default_python}" "${TORCH2_PYTHON-}"; do
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
    h4096) deck=$repo/inputs/train/bench-h4096.yaml; settings=(); model=(--task teacher) ;;
    *) echo "unknown deck '$name' (DECKS: teacher, lm, h4096)" >&2; exit 1 ;;
  esac
  # The deck's shape (bench_train_torch.py's must match it).
  case $name in
    h4096) model+=(--hidden 4096 --heads 32 --blocks 2 --seq-len 2048 --sequences 8) ;;
    *) model+=(--hidden 1024 --heads 8 --blocks 2 --seq-len 512 --sequences 4) ;;
  esac
  for precision in $precisions; do
    dir=$out/$name/$precision
    mkdir -p "$dir"
    rm -rf "$dir"/torch-*.json "$dir"/meshslice-*
    for ranks in $rank_counts; do
      echo "== $name, $precision: meshslice-train, $ranks rank(s), $deck"
      # shellcheck disable=SC2086  # the flags are words
      mpiexec -np "$ranks" $MESHSLICE_MPIEXEC_FLAGS "$build/bin/meshslice-train" "$deck" \
        --set train.steps="$steps" --set train.precision="$precision" \
        --set checkpoint.at_end=false "${settings[@]}" ${TRAIN_ARGS:-} \
        --out "$dir/meshslice-$ranks" | grep -E "local GEMM peak|^.*step [0-9]+/|best step"
    done
    for i in "${!peers[@]}"; do
      for threads in "${peer_threads[@]}"; do
        echo "== $name, $precision: PyTorch ${peers[$i]}, $device, $threads thread(s)"
        result=$dir/torch-$i-$threads.json
        env -u OMP_PROC_BIND OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads" \
          MKL_NUM_THREADS="$threads" "${peers[$i]}" "$repo/scripts/bench_train_torch.py" \
          "${model[@]}" --steps "$steps" --threads "$threads" --device "$device" \
          --precision "$precision" >"$result" 2>"$dir/torch-$i-$threads.log" ||
          { cat "$dir/torch-$i-$threads.log" >&2; exit 1; }
        cat "$result"
      done
    done
  done
done

# The summary needs no torch: any python3.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" - "$out" "$decks" "$rank_counts" "$device" "$precisions" <<'PY'
import glob, json, os, sys
out, decks, rank_counts, device = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4]
precisions = sys.argv[5].split()
# (step time / ideal, tokens/s / PyTorch's) targets, and the rank count they are set for.
# The step-time targets are issue 42's: the CPU's step must not fall behind its ideal.
targets = {"cpu": {"teacher": (1.15, 1.35, 2), "lm": (1.05, 1.5, 2)},
           "cuda": {"teacher": (None, 0.9, 1), "h4096": (None, 0.9, 1)}}[device]
def target(ranks, name, index, sign, precision):
    t = targets.get(name)  # set for float
    if precision != "float" or t is None or t[index] is None or int(ranks) != t[2]:
        return ""
    return f" (target {sign} {t[index]}x)"
result = {"device": device}
for name, precision in ((n, p) for n in decks for p in precisions):
    runs = [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{name}/{precision}/torch-*.json"))]
    best_of = {}  # each peer's best run
    for python in sorted({run["python"] for run in runs}, key=lambda p: p != "/usr/bin/python3"):
        best_of[python] = max((run for run in runs if run["python"] == python),
                              key=lambda run: run["tokens_per_second"])
    for ranks in rank_counts:
        s = json.load(open(f"{out}/{name}/{precision}/meshslice-{ranks}/summary.json"))
        r = {"ranks": int(ranks), "step_seconds": s["best_step_seconds"],
             "ideal_step_seconds": s["ideal_step_seconds"],
             "step_over_ideal": s["best_step_seconds"] / s["ideal_step_seconds"],
             "local_gemm_peak_gflops": s["local_gemm_peak_gflops"],
             "local_gemm_rates_gflops": s.get("local_gemm_rates_gflops"),
             "tokens_per_second": s["tokens_per_second"], "peers": []}
        print(f"== {name}, {precision}, {ranks} rank(s): step time {r['step_seconds']:.4f} s, ideal "
              f"{r['ideal_step_seconds']:.4f} s ({ranks} x {r['local_gemm_peak_gflops']:.1f} "
              f"GFLOP/s): {r['step_over_ideal']:.2f}x the ideal"
              f"{target(ranks, name, 0, '<=', precision)}")
        rates = r["local_gemm_rates_gflops"]
        if rates:  # the measures the peak is the best of (apps/train/gemm_rates.hpp)
            in_step = f", the steps' own GEMMs {rates['in_step']:.1f}" if rates.get("in_step") else ""
            print(f"   the peak, the best of: the lone GEMM at start-up {rates['start_up']:.1f}, "
                  f"after the last step {rates['end']:.1f}{in_step} GFLOP/s")
        if s.get("blas"):
            print(f"   meshslice's BLAS: {s['blas']}")
        work = s.get("device_work_per_step")
        if work:
            print(f"   per step on rank 0: {work['kernel_launches']} kernel launches, "
                  f"{work['blas_calls']} BLAS calls, {work['copies']} copies "
                  f"({work['host_device_copies']} host-device); the step that allocated most: "
                  f"{work.get('allocations_by_name') or 'none'}")
            seconds = sorted(work.get("best_step_seconds_by_name", {}).items(),
                             key=lambda kv: -kv[1])
            if seconds:
                print("   host time of the best step most (the kernels' own where they block): " +
                      ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in seconds[:6]))
        for python, best in best_of.items():
            ratio = s["tokens_per_second"] / best["tokens_per_second"]
            r["peers"].append({"torch": best["torch"], "python": python, "best": best,
                               "runs": [run for run in runs if run["python"] == python],
                               "tokens_over_torch": ratio})
            print(f"   tokens/s {s['tokens_per_second']:.0f} vs PyTorch {best['torch']} "
                  f"{best['tokens_per_second']:.0f} ({best['blas']}, {best['cpu_capability']}, "
                  f"{best['attention']} attention; best at {best['threads']} thread(s): torch "
                  f"{best['torch_threads']}, BLAS {best.get('blas_threads', '?')}): "
                  f"{ratio:.2f}x{target(ranks, name, 1, '>=', precision)}"
                  + (f"; its bf16 GEMMs: {best['bf16_gemm']}" if best.get("bf16_gemm") else ""))
        if not runs:
            print("   no PyTorch peer: no tokens/s ratio")
        result[f"{name}-{precision}-{ranks}"] = r
        float_run = result.get(f"{name}-float-{ranks}")
        if precision != "float" and float_run:  # the same deck's float run, for the speed-up
            line = (f"   {precision} over float: meshslice step "
                    f"{float_run['step_seconds'] / r['step_seconds']:.2f}x faster")
            for peer in r["peers"]:
                floats = [p for p in float_run["peers"] if p["python"] == peer["python"]]
                if floats:
                    line += (f", PyTorch {peer['torch']} "
                             f"{peer['best']['tokens_per_second'] / floats[0]['best']['tokens_per_second']:.2f}x")
            print(line)
json.dump(result, open(os.path.join(out, "bench-train.json"), "w"), indent=2)
print(f"wrote {out}/bench-train.json")
PY
