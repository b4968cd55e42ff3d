#!/usr/bin/env bash
# Fuzzes the input readers with libFuzzer (tests/fuzz/): fuzz_deck (deck parsing, --set handling,
# validation and the resolved-deck round trip) and fuzz_machine (machine descriptions). Installs
# clang and its runtime libraries from Debian's packages when missing, builds both targets with
# clang in a build folder of their own, seeds each corpus from the shipped inputs and the kept
# regression inputs, runs each target for a bounded time and prints per target: seconds run,
# executions, corpus size and findings (each new crash-/leak-/timeout-/oom- input, grouped by the
# first line of its report). Exits 1 when a run found something.
#
#   scripts/fuzz.sh                                    # both targets, 60 s each
#   SECONDS_PER_TARGET=600 scripts/fuzz.sh fuzz_deck   # one target, 10 minutes
#
# Environment: SECONDS_PER_TARGET (60), BUILD_DIR (build-fuzz), JOBS (build jobs, 1),
# FINDINGS_DIR (BUILD_DIR/findings: one folder per target, in the untracked build folder),
# CORPUS_DIR (BUILD_DIR/corpus; kept between runs, so a run goes on where the last one ended).
#
# Each target runs in libFuzzer's fork mode with crashes ignored: a run lasts its whole time and
# collects every finding instead of stopping at the first. Once a finding is fixed, copy its input
# into tests/fuzz/regressions/<deck|machine>/, where the fuzz_regressions test replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${SECONDS_PER_TARGET:-60}
build=${BUILD_DIR:-build-fuzz}
jobs=${JOBS:-1}
findings_root=${FINDINGS_DIR:-$build/findings}
corpus_root=${CORPUS_DIR:-$build/corpus}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_deck fuzz_machine)

# --- what the build needs: the project's packages, then clang with libFuzzer and the sanitizers
scripts/install-debian-deps.sh clang libclang-rt-14-dev

# --- build (a folder of its own: clang, instrumented code; MESHSLICE_NATIVE off, nothing runs
# the kernels here)
mkdir -p "$build"
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMESHSLICE_FUZZ=ON -DMESHSLICE_NATIVE=OFF >"$build/configure.log" ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target "${targets[@]}" -j "$jobs"

# --- seeds: copied under names of their own, so re-seeding never duplicates an input
seed() {  # seed CORPUS FILE...
  local corpus=$1 file
  shift
  for file in "$@"; do
    [ -f "$file" ] && cp "$file" "$corpus/seed-$(echo "$file" | tr '/' '_')"
  done
  return 0
}
seed_deck() {
  local corpus=$1 deck
  shopt -s globstar nullglob
  seed "$corpus" inputs/**/*.yaml tests/data/*.yaml tests/fuzz/regressions/deck/*
  # The training decks again, each followed by a command line (deck_input.hpp: after a `--` line,
  # one argument per line), so that --set handling is reached from the start.
  for deck in inputs/train/*.yaml; do
    { cat "$deck"
      printf -- '--\n--set\nmesh.rows=2\n--set=optimizer.lr=1e-3\n--out\nout\n--set\n'
      printf -- 'plan.layers=ff1 W summa S=4, qkv Y meshslice\n--set=train.trace_steps=[1,2]\n'
    } >"$corpus/seed-args-$(basename "$deck")"
  done
}

# --- run
summary=()
found=0
for target in "${targets[@]}"; do
  kind=${target#fuzz_}
  corpus=$corpus_root/$kind
  findings=$findings_root/$kind
  mkdir -p "$corpus" "$findings"
  case $kind in
    deck) seed_deck "$corpus" ;;
    machine) seed "$corpus" hardware/machines/*.yaml tests/fuzz/regressions/machine/* ;;
  esac
  dict=()
  [ -f "tests/fuzz/$kind.dict" ] && dict=(-dict="tests/fuzz/$kind.dict")
  log=$findings_root/$target.log
  marker=$(mktemp)
  echo "fuzz: $target for ${seconds}s (log: $log)"
  start=$(date +%s)
  # -timeout: an input that takes 20 s is a finding too (libFuzzer's default allows 20 minutes).
  "$build/bin/$target" "${dict[@]}" -max_total_time="$seconds" -timeout=20 -fork=1 \
    -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -artifact_prefix="$findings/" \
    "$corpus" >"$log" 2>&1 || true  # its status is that of the last crash: counted below
  elapsed=$(($(date +%s) - start))

  # libFuzzer's last status line in fork mode: "#EXECS: cov: ... time: Ts job: N ..."
  execs=$(grep -oE '^#[0-9]+:' "$log" | tail -1 | tr -d '#:')
  execs=${execs:-0}
  new=$(find "$findings" -maxdepth 1 -type f -newer "$marker" \
          \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
  rm -f "$marker"
  count=$(printf '%s' "$new" | grep -c . || true)
  summary+=("$(printf '%-13s %5ss  %10s execs  %7s execs/s  corpus %5s  findings %s' "$target" \
    "$elapsed" "$execs" "$((execs / (elapsed > 0 ? elapsed : 1)))" \
    "$(find "$corpus" -type f | wc -l)" "$count")")
  if [ "$count" -gt 0 ]; then
    found=1
    # One line per kind of report: the target replays each input and says what went wrong.
    echo "fuzz: $target findings (count, first line of the report, one input):"
    for input in $new; do
      report=$(timeout 60 "$build/bin/$target" "$input" 2>&1 || true)
      line=$(grep -a -m1 -E 'runtime error:|what\(\):|ERROR: (Address|Leak|libFuzzer)' \
               <<<"$report" | sed -E 's/^.*(runtime error:|what\(\):|ERROR:) *//; s/[0-9]+/N/g' |
             cut -c1-150 || true)
      echo "${line:-no report}	$input"
    done | sort | awk -F'\t' '{n[$1]++; if (!($1 in f)) f[$1]=$2}
                               END {for (k in n) printf "  %4d  %s\n        %s\n", n[k], k, f[k]}'
  fi
done

echo "fuzz: summary (${seconds}s per target requested; findings in $findings_root)"
printf '  %s\n' "${summary[@]}"
exit $found
