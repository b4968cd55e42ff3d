#!/usr/bin/env bash
# check_checkpoints.sh OUT TRAIN DECK MPIEXEC NP_FLAG [MPIEXEC_FLAGS...]: meshslice-train's
# checkpoints end to end, each run a new process as a user's would be:
#   1. 20 steps straight against 10, then a new job resuming for 10: train.csv's losses and
#      gradient norms and the final checkpoint's files are the same, byte for byte;
#   2. saved on 2x2, resumed on 1x2 x dp 2 (double): the losses match the straight 2x2 run's to
#      1e-9 relative (printed side by side); resumed with half the batch, the log says the steps
#      see other sequences than the saved run would have;
#   3. SIGUSR1 (a batch system's warning) stops the run after its step with a checkpoint and exit
#      status 75; --resume auto in the same OUT finishes it, train.csv complete;
#   4. a full disk during a save (a small tmpfs; skipped where none can be mounted): one error,
#      non-zero exit, and the previous checkpoint still resumes;
#   5. one rank killed (kill -9) while the run saves every step: the job ends within 30 s, non-zero,
#      and --resume auto goes on from the newest complete checkpoint.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1 train=$2 deck=$3 mpiexec=$4 np_flag=$5
shift 5
flags=("$@")
run() {  # run RANKS ARGS...: the training job, its output in the caller's redirection
  local ranks=$1
  shift
  "$mpiexec" "$np_flag" "$ranks" "${flags[@]}" "$train" "$deck" --set train.eval_every=0 \
    --set train.log_every=5 "$@"
}
run_in_background() {  # the same, mpiexec itself in the background ($! is its pid)
  local ranks=$1
  shift
  "$mpiexec" "$np_flag" "$ranks" "${flags[@]}" "$train" "$deck" --set train.eval_every=0 "$@" &
}
rows() { cut -d, -f1,2,4 "$1"; }  # step, loss, grad_norm
rm -rf "$out"
mkdir -p "$out"
cd "$out" || exit 1

echo "== 1. resumed in a new process: bit-identical"
run 2 --set train.steps=20 --out straight >straight.log 2>&1 || { cat straight.log; fail "straight run"; }
run 2 --set train.steps=10 --out split >first.log 2>&1 || { cat first.log; fail "first half"; }
run 2 --set train.steps=20 --out split --resume auto >second.log 2>&1 ||
  { cat second.log; fail "resumed half"; }
grep "resumed from" second.log
for f in model optimizer; do
  cmp straight/checkpoints/step-0000020/$f.safetensors split/checkpoints/step-0000020/$f.safetensors ||
    fail "$f.safetensors differs after resuming"
done
diff <(rows straight/train.csv) <(rows split/train.csv) || fail "train.csv differs after resuming"
echo "PASS: final model and optimizer files identical byte for byte, train.csv rows 1-20 identical"

echo "== 2. saved on 2x2, resumed on 1x2 x dp 2 (double)"
two_by_two=(--set train.precision=double --set mesh.rows=2 --set mesh.cols=2)
run 4 "${two_by_two[@]}" --set train.steps=20 --out square >square.log 2>&1 ||
  { cat square.log; fail "2x2 straight run"; }
run 4 "${two_by_two[@]}" --set train.steps=10 --out square-10 >square-10.log 2>&1 ||
  { cat square-10.log; fail "2x2 first half"; }
run 4 --set train.precision=double --set mesh.dp=2 --set mesh.rows=1 --set mesh.cols=2 \
  --set model.sequences=8 --set train.steps=20 --out dp2 \
  --resume square-10/checkpoints/latest >dp2.log 2>&1 || { cat dp2.log; fail "resume on dp 2"; }
grep "resumed from" dp2.log
python3 - square/train.csv dp2/train.csv <<'PY' || fail "losses of the resumed run differ"
import csv, sys
straight = {r["step"]: r for r in csv.DictReader(open(sys.argv[1]))}
resumed = list(csv.DictReader(open(sys.argv[2])))
print("step  loss 2x2 straight    loss resumed on 1x2 x dp2   relative difference")
worst = 0
for r in resumed:
    a, b = float(straight[r["step"]]["loss"]), float(r["loss"])
    worst = max(worst, abs(a - b) / abs(a))
    print(f"{r['step']:>4}  {a:.12f}  {b:.12f}  {abs(a - b) / abs(a):.1e}")
assert [r["step"] for r in resumed] == [str(s) for s in range(11, 21)], "rows 11 to 20 expected"
assert worst < 1e-9, worst
PY
echo "PASS: losses equal to 1e-9 relative"
! grep -q "other sequences" dp2.log || fail "a note of another data stream for the same global batch"
run 4 "${two_by_two[@]}" --set model.sequences=8 --set train.steps=12 --out half-batch \
  --resume square-10/checkpoints/latest >half-batch.log 2>&1 ||
  { cat half-batch.log; fail "resume with half the batch"; }
