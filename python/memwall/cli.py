"""mw-import: a PyTorch module or Hugging Face model to an mw function.

    mw-import --hf gpt2 [--preset tiny|published] [--attention sdpa|eager]
              [--config KEY=VALUE ...]
              [--seq S --batch B] [--train] -o model.mlir --weights w.safetensors
    mw-import --module path/to/file.py:factory [--train] -o model.mlir

Errors (an unmapped ATen op, a dynamic dimension, a bad option) print one
message and exit 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mw-import",
        description="Import a PyTorch model (torch.export, core ATen) into "
                    "Memwall's mw dialect.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--hf", metavar="FAMILY",
                     help="a Hugging Face model from its config class: gpt2, "
                          "bert, llama or opt (random init, no download)")
    src.add_argument("--module", metavar="FILE.py:FACTORY",
                     help="a factory returning (module, example_inputs) or a "
                          "dict with keys module, inputs and optionally "
                          "input_names, output_names, dynamic_shapes")
    p.add_argument("--preset", default="tiny",
                   help="--hf size: tiny (default) or published")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config field (repeatable)")
    p.add_argument("--attention", default="sdpa", choices=("sdpa", "eager"),
                   help="--hf attention: sdpa (default; the fused mw.attention) "
                        "or eager (matmul, mask, softmax, matmul: the "
                        "probabilities are activations, as in PyTorch eager)")
    p.add_argument("--seq", type=int, help="sequence length (default 32)")
    p.add_argument("--batch", type=int, help="batch size (default 2)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random weights and example inputs")
    p.add_argument("--train", action="store_true",
                   help="import forward + loss (@forward(params, inputs, "
                        "labels) -> loss), the input of --mw-autodiff")
    p.add_argument("-o", "--output", default="-", help="the .mlir file (- for stdout)")
    p.add_argument("--weights", metavar="FILE",
                   help="write the parameters as safetensors under their "
                        "state_dict names (without it, --hf models are built "
                        "with fake tensors: no memory for the weights)")
    p.add_argument("--save-inputs", metavar="FILE",
                   help="write the example inputs (and labels) as safetensors")
    return p


def _load_factory(spec: str):
    from .fx_importer import MwImportError
    if ":" not in spec:
        raise MwImportError(f"--module wants FILE.py:FACTORY, got '{spec}'")
    path, name = spec.rsplit(":", 1)
    if not os.path.isfile(path):
        raise MwImportError(f"--module: no file '{path}'")
    mod_spec = importlib.util.spec_from_file_location("mw_import_user_module", path)
    mod = importlib.util.module_from_spec(mod_spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    mod_spec.loader.exec_module(mod)
    factory = getattr(mod, name, None)
    if factory is None or not callable(factory):
        raise MwImportError(f"--module: '{path}' has no callable '{name}'")
    return factory


def _atomic_write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".mw-import.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def run(argv) -> int:
    args = _parser().parse_args(argv)
    from . import api, hf
    from .fx_importer import MwImportError

    seq = args.seq if args.seq is not None else 32
    batch = args.batch if args.batch is not None else 2
    if seq <= 0 or batch <= 0:
        raise MwImportError("--seq and --batch must be positive")
    if args.hf:
        import transformers
        # Config validation notes (token ids of tiny vocabularies, the loss
        # type) would bury mw-import's own messages.
        transformers.logging.set_verbosity_error()
        overrides = {}
        for kv in args.config:
            if "=" not in kv:
                raise MwImportError(f"--config wants KEY=VALUE, got '{kv}'")
            k, v = kv.split("=", 1)
            overrides[k] = hf.parse_value(v)
        # Without --weights nothing needs the parameters' values: fake
        # tensors keep published sizes (Llama-7B) within a laptop's memory.
        model, config = hf.build_model(args.hf, args.preset, overrides, args.seed,
                                       materialize=bool(args.weights),
                                       attention=args.attention)
        limit = getattr(config, "n_positions", None) or \
            getattr(config, "max_position_embeddings", None)
        if limit is not None and seq > limit:
            raise MwImportError(
                f"--seq {seq} is longer than the model's {limit} positions")
        module = hf.wrap(args.hf, model, args.train)
        inputs = hf.example_inputs(args.hf, config, batch, seq, args.train, args.seed)
        header = (f"// Imported by mw-import from transformers "
                  f"{type(model).__name__} ({args.hf}, preset {args.preset}"
                  + "".join(f", {kv}" for kv in args.config)
                  + (f", {args.attention} attention" if args.attention != "sdpa" else "")
                  + f"), batch {batch}, seq {seq}"
                  + (", forward + loss" if args.train else ", logits") + "\n")
        res = api.import_module(module, inputs, train=args.train, strip_prefix="m.",
                                output_names=None if args.train else ["logits"],
                                header=header)
    else:
        factory = _load_factory(args.module)
        import torch
        torch.manual_seed(args.seed)
        made = factory()
        if isinstance(made, dict):
            module, inputs = made["module"], made["inputs"]
            out_names = made.get("output_names")
            dyn = made.get("dynamic_shapes")
        else:
            module, inputs = made
            out_names, dyn = None, None
        res = api.import_module(module, tuple(inputs), train=args.train,
                                output_names=out_names, dynamic_shapes=dyn,
                                header=f"// Imported by mw-import from {args.module}\n")
    _atomic_write(args.output, res.mlir)
    if args.weights:
        api.save_safetensors(res.weights, args.weights)
    if args.save_inputs:
        api.save_safetensors(res.inputs, args.save_inputs)
    return 0


def main(argv=None) -> int:
    from .fx_importer import MwImportError
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except MwImportError as e:
        print(f"mw-import: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
