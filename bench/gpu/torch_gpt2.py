#!/usr/bin/env python3
"""PyTorch eager GPT-2 small training steps: the baseline of bench/gpu/run.sh.

The configuration of `mw-models gpt --preset gpt2-small --train`: 12 layers,
hidden 768, 12 heads, MLP 3072, vocab 50257, seq 1024, batch 1, tied lm_head,
tanh GELU, LayerNorm eps 1e-5, AdamW (lr 1e-3, betas 0.9/0.999, eps 1e-8,
weight decay 0.01), all f32 with TF32 off. Attention is the eager math path
(matmul, causal mask, softmax, matmul) unless --sdpa. Prints the median step
time and torch.cuda.max_memory_allocated.
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads, ff, sdpa):
        super().__init__()
        self.heads, self.sdpa = heads, sdpa
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.c_fc = nn.Linear(d, ff)
        self.mlp_proj = nn.Linear(ff, d)

    def attn(self, x):
        b, s, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = att @ v
        return self.c_proj(y.transpose(1, 2).reshape(b, s, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)),
                                        approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, layers=12, d=768, heads=12, ff=3072, seq=1024,
                 vocab=50257, sdpa=False):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Parameter(torch.zeros(seq, d))
        self.blocks = nn.ModuleList(Block(d, heads, ff, sdpa)
                                    for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)

    def forward(self, tokens, labels):
        x = self.wte(tokens) + self.wpe
        for blk in self.blocks:
            x = blk(x)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               labels.view(-1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--sdpa", action="store_true",
                   help="fused scaled_dot_product_attention instead of eager")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = Gpt2(seq=a.seq, sdpa=a.sdpa).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999),
                            eps=1e-8, weight_decay=0.01)
    tokens = torch.randint(0, 50257, (a.batch, a.seq), device=dev)
    labels = torch.randint(0, 50257, (a.batch, a.seq), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(tokens, labels)
        loss.backward()
        opt.step()
        return loss

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times, losses = [], []
    for _ in range(a.steps):
        start = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
        losses.append(loss.item())
    result = {
        "median_step_ms": statistics.median(times),
        "step_times_ms": times,
        "losses": losses,
        "max_memory_allocated_bytes": torch.cuda.max_memory_allocated(),
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
    }
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"median step {result['median_step_ms']:.2f} ms, peak "
              f"{result['max_memory_allocated_bytes'] / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