grep "other sequences" half-batch.log ||
  fail "no note that a resume with another global batch sees other sequences"

echo "== 3. SIGUSR1 stops with a checkpoint (exit 75); --resume auto finishes the run"
run_in_background 2 --set train.steps=3000 --set train.log_every=1 --out signal >signal.log 2>&1
job=$!
for _ in $(seq 1 600); do
  grep -q "step 5/" signal.log && break
  kill -0 "$job" 2>/dev/null || { cat signal.log; fail "the job ended before step 5"; }
  sleep 0.1
done
kill -USR1 "$job"
wait "$job"
status=$?
[ "$status" -eq 75 ] || { cat signal.log; fail "exit status $status after SIGUSR1, not 75"; }
stopped=$(readlink signal/checkpoints/latest)
[ -f signal/train.csv ] && [ ! -f signal/summary.json ] ||
  fail "a stopped run leaves train.csv and no summary.json"
echo "stopped at $stopped with exit 75"
run 2 --set train.steps=3000 --out signal --resume auto >signal-2.log 2>&1 ||
  { cat signal-2.log; fail "the resumed run"; }
grep "resumed from" signal-2.log
python3 - signal/train.csv <<'PY' || fail "train.csv of the stopped and resumed run is not steps 1 to 3000"
import csv, sys
steps = [int(r["step"]) for r in csv.DictReader(open(sys.argv[1]))]
assert steps == list(range(1, 3001)), (steps[:3], steps[-3:], len(steps))
PY
[ -f signal/summary.json ] || fail "no summary.json after the resumed run"
echo "PASS: stopped at $stopped, resumed, train.csv holds steps 1-3000 once each"

echo "== 4. a full disk during a save"
mkdir -p small
if mount -t tmpfs -o size=1800k tmpfs small 2>/dev/null; then
  run 2 --set train.steps=20 --set checkpoint.every=10 --set checkpoint.dir=small \
    --out full >full.log 2>&1
  status=$?
  [ "$status" -ne 0 ] || { cat full.log; umount small; fail "a full disk exited 0"; }
  grep "error" full.log | head -3
  [ "$(grep -c "error:" full.log)" -eq 1 ] || { cat full.log; umount small; fail "not one error"; }
  [ -f small/step-0000010/trainer.json ] || { umount small; fail "the step-10 checkpoint is gone"; }
  run 2 --set train.steps=20 --set checkpoint.dir=small --set checkpoint.at_end=false \
    --out full --resume auto >full-2.log 2>&1 || { cat full-2.log; umount small; fail "resume"; }
  grep "resumed from" full-2.log
  umount small
  echo "PASS: exit $status, one error, step 10 resumed"
else
  echo "SKIPPED: cannot mount a tmpfs here (needs root)"
fi

echo "== 5. a rank killed while saving every step"
run_in_background 2 --set train.steps=100000 --set checkpoint.every=1 --set checkpoint.keep=2 \
  --set model.hidden=256 --set model.sequences=4 --out killed >killed.log 2>&1
job=$!
for _ in $(seq 1 600); do
  ls killed/checkpoints 2>/dev/null | grep -q "step-0000003" && break
  sleep 0.1
done
victim=$(pgrep -f "^$train .*--out killed" | head -1)  # a rank, not mpiexec
[ -n "$victim" ] || fail "no rank to kill"
for _ in $(seq 1 200); do  # try to land inside a save
  ls killed/checkpoints | grep -q partial && break
  sleep 0.005
done
partial=$(ls killed/checkpoints | grep partial)
kill -9 "$victim"
killed_at=$SECONDS
wait "$job"
status=$?
took=$((SECONDS - killed_at))
[ "$took" -le 30 ] || fail "the other rank outlived the killed one by $took s"
pkill -9 -f "^$train .*--out killed"  # none should be left; never leave one running
[ "$status" -ne 0 ] || fail "a job with a killed rank exited 0"
latest=$(readlink killed/checkpoints/latest)
echo "killed a rank with ${partial:-no save} in progress (latest complete: $latest); the job exited $status within $took s"
steps=$((10#${latest#step-} + 2))
run 2 --set train.steps=$steps --set model.hidden=256 --set model.sequences=4 --out killed \
  --resume auto >killed-2.log 2>&1 || { cat killed-2.log; fail "resuming after the kill"; }
grep -E "passes over|resumed from" killed-2.log
grep -q "resumed from killed/checkpoints/$latest" killed-2.log || fail "not resumed from $latest"
echo "PASS: resumed from $latest and trained to step $steps"
