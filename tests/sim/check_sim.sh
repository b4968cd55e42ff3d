#!/usr/bin/env bash
# check_sim.sh OUT_DIR EXPECTED_ROWS COMMAND...
# Runs meshslice-sim and checks what a user relies on: exit 0, sim.csv with the documented
# columns and EXPECTED_ROWS configurations at the algorithms' own S (plus Wang and SUMMA at
# MeshSlice's S, and Wang decomposing either ring) of sane values (positive times, FLOP utilization in (0, 1], the time split
# consistent, non-FC time >= 0, the machine named), 12 GEMM rows per configuration in
# sim_gemms.csv, the timing line, the per-GEMM average line (Fig. 11), and the PNG plots when
# gnuplot is installed.
set -eu
out=$1
expected_rows=$2
shift 2
rm -rf "$out"
log=$(timeout 300 "$@" --out "$out")
echo "$log"
csv="$out/sim.csv"
test -f "$csv" || { echo "FAIL: no $csv"; exit 1; }
header='model,scaling,chips,algorithm,rows,cols,S,seconds,flop_utilization,compute_s,launch_s,transfer_s,sync_s,local_s,exposed_s,tokens,best,variant,non_fc_s,machine'
[ "$(head -1 "$csv")" = "$header" ] || { echo "FAIL: header is $(head -1 "$csv")"; exit 1; }
rows=$(awk -F, '$18 == "own_s"' "$csv" | wc -l)
[ "$rows" -eq "$expected_rows" ] || { echo "FAIL: $rows own-S rows in sim.csv, want $expected_rows"; exit 1; }
awk -F, 'NR > 1 && !($8 > 0 && $9 > 0 && $9 <= 1 && $10 > 0 && $10 <= $8 * 1.0001 &&
                     $5 * $6 == $3 && $15 >= -1e-12 && $19 >= 0 && $20 != "" &&
                     ($18 == "own_s" || ($18 == "meshslice_s" && ($4 == "wang" || $4 == "summa")) ||
                      ($18 == "either_ring" && $4 == "wang"))) {
  bad = 1; print "FAIL: bad row: " $0 } END { exit bad }' "$csv"
gemm_rows=$(($(wc -l <"$out/sim_gemms.csv") - 1))
[ "$gemm_rows" -eq $((12 * expected_rows)) ] ||
  { echo "FAIL: $gemm_rows rows in sim_gemms.csv, want $((12 * expected_rows))"; exit 1; }
echo "$log" | grep -q "sweep: .* s (one core)" || { echo "FAIL: no timing line"; exit 1; }
# Fig. 11's average: MeshSlice against Collective over the 12 GEMMs of the one model swept.
echo "$log" | grep -Eq "over \(GEMMs\):.* collective [+-][0-9.]+% \(12\)" ||
  { echo "FAIL: no per-GEMM average line"; exit 1; }
# Every output names the machine: the CSVs' machine column (above), the traces' metadata.
for trace in "$out"/trace-*.json; do
  [ -e "$trace" ] || continue
  grep -q '"otherData":{"machine":"[^"]' "$trace" || { echo "FAIL: $trace names no machine"; exit 1; }
done
# Table 2: all-Y-stationary and tuned dataflows, a row each per model.
[ "$(awk -F, 'NR > 1 && $3 == "y_stationary"' "$out/sim_dataflow.csv" | wc -l)" -ge 1 ] &&
  [ "$(awk -F, 'NR > 1 && $3 == "tuned"' "$out/sim_dataflow.csv" | wc -l)" -ge 1 ] ||
  { echo "FAIL: sim_dataflow.csv lacks its rows"; exit 1; }
if command -v gnuplot >/dev/null; then
  for fig in fig09_weak_scaling fig10_comm_breakdown fig11_gemms; do
    test -s "$out/$fig.png" || { echo "FAIL: no $fig.png"; exit 1; }
  done
fi
echo "PASS: $rows configurations, $gemm_rows GEMMs"
