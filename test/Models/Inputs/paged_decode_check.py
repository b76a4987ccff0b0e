#!/usr/bin/env python3
"""Paged decode against the training-style forward, through mw-eval.

Builds `mw-models FAMILY --logits` (@forward returning [B, S, V] logits) and
`mw-models FAMILY --inference` (@prefill, @decode), draws one set of weights,
and serves a batch of sequences of different prompt lengths: @prefill writes
the left-padded prompts into cache blocks taken from a shuffled free list (so
no sequence's blocks are in order or adjacent), then @decode runs greedy steps,
one token per sequence, allocating a block whenever a sequence crosses a block
boundary; one sequence leaves the batch early (its slot then has context
length 0 and slot -1). The caches go from each step's outputs to the next
step's inputs. Afterwards @forward recomputes every sequence from scratch,
and each step's logits must match the forward's at the same position:

  f32 cache:   within --rtol of the largest |logit| (1e-5 by default) and the
               same argmax (greedy token) everywhere;
  other cache: within --rtol (the quantization error's bound), and the share of
               steps whose argmax agrees is reported.

The int8 and fp8e4m3 scales are calibrated per head from an f32 run's caches
(each head's largest |key or value| over every layer, over the code range). Pure Python and mw-eval; prints
one line per run: `paged-decode FAMILY kv=T steps=N max_rel_err=E argmax_agree=A/N`,
and for int8/fp8 how many free-running greedy tokens equal the f32 cache
run's. --weights serves given (e.g. trained) weights instead of random ones,
--prompt-kind sequence prompts of consecutive ids, --steps the decode steps.
"""

import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile

# safetensors as raw bytes: the eval-parity generator's reader and writer.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "runtime", "test", "eval_parity"))
from generate import read_safetensors as read_st  # noqa: E402
from generate import write_safetensors as write_st  # noqa: E402


def i32(shape, values):
    return ("I32", list(shape), struct.pack("<%di" % len(values), *values))


