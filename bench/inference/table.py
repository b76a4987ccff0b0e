#!/usr/bin/env python3
"""The tables of bench/inference/run.sh from its --mw-kv-plan records.

The synthetic request-length distribution (chat-like, long-tailed; seeded):
prompt lengths log-normal with median 128 tokens and sigma 1.0, output
lengths log-normal with median 192 and sigma 1.0 (ShareGPT's means are 161
and 338 tokens, vLLM's paper), both at least 1, the prompt clipped to
max-seq - 1 and the output to max-seq - prompt. One draw per max-seq (1024,
2048), `--requests` requests.

KV memory reserved, over each request's decode steps (a request holding l
tokens after a step, l = prompt + 1 .. prompt + output):
- contiguous: max-seq tokens from admission to the end (the seeds'
  preallocation);
- paged: ceil(l / block) * block tokens.
Waste = 1 - (tokens stored) / (tokens reserved), summed over all steps of
all requests; bytes = tokens * the plan's bytes per token. No run needed.
"""
import argparse
import json
import math
import random


def draw(n, max_seq, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        p = int(round(rng.lognormvariate(math.log(128), 1.0)))
        o = int(round(rng.lognormvariate(math.log(192), 1.0)))
        p = min(max(p, 1), max_seq - 1)
        o = min(max(o, 1), max_seq - p)
        out.append((p, o))
    return out


def paged_sum(n, b):
    """sum over l = 1..n of ceil(l / b) * b."""
    q, r = divmod(n, b)
    return b * b * q * (q + 1) // 2 + r * (q + 1) * b


def waste(reqs, max_seq, block):
    stored = contiguous = paged = 0
    final_paged = final_stored = 0
    for p, o in reqs:
        a, e = p + 1, p + o
        stored += (e * (e + 1) - (a - 1) * a) // 2
        contiguous += o * max_seq
        paged += paged_sum(e, block) - paged_sum(a - 1, block)
        final_stored += e
        final_paged += -(-e // block) * block
    return {
        "stored_token_steps": stored,
        "contiguous_waste": 1 - stored / contiguous,
        "paged_waste": 1 - stored / paged,
        "paged_waste_final": 1 - final_stored / final_paged,
        "contiguous_waste_final": 1 - final_stored / (len(reqs) * max_seq),
        # Mean tokens reserved per running request (step-weighted).
        "mean_paged_tokens": paged / sum(o for _, o in reqs),
        "mean_stored_tokens": stored / sum(o for _, o in reqs),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("records")
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--block", type=int, default=16)
    ap.add_argument("--max-batch", type=int, default=32)
    ap.add_argument("--prompt-len", type=int, default=128)
    a = ap.parse_args()
    recs = [json.loads(l) for l in open(a.records) if l.strip()]
    dist = {}
    for r in recs:
        ms = r["max_seq"]
        if ms not in dist:
            reqs = draw(a.requests, ms, a.seed)
            dist[ms] = (reqs, waste(reqs, ms, a.block))

    print(f"## KV cache sizing from the plan (f16 weights, max-batch "
          f"{a.max_batch}, prefill {a.prompt_len} tokens, {a.block}-token "
          f"blocks)\n")
    print("| model | device | kv | bytes/token | persistent GB | arena MB "
          "| blocks | max tokens | seqs @len | contiguous seqs @max-seq "
          "| paged seqs (distribution) |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: | ---: |")
    for r in recs:
        w = dist[r["max_seq"]][1]
        paged_seqs = int(r["max_resident_tokens"] // w["mean_paged_tokens"])
        print(f"| {r['model']} | {r['memory']} | {r['kv_dtype']} "
              f"| {r['bytes_per_token']} "
              f"| {r['persistent_bytes'] / 1e9:.2f} "
              f"| {r['arena_bytes'] / 1e6:.1f} | {r['blocks']} "
              f"| {r['max_resident_tokens']} "
              f"| {r['max_sequences']} @{r['seq_len']} "
              f"| {r['contiguous_max_seq_sequences']} | {paged_seqs} |")
    print()
    print(f"## Reserved KV memory: contiguous max-seq preallocation vs "
          f"{a.block}-token paging ({a.requests} requests, seed {a.seed})\n")
    print("| max-seq | mean prompt | mean output | contiguous waste "
          "| paged waste | paged waste at completion "
          "| paged reserved/request | contiguous reserved/request |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for ms, (reqs, w) in sorted(dist.items()):
        mp = sum(p for p, _ in reqs) / len(reqs)
        mo = sum(o for _, o in reqs) / len(reqs)
        print(f"| {ms} | {mp:.1f} | {mo:.1f} | {w['contiguous_waste']:.1%} "
              f"| {w['paged_waste']:.2%} | {w['paged_waste_final']:.2%} "
              f"| {w['mean_paged_tokens']:.1f} tokens | {ms} tokens |")
    print()
    print("Per model, bytes = tokens x bytes/token above (e.g. "
          "llama-7b-shaped f16: 524288 bytes per token).")


if __name__ == "__main__":
    main()
