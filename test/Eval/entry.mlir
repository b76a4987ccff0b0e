// --entry picks the function; without it the module must have exactly one
// function with a body (declarations do not count).
//
// RUN: not mw-eval %s --print 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// RUN: mw-eval %s --entry second --print | FileCheck %s --check-prefix=SECOND
// RUN: mw-eval %s --entry first --print | FileCheck %s --check-prefix=FIRST
// RUN: not mw-eval %s --entry third --print 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not mw-eval %s --entry declared --print 2>&1 | FileCheck %s --check-prefix=MISSING-DECL

// AMBIGUOUS: error: the module has 2 functions with a body; choose one with --entry: @first @second{{$}}
// SECOND: result0: i32 [] {{.*}} values=[2]
// FIRST: result0: i32 [] {{.*}} values=[1]
// MISSING: error: no function 'third' with a body; functions: @first @second{{$}}
// MISSING-DECL: error: no function 'declared' with a body; functions: @first @second{{$}}

func.func private @declared(tensor<f32>) -> tensor<f32>

func.func @first() -> tensor<i32> {
  %c = mw.constant dense<1> : tensor<i32>
  return %c : tensor<i32>
}

func.func @second() -> tensor<i32> {
  %c = mw.constant dense<2> : tensor<i32>
  return %c : tensor<i32>
}
