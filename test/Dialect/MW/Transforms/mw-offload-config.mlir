// --mw-offload reads zero_optimization.offload_param from a DeepSpeed
// configuration (config=): device -> weights, nvme_path -> path,
// buffer_count -> prefetch = buffer_count - 1; explicit options win.
// The seeds' ZeRO-Inference configuration, as written: weights on the host,
// the default prefetch of 1, and no diagnostics (only the offload checks run
// on inference steps).
// RUN: mw-models gpt --preset gpt2-tiny --inference -o %t.mlir
// RUN: mw-opt %t.mlir --mw-offload="config=%S/Inputs/ds-seed-inference.json" -o %t.seed.mlir 2>%t.seed.err
// RUN: FileCheck %s --input-file=%t.seed.mlir --check-prefix=SEED
// RUN: count 0 < %t.seed.err
// SEED: func.func @prefill(
// SEED-SAME: mw.name = "h.0.ln_1.weight", mw.offload = "cpu"
// SEED-SAME: mw.offload = {layers = 2 : i64, pinned_layers = 0 : i64, prefetch = 1 : i64, weights = "cpu"}
// SEED: func.func @decode(
// SEED-SAME: mw.offload = {layers = 2 : i64, pinned_layers = 0 : i64, prefetch = 1 : i64, weights = "cpu"}
// It plans as the explicit options do.
// RUN: mw-opt %t.mlir --mw-offload="weights=cpu" -o %t.explicit.mlir
// RUN: cmp %t.seed.mlir %t.explicit.mlir
// NVMe with a path and three buffers: prefetch 2.
// RUN: mw-opt %t.mlir --mw-offload="config=%S/Inputs/ds-offload-nvme.json function=decode" | FileCheck %s --check-prefix=NVME
// NVME: mw.offload = "nvme"
// NVME: mw.offload = {layers = 2 : i64, path = "/local_nvme", pinned_layers = 0 : i64, prefetch = 2 : i64, weights = "nvme"}
// Explicit options override the file.
// RUN: mw-opt %t.mlir --mw-offload="config=%S/Inputs/ds-offload-nvme.json function=decode prefetch=0 path=/other pinned-layers=1" | FileCheck %s --check-prefix=OVERRIDE
// OVERRIDE: mw.offload = {layers = 2 : i64, path = "/other", pinned_layers = 1 : i64, prefetch = 0 : i64, weights = "nvme"}
// RUN: mw-opt %t.mlir --mw-offload="config=%S/Inputs/ds-offload-nvme.json function=decode weights=cpu" | FileCheck %s --check-prefix=TOCPU
// TOCPU: mw.offload = {layers = 2 : i64, pinned_layers = 0 : i64, prefetch = 2 : i64, weights = "cpu"}
// Errors name the file, the line, the column and the key; nothing is written.
// RUN: not mw-opt %t.mlir --mw-offload="config=%S/Inputs/ds-offload-bad.json" -o %t.bad 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not test -e %t.bad
// BAD: ds-offload-bad.json:4:7: error: mw-offload: zero_optimization.offload_param.device: 'gpu' is not an offload device (none, cpu, nvme)
// BAD-NOT: error:
// RUN: not mw-opt %t.mlir --mw-offload="config=%S/Inputs/ds-offload-none.json" 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: ds-offload-none.json:4:7: error: mw-offload: zero_optimization.offload_param.device: is none: there is nothing to offload (cpu or nvme)
// RUN: not mw-opt %t.mlir --mw-offload="config=%S/Inputs/ds-offload-count.json" 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: ds-offload-count.json:5:7: error: mw-offload: zero_optimization.offload_param.buffer_count: must be >= 1 (the prefetch depth is buffer_count - 1), got 0
// RUN: not mw-opt %t.mlir --mw-offload="config=%S/Inputs/ds-bad-json.json" 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: ds-bad-json.json:5:3: error: mw-offload: invalid JSON: Expected object key
// RUN: not mw-opt %t.mlir --mw-offload="config=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: {{.*}}mw-offload: cannot read config={{.*}}missing.json: No such file or directory
// A configuration without offload_param gives no weights.
// RUN: not mw-opt %t.mlir --mw-offload="config=%S/Inputs/ds-batch.json" 2>&1 | FileCheck %s --check-prefix=ABSENT
// ABSENT: error: {{.*}}mw-offload: weights= (cpu or nvme) is required, or a config= whose zero_optimization.offload_param.device is cpu or nvme
