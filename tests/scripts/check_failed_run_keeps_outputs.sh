#!/usr/bin/env bash
# check_failed_run_keeps_outputs.sh OUT COMMAND...: runs COMMAND (a meshslice-train job) into
# OUT, then the same with a model the mesh cannot split into the same OUT, and checks that the
# failed run changed none of the first run's files and left no *.partial file behind.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
shift
rm -rf "$out"
timeout 120 "$@" --out "$out" >/dev/null 2>&1 || fail "the first run failed"
before=$(cd "$out" && sha256sum ./* | sort)
timeout 120 "$@" --set model.heads=3 --set model.hidden=48 --out "$out" 2>&1 | tail -3
[ "${PIPESTATUS[0]}" -ne 0 ] || fail "the bad run exited 0"
after=$(cd "$out" && sha256sum ./* | sort)
[ "$before" = "$after" ] || fail "the failed run changed the previous outputs: $(diff <(echo "$before") <(echo "$after"))"
partial=$(find "$out" -name '*.partial')
[ -z "$partial" ] || fail "partial files left behind: $partial"
echo "PASS"
