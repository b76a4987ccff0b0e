// --mw-zero reads a DeepSpeed configuration (config=); explicit options win.
// The source articles' training configuration, as written: ZeRO-2 with
// overlapped communication, and their gradient_checkpointing key, which
// Memwall maps to --mw-remat (every-k k=1) with a warning.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 config=%S/Inputs/ds-seed-train-zero2.json" -o %t.z2.mlir 2>&1 | FileCheck %s --check-prefix=WARN
// WARN: ds-seed-train-zero2.json:9:3: warning: gradient_checkpointing: not a DeepSpeed key (DeepSpeed ignores it); Memwall maps it to --mw-remat
// WARN: ds-seed-train-zero2.json:11:5: warning: fp16.enabled: the step computes in fp32
// RUN: FileCheck %s --input-file=%t.z2.mlir --check-prefix=STAGE2
// STAGE2: mesh.mesh @dp(shape = 2)
// STAGE2: mw.recompute
// STAGE2: %[[RS:.*]] = mesh.reduce_scatter
// STAGE2: mw.wait %[[RS]]
// An explicit stage overrides the file's.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=0 config=%S/Inputs/ds-seed-train-zero2.json" 2>/dev/null | FileCheck %s --check-prefix=STAGE0
// STAGE0-NOT: mesh.reduce_scatter
// STAGE0: mesh.all_reduce
// A JSON error names its line and column, and nothing is written.
// RUN: not mw-opt %t.mlir --mw-zero="ranks=2 config=%S/Inputs/ds-bad-json.json" -o %t.bad 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not test -e %t.bad
// JSON: ds-bad-json.json:5:3: error:
// Contradictory batch sizes are an error showing the arithmetic; unknown keys
// and settings without effect are warnings naming the key.
// RUN: not mw-opt %t.mlir --mw-zero="ranks=2 config=%S/Inputs/ds-batch.json" 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH-DAG: warning: zero_optimization.reduce_bucket_sise: unknown key
// BATCH-DAG: warning: zero_optimization.stage3_prefetch_bucket_size:
// BATCH-DAG: error: gradient_accumulation_steps: 3 differs from the step's gradient accumulation 1 (train_batch_size = 6 = 1 * 3 * 2 ranks)
// "auto" is resolved from the step as Hugging Face's integration does, and a
// remark says what each became (gpt2-tiny: hidden 64, so reduce_bucket_size
// = 64 * 64).
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 config=%S/Inputs/ds-auto.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO
// AUTO-DAG: remark: resolved zero_optimization.reduce_bucket_size = 4096 (auto -> 4096)
// AUTO-DAG: remark: resolved train_batch_size = 2 (auto -> 2)
// allgather_bucket_size (and allgather-bucket=) is accepted but has no
// effect: the pieces are gathered in the reduce buckets.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=1 allgather-bucket=1000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AGB
// AGB: warning: {{.*}}mw-zero: allgather-bucket (allgather_bucket_size) has no effect
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 config=%S/Inputs/ds-seed-train-zero2.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AGB
// A file that does not exist.
// RUN: not mw-opt %t.mlir --mw-zero="ranks=2 config=%t.none.json" 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: mw-zero: cannot read config={{.*}}none.json: No such file or directory

// offload_* is accepted and reported as bytes kept outside HBM, not
// executed (the step's arguments still hold the state): a remark at the
// config, the memory report's host-resident line, and its JSON. The rank's
// partition of gpt2-tiny is 59264 parameters: AdamW offloaded to the CPU
// keeps 59264 x (4 master + 4 gradient + 8 moments) = 948224 B in host
// memory, the f32 parameters on NVMe 59264 x 4 = 237056 B, and
// DeepSpeed's default swap buffers 5 x 1e8 elements x 4 B.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 config=%S/Inputs/ds-offload.json" --mw-train-pipeline --mw-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFFLOAD
// OFFLOAD: ds-offload.json:0:0: remark: mw-zero: offload_param/offload_optimizer accepted and reported, not executed by the training step (its arguments still hold the state): per rank 0 B of parameters and 948224 B of optimizer state in host memory, 237056 B on NVMe, 2000000000 B of pinned buffers
// OFFLOAD: per rank: ZeRO stage 3
// OFFLOAD: host-resident by offload_* (accepted, not executed: the step's arguments still hold them): parameters 0 B, optimizer 948224 B in host memory; 237056 B on NVMe; 2000000000 B of pinned buffers
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 config=%S/Inputs/ds-offload.json" --mw-train-pipeline --mw-memory-report="format=json output=%t.offload.json" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=OFFLOAD-JSON < %t.offload.json
// OFFLOAD-JSON: "host_resident": {
// OFFLOAD-JSON-NEXT: "executed": false,
// OFFLOAD-JSON-NEXT: "param_host_bytes": 0,
// OFFLOAD-JSON-NEXT: "optimizer_host_bytes": 948224,
// OFFLOAD-JSON-NEXT: "nvme_bytes": 237056,
// OFFLOAD-JSON-NEXT: "pinned_buffer_bytes": 2000000000
// Without offload_* neither appears.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=3" --mw-train-pipeline --mw-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-OFFLOAD
// NO-OFFLOAD: per rank: ZeRO stage 3
// NO-OFFLOAD-NOT: host-resident
