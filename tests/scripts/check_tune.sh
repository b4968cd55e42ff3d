#!/usr/bin/env bash
# check_tune.sh OUT TUNE_COMMAND... -- TRAIN_COMMAND...: runs meshslice-tune writing to OUT/tune
# and checks its tables and files (OUT/tune/tune.csv with a row per usable mesh and GEMM, one
# best mesh; OUT/tune/plan.yaml with a mesh and four layers, five with a language model's head
# when the tune command sets model.vocab), then runs TRAIN_COMMAND with the
# plan appended (--set plan=OUT/tune/plan.yaml, the shorthand) and checks that the
# run took the plan's mesh. TRAIN_COMMAND is run as given, so it may be a checker such as
# check_train.sh that appends --out itself; a word @PP@ in it becomes the plan's mesh.pp (the
# ranks a data-free emulation needs). In mode plan, OUT/tune/planner.csv is checked as well.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
shift
tune=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do tune+=("$1"); shift; done
shift
rm -rf "$out"
output=$(timeout 120 "${tune[@]}" --out "$out/tune" 2>&1)
status=$?
echo "$output"
[ "$status" -eq 0 ] || fail "meshslice-tune exit status $status"
plan=$out/tune/plan.yaml
[ -f "$plan" ] || fail "no plan.yaml"
if grep -q 'mode=plan' <<<"${tune[*]}"; then
  for line in 'Joint planner: ' 'configurations fit. rejected: ' '^best: dp'; do
    grep -Eq "$line" <<<"$output" || fail "no line matching '$line'"
  done
  python3 - "$out/tune/planner.csv" <<'PY' || fail "planner.csv wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and rows[0]["rank"] == "1" and rows[0]["why_slower"] == "-", rows[:1]
steps = [float(r["step_seconds"]) for r in rows]
assert steps == sorted(steps), steps
PY
else
  for line in 'Phase 1 \(dataflow and sharding\)' 'Phase 2 \(mesh shape and S per GEMM\)' '^best: ' \
              'tuned in [0-9.e-]+ s'; do
    grep -Eq "$line" <<<"$output" || fail "no line matching '$line'"
  done
  [ -f "$out/tune/tune.csv" ] || fail "no tune.csv"
  python3 - "$out/tune/tune.csv" "$plan" <<'PY' || fail "tune.csv or plan.yaml wrong"
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
best = {(r["rows"], r["cols"]) for r in rows if r["best"] == "1"}
assert len(best) == 1, best
assert sum(r["best"] == "1" for r in rows) == 12, "the best mesh has 12 GEMMs"
for r in rows:
    assert int(r["slices"]) >= 1 and float(r["predicted_seconds"]) > 0, r
text = open(sys.argv[2]).read()
rows_, cols_ = best.pop()
assert re.search(r"^  rows: %s$" % rows_, text, re.M) and re.search(r"^  cols: %s$" % cols_, text, re.M), text
PY
fi
# A language model's plan (model.vocab) adds its head.
head=0
if grep -q 'model.vocab=' <<<"${tune[*]}"; then head=1; fi
grep -Eq "^layers: \[('(qkv|attn_out|ff1|ff2) [YXW]t? meshslice S=[0-9/]+ B=[0-9/]+'(, )?){4}('lm_head [YX] meshslice S=[0-9/]+ B=[0-9/]+'){$head}\]$" "$plan" ||
  fail "plan.yaml lacks its four layers (and a language model's head)"
key() { python3 -c "import re,sys; print(re.search(r'^  %s: (\d+)' % sys.argv[2], open(sys.argv[1]).read(), re.M).group(1))" "$plan" "$1"; }
rows=$(key rows)
pp=$(key pp)
command=()
for word in "$@"; do command+=("${word//@PP@/$pp}"); done
output=$("${command[@]}" --set "plan=$plan" 2>&1)
status=$?
echo "$output"
[ "$status" -eq 0 ] || fail "meshslice-train with the plan: exit status $status"
grep -Eq "plan file .*plan.yaml sets .*mesh.dp = [0-9]+, mesh.pp = $pp, mesh.rows = $rows," <<<"$output" ||
  fail "the training run did not take the plan's mesh"
echo "PASS"
