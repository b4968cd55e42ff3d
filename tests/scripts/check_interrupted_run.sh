#!/usr/bin/env bash
# check_interrupted_run.sh OUT COMMAND...: starts COMMAND (a long meshslice-train job) writing
# to OUT, interrupts it with SIGTERM once its first progress line is out, and checks that no
# result file stands under its final name: only NAME.partial files, which show how far it got.
set -u
out=$1
shift
fail() { echo "FAIL: $*"; exit 1; }
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
final=$(find "$out" -type f ! -name '*.partial')
[ -z "$final" ] || fail "files under their final names after an interrupted run: $final"
[ -f "$out/train.csv.partial" ] || fail "no train.csv.partial showing how far the run got"
echo "PASS: exit $status, only partial files: $(cd "$out" && ls)"
