#!/usr/bin/env bash
# check_train.sh OUT STEPS COMMAND...: runs a meshslice-train job writing to OUT and checks its
# results: exit 0, OUT/train.csv with a header and one row per step, OUT/summary.json, a final
# training and evaluation loss below the first ones, and the plan and memory lines in the log.
# When the command sets train.trace_steps: OUT/trace.json, valid JSON with each traced step and
# events on the compute lane and on every ring the mesh has (dp included). When it sets
# hardware: the emulated step beside the measured one in the progress lines, train.csv and
# summary.json, and OUT/trace_emulated.json of the traced steps. When it sets mesh.pp: the stage
# split and the bubble printed, the pipeline in summary.json and, traced, the stage-to-stage
# messages on the pp lane with the stages' waits for them. When it sets train.sample_every: the
# language model's sample after the last step.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
steps=$2
shift 2
rm -rf "$out"
output=$(timeout 280 "$@" --out "$out" 2>&1)
status=$?
echo "$output"
[ "$status" -eq 0 ] || fail "exit status $status"
[ -f "$out/train.csv" ] || fail "no train.csv"
rows=$(($(wc -l <"$out/train.csv") - 1))
[ "$rows" -eq "$steps" ] || fail "train.csv has $rows rows, want $steps"
[ -f "$out/summary.json" ] || fail "no summary.json"
grep -q '"memory_high_water_mib"' "$out/summary.json" || fail "summary.json lacks the memory high-water mark"
grep -q 'weight kept as' <<<"$output" || fail "no per-layer plan printed"
if [[ " $* " == *"train.sample_every="* ]]; then  # a language model's samples, last step's too
  grep -q "sample at step $steps: \"" <<<"$output" || fail "no sample after the last step"
fi
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
wanted = ["compute", "phases"] + (["dp ring"] if re.search("dp-tp|mesh.dp=2", sys.argv[2]) else [])
wanted += ["pp links"] if "mesh.pp=" in sys.argv[2] else []
for lane in wanted:
    assert lanes[lane] in used, "nothing on lane " + lane
if "mesh.pp=" in sys.argv[2]:
    assert any(e["name"] == "pipeline_wait" for e in events), "no pipeline waits traced"
PY
  ;;
esac
case "$*" in
*hardware=*)
  grep -q '| TPUv4-sim .* ms, comm exposed' <<<"$output" || fail "no emulated step in the progress lines"
  grep -q 'emulated TPUv4-sim step: best' <<<"$output" || fail "no emulated summary line"
  python3 - "$out" "$*" <<'PY' || fail "emulated results incomplete"
import csv, json, re, sys
out, command = sys.argv[1], sys.argv[2]
e = json.load(open(out + "/summary.json"))["emulated"]
assert e["machine"] == "TPUv4-sim", e
assert 0 < e["best_step_seconds"] <= e["mean_step_seconds"], e
assert 0 < e["flop_utilization"] < 1 and 0 <= e["mean_exposed_comm_fraction"] < 1, e
rows = list(csv.DictReader(open(out + "/train.csv")))
assert all(float(r["emulated_seconds"]) > 0 for r in rows), "train.csv lacks emulated_seconds"
if "trace_steps" in command:
    events = json.load(open(out + "/trace_emulated.json"))["traceEvents"]
    names = {e["name"] for e in events if e.get("ph") == "X"}
    for step in re.search(r"train.trace_steps=\[([0-9,]+)\]", command).group(1).split(","):
        assert "step " + step in names, "no emulated span of step " + step
    for name in ["gemm", "partial_all_gather", "all_reduce", "attention", "rmsnorm"]:
        assert name in names, "no emulated " + name
PY
  ;;
esac
case "$*" in
*mesh.pp=*)
  grep -q 'pipeline: .* stage(s) .* blocks .*ideal bubble' <<<"$output" || fail "no stage split printed"
  grep -q 'bubble [0-9]*%' <<<"$output" || fail "no bubble in the progress lines"
  python3 - "$out/summary.json" <<'PY' || fail "summary.json lacks the pipeline"
import json, sys
p = json.load(open(sys.argv[1]))["pipeline"]
assert p["stages"] > 1 and 0 <= p["mean_bubble_fraction"] < 1, p
PY
  ;;
esac
grep -q 'comm exposed' <<<"$output" || fail "no exposed-communication share in the progress lines"
echo "PASS"
