#!/usr/bin/env python3
"""PyTorch reference for scripts/bench-train.sh: the models meshslice-train trains, float.

--task teacher (inputs/train/bench-h1024.yaml): L pre-norm blocks (RMSNorm with gain, QKV,
causal multi-head attention, output projection, residual, RMSNorm, FF1, GeLU (tanh), FF2,
residual; no biases), MSE against fixed random targets.
--task lm (inputs/train/bench-lm.yaml): token embedding, the same blocks with RoPE on q and k
(in each head, dimensions d and d + dim/2 turn by position * 10000^(-2d/dim), as
src/model/reference_model.cpp), final RMSNorm with gain, the head (H x V_p, or with --tied the
embedding transposed), cross-entropy over the vocabulary. V_p is the vocabulary padded as
meshslice pads it (--vocab-multiple, 16 on a 1x2 mesh), so the head's GEMMs are the same size;
the padding's logits are left out of the softmax. The tokens are random ids in [0, 257) (the
byte-level dataset's range), one fixed batch: the data does not change the time of a step.

Both: AdamW (betas 0.9, 0.95, no weight decay) with global-norm clipping. Times whole training
steps (forward, backward, clipping, optimizer) and prints one JSON line: the best step's seconds
and tokens/s, the torch version, its BLAS and CPU kernels, the attention used and the threads
actually in use (torch's, and the BLAS library's where it can be asked).

--precision bf16 runs the forward pass under torch.autocast in bfloat16 (the linear layers'
GEMMs in bf16, softmax, norms and the loss in float32; the weights and the optimizer stay
float32): what meshslice-train's train.precision bf16 is set beside.

--precision tf32 (GPU only) runs float32 with TF32 matmuls (torch.backends.cuda.matmul.
allow_tf32), what meshslice-train's train.precision tf32 is set beside.

--device cuda runs it on the GPU in float32 with TF32 off (what meshslice computes: its float
GEMMs are IEEE float, cuBLAS's default math), and reports the GPU and cuBLAS instead of the BLAS.

    python3 bench_train_torch.py --task lm --vocab 32768 --hidden 1024 --heads 8 --blocks 2 \
        --seq-len 512 --sequences 4 --steps 6 --threads 2
"""
import argparse
import ctypes
import json
import math
import re
import sys
import time

import torch
import torch.nn.functional as F

ROPE_BASE = 10000.0  # src/model/model_config.hpp kRopeBase
RMS_EPSILON = 1e-6   # kRmsNormEpsilon


def rmsnorm(x, gain):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + RMS_EPSILON) * gain


def rope_tables(seq_len, head_dim):
    half = head_dim // 2
    inverse = torch.exp(-2.0 * torch.arange(half, dtype=torch.float64) / head_dim
                        * math.log(ROPE_BASE))
    angle = torch.arange(seq_len, dtype=torch.float64)[:, None] * inverse[None, :]
    return angle.cos().float(), angle.sin().float()  # seq_len x half


