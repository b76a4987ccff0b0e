// Text nested deeper than 256 levels (brackets, unary minus signs in a row,
// or the terms of a sum in an affine map) is refused before parsing, with the line and column of the character
// that goes too deep: MLIR's parser and
// llvm::json recurse once per level and a few kilobytes of `[[[[` ran them
// out of stack (found by ir_fuzzer). Every tool that reads MLIR text, and
// --mw-zero's DeepSpeed configuration.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 -c "print('module attributes {x.a = ' + '[' * 255 + ']' * 255 + '} {}')" > %t/at-limit.mlir
// RUN: python3 -c "print('module attributes {x.a = ' + '[' * 256 + ']' * 256 + '} {}')" > %t/deep.mlir
// RUN: python3 -c "print('module {\n' + 'func.func private @f() -> ' + 'tuple<' * 5000 + '>' * 5000 + '\n}')" > %t/deep-type.mlir
// RUN: python3 -c "print('{\"zero_optimization\": {\"stage\": 2, \"x\":\n' + '[' * 300 + ']' * 300 + '}}')" > %t/deep.json

// At the limit: parsed as usual.
// RUN: mw-opt %t/at-limit.mlir | FileCheck %s --check-prefix=LIMIT
// LIMIT: module attributes {x.a = {{\[}}{{\[}}

// One level more: one error, no crash (column 281 is the 256th `[`).
// RUN: not mw-opt %t/deep.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: not mw-opt %t/deep.mlir -o /dev/null 2>&1 | count 1
// DEEP: deep.mlir:1:281: error: nested more than 256 levels deep: refused before parsing (the parser recurses once per level and would run out of stack)
// RUN: not mw-opt %t/deep-type.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: deep-type.mlir:2:{{[0-9]+}}: error: nested more than 256 levels deep
// RUN: not mw-opt < %t/deep.mlir 2>&1 | FileCheck %s --check-prefix=STDIN
// STDIN: <stdin>:1:281: error: nested more than 256 levels deep
// RUN: python3 -c "print('#m = affine_map<(d0) -> (' + '- ' * 10000 + 'd0)>')" > %t/minus.mlir
// RUN: not mw-opt %t/minus.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=MINUS
// MINUS: minus.mlir:1:538: error: nested more than 256 levels deep
// RUN: python3 -c "print('#m = affine_map<(d0) -> (' + '- ' * 256 + 'd0)>')" > %t/minus-limit.mlir
// RUN: mw-opt %t/minus-limit.mlir -o /dev/null
// RUN: python3 -c "print('#m = affine_map<(d0) -> (d0' + ' + d0' * 100000 + ')>')" > %t/sum.mlir
// RUN: not mw-opt %t/sum.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUM
// SUM: sum.mlir:1:1309: error: nested more than 256 levels deep
// RUN: python3 -c "print('#m = affine_map<(d0) -> (d0' + ' + d0' * 256 + ')>')" > %t/sum-limit.mlir
// RUN: mw-opt %t/sum-limit.mlir -o /dev/null
// RUN: not mw-eval %t/deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: not mw-translate --mw-to-plan %t/deep.mlir -o %t/p.mwplan 2>&1 | FileCheck %s --check-prefix=DEEP

// Brackets inside strings and comments are not counted.
// RUN: mw-opt %S/Inputs/nesting-in-strings.mlir | FileCheck %s --check-prefix=STRINGS
// STRINGS: module attributes {x.a = "{{\[+}}\22 {"}

// MLIR bytecode is not text: its strings are stored without quotes, and
// their brackets are not counted (bytecode-nesting.mlir: how bytecode is
// measured).
// RUN: mw-opt %S/Inputs/nesting-in-strings.mlir --emit-bytecode -o %t/strings.mlirbc
// RUN: grep -c '\[\[\[\[\[\[\[\[' %t/strings.mlirbc
// RUN: mw-opt %t/strings.mlirbc | FileCheck %s --check-prefix=STRINGS

// The DeepSpeed configuration of --mw-zero: the same limit, its own line.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t/step.mlir
// RUN: not mw-opt %t/step.mlir --mw-zero="ranks=2 config=%t/deep.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: deep.json:2:255: error: invalid JSON: nested more than 256 levels deep
