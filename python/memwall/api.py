"""The importer's Python API: export a module, import it, write the files.

`import_module` is what mw-import runs; tests call it directly so they can
compare the imported program with PyTorch on the same weights and inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Sequence

import torch

from .fx_importer import (FxImporter, ImportedFunction, MwImportError,
                          check_static_shapes)

aten = torch.ops.aten

#: Ops the default core-ATen decomposition would take apart but mw has
#: whole: keeping them keeps the planner's view of the program (one
#: attention, one cross-entropy) and their gradient rules.
_KEEP = (
    "aten.scaled_dot_product_attention.default",
    "aten._scaled_dot_product_flash_attention_for_cpu.default",
    "aten._scaled_dot_product_attention_math.default",
    "aten.nll_loss_forward.default",
    "aten.silu.default",
    "aten.gelu.default",
    "aten._log_softmax.default",
    "aten._softmax.default",
    "aten.native_layer_norm.default",
)


def decomposition_table():
    tbl = torch.export.default_decompositions()
    for k in list(tbl.keys()):
        if str(k) in _KEEP:
            del tbl[k]
    return tbl


@dataclass
class ImportResult:
    mlir: str
    function: ImportedFunction
    #: argument name -> tensor, parameters only (what --weights writes)
    weights: Dict[str, torch.Tensor]
    #: argument name -> tensor, the example inputs and labels
    inputs: Dict[str, torch.Tensor]


def _role_of_input(name: str) -> str:
    n = name.lower()
    return "label" if ("label" in n or "target" in n) else "input"


def import_module(module: torch.nn.Module, example_inputs: Sequence[torch.Tensor],
                  *, input_names: Optional[Sequence[str]] = None,
                  output_names: Optional[Sequence[str]] = None,
                  train: bool = False, strip_prefix: str = "",
                  dynamic_shapes=None, header: str = "") -> ImportResult:
    """Exports `module(*example_inputs)` with torch.export and imports it.

    With `train`, the module must return one rank-0 float tensor, the loss,
    and the function is the one `--mw-autodiff` turns into a training step.
    """
    module = module.eval()
    try:
        ep = torch.export.export(module, tuple(example_inputs),
                                 dynamic_shapes=dynamic_shapes, strict=False)
    except Exception as e:  # noqa: BLE001 - one message for the user
        raise MwImportError(f"torch.export failed: {type(e).__name__}: {e}")
    check_static_shapes(ep)
    ep = ep.run_decompositions(decomposition_table())

    # Parameter names: the state_dict's, a tied tensor named once (by its
    # first name in state_dict order).
    sd = module.state_dict(keep_vars=True)
    first_name: Dict[int, str] = {}
    canonical: Dict[str, str] = {}
    for name, t in sd.items():
        if not isinstance(t, torch.nn.Parameter):
            continue
        key = id(t)
        first_name.setdefault(key, name)
        canonical[name] = first_name[key]
    param_names = {}
    for spec in ep.graph_signature.input_specs:
        if spec.target is not None and spec.target in canonical:
            n = canonical[spec.target]
            if strip_prefix and n.startswith(strip_prefix):
                n = n[len(strip_prefix):]
            param_names[spec.target] = n
    # Keep state_dict order for the arguments.
    ordered = {}
    for name in sd:
        if name in param_names:
            ordered[name] = param_names[name]
    for k, v in param_names.items():
        ordered.setdefault(k, v)

    user_names = [s.arg.name for s in ep.graph_signature.input_specs
                  if s.kind.name == "USER_INPUT"]
    roles = {n: _role_of_input(n) for n in user_names}
    n_out = sum(1 for s in ep.graph_signature.output_specs
                if s.kind.name == "USER_OUTPUT")
    if train:
        outs = ["loss"]
        if n_out != 1:
            raise MwImportError(
                f"--train needs the module to return one tensor, the loss; "
                f"it returns {n_out}")
        val = [n for n in ep.graph.nodes if n.op == "output"][0].args[0][0].meta.get("val")
        if not isinstance(val, torch.Tensor) or val.dim() != 0 or \
                not val.dtype.is_floating_point:
            raise MwImportError(
                "--train needs the module to return a rank-0 float loss; it "
                f"returns {getattr(val, 'shape', val)!s}")
    else:
        outs = list(output_names) if output_names else (
            ["output"] if n_out == 1 else [f"output{i}" for i in range(n_out)])
    imp = FxImporter(ep, param_names=ordered, input_roles=roles,
                     output_names=outs, strip_prefix=strip_prefix)
    fn = imp.run()

    weights = {}
    params_by_name = {}
    for target, name in ordered.items():
        params_by_name.setdefault(name, sd[target])
    for a in fn.args:
        if a.role == "param":
            weights[a.name] = params_by_name[a.name].detach()
    inputs = {}
    for a, t in zip([a for a in fn.args if a.role != "param"], example_inputs):
        inputs[a.name] = t
    mlir = header + fn.mlir
    return ImportResult(mlir, fn, weights, inputs)


def save_safetensors(tensors: Dict[str, torch.Tensor], path: str) -> None:
    from safetensors.torch import save_file
    save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, path)
