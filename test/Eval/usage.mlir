// mw-eval without an input file prints its usage and exits 2 (not LLVM's
// "Not enough positional command line arguments").
// RUN: not mw-eval 2>&1 | FileCheck %s
// RUN: mw-eval; test $? -eq 2
// CHECK: usage: mw-eval FILE.mlir [--entry NAME] [--ranks N]
// CHECK: mw-eval: no input file (run mw-eval --help for every option)
