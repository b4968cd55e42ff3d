#!/usr/bin/env bash
# check_memory_stays_flat.sh OUT LONG COMMAND...: runs COMMAND (meshslice-train in hardware mode,
# where every op also goes to the emulated chip) for 10 steps and for LONG steps and compares the
# process high-water marks summary.json reports (the largest over the ranks): a long run may hold
# no more than 1 MiB above a short one. An executor that keeps something per operation for the
# life of the run (as the combined and emulating executors once did: 3.2 MiB more after
# 1,000 steps of the laptop deck) fails this.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
long=$2
shift 2
rm -rf "$out"
mkdir -p "$out"
quiet=(--set train.eval_every=0 --set train.log_every=1000000)
for steps in 10 "$long"; do
  "$@" "${quiet[@]}" --set train.steps="$steps" --out "$out/$steps" >"$out/$steps.log" 2>&1 ||
    { cat "$out/$steps.log"; fail "the $steps-step run failed"; }
done
python3 - "$out" "$long" <<'PY' || exit 1
import json, sys
out, long = sys.argv[1], sys.argv[2]
short = json.load(open(f"{out}/10/summary.json"))["memory_high_water_max_mib"]
after = json.load(open(f"{out}/{long}/summary.json"))["memory_high_water_max_mib"]
print(f"high-water mark: {short:.2f} MiB after 10 steps, {after:.2f} MiB after {long}: "
      f"{after - short:+.2f} MiB")
if after - short > 1.0:
    print(f"FAIL: the run grew by {after - short:.2f} MiB between step 10 and step {long}")
    sys.exit(1)
print("PASS")
PY
