# Sourced first by the check_*.sh end-to-end scripts so that they start alike: a missing
# argument ends the script (set -u) instead of becoming an empty path for rm -rf, and every
# failed check ends it with one "FAIL: ..." line and status 1.
set -u
fail() { echo "FAIL: $*"; exit 1; }
# train_two_steps DIR NAME COMMAND...: COMMAND (meshslice-train) for 2 steps, without progress
# lines or a final checkpoint, into DIR/NAME with its log in DIR/NAME.log; a failed run prints
# its log and fails.
train_two_steps() {
  local dir=$1 name=$2
  shift 2
  "$@" --set train.steps=2 --set train.log_every=1000 --set checkpoint.at_end=false \
    --out "$dir/$name" >"$dir/$name.log" 2>&1 || { cat "$dir/$name.log"; fail "the $name run failed"; }
}
