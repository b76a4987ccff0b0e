#!/usr/bin/env python3
"""Adds DeepSpeed's own estimate of per-GPU model-state memory to bench/zero's
reports, in one run with DeepSpeed's code (run it with the bench venv's
python: bench/zero/setup-peers.sh).

usage: deepspeed_estimate.py ZERO.json ...

For each report (one model, rank count N and stage), DeepSpeed's
estimate_zero2_model_states_mem_needs (stage 2) or
estimate_zero3_model_states_mem_needs (stage 3; largest_layer_params = the
model's largest parameter, which run.sh records) on the same parameter count
Ψ and N GPUs (8 per node), without offload, gives the GPU bytes; it is stored
as "deepspeed" for table.py. DeepSpeed has no estimator for stages 0 and 1.
DeepSpeed's estimators assume mixed precision (fp16 parameters and
gradients, fp32 master weights and Adam state: 2Ψ + 18Ψ/N at stage 2,
18Ψ/N + 4 x largest layer at stage 3); the steps measured here are f32
(docs/zero-bench.md says how the two compare).
"""
import contextlib
import io
import json
import sys

from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs


def main():
    for path in sys.argv[1:]:
        d = json.load(open(path))
        z = [f["zero"] for f in d["functions"] if f.get("zero")][0]
        n, stage, psi = z["ranks"], z["stage"], z["psi"]
        per_node = min(n, 8)
        nodes = max(n // per_node, 1)
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet):
            if stage == 2:
                _, gpu = estimate_zero2_model_states_mem_needs(
                    total_params=psi, num_gpus_per_node=per_node,
                    num_nodes=nodes, cpu_offload=False)
            elif stage == 3:
                _, gpu, _ = estimate_zero3_model_states_mem_needs(
                    total_params=psi,
                    largest_layer_params=d.get("largest_param", 0),
                    num_gpus_per_node=per_node, num_nodes=nodes,
                    cpu_offload=False, cpu_offload_params=False)
            else:
                gpu = None
        d["deepspeed"] = gpu
        json.dump(d, open(path, "w"))


if __name__ == "__main__":
    main()
