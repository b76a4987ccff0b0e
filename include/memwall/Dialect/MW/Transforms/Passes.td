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
                "naive activation bytes";
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
      forward pass: results of the ops the loss depends on that other ops
      (backward, optimizer) use, arguments excluded;
    - `bytes_by_dtype`: the params, gradients, optimizer state and saved
      activations split by element type.

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

    A tensor or memref with a dynamic shape among the figures is an error
    naming the value.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Output format: text or json">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report: a file path, or - for stdout">,
  ];
  let statistics = [
    Statistic<"numFunctionsReported", "functions", "Functions reported">,
  ];
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
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Weight decay (default: 0.01 for adamw, 0 for sgd)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum (0 disables the momentum buffer)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum">,
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "Compute precision: fp32, bf16 or fp16 (f32 master weights and "
           "optimizer state for bf16/fp16)">,
    Option<"gradAccum", "grad-accum", "int64_t", /*default=*/"1",
           "Micro-batches whose gradients accumulate before one update">,
  ];
  let statistics = [
    Statistic<"numParams", "params", "Parameters differentiated">,
    Statistic<"numBackwardOps", "backward-ops", "Ops created for the backward pass">,
  ];
}

#endif // MEMWALL_DIALECT_MW_TRANSFORMS_PASSES_TD
