"""Checks mw-run's report (--report json) against this CPU's features
(/proc/cpuinfo's flags): with OPENBLAS_CORETYPE unset, the OpenBLAS kernels
in use use AVX wherever the CPU has AVX2 and FMA, and where mw-run chose
them (blas_core_detected: OpenBLAS's own pick was pre-AVX) they are the
ones the CPU's features call for (test/Runtime/blas-core.mlir)."""
import json
import sys

# OpenBLAS's x86-64 dynamic cores whose kernels use no AVX (the list in
# runtime/src/cpu/matmul.cpp, cpuBlasCoreAdvice).
PRE_AVX = {"Unknown", "Katmai", "Coppermine", "Northwood", "Prescott",
           "Banias", "Atom", "Core2", "Penryn", "Dunnington", "Nehalem",
           "Athlon", "Opteron", "Opteron_SSE3", "Barcelona", "Nano", "Bobcat"}
AVX512 = {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}


def main():
    report = json.load(open(sys.argv[1]))
    flags = set()
    for line in open(sys.argv[2]):
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    core = report["blas_core"]
    detected = report.get("blas_core_detected")
    problems = []
    if {"avx2", "fma"} <= flags and core in PRE_AVX:
        problems.append(f"the CPU has AVX2 and FMA but the kernels are {core}'s")
    if detected is not None:
        if detected not in PRE_AVX:
            problems.append(f"mw-run replaced OpenBLAS's {detected}, which uses AVX")
        want = "SkylakeX" if AVX512 <= flags else "Haswell"
        if core != want:
            problems.append(f"chosen {core}, the CPU's features call for {want}")
    if problems:
        print("error: " + "; ".join(problems), file=sys.stderr)
        return 1
    print(f"blas core {core}" + (f" (OpenBLAS detected {detected})" if detected else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
