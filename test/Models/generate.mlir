// mw-run --generate (docs/inference.md, "Serving"): gpt2-tiny's @prefill and
// @decode plans (max batch 2, prompt length 8, max-seq 32, blocks of 4),
// five requests of 5, 2, 11, 1 and 9 prompt tokens, 12 greedy tokens each,
// against @forward recomputing every request from scratch
// (test/Models/Inputs/generate_check.py). More requests than rows: three
// join later. With 8 blocks (one max-seq sequence) running sequences are
// preempted and recomputed; contiguous reserves max-seq per sequence.
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: python3 %S/Inputs/generate_check.py --bin %mw_bin --keep %t.d | FileCheck %s --check-prefix=PAGED
// RUN: python3 %S/Inputs/generate_check.py --bin %mw_bin --kv-blocks 8 --min-preemptions 1 | FileCheck %s --check-prefix=PREEMPT
// RUN: python3 %S/Inputs/generate_check.py --bin %mw_bin --kv-layout contiguous | FileCheck %s --check-prefix=CONTIG
// PAGED: generate kv-layout=paged kv-blocks=16 requests=5 tokens=60 preemptions=none agree=60/60
// PREEMPT: generate kv-layout=paged kv-blocks=8 requests=5 tokens=60 preemptions=some agree=60/60
// CONTIG: generate kv-layout=contiguous kv-blocks=16 requests=5 tokens=60 preemptions=none agree=60/60

// Seeded temperature sampling: the same seed gives the same tokens.
// RUN: mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --synthetic 6 --max-new-tokens 5 --temperature 0.8 --seed 3 --print-tokens > %t.s1
// RUN: mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --synthetic 6 --max-new-tokens 5 --temperature 0.8 --seed 3 --print-tokens > %t.s2
// RUN: grep '^request' %t.s1 > %t.r1 && grep '^request' %t.s2 > %t.r2 && diff %t.r1 %t.r2
// RUN: FileCheck %s --check-prefix=TEXT < %t.s1
// TEXT: request 5: {{[0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$}}
// TEXT: mw-run --generate: 6 requests, 30 tokens in {{.*}} s on cpu (max batch 2, paged KV cache of 16 blocks of 4)
// TEXT-NEXT: tokens/s
// TEXT-NEXT: time to first token: median
// TEXT-NEXT: KV utilization 0.{{[0-9]+}} (time-averaged
// TEXT-NEXT: preemptions 0

// Bad input: one message, exit 1 (2 for a bad command line), no crash.
// RUN: printf '{"prompt": [1, 2]}\n{"prompt": [%%s]}\n' "$(seq -s, 1 33)" > %t.long.jsonl
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --prompts %t.long.jsonl --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=LONG
// LONG: error: {{.*}}long.jsonl:2: the prompt's 33 tokens are more than max-seq 32 (the plan's block tables)
// RUN: : > %t.empty.jsonl
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --prompts %t.empty.jsonl --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: --prompts {{.*}}empty.jsonl: no requests (the file is empty)
// RUN: printf '{"prompt": [1]}\n\n{"prompt": [1, 2\n' > %t.bad.jsonl
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --prompts %t.bad.jsonl --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: error: {{.*}}bad.jsonl:3: not a JSON object
// RUN: printf '{"prompt": []}\n' > %t.none.jsonl
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --prompts %t.none.jsonl --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: {{.*}}none.jsonl:1: the prompt is empty
// RUN: printf '{"prompt": [1, 256]}\n' > %t.vocab.jsonl
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --prompts %t.vocab.jsonl --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: error: {{.*}}vocab.jsonl:1: token id 256 (prompt[1]) is outside the vocabulary of 256
// RUN: printf '{"text": "hello"}\n' > %t.text.jsonl
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --prompts %t.text.jsonl --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=TEXTFIELD
// TEXTFIELD: error: {{.*}}text.jsonl:1: "text" is not supported (mw-run has no tokenizer): give "prompt" as token ids
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --prompts %t.d/missing.jsonl --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: --prompts {{.*}}missing.jsonl: cannot open
// A block table can only point outside the cache when asked for more blocks
// than it has (the step's own check of a bad table is in inference.mlir).
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --synthetic 2 --max-new-tokens 2 --kv-blocks 17 2>&1 | FileCheck %s --check-prefix=BLOCKS
// BLOCKS: error: --kv-blocks 17 is more than the cache's 16 blocks
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --synthetic 2 --max-new-tokens 2 --kv-blocks 7 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: error: the KV cache's 7 blocks cannot hold one sequence of max-seq 32 tokens (8 blocks)
// RUN: not mw-run %t.d/prefill.mwplan --generate --prefill %t.d/decode.mwplan --synthetic 2 --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=SWAP
// SWAP: error: {{.*}}prefill.mwplan: not a decode step (tokens [B, 1]; the plans may be swapped: --prefill takes @prefill's)
// RUN: not mw-run %t.d/decode.mwplan --generate --synthetic 2 --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=NOPREFILL
// NOPREFILL: mw-run: --generate needs --prefill PREFILL.mwplan
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --synthetic 2 --max-new-tokens 2 --greedy --temperature 1 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: mw-run: --greedy and --temperature exclude each other
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --synthetic 2 --prompts %t.vocab.jsonl --max-new-tokens 2 2>&1 | FileCheck %s --check-prefix=SOURCES
// SOURCES: mw-run: --generate needs one of --prompts FILE.jsonl and --synthetic N
// RUN: not mw-run %t.d/decode.mwplan --generate --prefill %t.d/prefill.mwplan --synthetic 2 --max-new-tokens 0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: mw-run: --max-new-tokens expects a count in [1, 10^6], got '0'
