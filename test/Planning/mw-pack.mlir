// mw-pack packs the buffers of a MiniMalloc CSV (Inputs/*.csv); this file only
// holds RUN and CHECK lines. small.csv needs 5 bytes (its lower bound), which
// the size-ordered baselines miss; exact proves 5 optimal.

// RUN: mw-pack --help | FileCheck %s --check-prefix=HELP
// HELP: usage: mw-pack [--strategy S] [--time-limit SEC] [--alignment A] IN.csv [-o OUT.csv]
// HELP: naive
// HELP: greedy-size     TFLite's ArenaPlanner
// HELP: greedy-breadth
// HELP: best-fit-size
// HELP: best-fit-time
// HELP: best
// HELP: exact
// HELP: --time-limit SEC  exact: its wall-clock limit (default 10); best: how
// HELP: plans stay deterministic
// HELP: --alignment A
// HELP: default 1 here

// RUN: rm -f %t.small.csv
// RUN: mw-pack %S/Inputs/small.csv -o %t.small.csv | FileCheck %s --check-prefix=BEST
// RUN: FileCheck %s --check-prefix=CSV --match-full-lines < %t.small.csv
// BEST: buffers=5 lower_bound=5 arena=5 ratio=1.0000 time_ms={{[0-9.]+}}{{$}}
// The plan, in input order: 11 and 12 at 0 (disjoint in time), 10 above 11,
// 13 above 12 and 11; the zero-size 14 at 0.
// CSV:      id,lower,upper,size,offset
// CSV-NEXT: 10,0,2,2,2
// CSV-NEXT: 11,1,3,2,0
// CSV-NEXT: 12,3,6,3,0
// CSV-NEXT: 13,2,5,2,3
// CSV-NEXT: 14,0,6,0,0
// CSV-EMPTY:

// best with more effort (--time-limit): counted in work units, so the same
// plan twice.
// RUN: mw-pack --time-limit 0.2 %S/Inputs/small.csv -o %t.effort1.csv
// RUN: mw-pack --time-limit 0.2 %S/Inputs/small.csv -o %t.effort2.csv
// RUN: cmp %t.effort1.csv %t.effort2.csv

// RUN: mw-pack --strategy naive %S/Inputs/small.csv | FileCheck %s --check-prefix=NAIVE
// NAIVE: buffers=5 lower_bound=5 arena=9 ratio=1.8000
// RUN: mw-pack --strategy greedy-size %S/Inputs/small.csv | FileCheck %s --check-prefix=GSIZE
// GSIZE: buffers=5 lower_bound=5 arena=6 ratio=1.2000
// RUN: mw-pack --strategy=greedy-breadth %S/Inputs/small.csv | FileCheck %s --check-prefix=GBREADTH
// GBREADTH: buffers=5 lower_bound=5 arena=7 ratio=1.4000
// RUN: mw-pack --strategy best-fit-size %S/Inputs/small.csv | FileCheck %s --check-prefix=BFSIZE
// BFSIZE: buffers=5 lower_bound=5 arena=7 ratio=1.4000
// RUN: mw-pack --strategy best-fit-time %S/Inputs/small.csv | FileCheck %s --check-prefix=BFTIME
// BFTIME: buffers=5 lower_bound=5 arena=7 ratio=1.4000
// RUN: mw-pack --strategy exact --time-limit 5 %S/Inputs/small.csv | FileCheck %s --check-prefix=EXACT
// EXACT: buffers=5 lower_bound=5 arena=5 ratio=1.0000 time_ms={{[0-9.]+}} optimal=yes

// Alignment rounds sizes up (2 -> 4, 3 -> 4) and keeps offsets aligned.
// RUN: mw-pack --alignment 4 %S/Inputs/small.csv -o - 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN:      id,lower,upper,size,offset
// ALIGN-NEXT: 10,0,2,2,4
// ALIGN-NEXT: 11,1,3,2,0
// ALIGN-NEXT: 12,3,6,3,0
// ALIGN-NEXT: 13,2,5,2,4
// ALIGN-NEXT: 14,0,6,0,0
// ALIGN-NEXT: buffers=5 lower_bound=8 arena=8 ratio=1.0000

// Ids may be buffer names, as --mw-plan-export writes them (any text without
// a comma): trimmed of blanks and echoed verbatim. Same lifetimes and sizes
// as small.csv, so the same plan; the input's offset column is ignored.
// RUN: mw-pack %S/Inputs/string-ids.csv -o - 2>&1 | FileCheck %s --check-prefix=NAMES --match-full-lines
// NAMES:      id,lower,upper,size,offset
// NAMES-NEXT: %12,0,2,2,2
// NAMES-NEXT: gpt.h0.attn.qkv,1,3,2,0
// NAMES-NEXT: model/layer:0[grad],3,6,3,0
// NAMES-NEXT: %arg0.saved,2,5,2,3
// NAMES-NEXT: 14,0,6,0,0
// NAMES-NEXT: buffers=5 lower_bound=5 arena=5 ratio=1.0000 time_ms={{[0-9.]+}}

// RUN: mw-pack %S/Inputs/empty.csv | FileCheck %s --check-prefix=EMPTY
// EMPTY: buffers=0 lower_bound=0 arena=0 ratio=1.0000

// Bad input: an error naming the line, exit status 1, and no output file.
// RUN: rm -f %t.bad.csv
// RUN: not mw-pack %S/Inputs/negative-size.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: negative-size.csv: line 3: negative size -2
// RUN: not mw-pack %S/Inputs/empty-lifetime.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=LIFETIME
// LIFETIME: empty-lifetime.csv: line 3: upper 4 <= lower 4 (lifetimes are [lower, upper))
// RUN: not mw-pack %S/Inputs/duplicate-id.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=DUPLICATE
// DUPLICATE: duplicate-id.csv: line 4: duplicate id 0 (first on line 2)
// RUN: not mw-pack %S/Inputs/duplicate-string-id.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=DUPNAME
// DUPNAME: duplicate-string-id.csv: line 4: duplicate id gpt.h0.attn.qkv (first on line 2)
// RUN: not mw-pack %S/Inputs/empty-id.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=EMPTYID
// EMPTYID: empty-id.csv: line 3: empty id
// RUN: not mw-pack %S/Inputs/missing-header.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=HEADER
// HEADER: missing-header.csv: line 1: missing header: expected columns id,lower,upper,size
// RUN: not mw-pack %S/Inputs/non-numeric.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=NUMERIC
// NUMERIC: non-numeric.csv: line 3: upper 'x3' is not an integer
// RUN: not mw-pack %S/Inputs/malformed-row.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed-row.csv: line 3: expected 4 fields, got 3
// RUN: not mw-pack %S/Inputs/overflow.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: overflow.csv: line 3: size '18446744073709551616' is out of range
// RUN: not mw-pack %S/Inputs/size-sum.csv -o %t.bad.csv 2>&1 | FileCheck %s --check-prefix=SUM
// SUM: size-sum.csv: line 3: sizes sum past 2^62 bytes
// RUN: not ls %t.bad.csv

// Usage errors exit with status 2.
// RUN: not mw-pack --strategy fastest %S/Inputs/small.csv 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: mw-pack: unknown strategy 'fastest'
// RUN: not mw-pack %t.does-not-exist.csv 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: mw-pack: cannot open
