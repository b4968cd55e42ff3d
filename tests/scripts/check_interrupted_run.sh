#!/usr/bin/env bash
# check_interrupted_run.sh OUT SIGNAL launcher|one-rank COMMAND...: starts COMMAND (a long
# meshslice-train job under mpiexec) writing to OUT and, once its first progress line is out,
# sends SIGNAL either to the launcher (SIGUSR1: Open MPI's mpiexec passes it on to every rank,
# as the Slurm script passes on the one Slurm sends before the time limit) or straight to one
# rank (SIGTERM: what Slurm's step daemon sends the ranks at the limit, here to one of them only,
# so that the ranks must agree to stop). SIGTERM is not sent to
# mpiexec itself: Open MPI's launcher then ends the job on its own (SIGTERM, then SIGKILL to
# every rank a few seconds later), racing the save and, under load, sometimes never exiting.
# Checks that the run stopped after a step with status 75 (resumable), a complete checkpoint,
# its rows so far in train.csv, and no summary.json: nothing claims a finished run.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
signal=$2
target=$3
shift 3
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
case "$target" in
  launcher) kill "-$signal" "$job" ;;
  one-rank)
    rank=$(pgrep -P "$job" | tail -1) || fail "no rank processes under the launcher (pid $job)"
    kill "-$signal" "$rank" ;;
  *) fail "target must be launcher or one-rank, not '$target'" ;;
esac
status=0
wait "$job" || status=$?
cat "$log"
stopped=$(grep -c "stopped by signal" "$log")
rm -f "$log"
[ "$status" -eq 75 ] || fail "the interrupted job exited $status, not 75 (stopped, resumable)"
[ "$stopped" -eq 1 ] || fail "no 'stopped by signal' line from rank 0"
[ ! -e "$out/summary.json" ] && [ ! -e "$out/summary.json.partial" ] ||
  fail "an interrupted run wrote a summary"
[ -f "$out/checkpoints/latest/trainer.json" ] || fail "no complete checkpoint after SIG$signal"
[ -f "$out/train.csv" ] || fail "no train.csv with the steps done"
echo "PASS: exit $status, checkpoint $(readlink "$out/checkpoints/latest"), $(($(wc -l <"$out/train.csv") - 1)) rows in train.csv"
