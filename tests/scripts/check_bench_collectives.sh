#!/usr/bin/env bash
# check_bench_collectives.sh OUT_DIR COMMAND...
# Runs a short collectives benchmark and checks what a user relies on: exit 0, a table on
# stdout, collectives.csv with its header and one row per (operation, implementation, size)
# with positive times, the memcpy yardstick and the ratio to it as positive finite numbers, and
# the resolved deck.yaml.
set -eu
out=$1
shift
rm -rf "$out"
timeout 300 "$@" --out "$out"
csv="$out/collectives.csv"
test -f "$out/deck.yaml" || { echo "FAIL: no $out/deck.yaml"; exit 1; }
test -f "$csv" || { echo "FAIL: no $csv"; exit 1; }
head -1 "$csv" | grep -q '^operation,implementation,axis,ranks,dim,precision,bytes,seconds_median,seconds_min,link_gbs,memcpy_gbs,link_over_memcpy$' ||
  { echo "FAIL: unexpected header: $(head -1 "$csv")"; exit 1; }
rows=$(($(wc -l <"$csv") - 1))
# 7 operations x 2 implementations x 2 sizes (8 and 16 KiB) as the test asks.
[ "$rows" -eq 28 ] || { echo "FAIL: $rows rows, want 28"; exit 1; }
awk -F, 'NR > 1 && !($8 > 0 && $9 > 0 && $9 <= $8) { bad = 1; print "FAIL: bad times in: " $0 } END { exit bad }' "$csv"
# A plain number, so that "nan" or "inf" (which awk would compare as strings) fail too.
awk -F, -v num='^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$' '
  NR > 1 && !($11 ~ num && $11 > 0 && $12 ~ num && $12 > 0) {
    bad = 1; print "FAIL: memcpy_gbs/link_over_memcpy not positive numbers in: " $0
  }
  END { exit bad }' "$csv"
echo "PASS: $rows rows in $csv"
