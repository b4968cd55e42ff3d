#!/usr/bin/env bash
# check_fault_ends_job.sh OUT LIMIT COMMAND...: runs COMMAND (an MPI job with a fault injected on
# one rank: an exception thrown inside a GEMM plan's run while its peers wait in their
# collectives) writing to OUT, and checks that every rank is gone within LIMIT seconds with a
# non-zero status and a message naming the fault and its rank. An error that leaves a peer
# waiting would hang here instead (the job is killed at 3 x LIMIT so that ctest reports it).
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
limit=$2
shift 2
rm -rf "$out"
log=$(mktemp)
start=$(date +%s)
timeout --kill-after=5 $((3 * limit)) "$@" --out "$out" >"$log" 2>&1
status=$?
elapsed=$(($(date +%s) - start))
cat "$log"
[ "$status" -ne 0 ] || fail "the job with a fault exited 0"
[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "the job hung: killed after $((3 * limit)) s"
[ "$elapsed" -le "$limit" ] || fail "the job took ${elapsed} s to end, more than ${limit} s"
grep -q "failed on purpose" "$log" || fail "no message naming the injected fault"
grep -q "internal error on rank" "$log" || fail "no message naming the rank that failed"
[ ! -e "$out/train.csv" ] || fail "a failed run left train.csv under its final name"
rm -f "$log"
echo "PASS: exit $status after ${elapsed} s"
