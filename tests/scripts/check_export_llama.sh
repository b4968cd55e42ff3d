#!/usr/bin/env bash
# check_export_llama.sh OUT EXPORT REFERENCE_LOGITS MPIEXEC... -- TRAIN DECK [ARGS...]: a Llama
# trained by meshslice runs in Hugging Face transformers. Trains DECK (a SwiGLU language model)
# for 30 steps in float with its own head and with a tied one, and in bf16 with its own head
# (whose checkpoint and export hold BF16 weights), exports each last checkpoint
# with meshslice-export, and has
# check_export_llama.py load it with LlamaForCausalLM and compare its logits, loss and greedy
# continuation of a text with the serial reference's on the same checkpoint
# (REFERENCE_LOGITS, tests/export/reference_logits.cpp). Also: a GeLU model and a bad argument
# are refused with one error naming why, and nothing is written. The Python with torch and
# transformers is $MESHSLICE_CHECK_TRANSFORMERS_PYTHON, else $MESHSLICE_CHECK_PYTHON, else python3;
# without them the transformers check is skipped (exit 77) after the others passed.
source "$(dirname "${BASH_SOURCE[0]}")/check_setup.sh"
out=$1 export=$2 reference=$3
shift 3
launcher=()
while [ "$1" != -- ]; do launcher+=("$1"); shift; done
shift
rm -rf "$out"
mkdir -p "$out"
train=("${launcher[@]}" "$@" --set train.eval_every=30 --set train.sample_every=0)
runs=(untied tied bf16)
for head in "${runs[@]}"; do
  tied=false precision=float
  [ "$head" = tied ] && tied=true
  [ "$head" = bf16 ] && precision=bf16
  "${train[@]}" --set train.steps=30 --set model.tied_head=$tied --set train.precision=$precision \
    --out "$out/$head" >"$out/$head.log" 2>&1 || { cat "$out/$head.log"; fail "training the $head Llama"; }
  "$export" "$out/$head/checkpoints/latest" "$out/hf-$head" || fail "meshslice-export ($head head)"
  for f in config.json model.safetensors; do [ -s "$out/hf-$head/$f" ] || fail "no $f"; done
done
# Refusals: a GeLU MLP (2 steps), a missing checkpoint, a stray option; nothing written.
"${train[@]}" --set train.steps=2 --set model.mlp=gelu --set model.ffn_hidden=0 \
  --out "$out/gelu" >"$out/gelu.log" 2>&1 || { cat "$out/gelu.log"; fail "training GeLU"; }
expect_refusal() {
  local pattern=$1
  shift
  "$export" "$@" >"$out/refused.log" 2>&1
  local status=$?
  cat "$out/refused.log"
  [ "$status" -eq 2 ] || fail "exit status $status, not 2, for: $*"
  [ "$(grep -cE "$pattern" "$out/refused.log")" -eq 1 ] || fail "no single '$pattern' for: $*"
  [ ! -e "$out/refused" ] || fail "an export that failed wrote $out/refused"
}
expect_refusal "cannot be exported as a Llama: its MLP is model.mlp = gelu, Llama's is swiglu" \
  "$out/gelu/checkpoints/latest" "$out/refused"
expect_refusal "is not a checkpoint: cannot read .*trainer.json" "$out/none" "$out/refused"
expect_refusal "unknown option '--bogus'" --bogus "$out/untied/checkpoints/latest" "$out/refused"
text="The licence of this program grants every user the same freedoms to copy, change and share."
python=${MESHSLICE_CHECK_TRANSFORMERS_PYTHON:-${MESHSLICE_CHECK_PYTHON:-python3}}
status=0
for head in "${runs[@]}"; do
  "$reference" "$out/$head/checkpoints/latest" "$text" "$out/reference-$head.json" ||
    fail "the reference's logits ($head head)"
  echo "--- the $head Llama"
  "$python" "$(dirname "${BASH_SOURCE[0]}")/check_export_llama.py" "$out/hf-$head" \
    "$out/reference-$head.json"
  status=$?
  [ "$status" -eq 0 ] || break
done
exit "$status"
