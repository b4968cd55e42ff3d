#!/usr/bin/env python3
"""PyTorch reference for scripts/bench-train.sh: the model of inputs/train/bench-h1024.yaml
(L pre-norm blocks: RMSNorm with gain, QKV, causal multi-head attention, output projection,
residual, RMSNorm, FF1, GeLU (tanh), FF2, residual; no biases), MSE against fixed targets,
AdamW with global-norm clipping, float. Times whole training steps (forward, backward,
clipping, optimizer) on the same cores and prints one JSON line: best step seconds and tokens/s.

    python3 bench_train_torch.py --hidden 1024 --heads 8 --blocks 2 --seq-len 512 \
        --sequences 4 --steps 6 --threads 2
"""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.Parameter(torch.ones(hidden))
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.attn_out = torch.nn.Linear(hidden, hidden, bias=False)
        self.norm2 = torch.nn.Parameter(torch.ones(hidden))
        self.ff1 = torch.nn.Linear(hidden, 4 * hidden, bias=False)
        self.ff2 = torch.nn.Linear(4 * hidden, hidden, bias=False)

    @staticmethod
    def rmsnorm(x, gain):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * gain

    def forward(self, x, mask):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.rmsnorm(x, self.norm1)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        p = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        a = (p @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.attn_out(a)
        return x + self.ff2(F.gelu(self.ff1(self.rmsnorm(x, self.norm2)), approximate="tanh"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--sequences", type=int, default=4)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    blocks = torch.nn.ModuleList(Block(args.hidden, args.heads) for _ in range(args.blocks))
    optimizer = torch.optim.AdamW(blocks.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0)
    shape = (args.sequences, args.seq_len, args.hidden)
    x, target = torch.randn(shape), torch.randn(shape)
    mask = torch.triu(torch.ones(args.seq_len, args.seq_len, dtype=torch.bool), diagonal=1)
    best = float("inf")
    for step in range(args.steps):
        start = time.perf_counter()
        y = x
        for block in blocks:
            y = block(y, mask)
        loss = F.mse_loss(y, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(blocks.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        seconds = time.perf_counter() - start
        if step > 0:  # the first step allocates and warms up
            best = min(best, seconds)
    tokens = args.sequences * args.seq_len
    print(json.dumps({"threads": args.threads, "best_step_seconds": best,
                      "tokens_per_second": tokens / best, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
