#!/usr/bin/env bash
# check_ranks_disagree.sh OUT TRAIN DECK MPIEXEC [MPIEXEC_FLAGS...]: the pre-flight agreement
# (core/agreement.hpp). A launcher that gives one rank of two a different --set, a working
# directory where the same file name holds another plan, or another build of the app (a copy of
# TRAIN whose embedded git revision differs) must end the job before it starts: exit 2 on every
# rank within 30 s and one message naming the part that differs and the rank, and for the deck
# and the build, the key that differs with its value on both ranks.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1 train=$2 deck=$3 mpiexec=$4
shift 4
flags=("$@")
rm -rf "$out"
mkdir -p "$out/a" "$out/b"
cd "$out" || exit 1
expect() {  # expect NAME PATTERN -- per-rank arguments (MPMD, one rank each)...
  local name=$1 pattern=$2
  shift 3
  local start=$SECONDS
  timeout 30 "$mpiexec" "${flags[@]}" "$@" >"$name.log" 2>&1
  local status=$?
  [ "$status" -ne 124 ] || fail "$name: no exit within 30 s"
  [ "$status" -ne 0 ] || { cat "$name.log"; fail "$name: exit 0"; }
  [ "$(grep -cE "$pattern" "$name.log")" -eq 1 ] || { cat "$name.log"; fail "$name: not once: $pattern"; }
  grep -E "$pattern" "$name.log"
  echo "PASS: $name (exit $status after $((SECONDS - start)) s)"
}
common=(--set train.steps=2 --set train.eval_every=0)
expect different_set "resolved deck .after --set.: rank.s. 1 differ from rank 0 in optimizer.lr: [0-9.e-]+ on rank 0, 0.01 on rank 1[^;]" -- \
  -np 1 "$train" "$deck" "${common[@]}" --out run : \
  -np 1 "$train" "$deck" "${common[@]}" --set optimizer.lr=0.01 --out run
printf 'layers:\n  - qkv Y meshslice S=2\n  - attn_out Y meshslice S=2\n  - ff1 Y meshslice S=2\n  - ff2 X meshslice S=2\n' >a/plan.yaml
sed 's/S=2/S=1/' a/plan.yaml >b/plan.yaml
expect different_file "file plan.file = plan.yaml: rank.s. 1 differ from rank 0" -- \
  -np 1 --wdir a "$train" "$deck" "${common[@]}" --plan plan.yaml --out ../run : \
  -np 1 --wdir b "$train" "$deck" "${common[@]}" --plan plan.yaml --out ../run
# Another build: the same app with one character of its embedded git revision changed, in the
# binary or, where the library is shared, in a copy of libmeshslice that rank 1 loads instead.
revision=$("$train" --version | sed -n 's/^git_revision: //p')
if [ "$revision" = unknown ]; then  # a build from a source tree without git has none to change
  echo "SKIP: different_build (this build has no git revision)"
  exit 0
fi
python3 - "$train" "$revision" <<'PY' || fail "could not make another build"
import os, re, shutil, subprocess, sys
train = sys.argv[1]
# Its first 8 characters: the compiler may store the rest apart (a "-dirty" suffix, or the
# string built from 8-byte immediates in the code).
revision = sys.argv[2][:8].encode()
changed = (b"0" if revision[:1] != b"0" else b"1") + revision[1:]
def patched(source, target):
    data = open(source, "rb").read()
    if revision not in data:
        return False
    open(target, "wb").write(data.replace(revision, changed))
    os.chmod(target, 0o755)
    return True
if patched(train, "other-build"):
    sys.exit(0)
libraries = re.findall(r"=> (\S*libmeshslice[^ ]*\.so[^ ]*)", subprocess.run(
    ["ldd", train], capture_output=True, text=True).stdout)
os.makedirs("other-lib", exist_ok=True)
assert libraries and patched(libraries[0], os.path.join("other-lib", os.path.basename(libraries[0]))), \
    f"revision {revision!r} is in neither {train} nor its libmeshslice"
with open("other-build", "w") as f:
    f.write(f'#!/bin/sh\nLD_LIBRARY_PATH="{os.path.abspath("other-lib")}:$LD_LIBRARY_PATH" exec {train} "$@"\n')
os.chmod("other-build", 0o755)
PY
expect different_build "the build .--version.: rank.s. 1 differ from rank 0 in git_revision: [0-9a-f]+.* on rank 0, [0-9a-f]+.* on rank 1" -- \
  -np 1 "$train" "$deck" "${common[@]}" --out run : \
  -np 1 ./other-build "$deck" "${common[@]}" --out run
