// The page of --mw-memory-report=format=html in a real headless browser
// (Debian's chromium; scripts/setup installs it): its script runs without
// errors (window.onerror writes them into <body data-errors>, and a page
// whose data is broken shows them there), draws one rectangle per buffer
// (data-rects equals data-buffers), labels the peak with the figures of the
// text report, and on hover shows a buffer's name, size, kind, offset,
// lifetime, producing op and location (#hover-probe: the page hovers each
// chart's largest buffer and records the tooltip in data-hover). The function @f is mw-memory-report-html.mlir's.
// REQUIRES: chromium
// RUN: mw-opt %S/mw-memory-report-html.mlir --mw-static-arena --mw-memory-report="format=html output=%t.html" -o /dev/null
// RUN: %chromium --user-data-dir=%t.profile --dump-dom file://%t.html 2>/dev/null | FileCheck %s
// RUN: %chromium --user-data-dir=%t.profile --dump-dom "file://%t.html#hover-probe" 2>/dev/null | FileCheck %s --check-prefix=HOVER
// RUN: mw-opt %S/mw-memory-report-html.mlir --mw-memory-report="format=html output=%t.unplanned.html" -o /dev/null
// RUN: %chromium --user-data-dir=%t.profile --dump-dom file://%t.unplanned.html 2>/dev/null | FileCheck %s --check-prefix=UNPLANNED
// RUN: sed 's/"live":/"live":x/' %t.html > %t.broken.html
// RUN: %chromium --user-data-dir=%t.profile --dump-dom file://%t.broken.html 2>/dev/null | FileCheck %s --check-prefix=BROKEN

// A training step with every block recomputed, planned: the text report's
// peak, then the page's.
// RUN: mw-models gpt --train | mw-opt --mw-remat=strategy=all --mw-train-pipeline -o %t.remat.mlir
// RUN: mw-opt %t.remat.mlir --mw-memory-report="format=html output=%t.remat.html" -o /dev/null
// RUN: mw-opt %t.remat.mlir --mw-memory-report -o /dev/null > %t.remat.txt
// RUN: %chromium --user-data-dir=%t.profile --dump-dom file://%t.remat.html 2>/dev/null >> %t.remat.txt
// RUN: FileCheck %s --check-prefix=STEP --input-file=%t.remat.txt

// A ZeRO stage 2 step on 2 ranks: gradient buckets and the per-rank table.
// RUN: mw-models gpt --train | mw-opt --mw-zero="stage=2 ranks=2" --mw-train-pipeline --mw-memory-report="format=html output=%t.zero.html" -o /dev/null
// RUN: %chromium --user-data-dir=%t.profile --dump-dom file://%t.zero.html 2>/dev/null | FileCheck %s --check-prefix=ZERO

// CHECK:     <body data-status="drawn" data-errors="">
// CHECK:     <section class="fn" id="fn-0" data-function="f" data-buffers="3" data-rects="3">
// CHECK:     <p class="peak-label">peak 3.58 KB = 3.50 KiB at op 6 (memref.copy)</p>

// HOVER:     data-rects="3" data-hover="b | 2.05 KB = 2.00 KiB (2048 B), activation | offset 512, live over ops [5, 12) | produced by memref.view | at loc(&quot;{{.*}}mw-memory-report-html.mlir&quot;:{{[0-9]+}}:8)">

// UNPLANNED: <body data-status="drawn" data-errors="">
// UNPLANNED: data-buffers="3" data-rects="0">
// UNPLANNED: <p class="peak-label">peak 3.58 KB = 3.50 KiB at op 2 (memref.copy)</p>

// BROKEN:    <body data-status="loading" data-errors="Uncaught SyntaxError: {{.+}}">

// STEP:      mw-memory-report @train_step
// STEP:      peak: [[PEAK:.+]] live at op [[POS:[0-9]+]] ([[OP:.+]]), largest first:
// STEP:      <body data-status="drawn" data-errors="">
// STEP:      <section class="fn" id="fn-0" data-function="train_step" data-buffers="[[N:[0-9]+]]" data-rects="[[N]]">
// STEP:      <p class="peak-label">peak [[PEAK]] at op [[POS]] ([[OP]])</p>
// STEP:      <tr data-kind="activation">
// STEP:      <tr data-kind="gradient">
// STEP:      <tr data-kind="recompute">

// ZERO:      <body data-status="drawn" data-errors="">
// ZERO:      data-buffers="[[N:[0-9]+]]" data-rects="[[N]]">
// ZERO:      <p class="peak-label">peak
// ZERO:      <tr data-kind="gradient_bucket">
// ZERO:      per rank: ZeRO stage 2 on 2 ranks
