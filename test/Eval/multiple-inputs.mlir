// --inputs may repeat: a name found in several files takes its value from the
// last one, so a step's state file can override the initial state while the
// batch comes from another file.
// RUN: python3 %S/Inputs/safetensors_tool.py write %t.a a:F32:2:1,2 b:F32:2:10,20
// RUN: python3 %S/Inputs/safetensors_tool.py write %t.b b:F32:2:100,200
// RUN: mw-eval %s --inputs %t.a --inputs %t.b --print | FileCheck %s --check-prefix=LAST
// RUN: mw-eval %s --inputs %t.b --inputs %t.a --print | FileCheck %s --check-prefix=FIRST
// RUN: not mw-eval %s --inputs %t.b 2>&1 | FileCheck %s --check-prefix=MISSING

// LAST: sum: f32 [2] {{.*}} values=[101, 202]{{$}}
// FIRST: sum: f32 [2] {{.*}} values=[11, 22]{{$}}
// MISSING: mw-eval: error: missing input 'a' (argument #0, f32 [2]) in {{.*}}.b

func.func @f(%a: tensor<2xf32> {mw.name = "a"}, %b: tensor<2xf32> {mw.name = "b"})
    -> (tensor<2xf32> {mw.name = "sum"}) {
  %s = mw.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %s : tensor<2xf32>
}
