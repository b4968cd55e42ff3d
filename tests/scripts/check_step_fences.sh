#!/usr/bin/env bash
# check_step_fences.sh OUT COMMAND...: a training step waits on execution-space instances only,
# never on the whole device (a global fence waits for the compute instance's GEMMs too, which a
# GPU pays in overlap lost). COMMAND is meshslice-train on 2 ranks; it runs on a 1 x 2 mesh, with
# dp 2 and on 2 pipeline stages, with its collectives in place and staged through host memory
# (comm.stage_through_host: a GPU's path without a GPU-aware MPI), native and ring, and in bf16
# (its rounding scratch sized with the plans, not grown in the first step; with dp 2 and ZeRO-1,
# its masters' rows gathered in bf16). The stages' sends and receives are no plan's: their host
# mirrors are made with the trainer, one per message buffer (a step posts every receive at its
# start and waits for its sends at its end), and reused, not freed per message (a free fences
# every instance). Each run's busiest step (summary.json, rank 0) has no global fence, and a
# staged run's staging copies waited on their instance (the fence labels meshslice::stage_for_mpi
# and stage_from_mpi: the staged path ran). No step allocates memory of meshslice's (the plans
# and the trainer made every buffer); Kokkos's own team scratch (grown for the first kernel that
# asks more) is not counted.
# Kokkos reports fences from 3.5: with Debian's 3.4 the fence checks say so and pass.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
shift
rm -rf "$out"
mkdir -p "$out"
run() { train_two_steps "$out" "$@" --set model.hidden=64 --set model.seq_len=64; }
staged=(--set comm.stage_through_host=true)
run tp "$@" --set mesh.cols=2
run tp_staged "$@" --set mesh.cols=2 "${staged[@]}"
run tp_staged_ring "$@" --set mesh.cols=2 "${staged[@]}" --set comm.implementation=ring
run tp_staged_bf16 "$@" --set mesh.cols=2 "${staged[@]}" --set train.precision=bf16
run dp_staged "$@" --set mesh.dp=2 --set mesh.cols=1 "${staged[@]}"
run dp_staged_bf16_zero "$@" --set mesh.dp=2 --set mesh.cols=1 "${staged[@]}" \
  --set train.precision=bf16 --set optimizer.zero=true
run pp_staged "$@" --set mesh.pp=2 --set mesh.cols=1 "${staged[@]}"
python3 - "$out" <<'PY' || exit 1
import json, sys
out = sys.argv[1]
failed = []
for name in ("tp", "tp_staged", "tp_staged_ring", "tp_staged_bf16", "dp_staged",
             "dp_staged_bf16_zero", "pp_staged"):
    work = json.load(open(f"{out}/{name}/summary.json"))["device_work_per_step"]
    allocated = {k: v for k, v in work["allocations_by_name"].items()
                 if not k.startswith("Kokkos::")}
    print(f"{name}: a step allocated at most {work['allocations']} times "
          f"{work['allocations_by_name']}")
    if allocated:
        failed.append(f"{name}: a step allocated memory: {allocated}")
    if work["global_fences"] is None:
        print(f"{name}: fences not reported by this Kokkos (before 3.5): not checked")
        continue
    fences = work["fences_by_name"]
    staging = {k: v for k, v in fences.items() if k.startswith("meshslice::stage_")}
    print(f"{name}: {work['fences']} fences a step, {work['global_fences']} global; "
          f"staging waits {staging}")
    if work["global_fences"] > 0:
        failed.append(f"{name}: {work['global_fences']} global fences in a step: "
                      f"{work['global_fences_by_name']}")
    if "staged" in name:
        if not staging:
            failed.append(f"{name}: no staging copy waited on its instance (did it stage?)")
for f in failed:
    print(f"FAIL: {f}")
if failed:
    sys.exit(1)
print("PASS")
PY
