"""Imports a torch.export program (core ATen) into Memwall's mw dialect.

The model is torch-mlir's FX importer: walk the exported graph in order, map
each ATen node to mw ops, keep the state_dict names of parameters as the
function's `mw.name`s. The result is textual MLIR in the form mw-models
prints (`@forward(params..., inputs..., labels...) -> loss` for a training
import), so every Memwall pass, mw-eval and mw-run take it as they take a
generated model.

Values that depend on no parameter and no user input (position ids, causal
masks built with arange and comparisons, fill constants) are computed here
with torch and never reach the IR except as the attributes or constants the
ops that use them need: a constant boolean mask fed to attention becomes
`causal`, a position-id embedding becomes a slice of the table.

Anything the importer cannot map is a `MwImportError` naming the ATen op, its
operand shapes and the Python source line that produced it.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx

aten = torch.ops.aten


class MwImportError(Exception):
    """An error with one readable message for the user (mw-import exits 1)."""


_DTYPES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
}


def mlir_elem(dtype: torch.dtype, what: str = "") -> str:
    if dtype not in _DTYPES:
        raise MwImportError(
            f"{what}element type {dtype} has no mw equivalent "
            f"(mw has {', '.join(str(d) for d in _DTYPES)})")
    return _DTYPES[dtype]


def tensor_type(shape: Sequence[int], elem: str) -> str:
    if len(shape) == 0:
        return f"tensor<{elem}>"
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{elem}>"


@dataclass
class MwValue:
    """An SSA value of the function being built."""
    ssa: str
    shape: Tuple[int, ...]
    elem: str

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.elem)

    @property
    def is_float(self) -> bool:
        return self.elem in ("f32", "f16", "bf16")


@dataclass
class Const:
    """A value computed at import time (depends on no argument)."""
    value: Any  # torch.Tensor or Python scalar or a list of them


@dataclass
class _Op:
    results: List[str]
    operands: List[str]
    text: str
    keep: bool = False


@dataclass
class ArgSpec:
    """One argument of the imported function."""
    name: str
    role: str  # param | input | label
    shape: Tuple[int, ...]
    elem: str


@dataclass
class ImportedFunction:
    mlir: str
    args: List[ArgSpec]
    #: state_dict name -> placeholder names of the exported graph it binds
    param_placeholders: Dict[str, List[str]] = field(default_factory=dict)


def _node_location(node: torch.fx.Node) -> Tuple[str, int]:
    """The innermost Python source line of a node, from its stack trace."""
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+)', trace)
    if not frames:
        return ("", 0)
    path, line = frames[-1]
    return (path, int(line))


def _node_source_line(node: torch.fx.Node) -> str:
    path, line = _node_location(node)
    if not path:
        return "no source line recorded"
    trace = node.meta.get("stack_trace") or ""
    code = ""
    lines = trace.strip().splitlines()
    for i, l in enumerate(lines):
        if f'"{path}", line {line}' in l and i + 1 < len(lines):
            code = lines[i + 1].strip()
    return f"{path}:{line}" + (f": {code}" if code else "")


def _layer_of(node: torch.fx.Node, strip_prefix: str) -> str:
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    # torch writes L['self'].m.transformer... in some versions.
    path = re.sub(r"^L\['self'\]\.?", "", path)
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    if strip_prefix and path.startswith(strip_prefix):
        path = path[len(strip_prefix):]
    elif strip_prefix and path + "." == strip_prefix:
        path = ""
    return path


def _describe_arg(a: Any, env) -> str:
    if isinstance(a, torch.fx.Node):
        v = a.meta.get("val")
        if isinstance(v, torch.Tensor):
            return f"{a.name}: {list(v.shape)} {v.dtype}"
        return a.name
    if isinstance(a, (list, tuple)):
        return "[" + ", ".join(_describe_arg(x, env) for x in a) + "]"
    return repr(a)


def _static_shape(node: torch.fx.Node, v: torch.Tensor) -> Tuple[int, ...]:
    shape = []
    for i, d in enumerate(v.shape):
        if not isinstance(d, int):
            raise MwImportError(
                f"dynamic shape: dimension {i} of '{node.name}' "
                f"({node.target if node.op == 'call_function' else node.op}, "
                f"shape {list(v.shape)}) is '{d}', not a constant; Memwall plans "
                f"static shapes only (export without dynamic_shapes, or give "
                f"the dimension a fixed size)" + _at(node))
        shape.append(d)
    return tuple(shape)


def check_static_shapes(ep) -> None:
    """A dynamic dimension anywhere is an error naming it (inputs first)."""
    ranges = {str(k): v for k, v in getattr(ep, "range_constraints", {}).items()}
    for node in ep.graph.nodes:
        v = node.meta.get("val")
        if not isinstance(v, torch.Tensor):
            continue
        for i, d in enumerate(v.shape):
            if isinstance(d, int):
                continue
            what = (f"input '{node.name}'" if node.op == "placeholder"
                    else f"'{node.name}' ({node.target})")
            r = ranges.get(str(d))
            rng = f", range [{r.lower}, {r.upper}]" if r is not None else ""
            raise MwImportError(
                f"dynamic shape: dimension {i} of {what}, shape "
                f"{list(v.shape)}, is the symbol {d}{rng}; Memwall plans static "
                f"shapes only: export without dynamic_shapes or give the "
                f"dimension a fixed size" + _at(node))


def _at(node: torch.fx.Node) -> str:
    path, _ = _node_location(node)
    return f" [{_node_source_line(node)}]" if path else ""


def _float_attr(x: float) -> str:
    if math.isinf(x):
        return "0x7FF0000000000000" if x > 0 else "0xFFF0000000000000"
    r = repr(float(x))
    mant, _, exp = r.partition("e")
    if "." not in mant:
        mant += ".0"
    return mant + ("e" + exp if exp else "")


class FxImporter:
    """Builds one mw function from an ExportedProgram."""

    def __init__(self, ep, *, func_name: str = "forward",
                 param_names: Dict[str, str],
                 input_roles: Dict[str, str],
                 output_names: Sequence[str],
                 output_role: str = "output",
                 strip_prefix: str = ""):
        self.ep = ep
        self.func_name = func_name
        self.param_names = param_names  # placeholder target -> arg name
        self.input_roles = input_roles
        self.output_names = list(output_names)
        self.output_role = output_role
        self.strip_prefix = strip_prefix
        self.ops: List[_Op] = []
        self.counter = 0
        self.env: Dict[torch.fx.Node, Any] = {}
        # Facts about emitted values that later patterns read.
        self.transposed: Dict[str, MwValue] = {}  # ssa -> source (last two swapped)
        self.log_softmax_of: Dict[str, Tuple[MwValue, int]] = {}
        self.const_cache: Dict[Tuple[int, Optional[str]], MwValue] = {}
        self.const_keep: List[Const] = []  # keeps the ids above unique
        self.const_by_value: Dict[Tuple[str, Tuple[int, ...], bytes], MwValue] = {}
        self.cur_node: Optional[torch.fx.Node] = None
        self.locs: Dict[str, int] = {}
        self.loc_defs: List[str] = []

    # ------------------------------------------------------------------ IR
    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def _loc(self) -> str:
        node = self.cur_node
        if node is None:
            return ""
        layer = _layer_of(node, self.strip_prefix)
        path, line = _node_location(node)
        # Library paths from site-packages on, so the IR is the same on every
        # machine with the same versions.
        path = re.sub(r"^.*/site-packages/", "", path)
        name = layer or node.name
        inner = f'"{path}":{line}:0' if path else ""
        key = f'"{name}"({inner})' if inner else f'"{name}"'
        if key not in self.locs:
            self.locs[key] = len(self.locs) + 1
            self.loc_defs.append(f"#loc_{self.locs[key]} = loc({key})")
        return f" loc(#loc_{self.locs[key]})"

    def _attrs(self, attrs: Dict[str, str]) -> Dict[str, str]:
        out = dict(attrs)
        if self.cur_node is not None:
            layer = _layer_of(self.cur_node, self.strip_prefix)
            if layer:
                out["mw.layer"] = '"' + layer + '"'
        return out

    @staticmethod
    def _attr_dict(attrs: Dict[str, str]) -> str:
        if not attrs:
            return ""
        parts = [k if v is None else f"{k} = {v}" for k, v in attrs.items()]
        return " {" + ", ".join(parts) + "}"

    def emit(self, opname: str, operands: Sequence[MwValue], result_shapes,
             result_elems, *, attrs: Optional[Dict[str, str]] = None,
             prefix_args: str = "", syntax: str = "functional") -> List[MwValue]:
        """Emits one op in its custom syntax. `syntax` picks the type suffix:
        functional `(ins) -> outs`, `unary` `: type`, `to` `: in -> out`."""
        attrs = self._attrs(attrs or {})
        results = [MwValue(self.fresh(), tuple(s), e)
                   for s, e in zip(result_shapes, result_elems)]
        res_txt = ", ".join(r.ssa for r in results)
        ops_txt = ", ".join(o.ssa for o in operands)
        if syntax == "functional":
            ins = ", ".join(o.type for o in operands)
            outs = ", ".join(r.type for r in results)
            if len(results) > 1:
                outs = f"({outs})"
            ty = f"({ins}) -> {outs}"
        elif syntax == "unary":
            ty = results[0].type
        elif syntax == "to":
            ty = f"{operands[0].type} -> {results[0].type}"
        elif syntax == "cast":
            ty = f"{operands[0].type} to {results[0].type}"
        elif syntax in ("none", "const"):
            ty = results[0].type
        else:
            raise AssertionError(syntax)
        body = f"{opname}"
        if ops_txt:
            body += f" {ops_txt}"
        if prefix_args:
            body += f" {prefix_args}"
        if syntax == "const":
            # mw.constant prints its attribute dictionary before the value.
            text = (f"{res_txt} = {opname}{self._attr_dict(attrs)} {prefix_args} : "
                    f"{results[0].type}{self._loc()}")
        else:
            text = f"{res_txt} = {body}{self._attr_dict(attrs)} : {ty}{self._loc()}"
        self.ops.append(_Op([r.ssa for r in results], [o.ssa for o in operands], text))
        return results

    # ------------------------------------------------------------ helpers
    def splat(self, value: float, elem: str, shape=()) -> MwValue:
        if elem in ("i32", "i64"):
            if value != int(value):
                raise MwImportError(f"integer splat of non-integral {value}")
            v = _float_attr(float(int(value)))
        else:
            v = _float_attr(float(value))
        return self.emit("mw.splat", [], [shape], [elem], syntax="none",
                         prefix_args=v)[0]

    def constant(self, t: torch.Tensor) -> MwValue:
        t = t.detach().cpu()
        if t.dtype == torch.bool:
            raise MwImportError(
                "a boolean tensor would have to be materialized; mw has no "
                "boolean type" + self._here())
        elem = mlir_elem(t.dtype, "constant: ")
        shape = tuple(t.shape)
        flat = t.reshape(-1)
        if flat.numel() > 0 and bool((flat == flat[0]).all()):
            return self.splat(flat[0].item(), elem, shape)
        data = t.contiguous().numpy().tobytes()
        # Equal constants are one value: each layer folds its own copy of
        # Llama's rotary tables.
        key = (elem, shape, data)
        hit = self.const_by_value.get(key)
        if hit is not None:
            return hit
        hexs = "0x" + data.hex().upper()
        r = self.emit("mw.constant", [], [shape], [elem], syntax="const",
                      prefix_args=f'dense<"{hexs}">')[0]
        self.const_by_value[key] = r
        return r

    def _here(self) -> str:
        if self.cur_node is None:
            return ""
        return f" [{_node_source_line(self.cur_node)}]"

    def value(self, x: Any, elem: Optional[str] = None, shape=None) -> MwValue:
        """An operand as an SSA value; constants are materialized."""
        if isinstance(x, torch.fx.Node):
            x = self.env[x]
        if isinstance(x, MwValue):
            if elem is not None and x.elem != elem:
                return self.cast(x, elem)
            return x
        if isinstance(x, Const):
            # One SSA value per folded tensor, however many ops use it
            # (Llama's rotary tables feed every layer).
            key = (id(x), elem)
            hit = self.const_cache.get(key)
            if hit is not None:
                return hit
            r = self.value(x.value, elem)
            self.const_cache[key] = r
            self.const_keep.append(x)
            return r
        if isinstance(x, torch.Tensor):
            if elem is not None:
                x = x.to({v: k for k, v in _DTYPES.items()}[elem])
            if x.dim() == 0:
                return self.splat(x.item(), mlir_elem(x.dtype))
            return self.constant(x)
        if isinstance(x, (bool, int, float)):
            assert elem is not None
            return self.splat(float(x), elem)
        raise MwImportError(f"unsupported operand {x!r}" + self._here())

    def cast(self, x: MwValue, elem: str) -> MwValue:
        if x.elem == elem:
            return x
        return self.emit("mw.cast", [x], [x.shape], [elem], syntax="cast")[0]

    def reshape(self, x: MwValue, shape) -> MwValue:
        shape = tuple(shape)
        if x.shape == shape:
            return x
        return self.emit("mw.reshape", [x], [shape], [x.elem], syntax="to")[0]

    def transpose(self, x: MwValue, perm) -> MwValue:
        perm = [p % len(x.shape) for p in perm] if x.shape else []
        if perm == list(range(len(perm))):
            return x
        shape = tuple(x.shape[p] for p in perm)
        r = self.emit("mw.transpose", [x], [shape], [x.elem], syntax="to",
                      prefix_args=f"permutation = [{', '.join(map(str, perm))}]")[0]
        n = len(perm)
        if n >= 2 and perm == list(range(n - 2)) + [n - 1, n - 2]:
            self.transposed[r.ssa] = x
        return r

    def slice(self, x: MwValue, offsets, sizes, strides=None) -> MwValue:
        if list(offsets) == [0] * len(offsets) and tuple(sizes) == x.shape and \
                (strides is None or all(s == 1 for s in strides)):
            return x
        extra = (f"offsets = [{', '.join(map(str, offsets))}] "
                 f"sizes = [{', '.join(map(str, sizes))}]")
        if strides is not None and any(s != 1 for s in strides):
            extra += f" strides = [{', '.join(map(str, strides))}]"
        return self.emit("mw.slice", [x], [tuple(sizes)], [x.elem], syntax="to",
                         prefix_args=extra)[0]

    def broadcast(self, x: MwValue, shape) -> MwValue:
        shape = tuple(shape)
        if x.shape == shape:
            return x
        return self.emit("mw.broadcast_to", [x], [shape], [x.elem], syntax="to")[0]

    # ---------------------------------------------------------------- run
    def run(self) -> ImportedFunction:
        ep = self.ep
        sig = ep.graph_signature
        from torch.export.graph_signature import InputKind, OutputKind

        kinds = {}
        for spec in sig.input_specs:
            kinds[spec.arg.name] = spec
        args: List[Tuple[ArgSpec, torch.fx.Node]] = []
        by_name: Dict[str, MwValue] = {}
        param_placeholders: Dict[str, List[str]] = {}
        graph = ep.graph_module.graph
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        used = {n for n in placeholders if len(n.users) > 0}

        pending_params: List[Tuple[str, torch.fx.Node]] = []
        pending_inputs: List[Tuple[str, torch.fx.Node]] = []
        for n in placeholders:
            spec = kinds[n.name]
            if spec.kind == InputKind.PARAMETER:
                name = self.param_names[spec.target]
                param_placeholders.setdefault(name, []).append(n.name)
                if n in used:
                    pending_params.append((name, n))
            elif spec.kind in (InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                t = ep.state_dict.get(spec.target)
                if t is None:
                    t = ep.constants.get(spec.target)
                if t is None or t.device.type == "meta":
                    raise MwImportError(
                        f"buffer or constant '{spec.target}' has no value to fold")
                self.env[n] = Const(t)
            elif spec.kind == InputKind.USER_INPUT:
                pending_inputs.append((n.name, n))
            else:
                raise MwImportError(
                    f"input '{n.name}' of kind {spec.kind} is not supported "
                    f"(only parameters, buffers, constants and user inputs)")

        # Parameters in state_dict order (the order of param_names), then
        # user inputs in signature order; a tied parameter is one argument.
        order = {name: i for i, name in enumerate(dict.fromkeys(self.param_names.values()))}
        pending_params.sort(key=lambda p: order[p[0]])
        for name, n in pending_params:
            v = n.meta["val"]
            shape = _static_shape(n, v)
            elem = mlir_elem(v.dtype, f"parameter '{name}': ")
            if name not in by_name:
                spec = ArgSpec(name, "param", shape, elem)
                mv = MwValue(f"%arg{len(args)}", shape, elem)
                args.append((spec, n))
                by_name[name] = mv
            self.env[n] = by_name[name]
        for name, n in pending_inputs:
            v = n.meta.get("val")
            if not isinstance(v, torch.Tensor):
                raise MwImportError(
                    f"user input '{name}' is not a tensor ({v!r}); pass only "
                    f"tensors as example inputs")
            shape = _static_shape(n, v)
            elem = mlir_elem(v.dtype, f"input '{name}': ")
            role = self.input_roles.get(name, "input")
            spec = ArgSpec(name, role, shape, elem)
            mv = MwValue(f"%arg{len(args)}", shape, elem)
            args.append((spec, n))
            self.env[n] = mv

        out_node = None
        for node in graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                out_node = node
                break
            self.cur_node = node
            self.env[node] = self.convert(node)
        self.cur_node = None

        outs = out_node.args[0]
        user_outs = [o for o, spec in zip(outs, sig.output_specs)
                     if spec.kind == OutputKind.USER_OUTPUT]
        if len(user_outs) != len(sig.output_specs):
            raise MwImportError(
                "the exported program mutates its inputs or buffers "
                "(outputs of kind other than USER_OUTPUT); Memwall imports "
                "pure functions")
        if len(user_outs) != len(self.output_names):
            raise AssertionError((user_outs, self.output_names))
        results = []
        for o in user_outs:
            if o is None or not isinstance(o, torch.fx.Node):
                raise MwImportError(f"output {o!r} is not a tensor")
            v = self.env[o]
            if not isinstance(v, MwValue):
                v = self.value(v, mlir_elem(o.meta["val"].dtype))
            results.append(v)

        # Dead code: everything not reaching a result goes.
        live = {r.ssa for r in results}
        for op in reversed(self.ops):
            if any(r in live for r in op.results):
                op.keep = True
                live.update(op.operands)

        lines = []
        lines.extend(self.loc_defs)
        lines.append("module {")
        arg_txt = []
        for spec, _ in args:
            arg_txt.append(
                f"%arg{len(arg_txt)}: {tensor_type(spec.shape, spec.elem)} "
                f"{{mw.name = \"{spec.name}\", mw.role = #mw.role<{spec.role}>}} "
                f"loc(\"{spec.name}\")")
        res_txt = []
        for r, name in zip(results, self.output_names):
            res_txt.append(f"{r.type} {{mw.name = \"{name}\", "
                           f"mw.role = #mw.role<{self.output_role}>}}")
        lines.append(f"  func.func @{self.func_name}(" + ", ".join(arg_txt) +
                     ") -> (" + ", ".join(res_txt) + ") {")
        for op in self.ops:
            if op.keep:
                lines.append("    " + op.text)
        lines.append("    return " + ", ".join(r.ssa for r in results) + " : " +
                     ", ".join(r.type for r in results))
        lines.append("  }")
        lines.append("}")
        return ImportedFunction("\n".join(lines) + "\n", [a for a, _ in args],
                                param_placeholders)

    # ------------------------------------------------------------ convert
    def _is_const(self, a: Any) -> bool:
        if isinstance(a, torch.fx.Node):
            return isinstance(self.env.get(a), Const)
        if isinstance(a, (list, tuple)):
            return all(self._is_const(x) for x in a)
        return True

    def _concrete(self, a: Any) -> Any:
        if isinstance(a, torch.fx.Node):
            return self.env[a].value
        if isinstance(a, (list, tuple)):
            return type(a)(self._concrete(x) for x in a)
        if isinstance(a, torch.device):
            return torch.device("cpu")
        return a

    def unsupported(self, node: torch.fx.Node, why: str = "") -> MwImportError:
        args = ", ".join(_describe_arg(a, self.env) for a in node.args)
        kw = "".join(f", {k}={_describe_arg(v, self.env)}" for k, v in node.kwargs.items())
        msg = (f"no mw mapping for ATen op {node.target}({args}{kw})"
               + (f": {why}" if why else "") + f"\n  at {_node_source_line(node)}")
        return MwImportError(msg)

    def convert(self, node: torch.fx.Node) -> Any:
        if node.op != "call_function":
            raise self.unsupported(node, f"node kind {node.op}")
        target = node.target
        # Constant folding: nothing here depends on an argument.
        if self._is_const(list(node.args) + list(node.kwargs.values())):
            if target is operator.getitem:
                return Const(self._concrete(node.args[0])[node.args[1]])
            kwargs = {k: self._concrete(v) for k, v in node.kwargs.items()}
            try:
                return Const(target(*self._concrete(node.args), **kwargs))
            except Exception as e:  # noqa: BLE001 - reported with the node
                raise self.unsupported(node, f"folding a constant failed: {e}")
        if target is operator.getitem:
            src = self.env[node.args[0]]
            return src[node.args[1]]
        fn = _CONVERTERS.get(target)
        if fn is None:
            raise self.unsupported(node)
        return fn(self, node, *node.args, **node.kwargs)

    def result_meta(self, node: torch.fx.Node) -> Tuple[Tuple[int, ...], str]:
        v = node.meta["val"]
        return _static_shape(node, v), mlir_elem(v.dtype, f"'{node.name}': ")


# ---------------------------------------------------------------- converters
_CONVERTERS: Dict[Any, Callable] = {}


def _conv(*targets):
    def deco(fn):
        for t in targets:
            _CONVERTERS[t] = fn
        return fn
    return deco


def _identity(imp, node, x, *args, **kwargs):
    return imp.env[x] if isinstance(x, torch.fx.Node) else x


for _t in (aten.clone.default, aten.alias.default, aten.detach.default,
           aten.lift_fresh_copy.default, aten.contiguous.default):
    _CONVERTERS[_t] = _identity


@_conv(aten._assert_tensor_metadata.default)
def _assert_meta(imp, node, *args, **kwargs):
    return None


@_conv(aten.view.default, aten._unsafe_view.default, aten.reshape.default,
       aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims,
       aten.squeeze.default, aten.flatten.using_ints)
def _view(imp, node, x, *args, **kwargs):
    shape, _ = imp.result_meta(node)
    return imp.reshape(imp.value(x), shape)


@_conv(aten.expand.default)
def _expand(imp, node, x, sizes, *args, **kwargs):
    shape, _ = imp.result_meta(node)
    # expand only adds leading dims or stretches size-1 dims: a broadcast.
    return imp.broadcast(imp.value(x), shape)


@_conv(aten.permute.default)
def _permute(imp, node, x, dims):
    return imp.transpose(imp.value(x), list(dims))


@_conv(aten.t.default)
def _t(imp, node, x):
    v = imp.value(x)
    return imp.transpose(v, [1, 0]) if len(v.shape) == 2 else v


@_conv(aten.transpose.int)
def _transpose(imp, node, x, d0, d1):
    v = imp.value(x)
    n = len(v.shape)
    perm = list(range(n))
    perm[d0 % n], perm[d1 % n] = perm[d1 % n], perm[d0 % n]
    return imp.transpose(v, perm)


def _binary(opname, torch_name):
    def conv(imp, node, a, b, alpha=None, **kwargs):
        if kwargs.get("rounding_mode") is not None:
            raise imp.unsupported(node, "rounding_mode")
        shape, elem = imp.result_meta(node)
        va = imp.value(a, elem)
        vb = imp.value(b, elem)
        if alpha is not None and alpha != 1:
            vb = imp.emit("mw.mul", [vb, imp.splat(alpha, elem)], [vb.shape], [elem])[0]
        return imp.emit(opname, [va, vb], [shape], [elem])[0]
    return conv


for _name, _op in (("add", "mw.add"), ("sub", "mw.sub"), ("mul", "mw.mul"),
                   ("div", "mw.div")):
    _CONVERTERS[getattr(aten, _name).Tensor] = _binary(_op, _name)
    _CONVERTERS[getattr(aten, _name).Scalar] = _binary(_op, _name)


# ------------------------------------------------ patterns written in Python
# Models write some functions out with elementwise ops (GPT-2's
# NewGELUActivation, Llama's RMSNorm). Recognising them at their last op
# gives the planner mw's one op, its cost and its gradient rule (which saves
# one tensor instead of every intermediate). The intermediates were emitted
# already and are dropped as dead code when nothing else uses them.

def _is_op(n, *targets) -> bool:
    return isinstance(n, torch.fx.Node) and n.op == "call_function" and \
        n.target in targets


def _is_scalar(a, v, rel=1e-6) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and \
        abs(a - v) <= rel * abs(v)


def _same_type_cast(n):
    """Looks through casts that do not change the element type."""
    while _is_op(n, aten._to_copy.default, aten.to.dtype) and \
            isinstance(n.args[0], torch.fx.Node) and \
            n.meta["val"].dtype == n.args[0].meta["val"].dtype:
        n = n.args[0]
    return n


def _scalar_mul_of(n, v):
    """x when n is x * v (either order), else None."""
    if not _is_op(n, aten.mul.Tensor, aten.mul.Scalar):
        return None
    a, b = n.args[0], n.args[1]
    if _is_scalar(b, v) and isinstance(a, torch.fx.Node):
        return a
    if _is_scalar(a, v) and isinstance(b, torch.fx.Node):
        return b
    return None


def _match_gelu_tanh(node):
    """x for 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))."""
    if not _is_op(node, aten.mul.Tensor) or len(node.args) != 2:
        return None
    for half, inner in ((node.args[0], node.args[1]), (node.args[1], node.args[0])):
        x = _scalar_mul_of(half, 0.5)
        if x is None or not _is_op(inner, aten.add.Tensor, aten.add.Scalar):
            continue
        t, one = inner.args[0], inner.args[1]
        if not _is_scalar(one, 1.0):
            t, one = one, t
        if not (_is_scalar(one, 1.0) and _is_op(t, aten.tanh.default)) or \
                len(inner.args) > 2 or inner.kwargs:
            continue
        s = _scalar_mul_of(t.args[0], math.sqrt(2.0 / math.pi))
        if not _is_op(s, aten.add.Tensor) or len(s.args) > 2 or s.kwargs:
            continue
        for xa, m in ((s.args[0], s.args[1]), (s.args[1], s.args[0])):
            p = _scalar_mul_of(m, 0.044715)
            if xa is x and _is_op(p, aten.pow.Tensor_Scalar) and p.args[0] is x \
                    and _is_scalar(p.args[1], 3.0):
                return x
    return None


def _match_rms_norm(node):
    """(x, weight, eps) for weight * (x * rsqrt(mean(x^2, -1, keepdim) + eps))."""
    if not _is_op(node, aten.mul.Tensor) or len(node.args) != 2:
        return None
    for w, h in ((node.args[0], node.args[1]), (node.args[1], node.args[0])):
        h = _same_type_cast(h)
        if not isinstance(w, torch.fx.Node) or not _is_op(h, aten.mul.Tensor):
            continue
        for xa, r in ((h.args[0], h.args[1]), (h.args[1], h.args[0])):
            if not _is_op(r, aten.rsqrt.default):
                continue
            a = r.args[0]
            if not _is_op(a, aten.add.Tensor, aten.add.Scalar) or len(a.args) > 2:
                continue
            v, eps = a.args[0], a.args[1]
            if not isinstance(eps, float):
                v, eps = eps, v
            if not isinstance(eps, float) or not _is_op(v, aten.mean.dim):
                continue
            pw = v.args[0]
            dims = v.args[1] if len(v.args) > 1 else None
            keep = v.args[2] if len(v.args) > 2 else v.kwargs.get("keepdim", False)
            if not (_is_op(pw, aten.pow.Tensor_Scalar) and pw.args[0] is xa and
                    _is_scalar(pw.args[1], 2.0) and keep and dims is not None and
                    len(dims) == 1):
                continue
            rank = xa.meta["val"].dim()
            wv = w.meta["val"]
            if dims[0] % rank != rank - 1 or wv.dim() != 1 or \
                    wv.shape[0] != xa.meta["val"].shape[-1]:
                continue
            return xa, w, eps
    return None


def _mul(imp, node, a, b, **kwargs):
    x = _match_gelu_tanh(node)
    if x is not None:
        shape, elem = imp.result_meta(node)
        v = imp.value(x)
        if v.elem == elem and v.shape == shape:
            return imp.emit("mw.gelu", [v], [shape], [elem], syntax="unary",
                            attrs={"approximate": "#mw.gelu_approximation<tanh>"})[0]
    m = _match_rms_norm(node)
    if m is not None:
        x, w, eps = m
        shape, elem = imp.result_meta(node)
        vx, vw = imp.value(x), imp.value(w)
        if vx.elem == vw.elem and vx.is_float and vx.shape == shape:
            y, _rstd = imp.emit("mw.rms_norm", [vx, vw], [vx.shape, vx.shape[:-1]],
                                [vx.elem, "f32"],
                                attrs={"epsilon": _float_attr(eps) + " : f64"})
            return imp.cast(y, elem)
    return _binary("mw.mul", "mul")(imp, node, a, b, **kwargs)


_CONVERTERS[aten.mul.Tensor] = _mul
_CONVERTERS[aten.maximum.default] = _binary("mw.maximum", "maximum")


@_conv(aten.rsub.Scalar, aten.rsub.Tensor)
def _rsub(imp, node, a, b, alpha=1):
    shape, elem = imp.result_meta(node)
    va, vb = imp.value(a, elem), imp.value(b, elem)
    if alpha != 1:
        va = imp.emit("mw.mul", [va, imp.splat(alpha, elem)], [va.shape], [elem])[0]
    return imp.emit("mw.sub", [vb, va], [shape], [elem])[0]


def _unary(opname):
    def conv(imp, node, x, **kwargs):
        shape, elem = imp.result_meta(node)
        return imp.emit(opname, [imp.value(x, elem)], [shape], [elem], syntax="unary")[0]
    return conv


for _name, _op in (("neg", "mw.neg"), ("exp", "mw.exp"), ("log", "mw.log"),
                   ("tanh", "mw.tanh"), ("rsqrt", "mw.rsqrt"), ("sqrt", "mw.sqrt"),
                   ("reciprocal", "mw.reciprocal"), ("sigmoid", "mw.sigmoid"),
                   ("relu", "mw.relu"), ("silu", "mw.silu")):
    _CONVERTERS[getattr(aten, _name).default] = _unary(_op)


@_conv(aten.gelu.default)
def _gelu(imp, node, x, approximate="none"):
    shape, elem = imp.result_meta(node)
    attrs = {}
    if approximate == "tanh":
        attrs["approximate"] = "#mw.gelu_approximation<tanh>"
    elif approximate != "none":
        raise imp.unsupported(node, f"approximate={approximate!r}")
    return imp.emit("mw.gelu", [imp.value(x)], [shape], [elem], attrs=attrs,
                    syntax="unary")[0]


@_conv(aten.pow.Tensor_Scalar)
def _pow(imp, node, x, e):
    shape, elem = imp.result_meta(node)
    v = imp.value(x, elem)

    def mul(a, b):
        return imp.emit("mw.mul", [a, b], [shape], [elem])[0]

    def un(op, a):
        return imp.emit(op, [a], [shape], [elem], syntax="unary")[0]

    if e == 1:
        return v
    if e == 2:
        return mul(v, v)
    if e == 3:
        return mul(mul(v, v), v)
    if e == 0.5:
        return un("mw.sqrt", v)
    if e == -0.5:
        return un("mw.rsqrt", v)
    if e == -1:
        return un("mw.reciprocal", v)
    if e == -2:
        return un("mw.reciprocal", mul(v, v))
    raise imp.unsupported(node, f"exponent {e} (mapped: 1, 2, 3, 0.5, -0.5, -1, -2)")


@_conv(aten.clamp.default)
def _clamp(imp, node, x, min=None, max=None):
    shape, elem = imp.result_meta(node)
    lo = -math.inf if min is None else float(min)
    hi = math.inf if max is None else float(max)
    attrs = {"min": _float_attr(lo) + " : f64", "max": _float_attr(hi) + " : f64"}
    return imp.emit("mw.clamp", [imp.value(x)], [shape], [elem], attrs=attrs,
                    syntax="unary")[0]


@_conv(aten._to_copy.default, aten.to.dtype)
def _to_copy(imp, node, x, *args, **kwargs):
    _, elem = imp.result_meta(node)
    return imp.cast(imp.value(x), elem)


def _matmul_operand(imp, x):
    v = imp.value(x)
    src = imp.transposed.get(v.ssa)
    if src is not None:
        return src, True
    return v, False


def _matmul(imp, node, a, b):
    shape, elem = imp.result_meta(node)
    va, ta = _matmul_operand(imp, a)
    vb, tb = _matmul_operand(imp, b)
    attrs = {}
    if ta:
        attrs["transpose_lhs"] = None
    if tb:
        attrs["transpose_rhs"] = None
    return imp.emit("mw.matmul", [va, vb], [shape], [elem], attrs=attrs)[0]


@_conv(aten.mm.default, aten.bmm.default, aten.matmul.default)
def _mm(imp, node, a, b):
    return _matmul(imp, node, a, b)


@_conv(aten.addmm.default)
def _addmm(imp, node, bias, a, b, beta=1, alpha=1):
    if beta != 1 or alpha != 1:
        raise imp.unsupported(node, "beta/alpha other than 1")
    shape, elem = imp.result_meta(node)
    mm = _matmul(imp, node, a, b)
    return imp.emit("mw.add", [mm, imp.value(bias, elem)], [shape], [elem])[0]


@_conv(aten.embedding.default)
def _embedding(imp, node, weight, indices, padding_idx=-1, *args):
    shape, elem = imp.result_meta(node)
    w = imp.value(weight)
    if isinstance(imp.env.get(indices), Const):
        idx = imp.env[indices].value
        # Position ids: a contiguous range of rows, the same for every
        # sequence of the batch, is a slice of the table.
        row = idx.reshape(-1, idx.shape[-1])[0] if idx.dim() else idx.reshape(1)
        n = row.numel()
        if n > 0 and bool((idx == row).all()) and \
                bool((row == torch.arange(n, dtype=row.dtype) + row[0]).all()) and \
                0 <= int(row[0]) and int(row[0]) + n <= w.shape[0]:
            rows = imp.slice(w, [int(row[0]), 0], [n, w.shape[1]])
            lead = (1,) * (len(shape) - 2)
            return imp.broadcast(imp.reshape(rows, lead + rows.shape), shape)
    return imp.emit("mw.embedding", [w, imp.value(indices)], [shape], [elem])[0]


@_conv(aten.native_layer_norm.default)
def _layer_norm(imp, node, x, normalized_shape, weight, bias, eps):
    if len(normalized_shape) != 1:
        raise imp.unsupported(node, "normalization over more than the last dim")
    v = imp.value(x)
    d = v.shape[-1]
    g = imp.value(weight) if weight is not None else imp.splat(1.0, v.elem, (d,))
    b = imp.value(bias) if bias is not None else imp.splat(0.0, v.elem, (d,))
    stat = v.shape[:-1]
    y, mean, rstd = imp.emit("mw.layer_norm", [v, g, b], [v.shape, stat, stat],
                             [v.elem, "f32", "f32"],
                             attrs={"epsilon": _float_attr(eps) + " : f64"})
    keep = stat + (1,)
    return [y, imp.reshape(mean, keep), imp.reshape(rstd, keep)]


def _axis(dim, rank):
    return dim % rank if rank else 0


@_conv(aten._softmax.default)
def _softmax(imp, node, x, dim, half_to_float=False):
    shape, elem = imp.result_meta(node)
    v = imp.value(x)
    return imp.emit("mw.softmax", [v], [shape], [elem], syntax="unary",
                    prefix_args=f"axis = {_axis(dim, len(shape))}")[0]


@_conv(aten._log_softmax.default)
def _log_softmax(imp, node, x, dim, half_to_float=False):
    shape, elem = imp.result_meta(node)
    v = imp.value(x)
    axis = _axis(dim, len(shape))
    r = imp.emit("mw.log_softmax", [v], [shape], [elem], syntax="unary",
                 prefix_args=f"axis = {axis}")[0]
    imp.log_softmax_of[r.ssa] = (v, axis)
    return r


@_conv(aten.nll_loss_forward.default)
def _nll_loss(imp, node, x, target, weight, reduction, ignore_index):
    lp = imp.value(x)
    src = imp.log_softmax_of.get(lp.ssa)
    if src is None or src[1] != len(lp.shape) - 1:
        raise imp.unsupported(
            node, "only the negative log-likelihood of a log_softmax over the "
                  "last dimension (cross-entropy) is mapped")
    if weight is not None:
        raise imp.unsupported(node, "class weights")
    if reduction != 1:
        raise imp.unsupported(node, "reduction other than mean")
    logits = src[0]
    loss = imp.emit("mw.cross_entropy", [logits, imp.value(target)], [()], ["f32"],
                    attrs={"ignore_index": f"{int(ignore_index)} : i64"})[0]
    return [loss, None]


def _reduce(opname):
    def conv(imp, node, x, dims=None, keepdim=False, **kwargs):
        if kwargs.get("dtype") is not None:
            raise imp.unsupported(node, "dtype")
        shape, elem = imp.result_meta(node)
        v = imp.value(x)
        rank = len(v.shape)
        if dims is None or len(dims) == 0:
            axes = list(range(rank))
        else:
            axes = sorted({d % rank for d in dims})
        attrs = {"keepdims": None} if keepdim else {}
        r = imp.emit(opname, [v], [shape], [elem], attrs=attrs, syntax="to",
                     prefix_args=f"axes = [{', '.join(map(str, axes))}]")[0]
        return r
    return conv


_CONVERTERS[aten.mean.dim] = _reduce("mw.reduce_mean")
_CONVERTERS[aten.sum.dim_IntList] = _reduce("mw.reduce_sum")
_CONVERTERS[aten.amax.default] = _reduce("mw.reduce_max")


@_conv(aten.sum.default, aten.mean.default)
def _reduce_all(imp, node, x, dtype=None):
    op = "mw.reduce_sum" if node.target == aten.sum.default else "mw.reduce_mean"
    return _reduce(op)(imp, node, x, None, False)


@_conv(aten.split_with_sizes.default, aten.split.Tensor)
def _split(imp, node, x, sizes, dim=0):
    v = imp.value(x)
    rank = len(v.shape)
    dim %= rank
    if isinstance(sizes, int):
        n = v.shape[dim]
        sizes = [min(sizes, n - s) for s in range(0, n, sizes)]
    out, off = [], 0
    for s in sizes:
        offsets = [0] * rank
        offsets[dim] = off
        shp = list(v.shape)
        shp[dim] = s
        out.append(imp.slice(v, offsets, shp))
        off += s
    return out


@_conv(aten.slice.Tensor)
def _slice(imp, node, x, dim=0, start=None, end=None, step=1):
    shape, _ = imp.result_meta(node)
    v = imp.value(x)
    rank = len(v.shape)
    dim %= rank
    n = v.shape[dim]
    start = 0 if start is None else start
    if start < 0:
        start += n
    start = max(0, min(start, n))
    offsets = [0] * rank
    offsets[dim] = start
    strides = [1] * rank
    strides[dim] = step
    return imp.slice(v, offsets, list(shape), strides)


@_conv(aten.select.int)
def _select(imp, node, x, dim, index):
    shape, _ = imp.result_meta(node)
    v = imp.value(x)
    rank = len(v.shape)
    dim %= rank
    index %= v.shape[dim]
    offsets = [0] * rank
    offsets[dim] = index
    sizes = list(v.shape)
    sizes[dim] = 1
    return imp.reshape(imp.slice(v, offsets, sizes), shape)


@_conv(aten.cat.default)
def _cat(imp, node, tensors, dim=0):
    shape, elem = imp.result_meta(node)
    vals = [imp.value(t, elem) for t in tensors]
    vals = [v for v in vals if 0 not in v.shape]
    if len(vals) == 1:
        return vals[0]
    axis = dim % len(shape)
    return imp.emit("mw.concat", vals, [shape], [elem],
                    prefix_args=f"axis = {axis}")[0]


@_conv(aten.constant_pad_nd.default)
def _pad(imp, node, x, pad, value=0):
    shape, elem = imp.result_meta(node)
    v = imp.value(x)
    rank = len(v.shape)
    for i in range(len(pad) // 2):
        dim = rank - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0 or hi < 0:
            offsets = [0] * rank
            offsets[dim] = max(0, -lo)
            sizes = list(v.shape)
            sizes[dim] -= max(0, -lo) + max(0, -hi)
            v = imp.slice(v, offsets, sizes)
            lo, hi = max(0, lo), max(0, hi)
        parts = []
        if lo:
            s = list(v.shape)
            s[dim] = lo
            parts.append(imp.splat(value, elem, tuple(s)))
        parts.append(v)
        if hi:
            s = list(v.shape)
            s[dim] = hi
            parts.append(imp.splat(value, elem, tuple(s)))
        if len(parts) > 1:
            s = list(v.shape)
            s[dim] += lo + hi
            v = imp.emit("mw.concat", parts, [tuple(s)], [elem],
                         prefix_args=f"axis = {dim}")[0]
    return v


def _causal_kind(mask: torch.Tensor, s: int, sk: int) -> Optional[str]:
    """'none' when the constant mask masks nothing, 'causal' when it is the
    top-left causal mask, else None."""
    m = mask
    if m.dtype == torch.bool:
        allowed = m
    else:
        if bool((m == 0).all()):
            return "none"
        allowed = m == 0
        blocked = ~allowed
        if not bool((m[blocked] <= -1e30).all()):
            return None
    allowed = torch.broadcast_to(allowed, allowed.shape[:-2] + (s, sk)) \
        if allowed.dim() >= 2 else torch.broadcast_to(allowed, (s, sk))
    if bool(allowed.all()):
        return "none"
    tril = torch.ones(s, sk, dtype=torch.bool).tril()
    if bool((allowed == tril).all()):
        return "causal"
    return None


@_conv(aten.scaled_dot_product_attention.default)
def _sdpa(imp, node, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
          scale=None, enable_gqa=False):
    if dropout_p != 0.0:
        raise imp.unsupported(node, "attention dropout (import in eval mode)")
    shape, elem = imp.result_meta(node)
    vq, vk, vv = imp.value(q), imp.value(k), imp.value(v)
    if len(vq.shape) != 4:
        raise imp.unsupported(node, "query of rank other than 4")
    b, h, s, d = vq.shape
    hk, sk = vk.shape[1], vk.shape[2]
    if hk != h:
        # Grouped-query attention: repeat each key/value head.
        rep = h // hk

        def repeat(t):
            t5 = imp.reshape(t, (b, hk, 1) + t.shape[2:])
            t5 = imp.broadcast(t5, (b, hk, rep) + t.shape[2:])
            return imp.reshape(t5, (b, h) + t.shape[2:])
        vk, vv = repeat(vk), repeat(vv)
    causal = bool(is_causal)
    if attn_mask is not None:
        entry = imp.env.get(attn_mask)
        if not isinstance(entry, Const):
            raise imp.unsupported(
                node, "an attention mask computed from the inputs (only "
                      "constant masks: none or causal)")
        kind = _causal_kind(entry.value, s, sk)
        if kind is None:
            raise imp.unsupported(node, "a constant attention mask that is "
                                        "neither empty nor causal")
        if kind == "causal":
            if causal:
                raise imp.unsupported(node, "both is_causal and a mask")
            causal = True
    if causal and s != sk:
        raise imp.unsupported(node, "causal attention with S != Sk")
    attrs = {}
    if causal:
        attrs["causal"] = None
    # head_dim ** -0.5 and 1 / sqrt(head_dim) may differ in the last bit of
    # a double; that is the default scale, not a different one.
    if scale is not None and not math.isclose(scale, 1.0 / math.sqrt(d),
                                              rel_tol=1e-12, abs_tol=0):
        attrs["scale"] = _float_attr(scale) + " : f64"
    out, _lse = imp.emit("mw.attention", [vq, vk, vv], [shape, (b, h, s)],
                         [elem, "f32"], attrs=attrs)
    return out
