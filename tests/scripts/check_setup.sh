# Sourced first by the check_*.sh end-to-end scripts so that they start alike: a missing
# argument ends the script (set -u) instead of becoming an empty path for rm -rf, and every
# failed check ends it with one "FAIL: ..." line and status 1.
set -u
fail() { echo "FAIL: $*"; exit 1; }
