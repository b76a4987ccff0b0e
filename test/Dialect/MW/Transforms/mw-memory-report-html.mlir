// The page of --mw-memory-report=format=html, read as text (the browser
// test, mw-memory-report-html-browser.mlir, runs its script): on a planned
// step, a section with the buffers' count and totals, the kind and rank
// tables, and the embedded data the script draws from ([start, end, offset,
// bytes, kind, name, op, loc] per buffer, the live bytes as change points);
// the same input gives the same bytes; an unplanned step gets the live
// bytes only and says why, a step on tensors a note; an unwritable path is
// one error. Buffers as in mw-memory-report-arena.mlir: a 1 KiB, b 2 KiB,
// c 512 B, all live at op 6, so the arena is 3.5 KiB.
// RUN: mw-opt %s --mw-static-arena --mw-memory-report="format=html output=%t.html" -o /dev/null
// RUN: FileCheck %s --input-file=%t.html
// RUN: mw-opt %s --mw-static-arena --mw-memory-report="format=html output=%t.again.html" -o /dev/null
// RUN: cmp %t.html %t.again.html
// RUN: mw-opt %s --mw-memory-report="format=html output=%t.unplanned.html" -o /dev/null
// RUN: FileCheck %s --check-prefix=UNPLANNED --input-file=%t.unplanned.html
// RUN: mw-models mlp --train | mw-opt --mw-memory-report="format=html output=%t.tensors.html" -o /dev/null
// RUN: FileCheck %s --check-prefix=TENSORS --input-file=%t.tensors.html
// RUN: not mw-opt %s --mw-memory-report="format=html output=%t.missing/plan.html" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// RUN: not ls %t.missing

// CHECK:      <!DOCTYPE html>
// CHECK:      <title>Memwall memory plan: @f</title>
// CHECK:      <body data-status="loading" data-errors="">
// CHECK-NEXT: <script>window.onerror=
// CHECK:      <section class="fn" id="fn-0" data-function="f" data-buffers="3" data-rects="0">
// CHECK:      <p class="sub">3 transient buffers over 16 op positions; arena 3.58 KB = 3.50 KiB, lower bound 3.58 KB = 3.50 KiB, no reuse 3.58 KB = 3.50 KiB, persistent 2.05 KB = 2.00 KiB</p>
// CHECK:      <canvas class="arena"
// CHECK:      <canvas class="live"
// CHECK:      <tr data-kind="activation">{{.*}}<td class="n">3</td><td class="n">3.58 KB = 3.50 KiB</td><td class="n">3.58 KB = 3.50 KiB</td></tr>
// CHECK-NEXT: </table>
// CHECK:      per rank: one rank (no ZeRO collectives)
// CHECK:      <tr><td>arena + persistent</td><td class="n">5.63 KB = 5.50 KiB</td></tr>
// CHECK:      <script type="application/json" id="mw-data">
// CHECK-SAME: "planned":true,"positions":16,"arena":3584,"lower_bound":3584,"peak":{"position":6,"bytes":3584,"op":"memref.copy"}
// CHECK-SAME: "buffers":{{\[}}[6,14,0,512,0,"c","memref.view",
// CHECK-SAME: [5,12,512,2048,0,"b","memref.view",
// CHECK-SAME: [4,11,2560,1024,0,"a","memref.view",
// CHECK-SAME: "live":{{\[}}[0,0],[4,1024],[5,3072],[6,3584],[11,2560],[12,512],[14,0]]
// CHECK-NOT:  http
// CHECK:      </html>

// UNPLANNED:     arena not planned, lower bound 3.58 KB = 3.50 KiB
// UNPLANNED:     <p class="note">Not planned: the buffers have no offsets yet, so only the live bytes are drawn.
// UNPLANNED-NOT: <canvas class="arena"
// UNPLANNED:     <canvas class="live"
// UNPLANNED:     "planned":false
// UNPLANNED-SAME: [2,12,-1,512,0,"c","memref.alloc",

// TENSORS: <section class="fn" id="fn-0" data-function="train_step" data-buffers="0" data-rects="0">
// TENSORS: <p class="note">Not bufferized: nothing to draw. The arena picture needs a planned step; run --mw-train-pipeline
// TENSORS-NOT: <canvas

// UNWRITABLE: error: {{.*}}mw-memory-report: cannot write '{{.*}}.missing/plan.html': No such file or directory
func.func @f(%x: memref<256xf32>) -> memref<256xf32> {
  %a = memref.alloc() {mw.buffer = "a"} : memref<256xf32>
  %b = memref.alloc() {mw.buffer = "b"} : memref<512xf32>
  %c = memref.alloc() {mw.buffer = "c"} : memref<128xf32>
  %r = memref.alloc() {mw.buffer = "r"} : memref<256xf32>
  memref.copy %x, %a : memref<256xf32> to memref<256xf32>
  %s = memref.subview %b[0] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1]>>
  memref.copy %a, %s : memref<256xf32> to memref<256xf32, strided<[1]>>
  memref.dealloc %a : memref<256xf32>
  memref.copy %s, %r : memref<256xf32, strided<[1]>> to memref<256xf32>
  memref.dealloc %b : memref<512xf32>
  %c0 = memref.subview %r[0] [128] [1] : memref<256xf32> to memref<128xf32, strided<[1]>>
  memref.copy %c0, %c : memref<128xf32, strided<[1]>> to memref<128xf32>
  memref.dealloc %c : memref<128xf32>
  return %r : memref<256xf32>
}
