// Which function is translated: --mw-plan-function, else the only planned
// one, else train_step; anything else is an error that lists the candidates.
// RUN: mw-translate %s --mw-plan-json | FileCheck %s --check-prefix=DEFAULT
// RUN: mw-translate %s --mw-plan-json --mw-plan-function=forward | FileCheck %s --check-prefix=FORWARD
// RUN: not mw-translate %s --mw-plan-json --mw-plan-function=eval 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not mw-translate %s --mw-plan-json --mw-plan-function=init 2>&1 | FileCheck %s --check-prefix=UNPLANNED
// RUN: not mw-translate %S/Inputs/two-planned.mlir --mw-plan-json 2>&1 | FileCheck %s --check-prefix=SEVERAL
// RUN: not mw-translate %S/Inputs/none-planned.mlir --mw-plan-json 2>&1 | FileCheck %s --check-prefix=NONE

// DEFAULT: "function": "train_step"
// FORWARD: "function": "forward"
// MISSING: error: no function with a body named 'eval'
// UNPLANNED: error: @init is not planned (no mw.arena_size)
// SEVERAL: error: several planned functions, choose one with --mw-plan-function: @forward, @backward
// NONE: error: no planned function (with mw.arena_size) among: @init, @step

func.func @init() {
  return
}

func.func @forward() attributes {mw.arena_size = 0 : i64,
    mw.arena_alignment = 256 : i64, mw.lower_bound = 0 : i64} {
  return
}

func.func @train_step() attributes {mw.arena_size = 0 : i64,
    mw.arena_alignment = 256 : i64, mw.lower_bound = 0 : i64} {
  return
}
