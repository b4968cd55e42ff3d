#!/usr/bin/env bash
# check_nonfinite.sh OUT COMMAND...: a run that diverges (COMMAND is meshslice-train on a deck
# whose learning rate blows the weights up in its first update) under train.on_nonfinite:
#   stop: one error naming step 2 and the first parameter with a non-finite gradient, exit 2 on
#         every rank, the step-1 checkpoint untouched and none written of the bad state;
#   skip: the bad steps' updates dropped and counted (progress lines, train.csv, summary.json),
#         then the same kind of error after train.max_skipped of them in a row.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
shift
rm -rf "$out"
mkdir -p "$out"
diverging=(--set optimizer.lr=10000 --set optimizer.warmup_steps=1 --set train.steps=20
           --set train.eval_every=0 --set train.log_every=1 --set checkpoint.every=1)

"$@" "${diverging[@]}" --out "$out/stop" >"$out/stop.log" 2>&1
status=$?
[ "$status" -eq 2 ] || { cat "$out/stop.log"; fail "stop: exit $status, not 2"; }
pattern="error: step 2: the loss is .* the first parameter with a non-finite gradient is blocks\."
[ "$(grep -c "$pattern" "$out/stop.log")" -eq 1 ] || { cat "$out/stop.log"; fail "stop: not one error naming step 2"; }
grep "$pattern" "$out/stop.log" | cut -c1-200
[ "$(readlink "$out/stop/checkpoints/latest")" = step-0000001 ] || fail "stop: latest is not step 1"
[ ! -e "$out/stop/checkpoints/step-0000002" ] || fail "stop: the bad state was saved"
[ ! -e "$out/stop/summary.json" ] || fail "stop: a summary of a failed run"
echo "PASS: stop"

"$@" "${diverging[@]}" --set train.on_nonfinite=skip --set train.max_skipped=3 --out "$out/skip" \
  >"$out/skip.log" 2>&1
status=$?
[ "$status" -eq 2 ] || { cat "$out/skip.log"; fail "skip: exit $status, not 2"; }
for n in 1 2 3; do
  grep -q "update skipped ($n in a row, train.max_skipped = 3)" "$out/skip.log" ||
    { cat "$out/skip.log"; fail "skip: no skip number $n"; }
done
grep -q "error: step 5: .*4 steps in a row had no finite update" "$out/skip.log" ||
  { cat "$out/skip.log"; fail "skip: no error after the fourth bad step"; }
[ "$(grep -c "  (update skipped)" "$out/skip.log")" -eq 3 ] || fail "skip: not 3 progress lines saying so"
echo "PASS: skip (3 updates dropped, then stopped at the fourth)"

# Skipped steps are counted in train.csv and summary.json of a run that ends.
"$@" "${diverging[@]}" --set train.on_nonfinite=skip --set train.max_skipped=100 \
  --set train.steps=6 --out "$out/counted" >"$out/counted.log" 2>&1 || { cat "$out/counted.log"; fail "counted"; }
skipped=$(awk -F, 'NR > 1 && $NF == 1' "$out/counted/train.csv" | wc -l)
[ "$skipped" -eq 5 ] || fail "train.csv counts $skipped skipped updates, not 5"
grep -q '"updates_skipped": 5' "$out/counted/summary.json" || fail "summary.json does not count 5"
echo "PASS: 5 skipped updates in train.csv and summary.json"
