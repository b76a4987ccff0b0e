#!/usr/bin/env python3
"""Writes an .mlir file with every hand-written fused kernel unfused.

usage: unfuse.py IN.mlir > OUT.mlir

A fused kernel in the tests is written as

    %r:2 = mw.kernel ins(%x, %b : ...) outs(%e0, %e1 : ...) -> ... {
    ^bb0(%k_x: ..., %k_b: ...):
      ...body ops...
      mw.yield %k1, %k3 : ...
    }

with block arguments named %k_ and the kernel's input's name (%x: %k_x) and
body values named uniquely in the function. Unfused,
the body's ops stand in the function itself, the kernel's results become the
yielded values, and --mw-bufferize then forms one kernel per op: the same
computation, op by op, for the tests that compare fused and unfused plans.
"""
import re
import sys


def unfuse(lines):
    """One function's lines, unfused."""
    out, rename = [], {}
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"\s*(%[\w]+)(?::\d+)? = mw\.kernel ins\(([^:]*):", line)
        if not m:
            out.append(line)
            i += 1
            continue
        result, ins = m.group(1), [v.strip() for v in m.group(2).split(",")]
        while not lines[i].rstrip().endswith("{"):
            i += 1
        i += 1  # past the header
        args = re.findall(r"(%\w+):", lines[i])
        assert args == ["%k_" + v[1:] for v in ins], \
            f"block arguments {args} are not named %k_ + {ins}"
        i += 1
        while not lines[i].strip().startswith("mw.yield"):
            out.append(re.sub(r"%k_(\w+)", r"%\1", lines[i][2:]))
            i += 1
        values = re.sub(r"%k_(\w+)", r"%\1", lines[i].strip()[len("mw.yield "):]).split(":")[0]
        values = [v.strip() for v in values.split(",")]
        for n, v in enumerate(values):
            rename[f"{result}#{n}"] = v
        if len(values) == 1:
            rename[result] = values[0]
        i += 2  # past the yield and the closing brace
    text = "\n".join(out)
    for old in sorted(rename, key=len, reverse=True):
        text = re.sub(re.escape(old) + r"(?![\w#])", rename[old], text)
    return text


def main():
    # Kernel results (%r#0) are named alike in every function.
    chunks, current = [], []
    for line in open(sys.argv[1]).read().split("\n"):
        if line.startswith("func.func") and current:
            chunks.append(current)
            current = []
        current.append(line)
    chunks.append(current)
    sys.stdout.write("\n".join(unfuse(c) for c in chunks))


if __name__ == "__main__":
    main()
