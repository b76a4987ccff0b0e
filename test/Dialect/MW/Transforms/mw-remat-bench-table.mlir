// bench/remat/table.py on recorded runs (Inputs/bench-records.jsonl: cells
// of a real bench/remat/run.sh run, stderr cut to the remark or the error):
// fixed strategies, an unreachable budget, auto against optimal, the
// activation frontier, auto under saved-budget beside PyTorch's partitioner
// and the solve-time rows are read and summarized.
// RUN: python3 %mw_src/bench/remat/table.py %S/Inputs/bench-records.jsonl | FileCheck %s
// CHECK: ## gpt2-small-unfused
// CHECK: save-all peak 3,119,450,388 B; persistent 1,493,285,908 B (47.9%); step 880.3 GFLOP; 1106 ops
// CHECK: | selective | 80.6% | 2.3% | 778.5 MiB |
// CHECK: | budget 50% | unreachable (min 68.9%) |
// CHECK: | budget 80% | 79.6% | 1.6% | 748.5 MiB | {{.*}} | 79.9% | 1.6% | {{.*}} | optimal | 0.00% |  | 1.001 |
// CHECK: | auto 73% (frontier) | 72.7% | 3.1% | 541.5 MiB |
// CHECK: ### gpt2-small-unfused: auto under saved-budget (peak free)
// CHECK: save-all saved activations 1,420,312,624 B
// CHECK: | 30% | 400.5 MiB | 29.6% | 68.9% | 10.3% | 90.9 | 82.5 | 1.102 |
// CHECK: | 0 | 0.0 MiB | 0.0% | 100.0% | 33.3% | 293.3 | 293.5 | 0.999 |
// CHECK: geomean 1.001 (target <= 1.05), worst 1.001 (target <= 1.15), 1 budgets, 0 failure(s)
// CHECK: | gpt2-small-unfused | every-k k=1 | 68.9% | 17.7% |
// CHECK: save-all saved activations: blocks 1152.2 MiB, all 1354.5 MiB
// CHECK: | selective | 576.2 MiB | 50.0% | 778.5 MiB | 42.5% | 2.3% | 80.6% |
// CHECK: smallest extra FLOPs with a >= 70% cut of the blocks' activations, auto: 3.1% (auto 73%, cut 70.0%; target <= 4%)
// CHECK: | ~500 ops, 5 layers | 476 | 12.5 | 50 |
// CHECK: | ~5000 ops, 55 layers | 4976 | 402.9 | 1000 |
