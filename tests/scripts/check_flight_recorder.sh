#!/usr/bin/env bash
# check_flight_recorder.sh OUT TIMEOUT REPORT COMMAND...: the watchdog and the flight recorder
# end to end. COMMAND is meshslice-train on 4 ranks (2x2); REPORT is meshslice-flight-report.
#   healthy: a run with comm.timeout_seconds = TIMEOUT finishes, exit 0, and writes no dump;
#   for each fault debug.inject puts on rank 1 at its 40th operation (skip it, post it one element
#   short, sleep before it): every rank is gone within TIMEOUT + 30 s with a non-zero status, the
#   stuck ranks said what they waited for, their dumps are valid JSON, and the report names the
#   injected operation and the ranks' first disagreement or the operation that failed.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
timeout=$2
report=$3
shift 3
rm -rf "$out"
mkdir -p "$out"
limit=$((timeout + 30))

"$@" --set comm.timeout_seconds="$timeout" --set train.steps=4 --out "$out/healthy" \
  >"$out/healthy.log" 2>&1 || { cat "$out/healthy.log"; fail "healthy run failed"; }
! ls "$out/healthy"/flight-rank-*.json >/dev/null 2>&1 || fail "a healthy run wrote a dump"
echo "PASS: healthy run, no dump"

for fault in skip wrong_size sleep; do
  dir=$out/$fault
  start=$(date +%s)
  timeout --kill-after=5 $((3 * limit)) "$@" --set comm.timeout_seconds="$timeout" \
    --set debug.inject="$fault" --set debug.inject_at_op=40 --set debug.fail_on_rank=1 \
    --set train.steps=20 --out "$dir" >"$dir.log" 2>&1
  status=$?
  elapsed=$(($(date +%s) - start))
  [ "$status" -ne 0 ] || { cat "$dir.log"; fail "$fault: the job exited 0"; }
  [ "$status" -ne 124 ] && [ "$status" -ne 137 ] ||
    { cat "$dir.log"; fail "$fault: the job hung: killed after $((3 * limit)) s"; }
  [ "$elapsed" -le "$limit" ] || fail "$fault: the job took $elapsed s to end, more than $limit s"
  grep -q "^error on rank [0-3]: \(communication timeout\|MPI error\)" "$dir.log" ||
    { cat "$dir.log"; fail "$fault: no rank said what it was stuck in"; }
  grep -q "compare every rank's history with: meshslice-flight-report" "$dir.log" ||
    fail "$fault: the message does not say how to read the dumps"
  [ ! -e "$dir/summary.json" ] || fail "$fault: a summary of a failed run"
  "$report" "$dir" >"$dir.report" 2>&1 || { cat "$dir.report"; fail "$fault: the report failed"; }
  grep -q "injected on purpose: rank 1, op #[0-9]*: $fault" "$dir.report" ||
    { cat "$dir.report"; fail "$fault: the report does not name the injected operation"; }
  grep -q "^first disagreement: \|oldest outstanding: \|waiting for: " "$dir.report" ||
    { cat "$dir.report"; fail "$fault: the report names no operation"; }
  echo "PASS: $fault: exit $status after $elapsed s; $(grep -m1 "^error on rank" "$dir.log" | cut -c1-160)"
  grep "^first disagreement\|^  rank [0-9]: \(all\|reduce\|never\)\|oldest outstanding" "$dir.report" | head -4
done

"$report" "$out/healthy" >/dev/null 2>&1
[ $? -eq 2 ] || fail "the report on a folder without dumps did not exit 2"
echo "PASS: the report on a folder without dumps exits 2"
