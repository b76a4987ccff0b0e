// Every failure is one error on stderr, a non-zero exit, and no file
// written: neither --outputs nor --save-inputs (even when only the second
// write fails). Input files are made by mw-eval itself (--outputs of the
// make_* functions) and by an independent writer.
//
// RUN: rm -rf %t && mkdir %t
// RUN: mw-eval %s --entry make_good --outputs %t/good.st
// RUN: mw-eval %s --entry make_bad_token --outputs %t/bad-token.st
// RUN: mw-eval %s --entry make_wrong_dtype --outputs %t/wrong-dtype.st
// RUN: mw-eval %s --entry make_wrong_shape --outputs %t/wrong-shape.st
// RUN: mw-eval %s --entry make_missing --outputs %t/missing.st
// RUN: python3 %S/Inputs/safetensors_tool.py write %t/f64.st table:F32:8x4:0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0 tokens:F64:2x3:1,2,3,4,5,6
// RUN: python3 %S/Inputs/safetensors_tool.py truncate %t/good.st %t/truncated.st
// RUN: python3 %S/Inputs/safetensors_tool.py bad-header %t/bad-header.st
// RUN: python3 %S/Inputs/safetensors_tool.py huge-header %t/huge-header.st
// RUN: head -c 5 %t/good.st > %t/short.st
//
// A good run writes both files.
// RUN: mw-eval %s --entry main --inputs %t/good.st --outputs %t/ok.out --save-inputs %t/ok.in
// RUN: test -e %t/ok.out
// RUN: test -e %t/ok.in
//
// RUN: not mw-eval %s --entry main --inputs %t/missing.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/wrong-dtype.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DTYPE --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/f64.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=F64 --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/wrong-shape.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/truncated.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNCATED --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/bad-header.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD-HEADER --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/huge-header.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HUGE-HEADER --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/short.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHORT --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/no-such-file.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-FILE --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/bad-token.st --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TOKEN --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --inputs %t/good.st --random-inputs 1 --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXCLUSIVE --implicit-check-not=error:
// RUN: not mw-eval %s --entry main --outputs %t/out --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-INPUTS --implicit-check-not=error:
// RUN: not mw-eval %s --entry clash --random-inputs 1 --outputs %t/out 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CLASH-RESULT --implicit-check-not=error:
// RUN: not mw-eval %s --entry clash --random-inputs 1 --save-inputs %t/saved 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CLASH-ARG --implicit-check-not=error:
// The --outputs write fails after --save-inputs succeeded: the inputs file
// is taken back.
// RUN: not mw-eval %s --entry main --inputs %t/good.st --save-inputs %t/saved --outputs %t/no-such-dir/out 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNWRITABLE --implicit-check-not=error:
// RUN: not test -e %t/out
// RUN: not test -e %t/saved

// MISSING: mw-eval: error: missing input 'tokens' (argument #1, i32 [2, 3]) in {{.*}}missing.st{{$}}
// DTYPE: mw-eval: error: input 'tokens' in {{.*}}wrong-dtype.st is I64 [2, 3], but argument #1 is i32 [2, 3]{{$}}
// F64: mw-eval: error: input 'tokens' in {{.*}}f64.st is F64 [2, 3], but argument #1 is i32 [2, 3]{{$}}
// SHAPE: mw-eval: error: input 'tokens' in {{.*}}wrong-shape.st is I32 [3, 2], but argument #1 is i32 [2, 3]{{$}}
// TRUNCATED: mw-eval: error: {{.*}}truncated.st: tensor '{{table|tokens}}': data_offsets end {{[0-9]+}} is beyond the {{[0-9]+}}-byte data buffer{{$}}
// BAD-HEADER: mw-eval: error: {{.*}}bad-header.st: header is not valid JSON
// HUGE-HEADER: mw-eval: error: {{.*}}huge-header.st: header length 1099511627776 exceeds the 100 MiB limit
// SHORT: mw-eval: error: {{.*}}short.st: file is 5 bytes, shorter than the 8-byte header length
// NO-FILE: mw-eval: error: {{.*}}no-such-file.st: cannot open: No such file or directory
// TOKEN: errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: embedding index 9 is out of range [0, 8){{$}}
// TOKEN-NEXT: %h = mw.embedding %table, %tokens
// EXCLUSIVE: mw-eval: error: --inputs and --random-inputs are exclusive{{$}}
// NO-INPUTS: mw-eval: error: @main takes 2 arguments: give --inputs FILE or --random-inputs SEED{{$}}
// CLASH-RESULT: mw-eval: error: result #0 and result #1 are both named 'result1'; rename one with mw.name{{$}}
// CLASH-ARG: mw-eval: error: argument #0 and argument #1 are both named 'arg1'; rename one with mw.name{{$}}
// UNWRITABLE: mw-eval: error: {{.*}}no-such-dir/out: cannot create temporary file

func.func @make_good() -> (tensor<8x4xf32> {mw.name = "table"}, tensor<2x3xi32> {mw.name = "tokens"}) {
  %t = mw.splat 0.5 : tensor<8x4xf32>
  %i = mw.constant dense<[[0, 1, 7], [3, 3, 2]]> : tensor<2x3xi32>
  return %t, %i : tensor<8x4xf32>, tensor<2x3xi32>
}

func.func @make_bad_token() -> (tensor<8x4xf32> {mw.name = "table"}, tensor<2x3xi32> {mw.name = "tokens"}) {
  %t = mw.splat 0.5 : tensor<8x4xf32>
  %i = mw.constant dense<[[0, 1, 7], [3, 9, 2]]> : tensor<2x3xi32>
  return %t, %i : tensor<8x4xf32>, tensor<2x3xi32>
}

func.func @make_wrong_dtype() -> (tensor<8x4xf32> {mw.name = "table"}, tensor<2x3xi64> {mw.name = "tokens"}) {
  %t = mw.splat 0.5 : tensor<8x4xf32>
  %i = mw.constant dense<[[0, 1, 7], [3, 3, 2]]> : tensor<2x3xi64>
  return %t, %i : tensor<8x4xf32>, tensor<2x3xi64>
}

func.func @make_wrong_shape() -> (tensor<8x4xf32> {mw.name = "table"}, tensor<3x2xi32> {mw.name = "tokens"}) {
  %t = mw.splat 0.5 : tensor<8x4xf32>
  %i = mw.constant dense<[[0, 1], [7, 3], [3, 2]]> : tensor<3x2xi32>
  return %t, %i : tensor<8x4xf32>, tensor<3x2xi32>
}

func.func @make_missing() -> (tensor<8x4xf32> {mw.name = "table"}) {
  %t = mw.splat 0.5 : tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

func.func @main(%table: tensor<8x4xf32> {mw.name = "table"}, %tokens: tensor<2x3xi32> {mw.name = "tokens"})
    -> (tensor<2x3x4xf32> {mw.name = "h"}) {
  %h = mw.embedding %table, %tokens : (tensor<8x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  return %h : tensor<2x3x4xf32>
}

// An explicit mw.name may repeat another's default name.
func.func @clash(%a: tensor<2xf32> {mw.name = "arg1"}, %b: tensor<2xf32>)
    -> (tensor<2xf32> {mw.name = "result1"}, tensor<2xf32>) {
  %s = mw.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %s, %a : tensor<2xf32>, tensor<2xf32>
}
