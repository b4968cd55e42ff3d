#!/usr/bin/env bash
# check_train.sh OUT STEPS COMMAND...: runs a meshslice-train job writing to OUT and checks its
# results: exit 0, OUT/train.csv with a header and one row per step, OUT/summary.json, a final
# training and evaluation loss below the first ones, and the plan and memory lines in the log.
set -u
out=$1
steps=$2
shift 2
rm -rf "$out"
output=$(timeout 280 "$@" --out "$out" 2>&1)
status=$?
echo "$output"
fail() { echo "FAIL: $*"; exit 1; }
[ "$status" -eq 0 ] || fail "exit status $status"
[ -f "$out/train.csv" ] || fail "no train.csv"
rows=$(($(wc -l <"$out/train.csv") - 1))
[ "$rows" -eq "$steps" ] || fail "train.csv has $rows rows, want $steps"
[ -f "$out/summary.json" ] || fail "no summary.json"
grep -q '"memory_high_water_mib"' "$out/summary.json" || fail "summary.json lacks the memory high-water mark"
grep -q 'weight kept as' <<<"$output" || fail "no per-layer plan printed"
grep -q 'memory per rank (model buffers)' <<<"$output" || fail "no memory estimate printed"
python3 - "$out/summary.json" <<'PY' || fail "losses did not fall"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["last_loss"] < s["first_loss"], s
assert s["last_eval_loss"] < s["first_eval_loss"], s
PY
echo "PASS"
