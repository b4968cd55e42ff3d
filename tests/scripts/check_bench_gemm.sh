#!/usr/bin/env bash
# check_bench_gemm.sh OUT_DIR EXPECTED_ROWS EMULATED COMMAND...
# Runs a small GEMM benchmark and checks what a user relies on: exit 0, gemm.csv with the
# documented columns, EXPECTED_ROWS rows, every result verified (max_rel_error <= 1e-5 for
# float), positive times (the fastest repetition no slower than the median), the sliced-BLAS
# yardstick where it is measured, and a Chrome trace per traced configuration that is valid JSON with
# compute and communication events. EMULATED=yes: the run used gemm.hardware (combined mode), so
# every non-ScaLAPACK row has a positive emulated time; no: the column holds -1.
set -eu
out=$1
expected_rows=$2
emulated=$3
shift 3
rm -rf "$out"
timeout 300 "$@" --out "$out"
csv="$out/gemm.csv"
test -f "$csv" || { echo "FAIL: no $csv"; exit 1; }
header='algorithm,dataflow,rows,cols,M,N,K,S,seconds,gflops,local_peak_gflops,efficiency,hidden_comm_fraction,local_gemm_efficiency,max_rel_error,emulated_seconds,seconds_min,sliced_blas_efficiency'
[ "$(head -1 "$csv")" = "$header" ] || { echo "FAIL: header is $(head -1 "$csv")"; exit 1; }
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq "$expected_rows" ] || { echo "FAIL: $rows result rows, want $expected_rows"; exit 1; }
awk -F, 'NR > 1 && !($9 > 0 && $10 > 0 && $11 > 0 && $15 >= 0 && $15 <= 1e-5 && $17 > 0 && $17 <= $9) {
  bad = 1; print "FAIL: bad result: " $0 } END { exit bad }' "$csv"
# The sliced-BLAS yardstick: a positive ratio for MeshSlice at S > 1, -1 for everything else.
awk -F, 'NR > 1 && !(($1 == "meshslice" && $8 > 1) ? $18 > 0 : $18 == -1) {
  bad = 1; print "FAIL: sliced_blas_efficiency " $18 " in: " $0 } END { exit bad }' "$csv"
awk -F, -v emulated="$emulated" 'NR > 1 && $1 != "scalapack" &&
  !((emulated == "yes" && $16 > 0) || (emulated == "no" && $16 == -1)) {
  bad = 1; print "FAIL: emulated_seconds " $16 " in: " $0 } END { exit bad }' "$csv"
traces=$(ls "$out"/trace-*.json 2>/dev/null | wc -l)
[ "$traces" -ge 1 ] || { echo "FAIL: no trace files"; exit 1; }
for trace in "$out"/trace-*.json; do
  python3 - "$trace" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
cats = {e.get("cat") for e in events if e.get("ph") == "X"}
assert "compute" in cats, f"{sys.argv[1]}: no compute events"
PY
done
echo "PASS: $rows verified results, $traces traces"
