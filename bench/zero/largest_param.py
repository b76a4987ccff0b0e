#!/usr/bin/env python3
"""Prints the element count of the largest parameter (mw.role<param>
argument) of a step: what DeepSpeed's stage-3 estimator calls
largest_layer_params.

usage: largest_param.py STEP.mlir
"""
import re
import sys

PARAM = re.compile(r'tensor<([0-9x]+)x[a-z0-9]+> \{mw\.name = "[^"]*", '
                   r'mw\.role = #mw\.role<param>')


def main():
    best = 0
    for shape in PARAM.findall(open(sys.argv[1]).read()):
        n = 1
        for d in shape.split("x"):
            n *= int(d)
        best = max(best, n)
    print(best)


if __name__ == "__main__":
    main()
