#!/usr/bin/env bash
# check_step_budget.sh OUT BUDGET PER_BLOCK COMMAND...: what a training step launches is a budget
# (core/device_work_counter.hpp). COMMAND is meshslice-train on one rank with the bench-h1024 deck;
#   1. its busiest step's kernel launches + BLAS calls (summary.json) are at most BUDGET;
#   2. on a small model of the same structure they do not change with 4x the heads or 4x the
#      sequences (attention is not launched per head, sequence or row block), and each block
#      adds at most PER_BLOCK (2 blocks against 4);
#   3. the best step's times by name (best_step_seconds_by_name) name only kernels, BLAS calls and
#      fences it counts, and the BLAS calls took time;
#   4. where Kokkos reports fences (3.5 and later), a step waits on instances only: no global fence
#      (check_step_fences.sh checks the same with collectives, staged and not);
#   5. no step allocates memory of meshslice's (the plans made every buffer; Kokkos's own team
#      scratch, which a host backend grows for the first kernel that asks more, is not counted).
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1
budget=$2
per_block=$3
shift 3
rm -rf "$out"
mkdir -p "$out"
small=(--set model.hidden=64 --set model.seq_len=64)
train_two_steps "$out" deck "$@"
train_two_steps "$out" small "$@" "${small[@]}"
train_two_steps "$out" heads "$@" "${small[@]}" --set model.heads=32
train_two_steps "$out" sequences "$@" "${small[@]}" --set model.sequences=16
train_two_steps "$out" blocks "$@" "${small[@]}" --set model.blocks=4
python3 - "$out" "$budget" "$per_block" <<'PY' || exit 1
import json, sys
out, budget, per_block = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def work(name):
    return json.load(open(f"{out}/{name}/summary.json"))["device_work_per_step"]
def total(name):
    return work(name)["launches_and_blas_calls"]
deck = work("deck")
print(f"bench-h1024, one rank: {deck['kernel_launches']} kernel launches + {deck['blas_calls']} "
      f"BLAS calls = {deck['launches_and_blas_calls']} per step (budget {budget}); "
      f"fences {deck['fences']}, copies {deck['copies']} ({deck['host_device_copies']} host-device)")
failed = []
if total("deck") > budget:
    top = sorted(deck["by_name"].items(), key=lambda kv: -kv[1])[:8]
    failed.append(f"{total('deck')} launches + BLAS calls per step, over the budget of {budget}; "
                  f"most: {top}")
for name, what in (("heads", "4x the heads"), ("sequences", "4x the sequences")):
    print(f"small model: {total('small')}; with {what}: {total(name)}")
    if total(name) != total("small"):
        failed.append(f"{what} changed the step's launches + BLAS calls from "
                      f"{total('small')} to {total(name)}")
added = (total("blocks") - total("small")) / 2
print(f"per block: {added:g} (at most {per_block})")
if added > per_block:
    failed.append(f"each block adds {added:g} launches + BLAS calls, more than {per_block}")
seconds = deck["best_step_seconds_by_name"]
counted = set(deck["by_name"]) | {f"fence {n}" for n in (deck["fences_by_name"] or {})}
top = sorted(seconds.items(), key=lambda kv: -kv[1])[:3]
print("most host time of the best step: " + ", ".join(f"{n} {s * 1e3:.1f} ms" for n, s in top))
if not set(seconds) <= counted:
    failed.append(f"timed but not counted: {sorted(set(seconds) - counted)}")
blas = sum(s for n, s in seconds.items() if n.startswith("KokkosBlas::gemm"))
if blas <= 0:
    failed.append("the BLAS calls were not timed")
print(f"allocations in a step: at most {deck['allocations']} {deck['allocations_by_name']}")
allocated = {n: c for n, c in deck["allocations_by_name"].items() if not n.startswith("Kokkos::")}
if allocated:
    failed.append(f"a step allocated memory: {allocated}")
if deck["global_fences"] is None:
    print("fences not reported by this Kokkos (before 3.5): global fences unchecked")
else:
    print(f"global fences per step: {deck['global_fences']}")
    if deck["global_fences"] > 0:
        failed.append(f"{deck['global_fences']} global fences in a step: "
                      f"{deck['global_fences_by_name']}")
for f in failed:
    print(f"FAIL: {f}")
if failed:
    sys.exit(1)
print("PASS")
PY
