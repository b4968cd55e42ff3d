#!/usr/bin/env bash
# check_bench_local_gemm.sh OUT_DIR COMMAND...
# Runs meshslice-bench's local_gemm mode on small shapes and checks what a user relies on: exit
# 0, local_gemm.csv with its header, a float row and a row per bf16 route the build has for each
# shape (float_panels always), positive times, and every bf16 result within float's rounding of
# the float GEMM of the same operands (max_rel_error below 1e-4).
set -eu
out=$1
shift
rm -rf "$out"
timeout 300 "$@" --out "$out"
csv="$out/local_gemm.csv"
test -f "$csv" || { echo "FAIL: no $csv"; exit 1; }
head -1 "$csv" | grep -q '^M,N,K,route,seconds,gflops,over_float,max_rel_error$' ||
  { echo "FAIL: unexpected header: $(head -1 "$csv")"; exit 1; }
for route in float float_panels; do
  [ "$(grep -c ",$route," "$csv")" -eq 2 ] || { echo "FAIL: want 2 $route rows"; cat "$csv"; exit 1; }
done
awk -F, -v num='^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$' '
  NR > 1 && !($5 ~ num && $5 > 0 && $6 > 0 && $8 ~ num && $8 < 1e-4) {
    bad = 1; print "FAIL: bad row: " $0
  }
  END { exit bad }' "$csv"
echo "PASS: $(($(wc -l <"$csv") - 1)) rows in $csv"
