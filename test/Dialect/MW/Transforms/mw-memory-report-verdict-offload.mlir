// The verdict on an inference step that does not fit suggests
// --mw-offload=auto with what auto would choose (docs/offload.md, "auto";
// docs/memory-report.md): the required bytes with the streamed weights
// replaced by the arena's weight slots, and auto's pinned layers, prefetch,
// batch and predicted tokens/s. A training step gets no such suggestion.
//
// A 4-layer opt of 12.6 MB per layer (f32) on 64 MB: 88.35 MB required.
// RUN: mw-models opt --layers 4 --hidden 512 --heads 8 --ffn 2048 --vocab 1024 --seq 64 --inference --max-batch 2 -o %t.mlir
// RUN: mw-opt %t.mlir --mw-memory-report="device-memory=64MB function=decode" -o /dev/null | FileCheck %s --check-prefix=TEXT
// TEXT:      verdict                 does not fit: short by 24.35 MB
// TEXT:      offload    --mw-offload="auto device-memory=64MB"
// TEXT-NEXT:   fits: 50.53 MB = 48.19 MiB (predicted: the offload model (docs/offload.md))
// TEXT-NEXT:   auto chooses pinned-layers=0 prefetch=0 of 4 layers (50.44 MB = 48.10 MiB streamed, 12.61 MB = 12.03 MiB of slots); at batch 9 (mw-models --max-batch) it predicts {{[0-9.]+}} tokens/s for prompts of 42 + 22 generated tokens
// TEXT-NEXT: remat
//
// RUN: mw-opt %t.mlir --mw-memory-report="format=json device-memory=64MB function=decode" -o /dev/null | FileCheck %s --check-prefix=JSON
// JSON:      "kind": "offload",
// JSON-NEXT: "change": "--mw-offload=\"auto device-memory=64MB\"",
// JSON-NEXT: "basis": "predicted: the offload model (docs/offload.md)",
// JSON-NEXT: "peak_bytes": 16971840,
// JSON-NEXT: "required_bytes": 50526272,
// JSON-NEXT: "fits": true,
//
// With a named target the change names it.
// RUN: mw-models opt --preset opt-30b-shaped --dtype f16 --inference --max-batch 1 | mw-opt --mw-memory-report="target=v100 function=decode" -o /dev/null | FileCheck %s --check-prefix=OPT30B
// OPT30B: offload    --mw-offload="auto target=v100"
// OPT30B: auto chooses pinned-layers=0 prefetch=1 of 48 layers {{.*}}; at batch 208 (mw-models --max-batch) it predicts 41.24 tokens/s for prompts of 64 + 32 generated tokens
//
// RUN: mw-models opt --layers 4 --hidden 512 --heads 8 --ffn 2048 --vocab 1024 --seq 64 --train | mw-opt --mw-memory-report="device-memory=64MB" -o /dev/null | FileCheck %s --check-prefix=TRAIN
// TRAIN:     does not fit
// TRAIN-NOT: offload
