#!/usr/bin/env python3
"""Loads meshslice-export's Llama with Hugging Face transformers and compares it with meshslice.

    check_export_llama.py HF_DIR REFERENCE.json

REFERENCE.json (tests/export/reference_logits.cpp) holds the serial reference's logits of a
text's tokens, the mean cross-entropy of their next tokens and the greedy continuation of the
first token, computed in double from the same checkpoint. LlamaForCausalLM.from_pretrained must
reproduce them in float32 to 1e-5 relative to the largest logit, and the greedy continuation
token for token. In float64 too, to 1e-6 only: transformers' Llama computes its RMSNorm in
float32 whatever the model's dtype (measured: 9e-8). A bf16 run's export holds BF16 weights, as
its checkpoint does, which the reference reads too: widened, they are the same numbers. Exit 77 (a skip for ctest)
without torch and transformers.
"""
import json
import sys

try:
    import torch
    import transformers
except ImportError as e:
    print(f"torch and transformers are not installed ({e}): skipped; set "
          "MESHSLICE_CHECK_TRANSFORMERS_PYTHON to a Python that has them")
    sys.exit(77)


def main(hf_dir, reference_path):
    with open(reference_path) as f:
        ref = json.load(f)
    ids = torch.tensor([ref["ids"]])
    vocab = ref["vocab"]
    want = torch.tensor(ref["logits"], dtype=torch.float64).reshape(len(ref["ids"]), vocab)
    model = transformers.LlamaForCausalLM.from_pretrained(hf_dir)
    model.eval()
    print(f"transformers {transformers.__version__}, torch {torch.__version__}: "
          f"{type(model).__name__}, {model.config.num_hidden_layers} layers, "
          f"{model.config.num_attention_heads} heads, {model.config.num_key_value_heads} "
          f"key-value heads, {model.dtype}")
    failed = []
    for dtype, tolerance in ((torch.float64, 1e-6), (torch.float32, 1e-5)):
        m = model.to(dtype)
        with torch.no_grad():
            out = m(input_ids=ids, labels=ids)  # transformers shifts the labels
        got = out.logits[0].to(torch.float64)
        scale = want.abs().max().item()
        error = (got - want).abs().max().item() / scale
        # The reference's loss is over the text's next bytes, the last one past the ids.
        logp = torch.log_softmax(got, dim=-1)
        loss = -logp[torch.arange(len(ref["ids"]) - 1), ids[0, 1:]].mean().item()
        ref_loss = -torch.log_softmax(want, dim=-1)[torch.arange(len(ref["ids"]) - 1),
                                                    ids[0, 1:]].mean().item()
        print(f"{dtype}: logits' largest difference {error:.3g} of the largest logit {scale:.3g} "
              f"(tolerance {tolerance:g}); loss {out.loss.item():.9f}, meshslice's "
              f"{ref_loss:.9f}")
        if not error <= tolerance:
            failed.append(f"{dtype} logits differ by {error:.3g}")
        if not abs(loss - ref_loss) <= 10 * tolerance * max(1.0, abs(ref_loss)):
            failed.append(f"{dtype} loss {loss} against {ref_loss}")
        if not abs(out.loss.item() - loss) <= 1e-6 * max(1.0, loss):
            failed.append(f"transformers' own loss {out.loss.item()} against {loss}")
    model = model.to(torch.float64)
    greedy = model.generate(ids[:, :1], max_new_tokens=len(ref["greedy"]) - 1, do_sample=False,
                            attention_mask=torch.ones(1, 1, dtype=torch.long))
    text = bytes(t for t in greedy[0].tolist() if t < 256).decode("utf-8", "replace")
    print(f"greedy continuation: {text!r}")
    if greedy[0].tolist() != ref["greedy"]:
        failed.append(f"greedy continuation {greedy[0].tolist()} against {ref['greedy']}")
    print(f"meshslice's ids loaded from {reference_path}; the reference's loss {ref['loss']:.9f}")
    if failed:
        print("FAIL: " + "; ".join(failed))
        return 1
    print("PASS: transformers' Llama reproduces meshslice's logits, loss and greedy continuation")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
