#!/usr/bin/env bash
# The checkpoint benchmark (issue target: save and load >= 0.5x a yardstick on 2 ranks for the
# bench-h1024 model with AdamW state), every figure from this one run on this file system:
#   1. meshslice-train on inputs/train/bench-h1024.yaml (2 ranks) saves after step 2 and, in a
#      second run, resumes from it; each prints its bandwidth (the tensor files' bytes over the
#      time from the first byte to trainer.json renamed into place, CRC-32s included);
#   2. the yardstick: one process (dd) writing the same number of bytes sequentially into the same
#      directory, flushed to the disk as the save is (conv=fsync: MPI_File_sync), then reading them
#      back, each right after the corresponding meshslice run, while another process holds the
#      memory the two ranks held (measured here: on this VM the page cache takes writes ~10x
#      slower once ~1.5 GB are in use, so a dd beside an idle machine is not the same test);
#   3. the high-water mark of a run that saves and resumes against one that does neither.
# Reads are from the disk (the page cache dropped before the load and before the yardstick's
# read) where this user may drop it (root), as a resume in a new job would be; otherwise from the
# page cache, and the output says which.
# Prints the ratios and writes OUT/bench-checkpoint.json. Environment: BUILD_DIR (default build),
# OUT (default out/bench-checkpoint), REPEATS (default 3 after a warm-up round: best of each).
set -euo pipefail

# shellcheck source=scripts/bench-setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-setup.sh" meshslice-train
out=${OUT:-$repo/out/bench-checkpoint}
repeats=${REPEATS:-3}
deck=$repo/inputs/train/bench-h1024.yaml
rm -rf "$out"
mkdir -p "$out"
train() {  # train NAME ARGS...: 2 ranks, the log in OUT/NAME.log
  local name=$1
  shift
  mpiexec -np 2 $MESHSLICE_MPIEXEC_FLAGS "$build/bin/meshslice-train" "$deck" \
    --set train.log_every=100 "$@" >"$out/$name.log" 2>&1
}

# The page cache: on a VM a never-touched page costs the guest several times what a reused one
# does, so each measured write (the save, the yardstick) is preceded by deleting a file of the same
# size, and the first round is a warm-up.
train plain --set train.steps=2 --set checkpoint.at_end=false --out "$out/plain"
dd if=/dev/zero of="$out/yardstick" bs=8M count=37 status=none
# What the two ranks held (their high-water marks), for the yardstick's memory holder.
held_mib=$(python3 -c "import json, sys; print(2 * json.load(open(sys.argv[1]))['memory_high_water_max_mib'])" "$out/plain/summary.json")
cold=no
if [ -w /proc/sys/vm/drop_caches ]; then cold=yes; fi
drop_caches() { if [ "$cold" = yes ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi; }
results=()
for r in $(seq 0 "$repeats"); do
  rm -f "$out/yardstick"
  rm -rf "$out/run"
  train "save-$r" --set train.steps=2 --out "$out/run"
  bytes=$(($(stat -c %s "$out/run/checkpoints/latest/model.safetensors") +
           $(stat -c %s "$out/run/checkpoints/latest/optimizer.safetensors")))
  save=$(grep "saved in" "$out/save-$r.log" | tail -1 | sed -n 's/.* saved in \([0-9.e+-]*\) s.*/\1/p')
  rm -rf "$out/load"
  drop_caches
  train "load-$r" --set train.steps=3 --set checkpoint.at_end=false --out "$out/load" \
    --resume "$out/run/checkpoints/latest"
  load=$(grep "resumed from" "$out/load-$r.log" | sed -n 's/.*) in \([0-9.e+-]*\) s.*/\1/p')
  rm -rf "$out/run/checkpoints"
  /usr/bin/env python3 -c "
import sys, time
held = bytearray(int(float(sys.argv[1]) * 2**20))
for i in range(0, len(held), 4096): held[i] = 1
open(sys.argv[2], 'w').close()
time.sleep(600)" "$held_mib" "$out/holding" &
  holder=$!
  while [ ! -e "$out/holding" ]; do sleep 0.1; done
  start=$(date +%s.%N)
  dd if=/dev/zero of="$out/yardstick" bs=8M count=$((bytes / 8388608)) conv=fsync status=none
  dd if=/dev/zero of="$out/yardstick" bs=$((bytes % 8388608)) count=1 oflag=append \
    conv=notrunc,fsync status=none
  write=$(echo "$(date +%s.%N) - $start" | bc -l)
  drop_caches
  start=$(date +%s.%N)
  dd if="$out/yardstick" of=/dev/null bs=8M status=none
  read=$(echo "$(date +%s.%N) - $start" | bc -l)
  kill "$holder"
  wait "$holder" 2>/dev/null || true
  rm -f "$out/holding"
  [ "$r" -eq 0 ] || results+=("$bytes $save $write $load $read")
done
python3 - "$out" "$cold" "${results[@]}" <<'PY'
import json, sys
out, cold, rows = sys.argv[1], sys.argv[2] == "yes", [list(map(float, r.split())) for r in sys.argv[3:]]
bytes_ = rows[0][0]
best = lambda i: min(r[i] for r in rows)
save, write, load, read = best(1), best(2), best(3), best(4)
def high_water(name):
    return json.load(open(f"{out}/{name}/summary.json"))["memory_high_water_max_mib"]
plain = high_water("plain")
saved = high_water("run")  # saved after its last step (the last round's)
loaded = high_water("load")  # resumed, no save
print(f"tensor files: {bytes_ / 1e6:.1f} MB (bench-h1024, AdamW, float), best of {len(rows)}")
print(f"yardstick: dd beside a process holding the ranks' memory; reads "
      f"{'from the disk (page cache dropped)' if cold else 'from the page cache'}")
print(f"save  {bytes_ / save / 1e9:6.2f} GB/s   yardstick write (dd, fsync) {bytes_ / write / 1e9:6.2f} GB/s   ratio {write / save:.2f}")
print(f"load  {bytes_ / load / 1e9:6.2f} GB/s   yardstick read  (dd)        {bytes_ / read / 1e9:6.2f} GB/s   ratio {read / load:.2f}")
print(f"high-water mark per rank: {plain:.0f} MiB without checkpoints, {saved:.0f} MiB with a "
      f"save, {loaded:.0f} MiB with a load (largest shard staged: ff1, H x 4H / 2 floats = 8 MiB)")
json.dump({"bytes": bytes_, "save_seconds": save, "yardstick_write_seconds": write,
           "load_seconds": load, "yardstick_read_seconds": read,
           "save_ratio": write / save, "load_ratio": read / load,
           "high_water_mib_plain": plain, "high_water_mib_saved": saved,
           "high_water_mib_loaded": loaded, "cold_reads": cold},
          open(f"{out}/bench-checkpoint.json", "w"), indent=2)
PY