def rotate(t, cos, sin):  # t: batch x heads x seq x head_dim; pairs (d, d + half)
    half = t.shape[-1] // 2
    x1, x2 = t[..., :half], t[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class Block(torch.nn.Module):
    def __init__(self, hidden, heads, attention):
        super().__init__()
        self.heads = heads
        self.attention = attention
        self.norm1 = torch.nn.Parameter(torch.ones(hidden))
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.attn_out = torch.nn.Linear(hidden, hidden, bias=False)
        self.norm2 = torch.nn.Parameter(torch.ones(hidden))
        self.ff1 = torch.nn.Linear(hidden, 4 * hidden, bias=False)
        self.ff2 = torch.nn.Linear(4 * hidden, hidden, bias=False)

    def forward(self, x, mask, rope):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(rmsnorm(x, self.norm1)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
        if rope is not None:
            q, k = rotate(q, *rope), rotate(k, *rope)
        if self.attention == "sdpa":
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(d)
            p = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
            a = p @ v
        x = x + self.attn_out(a.transpose(1, 2).reshape(b, s, h))
        return x + self.ff2(F.gelu(self.ff1(rmsnorm(x, self.norm2)), approximate="tanh"))


class Model(torch.nn.Module):
    def __init__(self, args):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            Block(args.hidden, args.heads, args.attention) for _ in range(args.blocks))
        self.rope = rope_tables(args.seq_len, args.hidden // args.heads) if args.rope else None
        self.lm = args.task == "lm"
        if self.lm:
            self.vocab = args.vocab
            self.padded = (args.vocab + args.vocab_multiple - 1) // args.vocab_multiple \
                * args.vocab_multiple
            self.embedding = torch.nn.Embedding(self.padded, args.hidden)
            self.final_norm = torch.nn.Parameter(torch.ones(args.hidden))
            self.head = None if args.tied else torch.nn.Linear(args.hidden, self.padded, bias=False)

    def forward(self, x, mask, target):
        if self.lm:
            x = self.embedding(x)
        for block in self.blocks:
            x = block(x, mask, self.rope)
        if not self.lm:
            return F.mse_loss(x, target)
        h = rmsnorm(x, self.final_norm)
        logits = F.linear(h, self.embedding.weight if self.head is None else self.head.weight)
        if self.padded > self.vocab:  # the padding is never predicted
            logits = logits[..., :self.vocab]
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def mapped_libraries():
    try:
        with open("/proc/self/maps") as maps:
            return sorted({line.split()[-1] for line in maps if "/" in line})
    except OSError:
        return []


def blas_report(threads):
    """Which BLAS torch multiplies with, and its thread count: BLAS_INFO of torch's build
    (mkl, open, generic = the system's libblas.so.3, for Debian an alternative), the library
    mapped into the process, and OpenBLAS's own thread count (set to `threads`: at::
    set_num_threads sets OpenMP's and MKL's, not OpenBLAS's, which reads OPENBLAS_NUM_THREADS)."""
    config = torch.__config__.show()
    info = re.search(r"BLAS_INFO=(\w+)", config)
    capability = re.search(r"CPU capability usage: (\w+)", config)
    report = {"blas_info": info.group(1) if info else "unknown",
              "cpu_capability": capability.group(1) if capability else "unknown"}
    mkl = re.search(r"Math Kernel Library Version ([\w.]+)", config)
    dnnl = re.search(r"MKL-DNN (v[\w.]+)", config)
    if mkl:
        report["mkl"] = mkl.group(1)
    if dnnl:
        report["onednn"] = dnnl.group(1)
    libraries = mapped_libraries()
    # (numpy's own OpenBLAS, which torch 2 loads with numpy, multiplies none of torch's tensors)
    blas_libs = [lib for lib in libraries if re.search(r"openblas|libblas|libmkl|blis", lib)
                 and "numpy" not in lib]
    report["blas_libraries"] = blas_libs
    for lib in blas_libs:
        try:
            handle = ctypes.CDLL(lib)
            get, put = handle.openblas_get_num_threads, handle.openblas_set_num_threads
        except (OSError, AttributeError):
            continue
        report["blas_threads_at_start"] = get()
        if get() != threads:
            put(threads)
        report["blas_threads"] = get()
        config_fn = getattr(handle, "openblas_get_config", None)
        if config_fn is not None:
            config_fn.restype = ctypes.c_char_p
            report["openblas_config"] = config_fn().decode().strip()
        corename = getattr(handle, "openblas_get_corename", None)
        if corename is not None:
            corename.restype = ctypes.c_char_p
            report["openblas_core"] = corename().decode().strip()
        break
    if report["blas_info"] == "mkl" or any("libmkl" in lib for lib in blas_libs):
        report.setdefault("blas_threads", torch.get_num_threads())  # at:: sets MKL's
    if report["blas_info"] == "mkl":
        report["blas"] = f"MKL {report.get('mkl', '')}".strip()
    elif "openblas_config" in report:
        report["blas"] = report["openblas_config"].split()[0] + (
            " (pthread)" if any("openblas-pthread" in lib for lib in blas_libs)
            else " (openmp)" if any("openblas-openmp" in lib for lib in blas_libs) else "")
    else:
        report["blas"] = report["blas_info"]
    return report


def without_tf32():
    """Float32 GEMMs and convolutions in IEEE float32, as meshslice's float GEMMs through cuBLAS
    (torch's matmul default is already so; cuDNN's is not)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def gpu_report(tf32):
    """The GPU and the math it is held to."""
    name = torch.cuda.get_device_name()
    math = "float32 in TF32" if tf32 else "float32, no TF32"
    return {"gpu": name, "blas": f"cuBLAS (CUDA {torch.version.cuda}, {name}, {math})",
            "cpu_capability": "gpu", "blas_threads": "-", "tf32": tf32}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=("teacher", "lm"), default="teacher")
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--sequences", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=32768, help="task lm: the vocabulary")
    parser.add_argument("--vocab-multiple", type=int, default=16,
                        help="task lm: pad the vocabulary to a multiple of this (meshslice: "
                             "8 x lcm(mesh rows, cols))")
    parser.add_argument("--tied", action="store_true", help="task lm: the head is the embedding")
    parser.add_argument("--rope", type=int, choices=(0, 1), default=None,
                        help="RoPE on q and k (default: on for lm, off for teacher)")
    parser.add_argument("--attention", choices=("auto", "matmul", "sdpa"), default="auto",
                        help="matmul: q k^T, masked softmax, p v (what meshslice computes); "
                             "sdpa: F.scaled_dot_product_attention (torch 2); auto: sdpa where "
                             "torch has it")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cuda: the GPU, float32 without TF32")
    parser.add_argument("--precision", choices=("float", "bf16", "tf32"), default="float",
                        help="bf16: the forward pass under torch.autocast(dtype=torch.bfloat16); "
                             "tf32 (cuda only): float32 with TF32 matmuls (allow_tf32)")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    args.rope = bool(args.rope) if args.rope is not None else args.task == "lm"
    if args.attention == "auto":
        args.attention = "sdpa" if hasattr(F, "scaled_dot_product_attention") else "matmul"
    torch.set_num_threads(args.threads)
    if args.precision == "tf32" and args.device != "cuda":
        parser.error("--precision tf32 is for --device cuda (TF32 is a GPU tensor-core format)")
    if args.device == "cuda":
        without_tf32()
        if args.precision == "tf32":
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.set_float32_matmul_precision("high")
    blas = blas_report(args.threads) if args.device == "cpu" else gpu_report(args.precision == "tf32")
    torch.manual_seed(1)
    device = torch.device(args.device)
    model = Model(args).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0)
    shape = (args.sequences, args.seq_len)
    if args.task == "lm":
        tokens = torch.randint(0, 257, (args.sequences, args.seq_len + 1))
        x, target = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    else:
        x, target = torch.randn(shape + (args.hidden,)), torch.randn(shape + (args.hidden,))
    x, target = x.to(device), target.to(device)
    if model.rope is not None:
        model.rope = tuple(t.to(device) for t in model.rope)
    mask = torch.triu(torch.ones(args.seq_len, args.seq_len, dtype=torch.bool, device=device),
                      diagonal=1)
    # A GPU runs asynchronously: a step ends when its kernels have (loss.item() waits too).
    synchronize = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    best, losses = float("inf"), []
    for step in range(args.steps):
        synchronize()
        start = time.perf_counter()
        with torch.autocast(args.device, dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            loss = model(x, mask, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        synchronize()
        seconds = time.perf_counter() - start
        losses.append(loss.item())
        if step > 0:  # the first step allocates and warms up
            best = min(best, seconds)
    tokens = args.sequences * args.seq_len
    result = {"task": args.task, "device": args.device, "threads": args.threads,
              "torch_threads": torch.get_num_threads(), "best_step_seconds": best,
              "tokens_per_second": tokens / best, "torch": torch.__version__,
              "python": sys.executable, "attention": args.attention,
              "precision": args.precision,
              "first_loss": losses[0], "last_loss": losses[-1]}
    if args.task == "lm":
        result.update(vocab=args.vocab, padded_vocab=model.padded, tied=args.tied)
    result.update(blas)
    if args.precision == "bf16":  # the library autocast's bf16 linear layers multiply with
        result["bf16_gemm"] = (f"cuBLAS (CUDA {torch.version.cuda}) bf16" if args.device == "cuda"
                               else f"oneDNN {blas.get('onednn', '')} bf16".replace("  ", " ")
                               if torch.backends.mkldnn.is_available() else "torch's own bf16")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
