#!/usr/bin/env bash
# check_calibrate.sh OUT TUNE SIM MPIEXEC...: calibrates this machine (a short run) into OUT and
# checks the result: the fit table printed with an error per fit, OUT/calibration.csv with every
# sample and its prediction, OUT/machine.yaml that meshslice-tune (the laptop model on 2 chips)
# and meshslice-sim (16 chips) then run on like any machine.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
tune=$2
sim=$3
shift 3
rm -rf "$out"
output=$(timeout 200 "$@" "$tune" --set mode=calibrate --set calibrate.max_kib=512 \
         --set calibrate.repetitions=2 --set calibrate.name=ci-node \
         --set calibrate.gemm_shapes=128x128x128,256x256x256,256x64x256 --out "$out/cal" 2>&1)
status=$?
echo "$output"
[ "$status" -eq 0 ] || fail "calibration exit status $status"
for op in all_gather reduce_scatter shift broadcast gemm; do
  grep -Eq "^$op .*[0-9]+ +[0-9.]+% +[0-9.]+%$" <<<"$output" || fail "no fit line for $op"
done
machine=$out/cal/machine.yaml
[ -f "$machine" ] || fail "no machine.yaml"
grep -q '^name: ci-node$' "$machine" || fail "machine.yaml lacks its name"
python3 - "$out/cal/calibration.csv" <<'PY' || fail "calibration.csv wrong"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ops = {r["op"] for r in rows}
assert ops == {"all_gather", "reduce_scatter", "shift", "broadcast", "gemm"}, ops
assert sum(r["op"] == "gemm" for r in rows) == 3
sizes = {float(r["bytes"]) for r in rows if r["op"] == "all_gather"}
assert min(sizes) == 8192 and max(sizes) == 512 * 1024, sizes
for r in rows:
    assert float(r["measured_seconds"]) > 0 and float(r["predicted_seconds"]) > 0, r
PY
"$tune" --set "machine=$machine" --set chips=2 --set model.name=custom --set model.hidden=64 \
  --set model.heads=4 --set model.seq_len=32 --set model.global_sequences=16 --set search.block=1 \
  --set search.slices=1,2 --out "$out/tune" || fail "meshslice-tune on the calibrated machine"
"$sim" --set "machine=$machine" --set chips=16 --set models=gpt3 --set scalings=weak \
  --set studies.shapes_chips=0 --set studies.slices_rows=0 --set studies.slices_cols=0 \
  --set plots=false --out "$out/sim" | grep -q "emulating ci-node" || fail "meshslice-sim on it"
echo "PASS"
