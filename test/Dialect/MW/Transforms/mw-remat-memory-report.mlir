// --mw-memory-report shows what --mw-remat decided: the strategy, kept
// activation bytes, recompute FLOPs against the step, the per-layer map, the
// save-all peak and the reached peak, and the budget when there is one.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-remat="strategy=selective" --mw-memory-report -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=TEXT
// RUN: mw-opt %t.mlir --mw-remat="budget=95%" --mw-memory-report=format=json -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=JSON

// TEXT-LABEL: mw-memory-report @train_step
// TEXT:       remat strategy          selective
// TEXT-NEXT:  save-all peak           [[SAVEALL:[0-9]+]] ({{.*}}iB)
// TEXT-NEXT:  peak after remat        {{[0-9]+}} ({{.*}}iB)
// TEXT-NOT:   budget
// TEXT-NEXT:  kept activations        {{[0-9]+}} ({{.*}}iB)
// TEXT-NEXT:  recompute flops         {{[0-9]+}} ({{.*}}FLOP, {{[0-9.]+}}% of the step's {{.*}}FLOP, ~{{.*}} s)
// TEXT-NEXT:  kept by layer: embeddings {{.*}}; h.0 {{.*}}; h.1 {{.*}};

// JSON:      "name": "train_step",
// JSON:      "remat": {
// JSON-NEXT:   "strategy": "auto",
// JSON-NEXT:   "save_all_peak_bytes": [[SAVEALL:[0-9]+]],
// JSON-NEXT:   "peak_bytes": {{[0-9]+}},
// JSON-NEXT:   "budget_bytes": {{[0-9]+}},
// JSON-NEXT:   "saved_activation_bytes": {{[0-9]+}},
// JSON-NEXT:   "recompute_flops": {{[1-9][0-9]*}},
// JSON-NEXT:   "step_flops": {{[0-9]+}},
// JSON-NEXT:   "recompute_seconds": {{.*}},
// JSON-NEXT:   "kept_bytes_by_layer": {
// JSON-NEXT:     "embeddings": {{[0-9]+}},
