#!/usr/bin/env bash
# check_interrupted_run.sh OUT COMMAND...: starts COMMAND (a long meshslice-train job) writing
# to OUT, interrupts it with SIGTERM once its first progress line is out (mpiexec passes it on to
# the ranks), and checks that the run stopped after a step with a complete checkpoint, its rows so
# far in train.csv, and no summary.json: nothing claims a finished run.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
shift
rm -rf "$out"
log=$(mktemp)
"$@" --out "$out" >"$log" 2>&1 &
job=$!
for _ in $(seq 1 600); do
  grep -q "step 1/" "$log" && break
  kill -0 "$job" 2>/dev/null || { cat "$log"; fail "the job ended before its first step"; }
  sleep 0.1
done
grep -q "step 1/" "$log" || fail "no first step within 60 s"
kill -TERM "$job"
wait "$job"
status=$?
cat "$log"
rm -f "$log"
[ "$status" -ne 0 ] || fail "the interrupted job exited 0"
[ ! -e "$out/summary.json" ] && [ ! -e "$out/summary.json.partial" ] ||
  fail "an interrupted run wrote a summary"
[ -f "$out/checkpoints/latest/trainer.json" ] || fail "no complete checkpoint after SIGTERM"
[ -f "$out/train.csv" ] || fail "no train.csv with the steps done"
echo "PASS: exit $status, checkpoint $(readlink "$out/checkpoints/latest"), $(($(wc -l <"$out/train.csv") - 1)) rows in train.csv"
