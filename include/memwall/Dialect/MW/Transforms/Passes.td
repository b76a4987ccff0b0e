//===- Passes.td - Passes of the mw dialect ------------------*- tablegen -*-===//
//
// The table of contents of Memwall's passes; each lives in its own .cpp named
// after its flag.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_TRANSFORMS_PASSES_TD
#define MEMWALL_DIALECT_MW_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MwMemoryReport : Pass<"mw-memory-report", "ModuleOp"> {
  let summary = "Report per-function memory by role, parameters, FLOPs and "
                "naive activation bytes, and whether a step fits a device";
  let description = [{
    For every function with a body, reports:
    - bytes per role of the arguments (`param`, `input`, `label`,
      `optimizer_state`, `grad`, and `none` for unannotated ones) and of the
      results (`output`, `grad`, `param`, `optimizer_state`, `none`);
    - `param_count` and `param_bytes`: elements and bytes of `param` arguments;
    - `op_count`: operations in the body, the terminator excluded;
    - `flops`, `bytes_read`, `bytes_written`: sums of CostOpInterface over the
      ops that implement it;
    - `naive_activation_bytes`: the bytes of every op result, i.e. what an
      execution that materializes and keeps every intermediate would hold;
    - `grad_bytes`: gradients the step computes for its optimizer (the `grad`
      operands of mw.adamw / mw.sgd) plus `grad`-role arguments and results;
    - `optimizer_state_bytes`: `optimizer_state` arguments;
    - `saved_activation_bytes`: what the backward pass needs from the
      forward pass: what the ops the loss depends on write and other ops
      (backward, optimizer) read, once per storage (a saved `mw.reshape`
      counts as the value it views), arguments excluded. Defined once
      (StepStructure.h, findSavedActivations) on tensors and on the kernels
      of a bufferized or planned step (a read sees its buffer's last write),
      so a step reports the same figure before and after bufferization;
    - `bytes_by_dtype`: the params, gradients, optimizer state and saved
      activations split by element type;
    - for bufferized functions (memref.alloc buffers, planned by
      --mw-static-arena or not): `planned`, `arena_bytes`,
      `lower_bound_bytes` (max over program points of live transient bytes),
      `naive_bytes` (no reuse), `persistent_bytes` (arguments and buffers
      that outlive the function), and `peak`: the program point where
      transient bytes peak (named by the first computation there) and the
      buffers live there, largest first, with their producing ops (for a
      buffer written by an mw.kernel, the op its body computes) and
      locations;
    - for a ZeRO step (a function with mesh collectives, as --mw-zero
      makes it), `zero`: `ranks`, `stage` and `stage_source` (the
      function's `mw.zero.stage`, else inferred: 3 when a `param` argument
      is a piece, 2 when a reduce-scatter starts right after its bucket's
      last gradient, 1 when reduce-scatters wait for later ops, 0 with
      all-reduced gradients), `psi` (Ψ: logical parameters from `mw.shard`
      sizes plus whole parameters), `per_rank` (parameter, gradient and
      optimizer-state bytes one rank holds, whole and in pieces, with
      padding; AdamW's step counter apart), `formula` (the ZeRO paper's
      model-state bytes for the stage, N and the step's precision case,
      with `ratio` and `ratio_without_padding`), `paper_mixed_precision`
      (2 + 2 + 12 bytes per parameter, beside, for AdamW),
      `communication` (per collective kind: count, elements, the paper's
      elements, a ring's elements and bytes sent per rank; totals, the
      loss's reductions apart, and the paper's 2Ψ or 3Ψ with the ratio)
      and `arena` (for planned steps: transient bytes and the peak split
      into activations, gradient buckets, gathered parameters and
      collectives in flight; otherwise a note naming --mw-train-pipeline).

    With `device-memory=SIZE` or `target=NAME` the report ends with a
    verdict on the step (`function`, default `train_step`; JSON key
    `verdict`): whether its per-rank peak (arena + persistent bytes:
    the step's own plan, or planning a copy of the module with
    --mw-train-pipeline when the step is not planned yet) plus the
    runtime overhead the compiler can count (the CUDA backend's 32 MiB
    cuBLASLt workspace and its f32 attention scratch) fits the device, the
    margin, and, when it does not fit, the changes that would: a
    --mw-remat budget (measured: --mw-remat runs on a copy), the loss in
    chunks (measured: --mw-chunk-loss, deferring a tied weight's gradient
    where that lowers the peak, runs on a copy), gradient accumulation and
    bf16/fp16 precision (estimated from the saved activations and the
    weights) and, with
    `ranks=N`, ZeRO stages 0-3 (measured: --mw-zero runs on a copy), each
    with its predicted peak and its cost (recompute or added FLOPs, bytes
    sent per rank). Not counted: the CUDA context,
    NCCL's buffers, scratch copies of strided matmul operands. Sizes take
    B, KB, MB, GB, TB (powers of 10) or KiB, MiB, GiB, TiB (powers of 2);
    a target's memory is its marketed size in GB (10^9 bytes):

    ```
    $ mw-models gpt --preset gpt2-medium --batch 8 --train |
        mw-opt --mw-memory-report="target=V100-16GB" -o /dev/null
    ...
    mw-memory-report verdict @train_step on V100-16GB (16.00 GB = 14.90 GiB, ...)
      step peak               19917283348 (19.92 GB = 18.55 GiB); ...
      required                21025103896 (21.03 GB = 19.58 GiB)
      verdict                 does not fit: short by 5.03 GB = 4.68 GiB
      changes (predicted peak + overhead; cost):
        remat      --mw-remat="budget=14892MB target=V100-16GB"
                   fits: 15.96 GB = 14.86 GiB (measured); +8522825728 ...
    ```

    The IR is left unchanged. The text form is for people; the JSON form has a
    stable key per figure:

    ```
    $ mw-opt model.mlir --mw-memory-report=format=json -o /dev/null
    {
      "functions": [
        { "name": "forward", "param_count": 124439808, ... }
      ]
    }
    ```

    `format=html` writes one self-contained page (inline CSS and JS, no
    network; docs/memory-report.md, "The picture") of the step `function`
    (default `train_step`; every function when the module has none by that
    name): the arena as a time x offset chart with a rectangle per
    buffer over [first use, last use] x [offset, offset + size), coloured by
    kind (activation, gradient, optimizer work, recompute, ZeRO gradient
    bucket, gathered parameters), the live transient bytes over the op
    order with the lower bound and the peak marked, totals per kind and per
    rank, and on hover a buffer's name, size, producing op and location. An
    unplanned bufferized step gets the live bytes only (its buffers have no
    offsets yet), a step on tensors a note that the picture needs a planned
    step. With a device, the verdict follows as text:

    ```
    $ mw-models gpt --preset gpt2-small --train | mw-opt --mw-train-pipeline \
        --mw-memory-report="format=html output=plan.html" -o /dev/null
    ```

    A tensor or memref with a dynamic shape among the figures is an error
    naming the value.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Output format: text, json, or html (one self-contained page: "
           "the arena chart, the live bytes, totals per kind and per rank; "
           "give output=FILE.html)">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report: a file path, or - for stdout">,
    Option<"deviceMemory", "device-memory", "std::string", /*default=*/"\"\"",
           "Device memory for the verdict: bytes with an optional unit (B, "
           "KB, MB, GB, TB are powers of 10; KiB, MiB, GiB, TiB powers of 2), "
           "e.g. 16GB; overrides the target's">,
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "Device for the verdict, by name: V100-16GB, RTX4090, V100-32GB, "
           "A100-40GB, A6000, L40S, A100-80GB, H100-80GB, H200-141GB, "
           "B200-192GB (or h200, h100, a100, v100)">,
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Data-parallel ranks available to the verdict's ZeRO suggestions "
           "(1: none)">,
    Option<"function", "function", "std::string",
           /*default=*/"\"train_step\"",
           "The step the verdict and the html page are about (the verdict: "
           "the module's only function when it has no train_step; the page: "
           "every function)">,
  ];
  let statistics = [
    Statistic<"numFunctionsReported", "functions", "Functions reported">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect",
    "::mlir::mesh::MeshDialect"];
}

def MwKvPlan : Pass<"mw-kv-plan", "ModuleOp"> {
  let summary = "Size the paged KV cache of an inference module from the "
                "static plan: as many blocks as the device memory holds";
  let description = [{
    Runs on an inference module on tensors (`mw-models gpt|llama
    --inference`: `@prefill` and `@decode` with `kv_cache` arguments of type
    `[NB, BS, Hkv, D]`, docs/inference.md), before `--mw-train-pipeline`. It
    plans a copy of the module with `--mw-train-pipeline` and takes from that
    plan what the runtime holds besides the cache: the persistent buffers
    once by name (the weights, the inputs, constants), one arena (the larger
    of the two steps'), and the runtime workspace (cuBLASLt's workspace and
    the attention scratch, as the memory report's verdict counts them). What
    is left of the device memory, divided by the bytes of one block of every
    layer's K and V cache, is the number of blocks NB; the pass sets NB on
    every `kv_cache` argument, on the `mw.kv_cache_write` results and on the
    functions' results, in both functions alike. Nothing else changes: the
    cache ops use NB only to bound slots and block table entries, and the
    caches are persistent state sized by their type, so the plan compiled
    from the resized module allocates exactly that cache. No profiling run,
    no utilization fraction.

    ```
    $ mw-models gpt --preset gpt2-medium --inference --max-batch 32 \
        --max-seq 1024 --kv-dtype int8 \
      | mw-opt --mw-kv-plan="target=h100 seq-len=512" --mw-train-pipeline \
      | mw-translate --mw-to-plan -o gpt2m.mwplan
    ```

    It prints (text, or `format=json`; to `output=`) the plan's persistent,
    arena and workspace bytes, the bytes per token (all layers, K and V, in
    the cache's element type; int8/fp8 scales are attributes compiled into
    the plan, none per token), the number of blocks, the maximum resident
    tokens (NB * BS), the maximum concurrent sequences of `seq-len` tokens
    (NB / ceil(seq-len / BS)), and, for comparison, how many sequences fit
    when each reserves max-seq tokens contiguously. max-seq is the
    functions' `mw.max_seq` attribute (mw-models writes it), else the block
    tables' MB * BS.

    Errors, one each: no `kv_cache` arguments; no device; `block=` other than
    the caches' block size; a block size that does not divide max-seq;
    `kv-dtype=` other than the caches' element type (mw-models --kv-dtype
    emits the caches with their scales); the weights, arena and workspace
    alone exceeding the device memory (saying by how much); fewer blocks
    than one sequence of `seq-len` needs.
  }];
  let options = [
    Option<"deviceMemory", "device-memory", "std::string", /*default=*/"\"\"",
           "Device memory to fill: bytes with an optional unit (B, KB, MB, "
           "GB, TB are powers of 10; KiB, MiB, GiB, TiB powers of 2), e.g. "
           "80GB; overrides the target's">,
    Option<"targetName", "target", "std::string", /*default=*/"\"\"",
           "Device by name, its marketed memory: h200 (141 GB), h100, a100 "
           "(80 GB), or a memory report device (A100-40GB, ...)">,
    Option<"block", "block", "int64_t", /*default=*/"0",
           "Tokens per block the plan expects; must be the caches' (0: the "
           "caches')">,
    Option<"kvDType", "kv-dtype", "std::string", /*default=*/"\"\"",
           "The cache element type the plan expects: f32, bf16, f16, int8 or "
           "fp8e4m3; must be the caches' (empty: the caches')">,
    Option<"seqLen", "seq-len", "int64_t", /*default=*/"0",
           "Sequence length for the max concurrent sequences (0: max-seq)">,
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Report format: text or json">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report: a file path, or - for stdout">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect"];
}

def MwAutodiff : Pass<"mw-autodiff", "ModuleOp"> {
  let summary = "Turn a forward function returning a loss into a training "
                "step: forward, backward and optimizer update";
  let description = [{
    Differentiates the function named by `entry`, which returns one rank-0
    float loss, with respect to its `param` arguments (reverse mode, with the
    gradient rules of GradientOpInterface), and adds a function `@train_step`
    (the forward function stays):

    ```
    @train_step(params..., optimizer state..., inputs and labels...)
        -> (loss, new params..., new optimizer state...)
    ```

    Every argument and result has a role and a name. An updated parameter or
    state result carries the `mw.name` of the argument it updates and the
    loss is named `loss`, so one step's outputs are the next step's inputs.
    Optimizer state: AdamW keeps `<param>.exp_avg`, `<param>.exp_avg_sq`
    (f32) and one step counter `optimizer.step` (i64, the number of updates
    done so far); SGD with momentum keeps `<param>.momentum_buffer`.

    - `precision=bf16|fp16`: the forward function is written in that compute
      type; parameters become f32 master weights cast to it at their uses,
      gradients arrive in f32 and the optimizer state is f32. `fp16` adds
      dynamic loss scaling with DeepSpeed's rules (see docs/training.md).
    - `master-weights=optimizer` (with `precision=bf16|fp16`; an error with
      `fp32`): DeepSpeed's and the ZeRO paper's layout instead. The `param`
      arguments and results are in the compute type, gradients are computed
      in it (no cast back to f32 in the backward pass), and each parameter's
      f32 master is an `optimizer_state` argument and result
      `<param>.master`, before its moments. The optimizer casts each gradient
      to f32 (fp16: then unscales it), updates the master and its state in
      f32 and returns the new parameter as the master cast to the compute
      type; on overflow the master is kept too. Per parameter that is 2 + 2
      + 12 bytes with AdamW, the paper's mixed-precision accounting.

      ```mlir
      %g = mw.cast %dw : tensor<8x4xbf16> to tensor<8x4xf32>
      %m1, %e1, %v1 = mw.adamw %master, %g, %exp_avg, %exp_avg_sq, %t ...
      %w1 = mw.cast %m1 : tensor<8x4xf32> to tensor<8x4xbf16>
      ```
    - `precision=fp16`: four more `optimizer_state` arguments and results
      follow the optimizer's: `loss_scale.scale` (f32), `loss_scale.iter`,
      `loss_scale.last_overflow` and `loss_scale.hysteresis` (i64). The
      backward pass is seeded with the scale (divided by K with
      `grad-accum=K`); the f32 master gradients are divided by the scale and
      checked with one `mw.found_inf`; when it finds an inf or NaN the step
      is skipped: every new parameter and state value, AdamW's
      `optimizer.step` included, is `mw.select`ed back to its old value.
      `mw.loss_scale_update` (options `loss-scale-window`,
      `loss-scale-hysteresis`, `loss-scale-min`) then advances the scale
      state. The initial scale is not an option but the value of the
      `loss_scale.scale` state passed to the first step; DeepSpeed starts
      from scale 65536 (2^16), iter 0, last_overflow -1 and hysteresis
      `loss-scale-hysteresis`, which is what `mw-eval --random-inputs`
      passes.

      ```mlir
      %g = mw.div %dw, %scale : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
      %overflow = mw.found_inf %g, ... : (tensor<8x4xf32>, ...) -> tensor<f32>
      %w1 = mw.sgd %w, %g {lr = 1.0e-01 : f64} : ...
      %w2 = mw.select %overflow, %w, %w1 : (tensor<f32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
      %s1, %i1, %l1, %h1 = mw.loss_scale_update %overflow, %scale, %iter, %last, %hyst : ...
      ```
    - `grad-accum=K`: the forward function is one micro-batch; the step takes
      K micro-batches concatenated along dimension 0 of every input and
      label, accumulates their gradients and applies one update. The loss is
      the mean of the micro-batch losses.

    Integer arguments get no gradient; a parameter that does not reach the
    loss gets a zero gradient and a warning.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "Name of the forward function to differentiate">,
    Option<"stepName", "step-name", "std::string", /*default=*/"\"train_step\"",
           "Name of the training-step function to create">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "Optimizer: adamw or sgd">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Learning rate">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "std::string", /*default=*/"\"\"",
           "Weight decay, a number >= 0 (when not given: 0.01 for adamw, 0 "
           "for sgd)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum (0 disables the momentum buffer)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum">,
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "Compute precision: fp32, bf16 or fp16 (f32 master weights and "
           "optimizer state for bf16/fp16)">,
    Option<"masterWeights", "master-weights", "std::string",
           /*default=*/"\"param\"",
           "Where bf16/fp16 steps keep their f32 master weights: param (the "
           "parameters are the masters, cast at their uses) or optimizer "
           "(half-precision parameters and gradients, the master in the "
           "optimizer state as <param>.master: DeepSpeed's layout)">,
    Option<"gradAccum", "grad-accum", "int64_t", /*default=*/"1",
           "Micro-batches whose gradients accumulate before one update">,
    Option<"lossScaleWindow", "loss-scale-window", "int64_t",
           /*default=*/"1000",
           "fp16: consecutive steps without overflow after which the loss "
           "scale doubles (DeepSpeed's loss_scale_window)">,
    Option<"lossScaleHysteresis", "loss-scale-hysteresis", "int64_t",
           /*default=*/"2",
           "fp16: the loss scale halves from the Nth overflow on, counted "
           "since it last grew (DeepSpeed's hysteresis)">,
    Option<"lossScaleMin", "loss-scale-min", "double", /*default=*/"1.0",
           "fp16: the smallest loss scale (DeepSpeed's min_loss_scale)">,
  ];
  let statistics = [
    Statistic<"numParams", "params", "Parameters differentiated">,
    Statistic<"numBackwardOps", "backward-ops", "Ops created for the backward pass">,
  ];
}

def MwFuse : Pass<"mw-fuse", "ModuleOp"> {
  let summary = "Group mw ops into mw.fusion kernels: matmul epilogues, row "
                "(reduction) kernels, loop kernels and horizontal optimizer "
                "updates";
  let description = [{
    Groups the ops of every function on tensors (after `--mw-autodiff` and
    `--mw-remat`, before `--mw-bufferize`) into `mw.fusion` ops, each one
    kernel whose only memory traffic is its inputs and results, of the four
    kinds of docs/fusion.md, formed in this order:
    - `matmul`: an `mw.matmul` and its pointwise epilogue of the matmul's
      result shape (bias, gelu/relu, residual add; in backward the
      activation's derivative with the saved pre-activation), plus a column
      reduction of an epilogue value (the bias gradient: cuBLASLt's BIAS,
      GELU_AUX_BIAS and DGELU_BGRAD);
    - `row`: a softmax, log_softmax, their gradients, layer_norm, rms_norm
      or a reduction over the last axis, with its pointwise prologue (bias +
      residual before layer_norm, scale + mask before softmax) and epilogue
      (softmax_grad's scale);
    - `loop`: chains of pointwise ops (elementwise, casts, broadcasts,
      reshapes, transposes, slices) and siblings that read the same input,
      plus column reductions of their values;
    - `horizontal`: every `mw.adamw` (and, apart, every `mw.sgd`) update of
      the step in one kernel, as Inductor's foreach kernels.

    Legality: a candidate joins a group only when no path through ops
    outside the group leads from the group to it or back (no cycle); a
    fusion holds at most one matmul or row op, and no op is ever duplicated
    except `mw.splat`, which reads nothing (each fusion that reads a splat
    computes it: the cost model's bytes only fall). A forward op never
    shares a fusion with a backward or optimizer op, so every forward value
    the backward pass reads (what `--mw-remat` keeps) is a fusion result and
    stays materialized; any value used outside its fusion is a result
    (multi-output). Candidates lie within 48 ops of their group in program
    order. Decisions follow program order and are deterministic; each fusion
    runs where its first op was, and ops that need its results move after
    it. Functions with ops that have memory effects (bufferized IR) are left
    alone. `mw-eval` gives bit-identical outputs before and after: the body
    runs the same ops in the same order.

    ```mlir
    %0 = mw.matmul %x, %w : (tensor<8x64xf32>, tensor<64x256xf32>) -> tensor<8x256xf32>
    %1 = mw.add %0, %b : (tensor<8x256xf32>, tensor<256xf32>) -> tensor<8x256xf32>
    %2 = mw.gelu %1 : tensor<8x256xf32>
    // becomes (%1 stays a result: the backward pass reads it)
    %1, %2 = mw.fusion matmul ins(%x, %w, %b : ...) -> (tensor<8x256xf32>, tensor<8x256xf32>) {
    ^bb0(%a: tensor<8x64xf32>, %c: tensor<64x256xf32>, %d: tensor<256xf32>):
      %m = mw.matmul %a, %c : ...
      %s = mw.add %m, %d : ...
      %g = mw.gelu %s : tensor<8x256xf32>
      mw.yield %s, %g : tensor<8x256xf32>, tensor<8x256xf32>
    }
    ```

    `report=true` prints, per function, the kernels, the bytes they read and
    write (cost model) and the buffers their results need, before and after,
    and the fusions per kind.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print kernels, bytes moved and buffers before and after, and the "
           "fusions per kind, to stdout">,
    ListOption<"kinds", "kinds", "std::string",
               "The kinds of fusion to form, comma-separated: loop, row, "
               "matmul, horizontal (default: all)">,
  ];
  let statistics = [
    Statistic<"numFusions", "fusions", "mw.fusion ops formed">,
    Statistic<"numFusedOps", "fused-ops", "Ops moved into fusions">,
  ];
}

def MwChunkLoss : Pass<"mw-chunk-loss", "ModuleOp"> {
  let summary = "Compute a language model's head, its cross-entropy and "
                "their gradients a chunk of rows at a time, so the [N, V] "
                "logits are never whole";
  let description = [{
    Runs on tensors, after `--mw-autodiff` (and `--mw-remat`, `--mw-zero`),
    before `--mw-sink`, `--mw-fuse` and bufferization. A language model's
    logits are its step's largest transient tensors: [N, V] for N tokens
    and a vocabulary of V (gpt2-small at N = 1024: 196 MiB, and as much
    again for their gradient). The pass finds each `mw.cross_entropy` /
    `mw.cross_entropy_grad` pair whose logits are `mw.matmul(h, W)` (plus a
    bias, through reshapes) and read by nothing else, and whose gradient is
    read only by the products that make the hidden states' gradient
    (`g W`), the weight's (`g^T h` or `h^T g`) and a bias's row sum. It
    replaces them by `chunks` runs of: a slice of h's rows, their logits,
    their loss and logits' gradient (`label_offset` names the chunk's rows
    in the whole batch's labels, so the mean still divides by the batch's
    count) and the three products, one chunk after the other where the
    gradient was, so one chunk's logits are live at a time. The hidden
    states' gradient is the chunks' rows concatenated; the loss and the
    weight's and bias's gradients are the chunks' sums added up (in f32 for
    bf16 and f16). A forward with only the loss is chunked the same way.

    Every row's logits, loss term and logits' gradient are the unchunked
    op's, bit for bit; the sums over rows change their order (the loss,
    the weight's and the bias's gradients: after one SGD step `mw-eval`'s
    outputs agree within 1e-6 of the largest value in f32 and 1e-5 with
    bf16 or f16 compute, within 1e-4 after AdamW;
    test/Dialect/MW/Transforms/mw-chunk-loss-models.mlir).
    More chunks hold less at once and add one pass over the weight's
    gradient each (docs/training.md, "The LM head's loss in chunks").

    Chunking holds the weight and its gradient's sum across the chunks; it
    pays where the logits are larger than those (N > D, roughly). The pass
    rewrites a copy of the function and keeps it only when its peak of
    live tensor bytes (the model of `--mw-sink`: unfused tensors, by the
    arena's rules, in the order `--mw-hoist-updates` will leave) is no
    higher than the function's, unless `force=true`. With `fused=true`
    (what `--mw-train-pipeline` gives it with `fuse=true`) the model holds
    the bytes as `--mw-fuse`'s kernels do: a matmul's product that only a
    same-shape `mw.add` reads is that add's epilogue and never a buffer,
    and the sum is written over a running sum that dies there.
    A head the pass cannot split, or whose chunks would raise the peak, is
    left whole; `report=true` says why, and the peaks.

    With `defer-weight-grad=true`, a weight gradient whose only reader is
    an `mw.add` with a value made later (a tied embedding's gradient, at
    the end of the backward pass) is not summed across the backward pass:
    its chunks run right before that add, each recomputing its logits and
    their gradient, and add into the later value (in f32 for bf16 and
    f16). The weight's [V, D] gradient is then live only at the end, for
    one more logits product (and loss gradient) per step; the pass keeps
    the deferred form only where its live tensor peak is lower than the
    early form's, and says so with `report=true` (docs/training.md).

    ```mlir
    %logits = mw.matmul %h, %wte {transpose_rhs} : ... -> tensor<1024x50257xf32>
    %loss = mw.cross_entropy %logits, %labels : ...
    %g = mw.cross_entropy_grad %logits, %labels, %seed : ...
    %dh = mw.matmul %g, %wte : ...
    %dwte = mw.matmul %g, %h {transpose_lhs} : ...
    // becomes, per chunk i of rows [r, r + n):
    //   %hi = mw.slice %h [r, 0] [n, 768]; %li = mw.matmul %hi, %wte ...
    //   mw.cross_entropy %li, %labels {label_offset = r}; ...
    ```
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", /*default=*/"8",
           "How many chunks of rows (at most one a row; default 8)">,
    Option<"force", "force", "bool", /*default=*/"false",
           "Chunk a head even where that raises the step's peak of live "
           "tensor bytes">,
    Option<"deferWeightGrad", "defer-weight-grad", "bool",
           /*default=*/"false",
           "Where the head's weight gradient is added to a contribution "
           "made later (a tied embedding's), make its chunks there, "
           "recomputing their logits, when that lowers the peak of live "
           "tensor bytes (one more logits product per step)">,
    Option<"fused", "fused", "bool", /*default=*/"false",
           "Judge the peak as --mw-fuse's kernels hold the bytes: a product "
           "added to a running sum is written over it (--mw-train-pipeline "
           "sets it with fuse=true)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print each head chunked, or why it was left whole">,
  ];
  let dependentDialects = ["::mlir::mw::MWDialect"];
}

def MwSink : Pass<"mw-sink", "ModuleOp"> {
  let summary = "Move ops toward their first reader where that lowers the "
                "step's peak of live tensor bytes (a memory-aware schedule)";
  let description = [{
    Reorders the ops of every function on tensors (before `--mw-bufferize`;
    `--mw-train-pipeline` with `fuse=true` runs it before `--mw-fuse`). An
    op whose result is read much later keeps that result live across
    everything in between: the tied embedding's gradient from the lm_head,
    which `--mw-autodiff` computes first and adds to the embedding's own
    gradient last, is live through the whole backward pass. Moving such an
    op to just before its first reader shortens its result's lifetime and
    lengthens those of the operands it read last; the pass makes the move
    only where it lowers the peak.

    The model is the arena's at tensor level: each top-level tensor result
    is one buffer from its op to its last reader (an `mw.reshape`'s result
    is a view of its operand's buffer), function arguments are not counted
    (persistent), nor are the results of optimizer updates (written into the
    parameters and states they replace), a result written over an operand
    that dies there (the op's in-place rule) shares its buffer, returned
    values live to the end, and the peak is the
    largest sum of live bytes at one op. Each round tries, in program order,
    every op whose move spans all of the peak's ops (no other move can lower
    it), keeps the one with the lowest resulting peak (the earliest on
    ties) if it lowers the current peak by more than 1/1024 of it (a move
    for a few bytes would only part an op from the producer it fuses with),
    and repeats until no move does; ops with regions stay where they are,
    and no op moves past an optimizer update that overwrites a buffer it
    reads (in place: One-Shot Bufferize would copy). Only the order changes, so
    `mw-eval` gives bit-identical outputs. Functions with ops that have
    memory effects (bufferized IR) are left alone.

    ```mlir
    %big = mw.matmul %a, %b : ...   // read only by %s, at the end
    %c = ...                        // many ops that allocate
    %s = mw.add %big, %e : ...
    // becomes: %c ...; %big = mw.matmul %a, %b; %s = mw.add %big, %e
    // when %big is larger than %a and %b together at the peak
    ```

    `report=true` prints, per function that changed, the ops moved and the
    peak before and after.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the ops moved and the live tensor peak before and after, "
           "to stdout">,
  ];
  let statistics = [
    Statistic<"numMoved", "moved", "Ops moved toward their first reader">,
  ];
}

def MwHoistUpdates : Pass<"mw-hoist-updates", "ModuleOp"> {
  let summary = "Run each optimizer update as soon as its gradient is final "
                "and its parameter's last read is done";
  let description = [{
    Reorders the ops of every function on tensors (after `--mw-remat` and
    `--mw-zero`, before `--mw-fuse` and `--mw-bufferize`;
    `--mw-train-pipeline` runs it after `--mw-sink`). `--mw-autodiff` puts every update
    after the whole backward pass, so every parameter's gradient is live at
    its end. Each `mw.adamw` and `mw.sgd` that writes its parameter and
    states in place into the step's arguments moves up to right after the
    last of: the definitions of its operands, and every other read of the
    buffers it overwrites (the parameter's reads by backward ops and by
    recompute clones, views of it included), so that One-Shot Bufferize
    never needs a copy; its gradient then dies there, as with PyTorch's
    optimizer-in-backward hooks.

    The ops that only feed updates (the step counter's increment, a
    gradient's cast or scaling, a ZeRO bucket's parameter concatenation and
    `mesh.all_slice`) move up with them, never later than they were;
    updates ready at one point are placed side by side (so `--mw-fuse`
    still forms horizontal kernels of them). Collectives that communicate,
    `mw.wait` (their place is `--mw-zero`'s overlap choice), `mw.select`
    and ops with regions stay in order, and so does an update whose results
    go into transient buffers (a ZeRO shard: moving it would lengthen
    them). Dataflow keeps what must wait: an update that reads a global
    gradient norm (clipping) stays after every gradient, and fp16's
    skip-on-overflow `mw.select`, which reads the old parameter after its
    update, keeps that update where it is.

    The new order is kept only when its peak of live tensor bytes (the model
    of `--mw-sink`) is no higher than the original's. Only the order
    changes, so `mw-eval` gives bit-identical outputs. Functions with ops
    that have memory effects (bufferized IR) are left alone.

    ```mlir
    %dw = mw.matmul %x, %dy {transpose_lhs} : ...   // w's gradient
    %dx = mw.matmul %dy, %w {transpose_rhs} : ...   // w's last read
    ... the rest of the backward pass ...
    %w1, %m1, %v1 = mw.adamw %w, %dw, %m, %v, %t : ...
    // becomes: %dw ...; %dx ...; %w1, %m1, %v1 = mw.adamw ...; the rest
    ```

    `group=block` (the default) gives the updates of one transformer block
    (parameters whose `mw.name` has the block's number, `h.3.` or
    `model.layers.3.`) one point: the latest of their own, once the block's
    backward is done, so `--mw-fuse` makes one horizontal kernel per block
    (GPT-2 small: 353 kernels in the fused plan, against 462 with a point
    per parameter and 340 without the pass). Parameters outside blocks keep
    their own points. `group=parameter` moves each update to its own point.

    `report=true` prints, per function that changed, how many updates moved
    and the peak before and after.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the updates moved and the live tensor peak before and "
           "after, to stdout">,
    Option<"group", "group", "std::string", /*default=*/"\"block\"",
           "Where updates run: block (the updates of one transformer block "
           "side by side, once its backward is done) or parameter (each as "
           "soon as it may)">,
  ];
  let statistics = [
    Statistic<"numHoisted", "hoisted", "Updates moved earlier">,
  ];
}

def MwFormKernels : Pass<"mw-form-kernels", "ModuleOp"> {
  let summary = "Wrap every mw op in an mw.kernel with destination operands, "
                "ready for One-Shot Bufferize";
  let description = [{
    Puts each mw op of every function body (except `mw.reshape`, which
    bufferizes to a view) and each mesh collective of a ZeRO step
    (`mesh.all_reduce`, `mesh.reduce_scatter`, `mesh.all_gather`,
    `mesh.all_slice`) into its own `mw.kernel`, in destination-passing
    style, and chooses each result's destination:
    - for an elementwise op, the first operand of the result's type whose
      last use is this op (else the first of that type), so that the result
      may take the buffer of an input that dies here;
    - for `mw.adamw`, `mw.sgd` and `mw.loss_scale_update`, the parameter and
      state operands the update replaces;
    - for `mw.wait`, its operand: the wait completes the collective in the
      collective's own buffer, which therefore stays live (in flight) from
      the collective to the wait and after;
    - otherwise (collectives included: their result never aliases their
      input) a `tensor.empty` of the result's type.
    An `mw.fusion` (from `--mw-fuse`) becomes one `mw.kernel` whose body is
    the fusion's body (a fused kernel), with one destination per result
    (the fusion contract's aliasing rule, docs/fusion.md): a `loop` kernel's
    result, and a `row` kernel's result of the iteration shape, may take an
    input of its type that every op of the body reads only at the output's
    own index (a row op reads it along its rows, which the runtime reads
    whole before writing them; one whose last use is here first; never a
    function argument), a `horizontal` kernel's updates take the parameters
    and states they replace, and every other result (all of a `matmul`
    kernel's) a `tensor.empty`.
    Whether a destination that is an input is really written in place is not
    decided here: `--mw-one-shot-bufferize` decides it (with One-Shot
    Analysis's answers, in linear time), and gives the result a fresh buffer
    (no copy: destinations are never read) where writing would clobber a
    value still needed. Function arguments are destinations only of
    optimizer updates, so forward-only programs never write their inputs or
    weights.

    The IR stays on tensors and computes the same values (`mw-eval` gives the
    same outputs before and after). `--mw-bufferize` runs this pass and then
    `--mw-one-shot-bufferize`.

    ```
    %s = mw.add %x, %y : tensor<4xf32>
    // becomes
    %s = mw.kernel ins(%x, %y : tensor<4xf32>, tensor<4xf32>)
                   outs(%x : tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
      %0 = mw.add %a, %b : tensor<4xf32>
      mw.yield %0 : tensor<4xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def MwOneShotBufferize : Pass<"mw-one-shot-bufferize", "ModuleOp"> {
  let summary = "One-Shot Bufferize a program in kernel form, deciding "
                "in place in linear time";
  let description = [{
    Bufferizes the output of `--mw-form-kernels` as `--one-shot-bufferize`
    does with `--mw-bufferize`'s options (across function boundaries,
    identity-layout memrefs, kernel bodies left on tensors), and decides
    which destinations are written in place in one bottom-up pass over
    each function instead of by One-Shot Analysis, whose pairwise test of
    every alias set is cubic in the layers of a training step (the
    residual stream's gradient is one alias set from the loss to the
    embedding): 26 s of a GPT-3-width ZeRO-3 step at 128 layers, under a
    second with this pass (docs/bufferization.md).

    The rule: a kernel writes into a destination's buffer iff nothing uses
    that value or an `mw.reshape` view of it after the kernel, and the
    kernel reads it only as that very value and elementwise. A destination
    that fails the rule gets a fresh `tensor.empty` (a new buffer, no copy:
    destinations are never read), as One-Shot Analysis would decide; then
    upstream `bufferizeModuleOp` bufferizes the module. A module not in
    kernel form (any top-level op besides `mw.kernel`, `mw.reshape`,
    `tensor.empty` and the return; several blocks; calls; dynamic shapes;
    read-only arguments), and every module with `analysis=upstream`, goes
    through upstream One-Shot Bufferize, analysis included. The two give
    byte-identical IR on the test suite's steps
    (test/Dialect/MW/Transforms/mw-one-shot-bufferize.mlir).
  }];
  let options = [
    Option<"analysis", "analysis", "std::string", /*default=*/"\"linear\"",
           "Who decides in place: 'linear' (this pass, for kernel form; "
           "others fall back to upstream) or 'upstream' (One-Shot Analysis)">,
  ];
  let statistics = [
    Statistic<"numOutOfPlace", "out-of-place",
              "Destinations given a fresh buffer by the linear rule">,
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def MwFoldViews : Pass<"mw-fold-views", "ModuleOp"> {
  let summary = "Turn bufferized kernels that only transpose, slice or "
                "reshape into strided views of their input";
  let description = [{
    Runs after One-Shot Bufferize (the last pass of `--mw-bufferize`). A
    kernel that moves elements without computing (a transpose, a slice, a
    reshape of a non-contiguous value, or a fused loop kernel made of only
    these, such as attention's split of the QKV projection into heads) copies
    its input into a fresh buffer; where a strided layout expresses the
    copy, the copy goes and the buffer becomes a view:

    - **consumer side**: a kernel whose body is only `mw.transpose`,
      `mw.slice` and `mw.reshape`, every result a strided view of one input
      (a reshape only where it moves no element: NumPy's no-copy rule), whose
      destinations are fresh buffers that only later kernels read, while no
      kernel writes the input's buffer up to the last of those reads. Its
      readers then read a `memref.reinterpret_cast` view of the input.
    - **producer side**: a single `mw.transpose` kernel whose input is a
      fresh buffer that exactly one earlier single-op `mw.matmul` kernel
      writes and nothing else reads (attention's `P V` and its gradients'
      products, transposed back to `[B, S, H, D]`). The matmul then writes
      the transpose's destination through the inverse-permuted view, and its
      own buffer goes.
    - **concat side**: a single `mw.concat` kernel into a fresh buffer whose
      every input is a distinct fresh buffer (or a contiguous reshape of
      one) that exactly one earlier single-op kernel writes, directly or
      through a permuted view, and only the concat reads (the Q, K and V
      gradients into the QKV projection's gradient). Each writer then writes
      its piece of the concat's destination through a view, and the concat
      and the pieces' buffers go.

    Every kernel computes the same values from the same elements, so
    `mw-eval` gives bit-identical outputs before and after; the runtime's
    kernels read and write strided operands (docs/runtime-kernels.md,
    "Layouts"). A kernel that fits neither rule stays (test:
    test/Dialect/MW/Transforms/mw-fold-views.mlir).

    ```
    %b = memref.alloc() : memref<1x12x1024x64xf32>
    mw.kernel ins(%qkv : memref<1x1024x2304xf32>) outs(%b : ...) { slice, reshape, transpose }
    mw.kernel ins(%b, ...) ...
    // becomes
    %b = memref.reinterpret_cast %qkv to offset: [0], sizes: [1, 12, 1024, 64],
           strides: [2359296, 64, 2304, 1] : ... to memref<1x12x1024x64xf32, strided<...>>
    mw.kernel ins(%b, ...) ...
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numFolded", "folded", "Kernels that became views">,
  ];
}

def MwRemat : Pass<"mw-remat", "ModuleOp"> {
  let summary = "Rematerialize forward activations in the backward pass of "
                "a training step (gradient checkpointing)";
  let description = [{
    For every forward value that the backward pass of a training step uses
    (a *saved activation*), either keeps it alive from the forward pass to
    its backward uses, or drops it and recomputes it from kept values right
    before its first backward use, by cloning the (pure) forward ops of its
    recompute chain and rewiring its backward uses to the clone. Forward ops
    are those the loss depends on (a rank-0 float result with role
    `output` or none, the one named `loss` first; see
    memwall/Analysis/StepStructure.h); every other op of the step is backward or
    optimizer. Nothing the forward pass computes is erased, so the loss and
    every other output are bit-identical to the unrematerialized step.

    ```mlir
    %h = mw.gelu %a : tensor<64x256xf32>       // forward
    ...
    %g = mw.gelu_grad %a, %dy ...               // backward use of %a
    %w = mw.matmul %h, %dz {transpose_lhs} ...  // backward use of %h
    // with %h dropped (strategy=all) becomes
    %h_re = mw.gelu %a : tensor<64x256xf32>     // recomputed here
    %w = mw.matmul %h_re, %dz {transpose_lhs} ...
    ```

    Strategies: `none` (keep every saved activation), `all` (keep only the
    function's arguments; every forward op the backward needs is recomputed
    once, its copy shared by all its backward uses: one forward), `every-k` (keep the outputs of every `k`-th
    transformer block, blocks named by `mw.layer = "h.N..."` attributes or,
    without them, `loc("h.N...")`-style locations),
    `sqrt` (Chen et al. 2016: every ceil(sqrt(n))-th of the n articulation
    values of the forward chain), `selective` (Megatron-LM's selective
    recompute: in attention regions, `*.attn` or `*.attention`, drop the
    core attention from the scores matmul to the softmax, keeping Q, K, V
    and the context; nothing to drop with a fused `mw.attention`),
    `revolve` (Griewank's binomial checkpointing over the transformer
    blocks, or with `units=regions` (the default) over their parts, a
    block's attention and MLP: at most `snapshots` + 1 inputs of links held
    at once, the fewest recomputes that allows, each link at most t + 1
    times where C(snapshots + t, t) >= the number of links; with
    `internals=per-use` (the default) a link's internals are recomputed
    again before each backward op that reads them rather than kept across
    its backward; not with gradient accumulation),
    `optimal` (needs a budget: the cheapest measured plan of the kept set of
    a covering MILP whose optimum is a lower bound on every plan's
    recompute, auto's choice, the staged MILP (the backward pass's time
    points over the budget at once: a bound on every plan, and a schedule
    of what each stretch of the backward pass recomputes) and Checkmate's
    MILP on the
    fixed op order, solved by COIN-OR CBC within `time-limit`; `verbose`
    reports the gap to the largest bound, `optimality=proven` when it is 0;
    with `saved-budget`
    instead, the exact least recompute whose kept saved activations fit,
    each dropped one recomputed once for all its backward uses: the
    Lagrangian hull by max-flow, then CBC on the MILP where the hull leaves
    a gap) and `auto` (`none` without a
    budget; with one, the cheapest, by `cost`, of a budget-independent set
    of candidates whose arena fits: the fixed strategies, revolve's
    schedules for a range of snapshot counts, the steps of
    two greedy paths that drop values dead where the simulated arena
    peaks, and those candidates with values kept again wherever a ladder
    of arena levels leaves room; candidates are simulated with the arena's
    own rules, and those that recompute more ops than 16 forward passes
    hold are left out, `verbose` counting them).

    The peak of the result is measured, not estimated: the pass runs the
    real pipeline (`--mw-bufferize`, `--mw-static-arena`; with
    `hoist-updates=true`, `--mw-hoist-updates` first, as
    `--mw-train-pipeline` does by default) on a copy of the
    module and adds the arena to the persistent bytes (arguments and
    returned buffers). `budget` takes bytes (`123`, `500MB`, `6GiB`), a
    percentage of the save-all peak (`60%`) or `auto` (the memory of
    `target`'s device); a fixed strategy over it is an
    error, and an unreachable budget is an error that states the smallest
    peak found and lists the buffers live there. `saved-budget` (auto and
    optimal) bounds the saved activations kept from the forward pass
    instead of, or (auto only) besides, the peak (bytes, or a percentage
    of what the save-all step saves), as PyTorch's
    `activation_memory_budget` does; auto's candidates reach down to
    keeping none and include optimal's exact solution. The step records
    `mw.remat.*` attributes (see docs/remat.md); `verbose` adds a remark
    with the figures and the solve time. `max-recompute` caps the
    recompute a plan may cost (`35%` of the step, or `forward`): a budget
    that only plans above it reach is reported unreachable within it,
    rather than met by recomputing the step many times over.
  }];
  let options = [
    Option<"strategy", "strategy", "::mlir::mw::RematStrategy",
           /*default=*/"::mlir::mw::RematStrategy::Auto",
           "How the kept saved activations are chosen: auto, none, all, "
           "every-k, sqrt, selective, revolve or optimal",
           [{::llvm::cl::values(
             clEnumValN(::mlir::mw::RematStrategy::Auto, "auto",
                        "none without a budget, else the cheapest candidate "
                        "that fits"),
             clEnumValN(::mlir::mw::RematStrategy::None, "none",
                        "keep every saved activation"),
             clEnumValN(::mlir::mw::RematStrategy::All, "all",
                        "keep none; recompute from the arguments"),
             clEnumValN(::mlir::mw::RematStrategy::EveryK, "every-k",
                        "keep the outputs of every k-th transformer block"),
             clEnumValN(::mlir::mw::RematStrategy::Sqrt, "sqrt",
                        "every ceil(sqrt(n))-th articulation value"),
             clEnumValN(::mlir::mw::RematStrategy::Selective, "selective",
                        "drop the core attention (Megatron-LM)"),
             clEnumValN(::mlir::mw::RematStrategy::Revolve, "revolve",
                        "binomial checkpointing over the blocks (Griewank): "
                        "`snapshots` block inputs held, each block "
                        "recomputed a few times"),
             clEnumValN(::mlir::mw::RematStrategy::Optimal, "optimal",
                        "the least recompute, with its gap to a lower "
                        "bound (CBC); needs a budget or a saved-budget"))}]>,
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Peak memory budget: bytes with an optional unit (KB, MB, GB, "
           "KiB, MiB, GiB), NN% of the save-all peak, or auto (the target's "
           "device memory: h200 141 GB, h100 and a100 80 GB); empty for "
           "none">,
    Option<"savedBudget", "saved-budget", "std::string", /*default=*/"\"\"",
           "strategy=auto or optimal: the most saved-activation bytes to "
           "keep, bytes with an optional unit or NN% of the save-all step's; "
           "empty for none">,
    Option<"k", "k", "int64_t", /*default=*/"2",
           "every-k: keep the output of every k-th transformer block">,
    Option<"snapshots", "snapshots", "int64_t", /*default=*/"0",
           "revolve: the inputs of links held at once besides the first; 0 "
           "for ceil(log2(links))">,
    Option<"units", "units", "std::string", /*default=*/"\"regions\"",
           "revolve: the links of the chain it reverses: regions (a "
           "block's attention and MLP apart, the least memory) or blocks "
           "(fewer recomputes)">,
    Option<"internals", "internals", "std::string", /*default=*/"\"per-use\"",
           "revolve: where a link's internals are recomputed for its "
           "backward: per-use (before each backward op that reads them, "
           "from the link's input: the least memory) or sweep (once, with "
           "the link's sweep, alive across its backward: fewer "
           "recomputes)">,
    Option<"target", "target", "std::string", /*default=*/"\"h200\"",
           "Roofline target pricing recompute, by name: h200, a100, h100, cpu, "
           "or a device of the memory report (V100-16GB ... B200-192GB)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"60.0",
           "Wall-clock seconds the optimal strategy's search (its MILP "
           "solves), and auto's exact saved-budget solve, may take">,
    Option<"cost", "cost", "std::string", /*default=*/"\"time\"",
           "What auto and optimal minimize: time (the target's roofline "
           "time of the recomputed ops) or flops">,
    Option<"verbose", "verbose", "bool", /*default=*/"false",
           "Emit a remark with the peak, recompute cost and solve time">,
    Option<"maxRecompute", "max-recompute", "std::string",
           /*default=*/"\"\"",
           "The most a plan may recompute, in the unit of cost: NN% of the "
           "whole step's, or forward (the forward pass's: what "
           "recomputing every activation once costs); auto and optimal "
           "choose within it, a fixed strategy over it is an error; empty "
           "for none">,
    Option<"hoistUpdates", "hoist-updates", "bool", /*default=*/"false",
           "Measure each plan as --mw-train-pipeline compiles it by "
           "default: after --mw-hoist-updates, so gradients die at their "
           "updates (the peaks of stage-0 and stage-3 ZeRO steps fall); "
           "not with strategy=optimal, whose bounds model the order as it "
           "is">,
    Option<"function", "function", "std::string",
           /*default=*/"\"train_step\"",
           "The training-step function to rematerialize">,
  ];
  let statistics = [
    Statistic<"numKept", "kept-values", "Saved activations kept">,
    Statistic<"numDropped", "recomputed-values",
              "Saved activations recomputed in the backward pass">,
    Statistic<"numCloned", "cloned-ops", "Forward ops cloned for recompute">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect"];
}

def MwZero : Pass<"mw-zero", "ModuleOp"> {
  let summary = "ZeRO data parallelism: one rank-generic SPMD training step";
  let description = [{
    Turns the training step of --mw-autodiff into the one program every
    data-parallel rank runs (DESIGN.md decision 13), sharding optimizer
    state (stage 1), gradients (stage 2) and parameters (stage 3) across
    `ranks` ranks as DeepSpeed's ZeRO does. The batch (dimension 0 of every
    `input` and `label` argument, and of every value computed from them) is
    split across the ranks; gradients are summed across ranks and divided by
    the rank count. Collectives are upstream `mesh` ops on a module-level
    `mesh.mesh @dp(shape = N)`; with `overlap=on` each is a start whose
    completion is an `mw.wait`, so its buffer is live (in flight) until the
    wait.

    Parameters are grouped, in the order their gradients are produced, into
    buckets of at most the bucket size (a larger parameter is a bucket of its
    own); each bucket is flattened and padded to a multiple of N, and rank r
    owns the r-th piece of every bucket (docs/zero.md says why this departs
    from DeepSpeed's one contiguous partition). Per stage:

    - 0: each gradient bucket is all-reduced once its last gradient exists;
    - 1: after the backward pass each bucket is reduce-scattered, the
      optimizer updates the rank's pieces (its optimizer state is those
      pieces only), and the updated pieces are all-gathered into the
      parameters;
    - 2: as 1, each bucket reduce-scattered as soon as its last gradient
      exists, so the full gradient is never live at once;
    - 3: parameters persist as pieces too; before each run of uses in the
      forward and in the backward pass a bucket is all-gathered into a
      transient buffer (prefetched one bucket ahead with overlap=on), and
      parameters below `persistence-threshold` elements stay whole.

    ```mlir
    // stage 2, 2 ranks: the rank's piece of a gradient bucket
    %flat = mw.concat %g0, %g1 axis = 0 : (tensor<96xf32>, tensor<32xf32>) -> tensor<128xf32>
    %piece = mesh.reduce_scatter %flat on @dp mesh_axes = [0] scatter_axis = 0
        : tensor<128xf32> -> tensor<64xf32>
    ```

    A bf16/fp16 step of `--mw-autodiff="master-weights=optimizer"` (f32
    masters in the optimizer state) keeps DeepSpeed's layout: its gradient
    buckets are divided by the rank count and reduced in the compute type,
    the rank's piece is cast to f32 for the update of its master piece
    (`zero.bucketK.master`), and the new half-precision piece is
    all-gathered (stage 3: kept and gathered) in the compute type.

    Sizes are element counts, as DeepSpeed's are. Explicit options override
    the DeepSpeed configuration file given by `config`.
  }];
  let options = [
    Option<"stage", "stage", "int64_t", /*default=*/"-1",
           "ZeRO stage: 0 (data parallel), 1 (optimizer state), 2 (and "
           "gradients) or 3 (and parameters); default: the config's, else 0">,
    Option<"ranks", "ranks", "int64_t", /*default=*/"0",
           "Data-parallel ranks (required)">,
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "A DeepSpeed JSON configuration (zero_optimization, batch sizes)">,
    Option<"reduceBucket", "reduce-bucket", "int64_t", /*default=*/"-1",
           "Elements per gradient bucket (DeepSpeed reduce_bucket_size, "
           "default 500000000)">,
    Option<"allgatherBucket", "allgather-bucket", "int64_t", /*default=*/"-1",
           "Elements per parameter all-gather bucket (allgather_bucket_size, "
           "default 500000000); no effect yet: pieces are gathered in the "
           "reduce buckets, which are the partition (a warning says so)">,
    Option<"prefetchBucket", "prefetch-bucket", "int64_t", /*default=*/"-1",
           "Stage 3: elements gathered ahead of use "
           "(stage3_prefetch_bucket_size, default 50000000)">,
    Option<"persistenceThreshold", "persistence-threshold", "int64_t",
           /*default=*/"-1",
           "Stage 3: parameters with fewer elements stay whole "
           "(stage3_param_persistence_threshold, default 100000)">,
    Option<"maxLiveParameters", "max-live-parameters", "int64_t",
           /*default=*/"-1",
           "Stage 3: most gathered elements live at once "
           "(stage3_max_live_parameters, default 1000000000)">,
    Option<"overlap", "overlap", "std::string", /*default=*/"\"\"",
           "on: collectives overlap compute (start/wait pairs); off: they "
           "complete where they stand; default: the config's overlap_comm, "
           "else off">,
    Option<"splitSums", "split-sums", "bool", /*default=*/"false",
           "Stages 2-3: a parameter whose gradient is the sum of two "
           "contributions made apart (a tied embedding's: the LM head's and "
           "the embedding's) has each reduce-scattered where it is made, so "
           "the whole gradient is not held across the backward pass; one "
           "more reduce-scatter of it per step (DeepSpeed, like PyTorch's "
           "autograd, sums it first)">,
    Option<"function", "function", "std::string",
           /*default=*/"\"train_step\"", "The training step to shard">,
  ];
  let statistics = [
    Statistic<"numCollectives", "collectives", "Collectives inserted">,
    Statistic<"numBuckets", "buckets", "Parameter buckets">,
  ];
  // --mw-remat's too: gradient_checkpointing in the config runs it first.
  let dependentDialects = [
    "::mlir::mesh::MeshDialect", "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect"];
}

def MwOffload : Pass<"mw-offload", "ModuleOp"> {
  let summary = "ZeRO-Inference: stream weights from host memory or NVMe, layer by layer";
  let description = [{
    Keeps the weights of a forward, prefill or decode step outside device
    memory, in host memory (`weights=cpu`) or a weights file on NVMe
    (`weights=nvme path=DIR`), and copies each layer's weights into the
    arena just before the layer runs, `prefetch` layers ahead so that the
    copy overlaps the compute of the layers before it (docs/offload.md).

    A parameter's layer is the first all-digit component of its `mw.name`
    (`h.3.attn.c_attn.weight` is in layer 3,
    `model.layers.12.mlp.up_proj.weight` in layer 12); parameters without
    one (embeddings, the final norm, a tied head) stay resident. Layers are ordered by the first use of
    their parameters; the first `pinned-layers` of them stay resident too.
    Each parameter of every other layer j gains `mw.offload = "cpu"` (or
    `"nvme"`), and its uses read an `mw.fetch` (the copy's start) through an
    `mw.wait` (its completion) placed right before its first use:

    ```mlir
    %f = mw.fetch %p {layer = 3 : i64} : tensor<768x2304xf32>  // before layer 3-K
    ...                                                         // layers 3-K .. 2
    %w = mw.wait %f : tensor<768x2304xf32>                     // before %p's first use
    ```

    The fetches of layer j stand right before the first op of the layer K
    places earlier in layer order (at the start of the body when there is
    none); with `prefetch=0` each fetch stands right before its wait. A
    fetch's buffer is live from the fetch to the weight's last use, so after
    bufferization and --mw-static-arena the arena holds the weights of K+1
    layers at once (the slots) and the peak is exact. The function gains
    `mw.offload = {weights, prefetch, pinned_layers, layers, path}`, which
    mw-translate writes into the plan (Placement Host/File, offload_path,
    offload_prefetch) for mw-run.

    `config=ds_config.json` takes the settings from a DeepSpeed
    configuration's `zero_optimization.offload_param`: `device` (cpu, nvme)
    gives `weights`, `nvme_path` gives `path` and `buffer_count` gives
    `prefetch` = buffer_count - 1; explicit options win over the file.
    `auto` chooses `pinned-layers` and `prefetch` (and reports the batch)
    for a `target` or `device-memory` (docs/offload.md). `report=true`
    writes one summary line per function to stderr: layers streamed, slots,
    bytes streamed per step and device bytes saved.

    Training steps (gradient or optimizer-state arguments or results) are
    refused: offload here streams inference weights only. mw-eval gives the
    same outputs before and after the pass (fetch and wait are the
    identity).
  }];
  let options = [
    Option<"weights", "weights", "std::string", /*default=*/"\"\"",
           "Where offloaded weights live: cpu (host memory) or nvme (a "
           "weights file under path=); default: the config's "
           "offload_param.device, cpu with auto">,
    Option<"prefetch", "prefetch", "int64_t", /*default=*/"1",
           "Layers fetched ahead (K): the arena holds K+1 layers' weights; "
           "0 copies each layer where it is first used (no overlap); "
           "default: the config's buffer_count - 1, else 1">,
    Option<"pinnedLayers", "pinned-layers", "int64_t", /*default=*/"0",
           "Layers kept resident in device memory: the first L in program "
           "order">,
    Option<"path", "path", "std::string", /*default=*/"\"\"",
           "weights=nvme: the directory of the weights file (recorded in "
           "the plan; mw-run checks that it is a directory); default: the "
           "config's offload_param.nvme_path">,
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "A DeepSpeed JSON configuration (zero_optimization.offload_param: "
           "device, nvme_path, buffer_count, pin_memory, buffer_size)">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The step to offload; default: every function with parameters">,
    Option<"autoMode", "auto", "bool", /*default=*/"false",
           "Choose pinned-layers and prefetch for the target's memory "
           "(docs/offload.md)">,
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "auto: the device (h200, h100, a100, a6000, v100)">,
    Option<"deviceMemory", "device-memory", "std::string",
           /*default=*/"\"\"",
           "auto: the device memory to fit, e.g. 32GiB (default: the "
           "target's)">,
    Option<"maxBatch", "max-batch", "int64_t", /*default=*/"0",
           "auto: the largest batch to consider (0: as many as fit)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Write one summary line per function to stderr">,
  ];
  let statistics = [
    Statistic<"numFetches", "fetches", "mw.fetch ops inserted">,
    Statistic<"numStreamedLayers", "streamed-layers", "Layers streamed">,
  ];
}

#endif // MEMWALL_DIALECT_MW_TRANSFORMS_PASSES_TD
