#!/usr/bin/env bash
# expect_error.sh PATTERN COMMAND...
# Passes when COMMAND (an MPI job) fails cleanly on bad input: it ends within the time limit
# (no hang), exits non-zero, and prints a line matching PATTERN exactly once (rank 0 reports,
# the other ranks stay quiet).
set -u
pattern=$1
shift
output=$(timeout 120 "$@" 2>&1)
status=$?
echo "$output"
echo "--- exit status $status"
if [ "$status" -eq 124 ]; then echo "FAIL: timed out (a rank hung)"; exit 1; fi
if [ "$status" -eq 0 ]; then echo "FAIL: exited 0 on bad input"; exit 1; fi
count=$(grep -cE -- "$pattern" <<<"$output")
if [ "$count" -ne 1 ]; then echo "FAIL: '$pattern' printed $count times, want exactly once"; exit 1; fi
echo "PASS: clear error, printed once, exit $status"
