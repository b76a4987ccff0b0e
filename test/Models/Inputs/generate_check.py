#!/usr/bin/env python3
"""mw-run --generate against the training-style forward, greedy.

Builds gpt2-tiny's `mw-models gpt --inference` (@prefill, @decode) and
`--logits` (@forward), one set of random weights, plans both steps
(`--mw-train-pipeline`, `mw-translate --mw-plan-function=...`) and serves
prompts of different lengths (one longer than the prefill's prompt length,
so its prefill takes two steps) with more requests than the max batch, with
`mw-run --generate --greedy --reference-matmul --report json`. Then @forward
recomputes every request from scratch over prompt + generated tokens, and
each generated token must be the argmax of the forward's logits at the
position before it. Prints one line:
`generate kv-layout=L kv-blocks=N requests=R tokens=T preemptions=P agree=A/T`
and checks the report's keys and ranges; --min-preemptions requires a run
that preempted.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "runtime", "test", "eval_parity"))
from generate import read_safetensors as read_st  # noqa: E402
from generate import write_safetensors as write_st  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paged_decode_check import argmax, run  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--kv-blocks", type=int, default=16)
    ap.add_argument("--kv-layout", default="paged")
    ap.add_argument("--max-new-tokens", type=int, default=12)
    ap.add_argument("--min-preemptions", type=int, default=0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", help="also write the plans, weights and prompts here")
    args = ap.parse_args()
    b = lambda tool: os.path.join(args.bin, tool)  # noqa: E731
    # Token ids of five prompts: 5, 2, 11 (> P = 8), 1 and 9 tokens.
    prompts = [[(i * 37 + k * 11) % 256 for k in range(n)]
               for i, n in enumerate([5, 2, 11, 1, 9])]
    R, S, V = len(prompts), 32, 256
    with tempfile.TemporaryDirectory() as tmp:
        t = args.keep or tmp
        fwd, inf = os.path.join(t, "fwd.mlir"), os.path.join(t, "inf.mlir")
        w = os.path.join(t, "w.safetensors")
        run([b("mw-models"), "gpt", "--batch", str(R), "--logits", "-o", fwd])
        run([b("mw-eval"), fwd, "--random-inputs", str(args.seed), "--save-inputs", w])
        weights = read_st(w)
        weights.pop("tokens")
        write_st(w, weights)
        run([b("mw-models"), "gpt", "--inference", "--max-batch", "2", "--max-seq",
             str(S), "--prompt-len", "8", "--block", "4", "--kv-blocks", "16",
             "-o", inf])
        planned = os.path.join(t, "planned.mlir")
        run([b("mw-opt"), inf, "--mw-train-pipeline", "-o", planned])
        for f in ("prefill", "decode"):
            run([b("mw-translate"), "--mw-to-plan", planned,
                 "--mw-plan-function=" + f, "-o", os.path.join(t, f + ".mwplan")])
        jsonl = os.path.join(t, "prompts.jsonl")
        with open(jsonl, "w") as f:
            for p in prompts:
                f.write(json.dumps({"prompt": p}) + "\n")
        out = run([b("mw-run"), os.path.join(t, "decode.mwplan"), "--generate",
                   "--prefill", os.path.join(t, "prefill.mwplan"), "--prompts", jsonl,
                   "--max-new-tokens", str(args.max_new_tokens), "--greedy",
                   "--kv-layout", args.kv_layout, "--kv-blocks", str(args.kv_blocks),
                   "--weights", w, "--reference-matmul", "--report", "json"])
        rep = json.loads(out)
        for key in ("tokens_per_s", "ttft_ms", "kv_utilization", "preemptions"):
            if key not in rep:
                sys.exit("the report has no '%s': %s" % (key, sorted(rep)))
        if not (rep["tokens_per_s"] > 0 and rep["ttft_ms"] >= 0
                and 0 < rep["kv_utilization"] <= 1
                and isinstance(rep["preemptions"], int) and rep["preemptions"] >= 0):
            sys.exit("report values out of range: %s" % out)
        outs = rep["outputs"]
        if len(outs) != R or any(len(o) != args.max_new_tokens for o in outs):
            sys.exit("expected %d outputs of %d tokens: %s" % (R, args.max_new_tokens, outs))
        if rep["generated_tokens"] != R * args.max_new_tokens:
            sys.exit("generated_tokens %s" % rep["generated_tokens"])
        if rep["preemptions"] < args.min_preemptions:
            sys.exit("expected at least %d preemptions, got %d"
                     % (args.min_preemptions, rep["preemptions"]))

        # The reference: each request from scratch, right-padded to S.
        tokens = []
        for p, o in zip(prompts, outs):
            seq = (p + o)[:S]
            tokens += seq + [0] * (S - len(seq))
        ref_in, ref_out = os.path.join(tmp, "ref.in"), os.path.join(tmp, "ref.out")
        write_st(ref_in, {"tokens": ("I32", [R, S], struct.pack("<%di" % len(tokens), *tokens))})
        run([b("mw-eval"), fwd, "--inputs", w, "--inputs", ref_in, "--outputs", ref_out])
        dt, _, data = read_st(ref_out)["logits"]
        ref = struct.unpack("<%df" % (len(data) // 4), data)
        agree = total = 0
        for r, (p, o) in enumerate(zip(prompts, outs)):
            for k, tok in enumerate(o):
                pos = len(p) + k - 1  # the logits that predicted it
                row = ref[(r * S + pos) * V:(r * S + pos + 1) * V]
                total += 1
                agree += argmax(row) == tok
        print("generate kv-layout=%s kv-blocks=%d requests=%d tokens=%d preemptions=%s "
              "agree=%d/%d" % (args.kv_layout, args.kv_blocks, R, total,
                               "some" if rep["preemptions"] else "none", agree, total))
        if agree != total:
            sys.exit("only %d of %d generated tokens are the forward's greedy ones"
                     % (agree, total))


if __name__ == "__main__":
    main()
