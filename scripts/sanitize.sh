#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer: installs what is
# missing, configures BUILD_DIR (default build-sanitize) with -DMESHSLICE_SANITIZE=ON, builds and
# runs ctest (see the two passes below). An ASan report, an undefined-behaviour report (fatal:
# -fno-sanitize-recover) or a leak found in the second pass fails the test it happens in.
# Environment: BUILD_DIR, JOBS (default nproc), CTEST_ARGS (e.g. "-R gemm", first pass only).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build-sanitize}
jobs=${JOBS:-$(nproc)}

bash "$repo/scripts/install-debian-deps.sh"
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESHSLICE_SANITIZE=ON
cmake --build "$build" -j "$jobs"

# mpiexec passes the environment on to the ranks it starts on this node. Two passes:
#  1. every test, ASan and UBSan reports fatal, leak detection off: OpenMPI's components are
#     dlopen'ed and dlclose'd, and what they keep until exit shows up as leaks whose stacks
#     end in "<unknown module>", which no suppression can name;
#  2. the tests without MPI again with leak detection on (suppressions for what remains of the
#     MPI stack in scripts/sanitize-lsan.supp).
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$repo/scripts/sanitize-lsan.supp:print_suppressions=0
asan=strict_string_checks=1:detect_stack_use_after_return=1
cd "$build"
echo "== sanitize: every test (ASan, UBSan; no leak detection)"
# shellcheck disable=SC2086
ASAN_OPTIONS=$asan:detect_leaks=0 ctest -j "$jobs" --output-on-failure ${CTEST_ARGS:-}
echo "== sanitize: the tests without MPI, with leak detection"
ASAN_OPTIONS=$asan:detect_leaks=1 ctest -j "$jobs" --output-on-failure \
  -R '^(unit|hardware|sim|fuzz_regressions)$'
