#!/usr/bin/env bash
# The flight recorder's cost (issue target: a healthy step with the recorder and its watchdog on
# is within noise of one with them off). Runs meshslice-train on inputs/train/bench-h1024.yaml
# with 2 ranks, alternating off (comm.flight_recorder = 0: no recorder, no watchdog) and on (the
# defaults: 64 operations, 300 s), PAIRS times each, and prints every run's mean and best step
# time, the median of each mode and the ratio on / off, with the spread of the off runs as the
# noise to read it against. Writes OUT/bench-flight-recorder.json. Environment: BUILD_DIR
# (default build), OUT (default out/bench-flight-recorder), PAIRS (default 4), STEPS (default 6).
set -euo pipefail

# shellcheck source=scripts/bench-setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-setup.sh" meshslice-train
out=${OUT:-$repo/out/bench-flight-recorder}
pairs=${PAIRS:-4}
steps=${STEPS:-6}
deck=$repo/inputs/train/bench-h1024.yaml
rm -rf "$out"
mkdir -p "$out"

for pair in $(seq 1 "$pairs"); do
  for mode in off on; do
    settings=()
    [ "$mode" = on ] || settings=(--set comm.flight_recorder=0)
    mpiexec -np 2 $MESHSLICE_MPIEXEC_FLAGS "$build/bin/meshslice-train" "$deck" \
      --set train.steps="$steps" "${settings[@]}" --out "$out/$mode-$pair" >"$out/$mode-$pair.log"
    echo "run $pair, recorder $mode: $(grep -o 'best step [0-9.]* ms' "$out/$mode-$pair.log")"
  done
done

python3 - "$out" "$pairs" <<'PY'
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
runs = {mode: [json.load(open(f"{out}/{mode}-{p}/summary.json")) for p in range(1, pairs + 1)]
        for mode in ("off", "on")}
result = {}
for key in ("mean_step_seconds", "best_step_seconds"):
    off = [r[key] for r in runs["off"]]
    on = [r[key] for r in runs["on"]]
    result[key] = {"off": off, "on": on, "ratio_on_over_off": statistics.median(on) / statistics.median(off),
                   "off_spread": (max(off) - min(off)) / statistics.median(off)}
    print(f"{key}: median off {statistics.median(off):.4f} s, on {statistics.median(on):.4f} s: "
          f"on / off = {result[key]['ratio_on_over_off']:.3f} (the off runs spread by "
          f"{100 * result[key]['off_spread']:.1f}%)")
json.dump(result, open(f"{out}/bench-flight-recorder.json", "w"), indent=2)
PY
