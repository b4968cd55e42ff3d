#!/usr/bin/env bash
# The checkpoint benchmark (issue target: save and load >= 0.5x a yardstick on 2 ranks for the
# bench-h1024 model with AdamW state), every figure from this one run on this file system:
#   1. meshslice-train on inputs/train/bench-h1024.yaml (2 ranks) saves after step 2 and, in a
#      second run, resumes from it; each prints its bandwidth (the tensor files' bytes over the
#      time from the first byte to trainer.json renamed into place, CRC-32s included);
#   2. the yardstick: one process (dd) writing the same number of bytes sequentially into the same
#      directory, flushed to the disk as the save is (conv=fsync: MPI_File_sync), then reading them
#      back, each right after the corresponding meshslice run;
#   3. the high-water mark of a run that saves and resumes against one that does neither.
# Prints the ratios and writes OUT/bench-checkpoint.json. Environment: BUILD_DIR (default build),
# OUT (default out/bench-checkpoint), REPEATS (default 3: alternating, best of each).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
out=${OUT:-$repo/out/bench-checkpoint}
repeats=${REPEATS:-3}
deck=$repo/inputs/train/bench-h1024.yaml
[ -x "$build/bin/meshslice-train" ] || { echo "no $build/bin/meshslice-train: build first" >&2; exit 1; }
# shellcheck source=scripts/mpi-env.sh
source "$repo/scripts/mpi-env.sh"
rm -rf "$out"
mkdir -p "$out"
train() {  # train NAME ARGS...: 2 ranks, the log in OUT/NAME.log
  local name=$1
  shift
  mpiexec -np 2 $MESHSLICE_MPIEXEC_FLAGS "$build/bin/meshslice-train" "$deck" \
    --set train.log_every=100 "$@" >"$out/$name.log" 2>&1
}

train plain --set train.steps=2 --set checkpoint.at_end=false --out "$out/plain"
results=()
for r in $(seq 1 "$repeats"); do
  rm -rf "$out/run"
  train "save-$r" --set train.steps=2 --out "$out/run"
  bytes=$(($(stat -c %s "$out/run/checkpoints/latest/model.safetensors") +
           $(stat -c %s "$out/run/checkpoints/latest/optimizer.safetensors")))
  save=$(grep "saved in" "$out/save-$r.log" | tail -1 | sed -n 's/.* saved in \([0-9.e+-]*\) s.*/\1/p')
  start=$(date +%s.%N)
  dd if=/dev/zero of="$out/run/yardstick" bs=8M count=$((bytes / 8388608)) conv=fsync status=none
  dd if=/dev/zero of="$out/run/yardstick" bs=1 count=$((bytes % 8388608)) oflag=append conv=notrunc,fsync status=none
  write=$(echo "$(date +%s.%N) - $start" | bc -l)
  rm -rf "$out/load"
  train "load-$r" --set train.steps=3 --set checkpoint.at_end=false --out "$out/load" \
    --resume "$out/run/checkpoints/latest"
  load=$(grep "resumed from" "$out/load-$r.log" | sed -n 's/.*) in \([0-9.e+-]*\) s.*/\1/p')
  start=$(date +%s.%N)
  dd if="$out/run/yardstick" of=/dev/null bs=8M status=none
  read=$(echo "$(date +%s.%N) - $start" | bc -l)
  results+=("$bytes $save $write $load $read")
done
python3 - "$out" "${results[@]}" <<'PY'
import json, sys
out, rows = sys.argv[1], [list(map(float, r.split())) for r in sys.argv[2:]]
bytes_ = rows[0][0]
best = lambda i: min(r[i] for r in rows)
save, write, load, read = best(1), best(2), best(3), best(4)
def high_water(name):
    return json.load(open(f"{out}/{name}/summary.json"))["memory_high_water_max_mib"]
plain = high_water("plain")
saved = high_water("run")  # saved after its last step
loaded = high_water("load")  # resumed, no save
print(f"tensor files: {bytes_ / 1e6:.1f} MB (bench-h1024, AdamW, float), best of {len(rows)}")
print(f"save  {bytes_ / save / 1e9:6.2f} GB/s   yardstick write (dd, fsync) {bytes_ / write / 1e9:6.2f} GB/s   ratio {write / save:.2f}")
print(f"load  {bytes_ / load / 1e9:6.2f} GB/s   yardstick read  (dd)        {bytes_ / read / 1e9:6.2f} GB/s   ratio {read / load:.2f}")
print(f"high-water mark per rank: {plain:.0f} MiB without checkpoints, {saved:.0f} MiB with a "
      f"save, {loaded:.0f} MiB with a load (largest shard staged: ff1, H x 4H / 2 floats = 8 MiB)")
json.dump({"bytes": bytes_, "save_seconds": save, "yardstick_write_seconds": write,
           "load_seconds": load, "yardstick_read_seconds": read,
           "save_ratio": write / save, "load_ratio": read / load,
           "high_water_mib_plain": plain, "high_water_mib_saved": saved,
           "high_water_mib_loaded": loaded},
          open(f"{out}/bench-checkpoint.json", "w"), indent=2)
PY
