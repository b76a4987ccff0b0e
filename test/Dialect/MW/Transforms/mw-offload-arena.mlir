// After --mw-offload and --mw-train-pipeline the slots are arena buffers:
// the arena holds K+1 layers' weights, the streamed weights leave the
// device persistents, and the device peak (arena + Device persistents)
// drops by (streamed layers - K - 1) x layer bytes (Inputs/offload_peak.py
// says how it bounds the drop). The plan has Host or File placements, one
// mw.fetch per streamed weight, and the plan's offload fields.
// RUN: mw-models gpt --preset gpt2-tiny --layers 6 --inference -o %t.gpt.mlir
// RUN: mw-opt %t.gpt.mlir --mw-train-pipeline -o %t.gpt.base.mlir 2>/dev/null
// RUN: mw-translate --mw-plan-json --mw-plan-function=decode %t.gpt.base.mlir -o %t.gpt.base.json
// RUN: mw-opt %t.gpt.mlir --mw-offload="weights=cpu prefetch=0" --mw-train-pipeline -o %t.gpt.k0.mlir 2>/dev/null
// RUN: mw-translate --mw-plan-json --mw-plan-function=decode %t.gpt.k0.mlir -o %t.gpt.k0.json
// RUN: python3 %S/Inputs/offload_peak.py %t.gpt.base.json %t.gpt.k0.json 0 0 | FileCheck %s --check-prefix=GPTK0
// RUN: mw-opt %t.gpt.mlir --mw-offload="weights=cpu prefetch=1" --mw-train-pipeline -o %t.gpt.k1.mlir 2>/dev/null
// RUN: mw-translate --mw-plan-json --mw-plan-function=decode %t.gpt.k1.mlir -o %t.gpt.k1.json
// RUN: python3 %S/Inputs/offload_peak.py %t.gpt.base.json %t.gpt.k1.json 1 0 | FileCheck %s --check-prefix=GPTK1
// RUN: FileCheck %s --input-file=%t.gpt.k1.json --check-prefix=HOST
// RUN: mw-opt %t.gpt.mlir --mw-offload="weights=nvme path=/nvme prefetch=2 pinned-layers=1" --mw-train-pipeline -o %t.gpt.k2.mlir 2>/dev/null
// RUN: mw-translate --mw-plan-json --mw-plan-function=decode %t.gpt.k2.mlir -o %t.gpt.k2.json
// RUN: python3 %S/Inputs/offload_peak.py %t.gpt.base.json %t.gpt.k2.json 2 1 | FileCheck %s --check-prefix=GPTK2
// RUN: FileCheck %s --input-file=%t.gpt.k2.json --check-prefix=FILE
// The binary plan too.
// RUN: mw-translate --mw-to-plan --mw-plan-function=decode %t.gpt.k2.mlir -o %t.gpt.k2.mwplan
// llama-tiny's logits forward, 5 layers.
// RUN: mw-models llama --preset llama-tiny --rotary --layers 5 --logits -o %t.llama.mlir
// RUN: mw-opt %t.llama.mlir --mw-train-pipeline -o %t.llama.base.mlir 2>/dev/null
// RUN: mw-translate --mw-plan-json %t.llama.base.mlir -o %t.llama.base.json
// RUN: mw-opt %t.llama.mlir --mw-offload="weights=cpu prefetch=1" --mw-train-pipeline -o %t.llama.k1.mlir 2>/dev/null
// RUN: mw-translate --mw-plan-json %t.llama.k1.mlir -o %t.llama.k1.json
// RUN: python3 %S/Inputs/offload_peak.py %t.llama.base.json %t.llama.k1.json 1 0 | FileCheck %s --check-prefix=LLAMAK1
// RUN: mw-opt %t.llama.mlir --mw-offload="weights=cpu prefetch=2 pinned-layers=1" --mw-train-pipeline -o %t.llama.k2.mlir 2>/dev/null
// RUN: mw-translate --mw-plan-json %t.llama.k2.mlir -o %t.llama.k2.json
// RUN: python3 %S/Inputs/offload_peak.py %t.llama.base.json %t.llama.k2.json 2 1 | FileCheck %s --check-prefix=LLAMAK2
// mw-run gives the offloaded plan's outputs bit for bit (the weights'
// default initialization is by name; the fetches copy them into the slots).
// RUN: mw-translate --mw-to-plan %t.llama.base.mlir -o %t.llama.base.mwplan
// RUN: mw-translate --mw-to-plan %t.llama.k2.mlir -o %t.llama.k2.mwplan
// RUN: mw-run %t.llama.base.mwplan --steps 1 --save-outputs %t.llama.base.out > /dev/null
// RUN: mw-run %t.llama.k2.mwplan --steps 1 --save-outputs %t.llama.k2.out > /dev/null
// RUN: cmp %t.llama.base.out %t.llama.k2.out
// With fusion too (--mw-fuse leaves the fetches and waits kernels of their
// own): the fused plan with offload gives the fused plan's outputs.
// RUN: mw-opt %t.llama.mlir --mw-train-pipeline=fuse=true -o %t.llama.fb.mlir 2>/dev/null
// RUN: mw-opt %t.llama.mlir --mw-offload="weights=cpu prefetch=1" --mw-train-pipeline=fuse=true -o %t.llama.fo.mlir 2>/dev/null
// RUN: mw-translate --mw-to-plan %t.llama.fb.mlir -o %t.llama.fb.mwplan
// RUN: mw-translate --mw-to-plan %t.llama.fo.mlir -o %t.llama.fo.mwplan
// RUN: mw-run %t.llama.fb.mwplan --steps 1 --save-outputs %t.llama.fb.out > /dev/null
// RUN: mw-run %t.llama.fo.mwplan --steps 1 --save-outputs %t.llama.fo.out > /dev/null
// RUN: cmp %t.llama.fb.out %t.llama.fo.out

// GPTK0: OK: arena {{[0-9]+}} -> {{[0-9]+}} B (1 slots of 199936 B); peak 1476144 -> {{[0-9]+}} B
// GPTK1: OK: arena {{[0-9]+}} -> {{[0-9]+}} B (2 slots of 199936 B); peak 1476144 -> {{[0-9]+}} B, saved {{[0-9]+}} B, (6 streamed - 2) x 199936 B = 799744 B
// GPTK2: OK: arena {{[0-9]+}} -> {{[0-9]+}} B (3 slots of 199936 B); peak 1476144 -> {{[0-9]+}} B, saved {{[0-9]+}} B, (5 streamed - 3) x 199936 B = 399872 B
// LLAMAK1: OK: {{.*}} (5 streamed - 2) x 201216 B = 603648 B
// LLAMAK2: OK: {{.*}} (4 streamed - 3) x 201216 B = 201216 B

// HOST:      "offload_path": "",
// HOST-NEXT: "offload_prefetch": 1,
// HOST:      {"name":"wte",{{.*}}"role":"param","argument":0}
// HOST:      {"name":"h.0.ln_1.weight",{{.*}}"placement":"host"}
// HOST:      "op": "mw.fetch",
// HOST:        {"name":"layer","kind":"int","value":0}
// HOST:      "op": "mw.wait",

// Layer 0 is pinned: resident.
// FILE:      "offload_path": "/nvme",
// FILE-NEXT: "offload_prefetch": 2,
// FILE:      {"name":"h.0.ln_1.weight",{{.*}}"argument":2}
// FILE:      {"name":"h.1.ln_1.weight",{{.*}}"placement":"file"}
// FILE-NOT:  "layer","kind":"int","value":0}
// FILE:      {"name":"layer","kind":"int","value":1}
