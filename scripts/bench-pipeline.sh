#!/usr/bin/env bash
# The pipeline benchmark (issue targets: the measured bubble within 5 points of (p - 1) / (m + p - 1)
# for GPipe and 1F1B at p = 2 and m = 4, 8; 1F1B's activation memory <= GPipe's; activation
# checkpointing saving >= 50% of activation memory at <= 1.4x the step time), every figure from
# runs made one after the other on the same cores:
#   1. inputs/train/bench-pipeline.yaml (2 stages x 1x1) with GPipe, 1F1B and interleaved 1F1B
#      (v = 2) at 4 and 8 micro-batches: the bubble, the share of the pipeline's span (the common
#      start to the last stage's last message) the stages spent waiting for their neighbours,
#      averaged over the stages, in the fastest step (the least disturbed by other work on a
#      shared machine; the mean over steps 2.. beside it), against the theory, and
#      the saved activations of the rank that keeps the most (estimated) and the process
#      high-water mark (measured, the largest rank's);
#   2. inputs/train/bench-h1024.yaml without and with recompute.blocks = all, as it is
#      (2 blocks) and with 4 blocks;
#   3. the pipeline deck as dp 2 x 1x1 without stages, without and with ZeRO-1 (optimizer.zero).
# Prints both tables and writes OUT/bench-pipeline.json. Environment: BUILD_DIR (default
# build), OUT (default out/bench-pipeline).
set -euo pipefail

# shellcheck source=scripts/bench-setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-setup.sh" meshslice-train
out=${OUT:-$repo/out/bench-pipeline}
mkdir -p "$out"

train() {  # NAME DECK ARGS...: one run into $out/NAME
  local name=$1 deck=$2
  shift 2
  echo "== $name: $deck $*"
  mpiexec -np 2 $MESHSLICE_MPIEXEC_FLAGS "$build/bin/meshslice-train" "$deck" "$@" \
    --out "$out/$name" | grep -E "pipeline:|best step|checkpointing:"
}

schedules=()
for m in 4 8; do
  for schedule in gpipe 1f1b interleaved; do
    v=1
    [ "$schedule" = interleaved ] && v=2
    train "$schedule-m$m" "$repo/inputs/train/bench-pipeline.yaml" \
      --set pipeline.schedule=$schedule --set pipeline.microbatches=$m \
      --set pipeline.virtual_stages=$v
    schedules+=("$schedule-m$m")
  done
done
h1024=$repo/inputs/train/bench-h1024.yaml
train checkpointing-off "$h1024"
train checkpointing-all "$h1024" --set recompute.blocks=all
train checkpointing-off-4-blocks "$h1024" --set model.blocks=4
train checkpointing-all-4-blocks "$h1024" --set model.blocks=4 --set recompute.blocks=all
for zero in false true; do
  train "zero-$zero" "$repo/inputs/train/bench-pipeline.yaml" --set mesh.pp=1 --set mesh.dp=2 \
    --set optimizer.zero=$zero
done

/usr/bin/python3 - "$out" "${schedules[@]}" <<'PY'
import json, sys
out, names = sys.argv[1], sys.argv[2:]
def summary(name):
    return json.load(open(f"{out}/{name}/summary.json"))
result = {"bubble": [], "checkpointing": {}}
print("\nschedule     m  v  bubble (best step, mean)  theory  difference  activations MiB  "
      "high-water MiB  best step ms")
for name in names:
    s = summary(name)
    p, m, v = s["pipeline"]["stages"], s["pipeline"]["microbatches"], s["pipeline"]["virtual_stages"]
    theory = (p - 1) / (v * m + p - 1)
    measured = s["pipeline"]["best_step_bubble_fraction"]
    mean = s["pipeline"]["mean_bubble_fraction"]
    row = {"schedule": s["pipeline"]["schedule"], "microbatches": m, "virtual_stages": v,
           "bubble": measured, "mean_bubble": mean, "theory": theory, "difference_points": 100 * (measured - theory),
           "activation_mib": s["activation_memory_mib"],
           "high_water_mib": s["memory_high_water_max_mib"],
           "best_step_seconds": s["best_step_seconds"]}
    result["bubble"].append(row)
    print(f"{row['schedule']:<12} {m:>1} {v:>2}  {100 * measured:14.1f}% ({100 * mean:5.1f}%)  "
          f"{100 * theory:5.1f}%  "
          f"{row['difference_points']:+9.1f} pt  {row['activation_mib']:14.1f}  "
          f"{row['high_water_mib']:14.1f}  {1e3 * row['best_step_seconds']:12.1f}")
print(f"\ncheckpointing (bench-h1024)  activations MiB  high-water MiB  best step ms")
for blocks, suffix in ((2, ""), (4, "-4-blocks")):
    off, on = summary("checkpointing-off" + suffix), summary("checkpointing-all" + suffix)
    saved = 1 - on["activation_memory_mib"] / off["activation_memory_mib"]
    ratio = on["best_step_seconds"] / off["best_step_seconds"]
    result["checkpointing"][f"{blocks}_blocks"] = {
        "activation_mib": [off["activation_memory_mib"], on["activation_memory_mib"]],
        "high_water_mib": [off["memory_high_water_max_mib"], on["memory_high_water_max_mib"]],
        "best_step_seconds": [off["best_step_seconds"], on["best_step_seconds"]],
        "activation_saving": saved, "step_time_ratio": ratio}
    for label, s in (("off", off), ("all blocks", on)):
        print(f"{blocks} blocks, {label:<18} {s['activation_memory_mib']:15.1f}  "
              f"{s['memory_high_water_max_mib']:14.1f}  {1e3 * s['best_step_seconds']:12.1f}")
    print(f"{blocks} blocks: activation memory saved {100 * saved:.1f}% (target >= 50%), "
          f"step time {ratio:.2f}x (target <= 1.4x)")
print(f"\nZeRO-1 (dp 2 x 1x1)  optimizer state MiB  high-water MiB  best step ms  last loss")
result["zero"] = {}
for zero in ("false", "true"):
    s = summary("zero-" + zero)
    result["zero"][zero] = {"optimizer_state_mib": s["optimizer_state_mib"],
                            "high_water_mib": s["memory_high_water_max_mib"],
                            "best_step_seconds": s["best_step_seconds"], "last_loss": s["last_loss"]}
    print(f"{'on' if zero == 'true' else 'off':<20} {s['optimizer_state_mib']:19.2f}  "
          f"{s['memory_high_water_max_mib']:14.1f}  {1e3 * s['best_step_seconds']:12.1f}  "
          f"{s['last_loss']:.9g}")
json.dump(result, open(out + "/bench-pipeline.json", "w"), indent=2)
PY
