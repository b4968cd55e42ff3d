#!/usr/bin/env bash
# check_train.sh OUT STEPS COMMAND...: runs a meshslice-train job writing to OUT and checks its
# results: exit 0, OUT/train.csv with a header and one row per step, OUT/summary.json, a final
# training and evaluation loss below the first ones, and the plan and memory lines in the log.
# When the command sets train.trace_steps: OUT/trace.json, valid JSON with each traced step and
# events on the compute lane and on every ring the mesh has (dp included).
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
case "$*" in
*train.trace_steps*)
  python3 - "$out/trace.json" "$*" <<'PY' || fail "trace.json incomplete"
import json, re, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
lanes = {e["args"]["name"]: e["tid"] for e in events if e["name"] == "thread_name"}
used = {e["tid"] for e in events if e.get("ph") == "X"}
steps = re.search(r"train.trace_steps=\[([0-9,]+)\]", sys.argv[2]).group(1).split(",")
for step in steps:
    assert any(e["name"] == "step " + step for e in events), "no span of step " + step
for lane in ["compute", "phases"] + (["dp ring"] if "dp-tp" in sys.argv[2] else []):
    assert lanes[lane] in used, "nothing on lane " + lane
PY
  ;;
esac
grep -q 'comm exposed' <<<"$output" || fail "no exposed-communication share in the progress lines"
echo "PASS"
