#!/usr/bin/env bash
# The tuner against measurement (issue 10): on this machine's calibrated description, the plan
# meshslice-tune predicts fastest for a training deck, measured beside the other plans it could
# have chosen, on 2 ranks, one run after the other on the same cores:
#   1. calibrate: mpiexec -np 2 meshslice-tune --set mode=calibrate (or MACHINE=path to reuse a
#      description);
#   2. for inputs/train/laptop.yaml and inputs/train/bench-h1024.yaml: the tuner on that
#      machine, for each mesh (1x2, 2x1) on its own (search.rows) and over both; then
#      meshslice-train with each mesh's tuned plan and with every GEMM at S = 1, 2 and 4;
#   3. the best step of each run; the tuner's overall choice against the fastest measured.
# The prediction is the tuner's: one block's FC GEMMs; the measurement is the whole step (every
# block, attention, norms, optimizer). Prints the table and writes OUT/bench-tune.csv. Environment: BUILD_DIR (default build), OUT
# (default out/bench-tune), MACHINE, STEPS_laptop (default 60), STEPS_h1024 (default 12).
set -euo pipefail

# shellcheck source=scripts/bench-setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-setup.sh" meshslice-tune meshslice-train
out=${OUT:-$repo/out/bench-tune}
mkdir -p "$out"
mpi2() { mpiexec -np 2 $MESHSLICE_MPIEXEC_FLAGS "$@"; }

machine=${MACHINE:-}
if [ -z "$machine" ]; then
  echo "== calibrating (2 ranks)"
  mpi2 "$build/bin/meshslice-tune" --set mode=calibrate --out "$out/calibrate" | sed -n '/^Calibration/,/^memory/p'
  machine=$out/calibrate/machine.yaml
fi

csv=$out/bench-tune.csv
echo "deck,mesh,plan,predicted_block_ms,best_step_ms" >"$csv"

# deck name, hidden, heads, seq_len, sequences (per replica, and global: dp is 1), steps
run_deck() {
  local name=$1 hidden=$2 heads=$3 seq=$4 sequences=$5 steps=$6 deck=$repo/inputs/train/$1.yaml
  local model=(--set model.name=custom --set model.hidden=$hidden --set model.heads=$heads
               --set model.seq_len=$seq --set model.global_sequences=$sequences --set chips=2
               --set machine=$machine --set search.block=1 --set search.slices=1,2,4
               --set validate=false)
  local train=(--set train.steps=$steps --set train.eval_every=0 --set train.log_every=$steps)
  "$build/bin/meshslice-tune" "${model[@]}" --out "$out/$name/tune" >/dev/null
  local chosen
  chosen=$(python3 -c "import re,sys; t=open(sys.argv[1]).read(); print(re.search(r'^  rows: (\d+)',t,re.M).group(1))" "$out/$name/tune/plan.yaml")
  for rows in 1 2; do
    "$build/bin/meshslice-tune" "${model[@]}" --set search.rows=$rows --out "$out/$name/tune-$rows" >/dev/null
    local predicted
    predicted=$(python3 -c "import csv,sys; r=[x for x in csv.DictReader(open(sys.argv[1])) if x['best']=='1']; print(float(r[0]['mesh_predicted_seconds'])*1e3)" "$out/$name/tune-$rows/tune.csv")
    for plan in tuned 1 2 4; do
      local args=(--set mesh.rows=$rows)
      if [ "$plan" = tuned ]; then
        args=(--set "plan=$out/$name/tune-$rows/plan.yaml")
      else
        args+=(--set plan.slices=$plan --set plan.block=1)
      fi
      mpi2 "$build/bin/meshslice-train" "$deck" "${train[@]}" "${args[@]}" --out "$out/$name/$rows-$plan" >/dev/null
      local best
      best=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['best_step_seconds']*1e3)" "$out/$name/$rows-$plan/summary.json")
      echo "$name,${rows}x$((2 / rows)),$plan,$([ "$plan" = tuned ] && echo "$predicted" || echo ""),$best" >>"$csv"
    done
  done
  echo "$name: the tuner's choice is the ${chosen}x$((2 / chosen)) mesh's tuned plan"
  python3 - "$csv" "$name" "$chosen" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["deck"] == sys.argv[2]]
print("%-8s %-6s %14s %12s" % ("mesh", "plan", "FC block ms", "best step ms"))
for r in rows:
    predicted = "%.2f" % float(r["predicted_block_ms"]) if r["predicted_block_ms"] else "-"
    print("%-8s %-6s %14s %12.2f" % (r["mesh"], r["plan"] if r["plan"] == "tuned" else "S=" + r["plan"],
                                     predicted, float(r["best_step_ms"])))
chosen = [r for r in rows if r["plan"] == "tuned" and r["mesh"].startswith(sys.argv[3] + "x")][0]
fastest = min(rows, key=lambda r: float(r["best_step_ms"]))
ratio = float(chosen["best_step_ms"]) / float(fastest["best_step_ms"])
print("tuner's choice %s tuned: %.2f ms; fastest measured %s %s: %.2f ms; ratio %.3f (target <= 1.10)"
      % (chosen["mesh"], float(chosen["best_step_ms"]), fastest["mesh"], fastest["plan"],
         float(fastest["best_step_ms"]), ratio))
PY
}

run_deck laptop 64 4 32 16 "${STEPS_laptop:-60}"
run_deck bench-h1024 1024 8 512 4 "${STEPS_h1024:-12}"
echo "results in $csv"
