// mw-import's errors: one message, exit 1, no traceback.
// REQUIRES: importer

// An ATen op without a mapping names the op, its operands' shapes and the
// Python line that produced it.
// RUN: not %mw_import --module %S/Inputs/modules.py:unmapped -o %t.mlir 2>&1 | FileCheck %s --check-prefix=UNMAPPED --implicit-check-not=Traceback
// UNMAPPED: mw-import: error: no mw mapping for ATen op aten.cumsum.default(mm: [2, 4] torch.float32, 1)
// UNMAPPED-NEXT: at {{.*}}Inputs/modules.py:27: return torch.cumsum(x @ self.w, dim=1)

// A dynamic dimension is named.
// RUN: not %mw_import --module %S/Inputs/modules.py:dynamic -o %t.mlir 2>&1 | FileCheck %s --check-prefix=DYNAMIC --implicit-check-not=Traceback
// DYNAMIC: mw-import: error: dynamic shape: dimension 0 of input 'x', shape [{{s[0-9]+}}, 4], is the symbol {{s[0-9]+}}, range [2, 64]; Memwall plans static shapes only

// --train needs a scalar loss.
// RUN: not %mw_import --module %S/Inputs/modules.py:unmapped --train -o %t.mlir 2>&1 | FileCheck %s --check-prefix=TRAIN --implicit-check-not=Traceback
// TRAIN: mw-import: error: --train needs the module to return a rank-0 float loss; it returns torch.Size([2, 4])

// RUN: not %mw_import --hf gpt3 -o %t.mlir 2>&1 | FileCheck %s --check-prefix=FAMILY
// FAMILY: mw-import: error: unknown model family 'gpt3' (known: gpt2, bert, llama, opt)
// RUN: not %mw_import --hf gpt2 --config n_lyer=3 -o %t.mlir 2>&1 | FileCheck %s --check-prefix=FIELD
// FIELD: mw-import: error: GPT2Config has no field 'n_lyer'
// RUN: not %mw_import --hf gpt2 --seq 100 -o %t.mlir 2>&1 | FileCheck %s --check-prefix=SEQ
// SEQ: mw-import: error: --seq 100 is longer than the model's 64 positions
// RUN: not %mw_import --module %S/Inputs/nosuch.py:f -o %t.mlir 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: mw-import: error: --module: no file '{{.*}}nosuch.py'