def floats(t):
    dtype, _, data = t
    assert dtype == "F32", dtype
    return list(struct.unpack("<%df" % (len(data) // 4), data))


SIZES = {"F32": 4, "BF16": 2, "F16": 2, "I8": 1, "F8_E4M3": 1}


def decode_values(t):
    """A cache's elements as floats (its codes for I8 / F8_E4M3 are not
    needed: only f32 caches are calibrated from)."""
    return floats(t)


# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return r.stdout


def argmax(row):
    best = 0
    for j, v in enumerate(row):
        if v > row[best]:
            best = j
    return best


class Server:
    """The batch's sequences, their blocks and the cache between steps."""

    def __init__(self, args, tmp, inf, weights, kv, scale):
        self.args, self.tmp, self.inf, self.weights = args, tmp, inf, weights
        self.kv, self.scale = kv, scale
        rng = random.Random(args.seed)
        self.free = list(range(args.kv_blocks))
        rng.shuffle(self.free)
        self.tables = [[] for _ in args.prompts]
        if args.prompt_kind == "sequence":
            # Runs of consecutive ids, as in mw-run's synthetic training
            # sequence (docs/runtime.md), from different starts.
            self.tokens = [[(start + t) % args.vocab for t in range(n)]
                           for start, n in zip(args.starts, args.prompts)]
        else:
            self.tokens = [[rng.randrange(args.vocab) for _ in range(n)]
                           for n in args.prompts]
        self.active = [True] * len(args.prompts)
        # Per recorded step: (sequence, position, logits row).
        self.records = []

    def slot(self, b, pos):
        bs = self.args.block
        while len(self.tables[b]) <= pos // bs:
            self.tables[b].append(self.free.pop())
        return self.tables[b][pos // bs] * bs + pos % bs

    def table_tensor(self):
        mb = -(-self.args.max_seq // self.args.block)
        rows = []
        for t in self.tables:
            rows += t + [-1] * (mb - len(t))
        return i32([len(self.tables), mb], rows)

    def step(self, entry, batch, caches):
        inp = os.path.join(self.tmp, "%s.in" % entry)
        out = os.path.join(self.tmp, "%s.out" % entry)
        write_st(inp, batch)
        cmd = [self.args.mw_eval, self.inf, "--entry", entry, "--inputs",
               self.weights, "--inputs", inp, "--inputs", caches,
               "--outputs", out]
        if self.args.mw_run and entry == "decode":
            # Keep the step's inputs (the batch and the caches it reads) and
            # mw-eval's outputs, for the plan to repeat.
            merged = read_st(caches)
            merged.update(batch)
            write_st(os.path.join(self.tmp, "last.in"), merged)
        run(cmd)
        result = read_st(out)
        if self.args.mw_run and entry == "decode":
            write_st(os.path.join(self.tmp, "last.out"), result)
        logits = floats(result.pop("logits"))
        write_st(caches, result)
        return logits

    def serve(self, caches):
        a = self.args
        B, P, V = len(a.prompts), a.prompt_len, a.vocab
        tok, pos, slots = [], [], []
        for b, prompt in enumerate(self.tokens):
            pad = P - len(prompt)
            for t in range(P):
                p = t - pad
                tok.append(prompt[p] if p >= 0 else 0)
                pos.append(max(p, 0))
                slots.append(self.slot(b, p) if p >= 0 else -1)
        lens = [len(p) for p in self.tokens]
        logits = self.step("prefill", {
            "tokens": i32([B, P], tok), "positions": i32([B, P], pos),
            "slot_mapping": i32([B * P], slots), "block_tables": self.table_tensor(),
            "context_lens": i32([B], lens)}, caches)
        self.record(logits, lens)
        for step in range(a.steps):
            if step == a.leave_after:
                self.active[a.leaver] = False
            tok, pos, slots, lens = [], [], [], []
            for b in range(B):
                if not self.active[b]:
                    tok.append(0), pos.append(0), slots.append(-1), lens.append(0)
                    continue
                p = len(self.tokens[b]) - 1  # the newest token, not yet cached
                tok.append(self.tokens[b][-1])
                pos.append(p)
                slots.append(self.slot(b, p))
                lens.append(p + 1)
            logits = self.step("decode", {
                "tokens": i32([B, 1], tok), "positions": i32([B, 1], pos),
                "slot_mapping": i32([B], slots), "block_tables": self.table_tensor(),
                "context_lens": i32([B], lens)}, caches)
            self.record(logits, lens)

    def record(self, logits, lens):
        V = self.args.vocab
        for b, n in enumerate(lens):
            if n == 0:
                continue
            row = logits[b * V:(b + 1) * V]
            self.records.append((b, n - 1, row))
            self.tokens[b].append(argmax(row))  # greedy


def zero_caches(mw_eval, inf_path, path):
    """Empty caches for @prefill: mw-eval's random inputs make the kv_cache
    arguments zero (and the i32 inputs small valid indices)."""
    run([mw_eval, inf_path, "--entry", "prefill", "--random-inputs", "0",
         "--save-inputs", path])
    tensors = read_st(path)
    write_st(path, {n: t for n, t in tensors.items()
                    if n.endswith("k_cache") or n.endswith("v_cache")})


def check_plan(args, tmp, inf, weights):
    """The last decode step through the runtime: logits and caches must be
    mw-eval's, bit for bit (matmul with the evaluator's loops)."""
    planned = os.path.join(tmp, "planned.mlir")
    plan = os.path.join(tmp, "decode.mwplan")
    out = os.path.join(tmp, "run.out")
    run([os.path.join(args.bin, "mw-opt"), inf, "--mw-train-pipeline", "-o", planned])
    run([os.path.join(args.bin, "mw-translate"), "--mw-to-plan", planned,
         "--mw-plan-function=decode", "-o", plan])
    run([os.path.join(args.bin, "mw-run"), plan, "--device", "cpu", "--weights", weights,
         "--inputs", os.path.join(tmp, "last.in"), "--steps", "1",
         "--reference-matmul", "--save-outputs", out])
    want, got = read_st(os.path.join(tmp, "last.out")), read_st(out)
    if sorted(want) != sorted(got):
        sys.exit("mw-run's outputs %s are not mw-eval's %s" % (sorted(got), sorted(want)))
    differ = [n for n in want if want[n] != got[n]]
    if differ:
        sys.exit("mw-run's decode step differs from mw-eval's in %s" % ", ".join(differ))
    print("mw-run decode step: %d outputs equal mw-eval's bit for bit" % len(want))
    # A block table entry outside the cache is an error, not a wild read.
    bad = read_st(os.path.join(tmp, "last.in"))
    dtype, shape, _ = bad["block_tables"]
    bad["block_tables"] = i32(shape, [args.kv_blocks] * (shape[0] * shape[1]))
    bad_in = os.path.join(tmp, "bad.in")
    write_st(bad_in, bad)
    r = subprocess.run([os.path.join(args.bin, "mw-run"), plan, "--weights", weights,
                        "--inputs", bad_in, "--steps", "1"], capture_output=True, text=True)
    needle = "block_tables[0, 0] = %d is outside the cache's %d blocks" % (
        args.kv_blocks, args.kv_blocks)
    if r.returncode == 0 or needle not in r.stderr:
        sys.exit("mw-run with a bad block table: exit %d, %s" % (r.returncode, r.stderr))
    print("mw-run bad block table: " + r.stderr.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--family", default="gpt")
    ap.add_argument("--rotary", action="store_true")
    ap.add_argument("--kv-heads", type=int, default=0,
                    help="llama: key/value heads (grouped-query attention)")
    ap.add_argument("--kv-dtype", default="f32")
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--min-agree", type=float, default=1.0,
                    help="smallest share of steps whose argmax must agree")
    ap.add_argument("--min-generated-agree", type=float, default=0.0,
                    help="int8/fp8: smallest share of the free-running greedy "
                         "tokens that must equal the f32 cache's run's")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--weights", help="the model's weights (e.g. mw-run "
                    "--save-weights of a training run) instead of random ones")
    ap.add_argument("--prompt-kind", choices=["random", "sequence"], default="random",
                    help="random token ids, or consecutive ids (the synthetic "
                         "training sequence's)")
    ap.add_argument("--steps", type=int, default=6, help="greedy decode steps")
    ap.add_argument("--weight-scale", type=float, default=1.0,
                    help="multiply the random weights (larger logits)")
    ap.add_argument("--mw-run", action="store_true",
                    help="also run the last decode step as a plan (mw-opt "
                         "--mw-train-pipeline, mw-translate, mw-run --device "
                         "cpu --reference-matmul) and require mw-eval's bits")
    args = ap.parse_args()
    args.mw_eval = os.path.join(args.bin, "mw-eval")
    models = os.path.join(args.bin, "mw-models")
    args.prompts = [5, 2, 7]
    args.prompt_len, args.max_seq, args.block = 8, 32, 4
    args.starts = [3, 10, 0]
    if not 1 <= args.steps <= args.max_seq - max(args.prompts):
        sys.exit("--steps must be 1 to %d" % (args.max_seq - max(args.prompts)))
    args.leaver, args.leave_after = 1, 3
    # Twice the blocks the run needs, so the shuffled ones are scattered.
    args.kv_blocks = 2 * len(args.prompts) * (args.max_seq // args.block)
    args.vocab = 256
    B = len(args.prompts)
    common = [args.family, "--batch", str(B)] + (["--rotary"] if args.rotary else [])
    if args.kv_heads:
        common += ["--kv-heads", str(args.kv_heads)]

    with tempfile.TemporaryDirectory() as tmp:
        fwd, w = os.path.join(tmp, "fwd.mlir"), os.path.join(tmp, "w.st")
        run([models] + common + ["--logits", "-o", fwd])
        run([args.mw_eval, fwd, "--random-inputs", str(args.seed),
             "--save-inputs", w])
        weights = read_st(w)
        weights.pop("tokens")
        if args.weights:
            # The forward's parameters, by name; a training run's file also
            # holds optimizer state.
            trained = read_st(args.weights)
            missing = [n for n in weights if n not in trained]
            if missing:
                sys.exit("%s lacks %s" % (args.weights, ", ".join(missing)))
            weights = {n: trained[n] for n in weights}
        if args.weight_scale != 1.0:
            for name, (dt, shape, data) in list(weights.items()):
                vals = [v * args.weight_scale for v in floats((dt, shape, data))]
                if not name.endswith("weight") or len(shape) != 1:
                    weights[name] = (dt, shape, struct.pack("<%df" % len(vals), *vals))
        write_st(w, weights)

        def serve(kv, scale=None):
            inf = os.path.join(tmp, "inf-%s.mlir" % kv)
            cmd = [models] + common + [
                "--inference", "--max-batch", str(B), "--max-seq", str(args.max_seq),
                "--prompt-len", str(args.prompt_len), "--block", str(args.block),
                "--kv-blocks", str(args.kv_blocks), "--kv-dtype", kv, "-o", inf]
            if scale:
                cmd += ["--kv-scale", scale]
            run(cmd)
            caches = os.path.join(tmp, "caches-%s.st" % kv)
            zero_caches(args.mw_eval, inf, caches)
            s = Server(args, tmp, inf, w, kv, scale)
            s.serve(caches)
            return s, caches

        scale = None
        f32_tokens = None
        if args.kv_dtype in ("int8", "fp8e4m3"):
            # Calibrate per head: the largest |key or value| of each head
            # that an f32 run stores, over every layer.
            f32_run, caches = serve("f32")
            f32_tokens = f32_run.tokens
            peaks = None
            for dtype, shape, data in read_st(caches).values():
                heads, d = shape[2], shape[3]
                if peaks is None:
                    peaks = [0.0] * heads
                for i, v in enumerate(decode_values((dtype, shape, data))):
                    h = (i // d) % heads
                    peaks[h] = max(peaks[h], abs(v))
            top = 127.0 if args.kv_dtype == "int8" else 448.0
            scale = ",".join(repr(max(p, 1e-6) / top) for p in peaks)
        s, _ = serve(args.kv_dtype, scale)

        # The reference: every sequence from scratch, right-padded to S.
        S, V = args.max_seq, args.vocab
        tokens = []
        for seq in s.tokens:
            tokens += seq[:S] + [0] * (S - len(seq[:S]))
        ref_in = os.path.join(tmp, "ref.in")
        ref_out = os.path.join(tmp, "ref.out")
        write_st(ref_in, {"tokens": i32([B, S], tokens)})
        run([args.mw_eval, fwd, "--inputs", w, "--inputs", ref_in, "--outputs", ref_out])
        ref = floats(read_st(ref_out)["logits"])

        worst, agree = 0.0, 0
        for b, p, row in s.records:
            want = ref[(b * S + p) * V:(b * S + p + 1) * V]
            peak = max(abs(x) for x in want)
            err = max(abs(x - y) for x, y in zip(row, want)) / peak
            worst = max(worst, err)
            agree += argmax(row) == argmax(want)
        n = len(s.records)
        print("paged-decode %s%s%s kv=%s steps=%d max_rel_err=%.3e argmax_agree=%d/%d"
              % (args.family, " rotary" if args.rotary else "",
                 " kv_heads=%d" % args.kv_heads if args.kv_heads else "",
                 args.kv_dtype, n, worst, agree, n))
        if f32_tokens is not None:
            # Free-running greedy generation against the f32 cache's: the
            # generated tokens that equal the f32 run's at the same place
            # (after a first difference the contexts differ).
            same = total = 0
            for mine, ref_seq, n in zip(s.tokens, f32_tokens, args.prompts):
                for a, b in zip(mine[n:], ref_seq[n:]):
                    same += a == b
                    total += 1
            print("generated tokens equal to the f32 cache's: %d/%d" % (same, total))
            if same < args.min_generated_agree * total:
                sys.exit("only %d of %d generated tokens equal the f32 cache's"
                         % (same, total))
        if args.mw_run:
            check_plan(args, tmp, os.path.join(tmp, "inf-%s.mlir" % args.kv_dtype), w)
        if worst > args.rtol:
            sys.exit("logits differ from the forward's by %.3e of the largest, "
                     "more than %g" % (worst, args.rtol))
        if agree < args.min_agree * n:
            sys.exit("only %d of %d greedy tokens agree with the forward's" % (agree, n))


if __name__ == "__main__":
    main()
