#!/usr/bin/env bash
# check_tensorboard_run.sh OUT MPIEXEC... -- TRAIN [ARGS...]: meshslice-train's records beside
# train.csv, as a user opens them: a run of 10 steps (checkpoints and evaluations every 5), then
# a new job resuming from step 5 in the same OUT for 12 steps. Its OUT/tensorboard/ must hold,
# read by TensorBoard's own reader (tests/scripts/check_tensorboard.py), every value of the final
# train.csv at its step once: the first run's events after step 5 cut, the resumed run's
# appended. OUT/train.png must be there where gnuplot is installed. The Python with the
# tensorboard package is $MESHSLICE_CHECK_PYTHON (a virtual environment; .ci/run makes one),
# else python3; without the package that check is skipped (exit 77) after the others passed.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
shift
launcher=()
while [ "$1" != -- ]; do launcher+=("$1"); shift; done
shift
rm -rf "$out"
mkdir -p "$out"
common=(--set checkpoint.every=5 --set train.eval_every=5 --set train.log_every=1 --out "$out/run")
"${launcher[@]}" "$@" "${common[@]}" --set train.steps=10 >"$out/first.log" 2>&1 ||
  { cat "$out/first.log"; fail "first run"; }
"${launcher[@]}" "$@" "${common[@]}" --set train.steps=12 \
  --resume "$out/run/checkpoints/step-0000005" >"$out/resumed.log" 2>&1 ||
  { cat "$out/resumed.log"; fail "resumed run"; }
grep -E "time left [0-9]+s" "$out/resumed.log" | head -1 || fail "no time left on a progress line"
grep -E "wall time .*start-up .*training .*evaluation .*checkpoints .*other" "$out/resumed.log" ||
  fail "no wall-time split at the end"
ls "$out"/run/tensorboard/events.out.tfevents.* >/dev/null || fail "no event file"
if command -v gnuplot >/dev/null; then
  [ -s "$out/run/train.png" ] || fail "no OUT/train.png although gnuplot is installed"
  echo "train.png: $(stat -c %s "$out/run/train.png") bytes"
fi
python=${MESHSLICE_CHECK_PYTHON:-python3}
"$python" "$(dirname "${BASH_SOURCE[0]}")/check_tensorboard.py" "$out/run"
