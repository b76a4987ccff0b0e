// --mw-offload keeps mw-eval's outputs bit for bit (mw.fetch and mw.wait are
// the identity), on the tensor program and on the planned step after
// --mw-train-pipeline: gpt2-tiny and llama-tiny, prefill and decode
// (--inference) and the logits forward (--logits), prefetch 0, 1 and 2,
// pinned 0 and 1, from host memory and from a file. Inputs are saved from
// the program without offload and fed to each offloaded form.

// RUN: mw-models gpt --preset gpt2-tiny --inference -o %t.gpt.inf.mlir
// RUN: mw-eval %t.gpt.inf.mlir --entry prefill --random-inputs 11 --save-inputs %t.gpt.inf.prefill.in --print > %t.gpt.inf.prefill.ref
// RUN: mw-eval %t.gpt.inf.mlir --entry decode --random-inputs 11 --save-inputs %t.gpt.inf.decode.in --print > %t.gpt.inf.decode.ref
// RUN: mw-opt %t.gpt.inf.mlir --mw-offload="weights=cpu prefetch=0" -o %t.gpt.inf.k0.mlir
// RUN: mw-eval %t.gpt.inf.k0.mlir --entry prefill --inputs %t.gpt.inf.prefill.in --print | diff %t.gpt.inf.prefill.ref -
// RUN: mw-eval %t.gpt.inf.k0.mlir --entry decode --inputs %t.gpt.inf.decode.in --print | diff %t.gpt.inf.decode.ref -
// RUN: mw-opt %t.gpt.inf.mlir --mw-offload="weights=cpu prefetch=1" -o %t.gpt.inf.k1.mlir
// RUN: mw-eval %t.gpt.inf.k1.mlir --entry prefill --inputs %t.gpt.inf.prefill.in --print | diff %t.gpt.inf.prefill.ref -
// RUN: mw-eval %t.gpt.inf.k1.mlir --entry decode --inputs %t.gpt.inf.decode.in --print | diff %t.gpt.inf.decode.ref -
// RUN: mw-opt %t.gpt.inf.mlir --mw-offload="weights=nvme path=%t prefetch=2" -o %t.gpt.inf.k2.mlir
// RUN: mw-eval %t.gpt.inf.k2.mlir --entry prefill --inputs %t.gpt.inf.prefill.in --print | diff %t.gpt.inf.prefill.ref -
// RUN: mw-eval %t.gpt.inf.k2.mlir --entry decode --inputs %t.gpt.inf.decode.in --print | diff %t.gpt.inf.decode.ref -
// RUN: mw-opt %t.gpt.inf.mlir --mw-offload="weights=cpu prefetch=1 pinned-layers=1" -o %t.gpt.inf.p1.mlir
// RUN: mw-eval %t.gpt.inf.p1.mlir --entry prefill --inputs %t.gpt.inf.prefill.in --print | diff %t.gpt.inf.prefill.ref -
// RUN: mw-eval %t.gpt.inf.p1.mlir --entry decode --inputs %t.gpt.inf.decode.in --print | diff %t.gpt.inf.decode.ref -
// RUN: mw-opt %t.gpt.inf.mlir --mw-offload="weights=cpu prefetch=1" --mw-train-pipeline -o %t.gpt.inf.k1.planned.mlir 2>/dev/null
// RUN: mw-eval %t.gpt.inf.k1.planned.mlir --entry prefill --inputs %t.gpt.inf.prefill.in --print | diff %t.gpt.inf.prefill.ref -
// RUN: mw-eval %t.gpt.inf.k1.planned.mlir --entry decode --inputs %t.gpt.inf.decode.in --print | diff %t.gpt.inf.decode.ref -
// RUN: mw-opt %t.gpt.inf.mlir --mw-offload="weights=nvme path=%t prefetch=2 pinned-layers=1" --mw-train-pipeline -o %t.gpt.inf.p1k2.planned.mlir 2>/dev/null
// RUN: mw-eval %t.gpt.inf.p1k2.planned.mlir --entry prefill --inputs %t.gpt.inf.prefill.in --print | diff %t.gpt.inf.prefill.ref -
// RUN: mw-eval %t.gpt.inf.p1k2.planned.mlir --entry decode --inputs %t.gpt.inf.decode.in --print | diff %t.gpt.inf.decode.ref -

