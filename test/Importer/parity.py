"""Parity of an imported Hugging Face model with PyTorch (issue 19, part 2).

For one model family at its tiny preset, on the same weights and inputs:
  - logits and loss from mw-eval equal PyTorch's (relative 1e-5, f32);
  - the gradients of the imported training step (mw-opt --mw-autodiff) equal
    torch.autograd's (relative 1e-4);
  - the planned step run by mw-run on the CPU gives the same loss and
    gradients (same bounds).

Relative error of a tensor is max|ours - torch| / max|torch| (a norm-wise
bound: element-wise ratios are meaningless where values cross zero). The
gradients come out of an SGD step with lr = 2^10 and no weight decay:
g = (p - p') / lr, exact in the scaling, and with the step much larger than
p the subtraction loses no bits of g that matter at 1e-4.

Run by ctest with the venv's python (build/venv/bin/python); exits 77
(skipped) only when torch or transformers cannot be imported.

  parity.py --family gpt2 --bin BUILD/bin [--attention sdpa|eager] [--keep DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import transformers
    from safetensors.torch import load_file
except ImportError as e:  # the venv is absent: a skip, not a failure
    print(f"skipped: {e}")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from memwall import api, hf  # noqa: E402

transformers.logging.set_verbosity_error()

LR = 1024.0
TOL_FWD = 1e-5
TOL_GRAD = 1e-4


def rel(ours, ref, floor=0.0):
    ours = ours.double()
    ref = ref.double()
    scale = max(ref.abs().max().item(), floor)
    diff = (ours - ref).abs().max().item()
    return diff / scale if scale > 0 else diff


def worst_grad(weights, new, named):
    """The worst per-tensor relative error of g = (p - p') / LR, and the
    tensor. A tensor whose gradient is zero analytically (the key projection's
    bias: softmax does not see a per-query constant added to every score)
    holds only rounding noise in both programs (torch's is below 1e-6 of the
    model's largest gradient); its error is measured against the model's
    largest gradient instead of its own noise."""
    gmax = max(p.grad.abs().max().item() for p in named.values()
               if p.grad is not None)
    worst, worst_name = 0.0, ""
    zeros = []
    for name, p0 in weights.items():
        g_ours = (p0.double() - new[name].double()) / LR
        g_ref = named[name].grad
        if g_ref.abs().max().item() < 1e-6 * gmax:
            zeros.append(name)
            e = rel(g_ours, g_ref, gmax)
        else:
            e = rel(g_ours, g_ref)
        if e >= worst:
            worst, worst_name = e, name
    if zeros:
        print(f"  (analytically zero gradients, measured against the largest "
              f"gradient: {', '.join(zeros)})")
    return worst, worst_name


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("command failed:", " ".join(cmd))
        print(r.stdout)
        print(r.stderr)
        sys.exit(1)
    return r.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--family", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--keep")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--attention", default="sdpa", choices=hf.ATTENTION)
    args = p.parse_args()
    b = lambda tool: os.path.join(args.bin, tool)  # noqa: E731

    work = args.keep or tempfile.mkdtemp(prefix=f"mw-parity-{args.family}.")
    os.makedirs(work, exist_ok=True)
    f = lambda name: os.path.join(work, name)  # noqa: E731
    failures = []

    def check(what, err, tol):
        ok = err <= tol
        print(f"{args.family}: {what}: max rel error {err:.3e} (bound {tol:g}) "
              f"{'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(what)

    def import_and_eval(name, module, inputs, **kwargs):
        """Imports `module`, writes NAME.mlir, the weights and the inputs,
        runs mw-eval on them and returns (the import, its output `name`)."""
        res = api.import_module(module, inputs, strip_prefix="m.", **kwargs)
        open(f(name + ".mlir"), "w").write(res.mlir)
        api.save_safetensors(res.weights, f("weights.safetensors"))
        api.save_safetensors(res.inputs, f(name + ".in.safetensors"))
        run([b("mw-eval"), f(name + ".mlir"), "--inputs", f("weights.safetensors"),
             "--inputs", f(name + ".in.safetensors"),
             "--outputs", f(name + ".out.safetensors")])
        return res, load_file(f(name + ".out.safetensors"))[name]

    torch.set_grad_enabled(True)
    model, config = hf.build_model(args.family, "tiny", seed=0,
                                   attention=args.attention)

    # Logits.
    ids, = hf.example_inputs(args.family, config, args.batch, args.seq, False)
    res, ours = import_and_eval("logits", hf.wrap(args.family, model, False),
                                (ids,), output_names=["logits"])
    with torch.no_grad():
        ref = hf.wrap(args.family, model, False)(ids)
    check("logits (mw-eval)", rel(ours, ref), TOL_FWD)

    # Loss.
    batch = hf.example_inputs(args.family, config, args.batch, args.seq, True)
    res, ours_loss = import_and_eval("loss", hf.wrap(args.family, model, True),
                                     batch, train=True)
    loss_mod = hf.wrap(args.family, model, True)
    model.zero_grad()
    ref_loss = loss_mod(*batch)
    ref_loss.backward()
    check("loss (mw-eval)", rel(ours_loss, ref_loss.detach()), TOL_FWD)

    # Gradients of the imported training step.
    run([b("mw-opt"), f("loss.mlir"),
         f"--mw-autodiff=optimizer=sgd lr={LR} weight-decay=0", "-o", f("step.mlir")])
    run([b("mw-eval"), f("step.mlir"), "--entry", "train_step",
         "--inputs", f("weights.safetensors"), "--inputs", f("loss.in.safetensors"),
         "--outputs", f("step.out.safetensors")])
    new = load_file(f("step.out.safetensors"))
    named = dict(model.named_parameters())
    worst, worst_name = worst_grad(res.weights, new, named)
    check(f"gradients (mw-eval, worst {worst_name})", worst, TOL_GRAD)
    check("loss of the training step (mw-eval)", rel(new["loss"], ref_loss.detach()),
          TOL_FWD)

    # The planned step on the CPU runtime.
    run([b("mw-opt"), f("step.mlir"), "--mw-train-pipeline", "-o", f("planned.mlir")])
    run([b("mw-translate"), "--mw-to-plan", f("planned.mlir"), "-o", f("step.mwplan")])
    out = run([b("mw-run"), f("step.mwplan"), "--weights", f("weights.safetensors"),
               "--inputs", f("loss.in.safetensors"), "--steps", "1",
               "--save-weights", f("run.out.safetensors"), "--report", "json"])
    report = json.loads(out)
    run_loss = torch.tensor(report_loss(report))
    check("loss (mw-run, cpu)", rel(run_loss, ref_loss.detach()), TOL_FWD)
    new = load_file(f("run.out.safetensors"))
    worst, worst_name = worst_grad(res.weights, new, named)
    check(f"gradients (mw-run, cpu, worst {worst_name})", worst, TOL_GRAD)

    if failures:
        print(f"{args.family}: FAILED: {', '.join(failures)} (files in {work})")
        return 1
    print(f"{args.family}: parity ok")
    return 0


def report_loss(report):
    steps = report.get("steps")
    if isinstance(steps, list) and steps:
        s = steps[0]
        return float(s["loss"] if isinstance(s, dict) else s)
    if "losses" in report:
        return float(report["losses"][0])
    raise KeyError(f"no loss in mw-run's report: {sorted(report)}")


if __name__ == "__main__":
    sys.exit(main())
