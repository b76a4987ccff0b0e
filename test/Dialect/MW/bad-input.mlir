// Bad input gives exactly one diagnostic with a file:line:col location and a
// non-zero exit status, never a crash (`not` fails when the tool crashes), and
// prints nothing on stdout. An empty file is a valid, empty module.

// A function without its closing brace: the error points at the end of input.
// RUN: not mw-opt %S/Inputs/truncated.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNC --implicit-check-not=error:
// RUN: not mw-opt %S/Inputs/truncated.mlir 2>/dev/null | count 0
// TRUNC: {{.*}}truncated.mlir:4:28: error: expected operation name in quotes
// TRUNC-NEXT: return %0 : tensor<4xf32>

// Input cut off in the middle of a type.
// RUN: printf 'func.func private @cut(tensor<4x' > %t.cut.mlir
// RUN: not mw-opt %t.cut.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUT --implicit-check-not=error:
// CUT: {{.*}}.cut.mlir:1:32: error: expected non-function type

// Binary garbage: a NUL byte (skipped like whitespace), then bytes that start
// no token.
// RUN: printf '\000\377\376\001garbage\200\n' > %t.bin
// RUN: not mw-opt %t.bin 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GARBAGE --implicit-check-not=error:
// RUN: not mw-opt %t.bin 2>/dev/null | count 0
// GARBAGE: {{.*}}.bin:1:2: error: unexpected character

// The start of an ELF file.
// RUN: printf '\177ELF\002\001\001\000\000\000' > %t.elf
// RUN: not mw-opt %t.elf 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ELF --implicit-check-not=error:
// ELF: {{.*}}.elf:1:1: error: unexpected character

// An empty file, and one with only whitespace and a comment, are empty
// modules, read from a file or from stdin.
// RUN: printf '' > %t.empty.mlir
// RUN: mw-opt %t.empty.mlir | FileCheck %s --check-prefix=EMPTY
// RUN: mw-opt < %t.empty.mlir | FileCheck %s --check-prefix=EMPTY
// RUN: printf '  \n\t\n// only a comment\n' > %t.blank.mlir
// RUN: mw-opt %t.blank.mlir 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: module {
// EMPTY-NEXT: }
// EMPTY-NOT: {{.}}