// RUN: mw-models gpt --preset gpt2-tiny --logits -o %t.gpt.fwd.mlir
// RUN: mw-eval %t.gpt.fwd.mlir --entry forward --random-inputs 11 --save-inputs %t.gpt.fwd.forward.in --print > %t.gpt.fwd.forward.ref
// RUN: mw-opt %t.gpt.fwd.mlir --mw-offload="weights=cpu prefetch=0" -o %t.gpt.fwd.k0.mlir
// RUN: mw-eval %t.gpt.fwd.k0.mlir --entry forward --inputs %t.gpt.fwd.forward.in --print | diff %t.gpt.fwd.forward.ref -
// RUN: mw-opt %t.gpt.fwd.mlir --mw-offload="weights=cpu prefetch=1" -o %t.gpt.fwd.k1.mlir
// RUN: mw-eval %t.gpt.fwd.k1.mlir --entry forward --inputs %t.gpt.fwd.forward.in --print | diff %t.gpt.fwd.forward.ref -
// RUN: mw-opt %t.gpt.fwd.mlir --mw-offload="weights=nvme path=%t prefetch=2" -o %t.gpt.fwd.k2.mlir
// RUN: mw-eval %t.gpt.fwd.k2.mlir --entry forward --inputs %t.gpt.fwd.forward.in --print | diff %t.gpt.fwd.forward.ref -
// RUN: mw-opt %t.gpt.fwd.mlir --mw-offload="weights=cpu prefetch=1 pinned-layers=1" -o %t.gpt.fwd.p1.mlir
// RUN: mw-eval %t.gpt.fwd.p1.mlir --entry forward --inputs %t.gpt.fwd.forward.in --print | diff %t.gpt.fwd.forward.ref -
// RUN: mw-opt %t.gpt.fwd.mlir --mw-offload="weights=cpu prefetch=1" --mw-train-pipeline -o %t.gpt.fwd.k1.planned.mlir 2>/dev/null
// RUN: mw-eval %t.gpt.fwd.k1.planned.mlir --entry forward --inputs %t.gpt.fwd.forward.in --print | diff %t.gpt.fwd.forward.ref -
// RUN: mw-opt %t.gpt.fwd.mlir --mw-offload="weights=nvme path=%t prefetch=2 pinned-layers=1" --mw-train-pipeline -o %t.gpt.fwd.p1k2.planned.mlir 2>/dev/null
// RUN: mw-eval %t.gpt.fwd.p1k2.planned.mlir --entry forward --inputs %t.gpt.fwd.forward.in --print | diff %t.gpt.fwd.forward.ref -

// RUN: mw-models llama --preset llama-tiny --rotary --inference -o %t.llama.inf.mlir
// RUN: mw-eval %t.llama.inf.mlir --entry prefill --random-inputs 11 --save-inputs %t.llama.inf.prefill.in --print > %t.llama.inf.prefill.ref
// RUN: mw-eval %t.llama.inf.mlir --entry decode --random-inputs 11 --save-inputs %t.llama.inf.decode.in --print > %t.llama.inf.decode.ref
// RUN: mw-opt %t.llama.inf.mlir --mw-offload="weights=cpu prefetch=0" -o %t.llama.inf.k0.mlir
// RUN: mw-eval %t.llama.inf.k0.mlir --entry prefill --inputs %t.llama.inf.prefill.in --print | diff %t.llama.inf.prefill.ref -
// RUN: mw-eval %t.llama.inf.k0.mlir --entry decode --inputs %t.llama.inf.decode.in --print | diff %t.llama.inf.decode.ref -
// RUN: mw-opt %t.llama.inf.mlir --mw-offload="weights=cpu prefetch=1" -o %t.llama.inf.k1.mlir
// RUN: mw-eval %t.llama.inf.k1.mlir --entry prefill --inputs %t.llama.inf.prefill.in --print | diff %t.llama.inf.prefill.ref -
// RUN: mw-eval %t.llama.inf.k1.mlir --entry decode --inputs %t.llama.inf.decode.in --print | diff %t.llama.inf.decode.ref -
// RUN: mw-opt %t.llama.inf.mlir --mw-offload="weights=nvme path=%t prefetch=2" -o %t.llama.inf.k2.mlir
// RUN: mw-eval %t.llama.inf.k2.mlir --entry prefill --inputs %t.llama.inf.prefill.in --print | diff %t.llama.inf.prefill.ref -
// RUN: mw-eval %t.llama.inf.k2.mlir --entry decode --inputs %t.llama.inf.decode.in --print | diff %t.llama.inf.decode.ref -
// RUN: mw-opt %t.llama.inf.mlir --mw-offload="weights=cpu prefetch=1 pinned-layers=1" -o %t.llama.inf.p1.mlir
// RUN: mw-eval %t.llama.inf.p1.mlir --entry prefill --inputs %t.llama.inf.prefill.in --print | diff %t.llama.inf.prefill.ref -
// RUN: mw-eval %t.llama.inf.p1.mlir --entry decode --inputs %t.llama.inf.decode.in --print | diff %t.llama.inf.decode.ref -
// RUN: mw-opt %t.llama.inf.mlir --mw-offload="weights=cpu prefetch=1" --mw-train-pipeline -o %t.llama.inf.k1.planned.mlir 2>/dev/null
// RUN: mw-eval %t.llama.inf.k1.planned.mlir --entry prefill --inputs %t.llama.inf.prefill.in --print | diff %t.llama.inf.prefill.ref -
// RUN: mw-eval %t.llama.inf.k1.planned.mlir --entry decode --inputs %t.llama.inf.decode.in --print | diff %t.llama.inf.decode.ref -
// RUN: mw-opt %t.llama.inf.mlir --mw-offload="weights=nvme path=%t prefetch=2 pinned-layers=1" --mw-train-pipeline -o %t.llama.inf.p1k2.planned.mlir 2>/dev/null
// RUN: mw-eval %t.llama.inf.p1k2.planned.mlir --entry prefill --inputs %t.llama.inf.prefill.in --print | diff %t.llama.inf.prefill.ref -
// RUN: mw-eval %t.llama.inf.p1k2.planned.mlir --entry decode --inputs %t.llama.inf.decode.in --print | diff %t.llama.inf.decode.ref -

