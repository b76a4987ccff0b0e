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
      execution that materializes and keeps every intermediate would hold.

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

#endif // MEMWALL_DIALECT_MW_TRANSFORMS_PASSES_TD
