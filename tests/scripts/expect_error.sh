#!/usr/bin/env bash
# expect_error.sh PATTERN COMMAND...
# Passes when COMMAND (an MPI job) fails cleanly on bad input: it ends within the time limit
# (no hang), exits non-zero, and prints a line matching PATTERN exactly once (rank 0 reports,
# the other ranks stay quiet).
# Environment, optional:
#   IN_THE_WAY=PATH     a directory created at PATH first (where an output file should go)
#   RANK_STATUS_DIR=DIR where COMMAND's ranks record their exit statuses (through
#                       rank_status.sh): no rank may have exited 0
#   EXPECT_STATUS=N     and each rank that recorded one must have exited N
set -u
pattern=$1
shift
if [ -n "${IN_THE_WAY:-}" ]; then rm -rf "$IN_THE_WAY" && mkdir -p "$IN_THE_WAY"; fi
if [ -n "${RANK_STATUS_DIR:-}" ]; then rm -rf "$RANK_STATUS_DIR"; fi
output=$(timeout 120 "$@" 2>&1)
status=$?
echo "$output"
echo "--- exit status $status"
if [ "$status" -eq 124 ]; then echo "FAIL: timed out (a rank hung)"; exit 1; fi
if [ "$status" -eq 0 ]; then echo "FAIL: exited 0 on bad input"; exit 1; fi
count=$(grep -cE -- "$pattern" <<<"$output")
if [ "$count" -ne 1 ]; then echo "FAIL: '$pattern' printed $count times, want exactly once"; exit 1; fi
if [ -n "${RANK_STATUS_DIR:-}" ]; then
  for f in "$RANK_STATUS_DIR"/rank-*; do
    [ -e "$f" ] || continue
    if [ "$(cat "$f")" = 0 ]; then echo "FAIL: ${f##*/} exited 0"; exit 1; fi
    if [ -n "${EXPECT_STATUS:-}" ] && [ "$(cat "$f")" != "$EXPECT_STATUS" ]; then
      echo "FAIL: ${f##*/} exited $(cat "$f"), want $EXPECT_STATUS"; exit 1
    fi
  done
fi
echo "PASS: clear error, printed once, exit $status"
