#!/usr/bin/env python3
"""mw-models opt against Hugging Face's OPTForCausalLM, through mw-eval.

Builds a tiny OPTForCausalLM (transformers, random init under a fixed seed,
dropout off, do_layer_norm_before as every OPT but 350m), copies its weights
into `mw-models opt --logits` under the same names (embed_positions without
its first two rows: HF reads row p + 2 for position p, mw-models row p; the
tied lm_head is embed_tokens), and compares the logits of a batch of random
tokens from mw-eval with HF's. Prints one line:
`opt-hf max_abs_err=E max_logit=M argmax_agree=A/N`; fails beyond --atol.
Needs torch and transformers (the importer's venv).
"""

import argparse
import os
import struct
import subprocess
import sys
import tempfile

import torch
import transformers as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_tensors import f32, read_f32, write_safetensors  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--atol", type=float, default=1e-4)
    args = ap.parse_args()
    B, S, D, H, F, L, V = 2, 32, 64, 4, 256, 2, 256
    config = tf.OPTConfig(hidden_size=D, num_attention_heads=H, ffn_dim=F,
                          num_hidden_layers=L, vocab_size=V,
                          max_position_embeddings=S, word_embed_proj_dim=D,
                          do_layer_norm_before=True, dropout=0.0,
                          attention_dropout=0.0, activation_dropout=0.0,
                          layerdrop=0.0, pad_token_id=1, bos_token_id=0,
                          eos_token_id=0)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = tf.OPTForCausalLM(config).eval()
    # HF initialises LayerNorms to 1 and 0 and biases to 0: perturb every
    # tensor so that a swapped or missing parameter shows.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    tokens = torch.randint(0, V, (B, S), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = model(input_ids=tokens, attention_mask=torch.ones(B, S)).logits

    weights = {}
    for name, t in model.state_dict().items():
        if name == "lm_head.weight":
            continue  # tied to embed_tokens
        if name == "model.decoder.embed_positions.weight":
            t = t[2:]
        weights[name] = f32(t)
    weights["tokens"] = ("I32", [B, S], struct.pack("<%di" % (B * S), *tokens.flatten().tolist()))
    with tempfile.TemporaryDirectory() as tmp:
        fwd = os.path.join(tmp, "opt.mlir")
        w = os.path.join(tmp, "w.safetensors")
        out = os.path.join(tmp, "out.safetensors")
        write_safetensors(w, weights)
        subprocess.run([os.path.join(args.bin, "mw-models"), "opt", "--layers", str(L),
                        "--hidden", str(D), "--heads", str(H), "--ffn", str(F),
                        "--seq", str(S), "--batch", str(B), "--vocab", str(V),
                        "--logits", "-o", fwd], check=True)
        subprocess.run([os.path.join(args.bin, "mw-eval"), fwd, "--inputs", w,
                        "--outputs", out], check=True, stdout=subprocess.DEVNULL)
        shape, got = read_f32(out, "logits")
    assert shape == [B, S, V], shape
    ref = want.flatten().tolist()
    err = max(abs(a - b) for a, b in zip(got, ref))
    peak = max(abs(x) for x in ref)
    agree = sum(
        max(range(V), key=lambda j: got[i * V + j]) == max(range(V), key=lambda j: ref[i * V + j])
        for i in range(B * S))
    print("opt-hf max_abs_err=%.3e max_logit=%.3f argmax_agree=%d/%d"
          % (err, peak, agree, B * S))
    if err > args.atol:
        sys.exit("mw-models opt differs from OPTForCausalLM by %.3e, more than %g"
                 % (err, args.atol))


if __name__ == "__main__":
    main()
