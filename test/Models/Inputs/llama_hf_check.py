#!/usr/bin/env python3
"""mw-models llama --rotary against Hugging Face's LlamaForCausalLM, through
mw-eval.

Builds a tiny LlamaForCausalLM (transformers, random init under a fixed seed,
rms_norm_eps 1e-6, rope_theta 10000, no biases, untied lm_head) with
--kv-heads key/value heads (num_key_value_heads: grouped-query attention when
fewer than the 4 query heads), copies its weights into `mw-models llama
--rotary --kv-heads N --logits` under the same names, and compares the logits
of a batch of random tokens from mw-eval with HF's. Then the gradients: one
`--train --optimizer sgd --lr 1` step of mw-eval moves every parameter by its
gradient of the mean cross-entropy (labels not shifted), which must be
torch's (autograd through LlamaForCausalLM, repeat_kv included). Prints
`llama-hf kv_heads=N max_abs_err=E max_logit=M argmax_agree=A/N` and
`llama-hf kv_heads=N grads=G max_grad_err=E max_grad=M`; fails beyond --atol
(logits) or --grad-atol. Needs torch and transformers (the importer's venv).
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
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--grad-atol", type=float, default=1e-5)
    args = ap.parse_args()
    B, S, D, H, F, L, V = 2, 32, 64, 4, 176, 2, 256
    config = tf.LlamaConfig(hidden_size=D, num_attention_heads=H,
                            num_key_value_heads=args.kv_heads,
                            intermediate_size=F, num_hidden_layers=L,
                            vocab_size=V, max_position_embeddings=S,
                            rms_norm_eps=1e-6, rope_theta=10000.0,
                            attention_bias=False, mlp_bias=False,
                            tie_word_embeddings=False, attention_dropout=0.0)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(config).eval()
    # HF initialises the norms to 1: perturb every tensor so that a swapped or
    # missing parameter shows.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    tokens = torch.randint(0, V, (B, S), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = model(input_ids=tokens, attention_mask=torch.ones(B, S)).logits

    weights = {name: f32(t) for name, t in model.state_dict().items()
               if not name.endswith("rotary_emb.inv_freq")}
    weights["tokens"] = ("I32", [B, S], struct.pack("<%di" % (B * S), *tokens.flatten().tolist()))
    labels = torch.randint(0, V, (B, S), generator=torch.Generator().manual_seed(2))
    logits = model(input_ids=tokens, attention_mask=torch.ones(B, S)).logits
    torch.nn.functional.cross_entropy(logits.reshape(-1, V), labels.reshape(-1)).backward()
    grads = {name: p.grad for name, p in model.named_parameters()}
    dims = ["--rotary", "--kv-heads", str(args.kv_heads), "--layers", str(L),
            "--hidden", str(D), "--heads", str(H), "--ffn", str(F), "--seq", str(S),
            "--batch", str(B), "--vocab", str(V)]
    models = os.path.join(args.bin, "mw-models")
    mw_eval = os.path.join(args.bin, "mw-eval")
    with tempfile.TemporaryDirectory() as tmp:
        fwd = os.path.join(tmp, "llama.mlir")
        train = os.path.join(tmp, "train.mlir")
        w = os.path.join(tmp, "w.safetensors")
        out = os.path.join(tmp, "out.safetensors")
        step = os.path.join(tmp, "step.safetensors")
        write_safetensors(w, weights)
        subprocess.run([models, "llama"] + dims + ["--logits", "-o", fwd], check=True)
        subprocess.run([mw_eval, fwd, "--inputs", w, "--outputs", out], check=True,
                       stdout=subprocess.DEVNULL)
        shape, got = read_f32(out, "logits")
        weights["labels"] = ("I32", [B, S], struct.pack("<%di" % (B * S), *labels.flatten().tolist()))
        write_safetensors(w, weights)
        subprocess.run([models, "llama"] + dims + ["--train", "--optimizer", "sgd",
                        "--lr", "1", "-o", train], check=True)
        subprocess.run([mw_eval, train, "--entry", "train_step", "--inputs", w,
                        "--outputs", step], check=True, stdout=subprocess.DEVNULL)
        grad_err = grad_peak = 0.0
        for name, g in grads.items():
            _, updated = read_f32(step, name)
            before = model.state_dict()[name].flatten().tolist()
            for u, p0, gv in zip(updated, before, g.flatten().tolist()):
                grad_err = max(grad_err, abs((p0 - u) - gv))
                grad_peak = max(grad_peak, abs(gv))
    assert shape == [B, S, V], shape
    ref = want.flatten().tolist()
    err = max(abs(a - b) for a, b in zip(got, ref))
    peak = max(abs(x) for x in ref)
    agree = sum(
        max(range(V), key=lambda j: got[i * V + j]) == max(range(V), key=lambda j: ref[i * V + j])
        for i in range(B * S))
    print("llama-hf kv_heads=%d max_abs_err=%.3e max_logit=%.3f argmax_agree=%d/%d"
          % (args.kv_heads, err, peak, agree, B * S))
    print("llama-hf kv_heads=%d grads=%d max_grad_err=%.3e max_grad=%.3e"
          % (args.kv_heads, len(grads), grad_err, grad_peak))
    if err > args.atol:
        sys.exit("mw-models llama differs from LlamaForCausalLM by %.3e, more than %g"
                 % (err, args.atol))
    if grad_err > args.grad_atol:
        sys.exit("mw-models llama's gradients differ from torch's by %.3e, more than %g"
                 % (grad_err, args.grad_atol))

if __name__ == "__main__":
    main()