// RUN: mw-models llama --preset llama-tiny --rotary --logits -o %t.llama.fwd.mlir
// RUN: mw-eval %t.llama.fwd.mlir --entry forward --random-inputs 11 --save-inputs %t.llama.fwd.forward.in --print > %t.llama.fwd.forward.ref
// RUN: mw-opt %t.llama.fwd.mlir --mw-offload="weights=cpu prefetch=0" -o %t.llama.fwd.k0.mlir
// RUN: mw-eval %t.llama.fwd.k0.mlir --entry forward --inputs %t.llama.fwd.forward.in --print | diff %t.llama.fwd.forward.ref -
// RUN: mw-opt %t.llama.fwd.mlir --mw-offload="weights=cpu prefetch=1" -o %t.llama.fwd.k1.mlir
// RUN: mw-eval %t.llama.fwd.k1.mlir --entry forward --inputs %t.llama.fwd.forward.in --print | diff %t.llama.fwd.forward.ref -
// RUN: mw-opt %t.llama.fwd.mlir --mw-offload="weights=nvme path=%t prefetch=2" -o %t.llama.fwd.k2.mlir
// RUN: mw-eval %t.llama.fwd.k2.mlir --entry forward --inputs %t.llama.fwd.forward.in --print | diff %t.llama.fwd.forward.ref -
// RUN: mw-opt %t.llama.fwd.mlir --mw-offload="weights=cpu prefetch=1 pinned-layers=1" -o %t.llama.fwd.p1.mlir
// RUN: mw-eval %t.llama.fwd.p1.mlir --entry forward --inputs %t.llama.fwd.forward.in --print | diff %t.llama.fwd.forward.ref -
// RUN: mw-opt %t.llama.fwd.mlir --mw-offload="weights=cpu prefetch=1" --mw-train-pipeline -o %t.llama.fwd.k1.planned.mlir 2>/dev/null
// RUN: mw-eval %t.llama.fwd.k1.planned.mlir --entry forward --inputs %t.llama.fwd.forward.in --print | diff %t.llama.fwd.forward.ref -
// RUN: mw-opt %t.llama.fwd.mlir --mw-offload="weights=nvme path=%t prefetch=2 pinned-layers=1" --mw-train-pipeline -o %t.llama.fwd.p1k2.planned.mlir 2>/dev/null
// RUN: mw-eval %t.llama.fwd.p1k2.planned.mlir --entry forward --inputs %t.llama.fwd.forward.in --print | diff %t.llama.fwd.forward.ref -

// The offload really happened (the same outputs are not those of an
// untouched program):
// RUN: FileCheck %s --input-file=%t.llama.inf.k1.mlir
// CHECK: mw.fetch
// CHECK: mw.wait
