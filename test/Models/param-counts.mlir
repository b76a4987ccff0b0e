// Every preset's parameter count, as --mw-memory-report counts the `param`
// arguments, equals the published figure (the closed forms of
// expectedParamCount; test/unit/ModelsTest.cpp checks them against the
// library). gpt3-175b also shows that generation materializes no weights.

// RUN: mw-models mlp --preset mlp-tiny | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=MLP-TINY
// MLP-TINY: "param_count": 6922,
// MLP-TINY: "op_count": 9,

// RUN: mw-models gpt --preset gpt2-tiny | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=GPT2-TINY
// GPT2-TINY: "param_count": 118528,
// GPT2-TINY: "op_count": 57,

// RUN: mw-models gpt --preset gpt2-small | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=GPT2-SMALL
// GPT2-SMALL: "param_count": 124439808,
// GPT2-SMALL: "op_count": 307,

// RUN: mw-models gpt --preset gpt2-medium | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=GPT2-MEDIUM
// GPT2-MEDIUM: "param_count": 354823168,

// RUN: mw-models gpt --preset gpt2-large | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=GPT2-LARGE
// GPT2-LARGE: "param_count": 774030080,

// RUN: mw-models gpt --preset gpt2-xl | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=GPT2-XL
// GPT2-XL: "param_count": 1557611200,

// RUN: mw-models gpt --preset gpt3-175b | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=GPT3
// GPT3: "param_count": 174604259328,
// GPT3: "op_count": 2407,

// RUN: mw-models llama --preset llama-tiny | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=LLAMA-TINY
// LLAMA-TINY: "param_count": 133440,
// LLAMA-TINY: "op_count": 50,

// Grouped-query: k_proj and v_proj are [2 * 16, 64], 2 * 2 * 2048 fewer.
// RUN: mw-models llama --preset llama-tiny-gqa | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=LLAMA-GQA
// LLAMA-GQA: "param_count": 125248,

// RUN: mw-models llama --preset llama-7b-shaped | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=LLAMA-7B
// LLAMA-7B: "param_count": 6738415616,

// RUN: mw-models bert --preset bert-tiny | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=BERT-TINY
// BERT-TINY: "param_count": 123200,
// BERT-TINY: "op_count": 66,

// RUN: mw-models bert --preset bert-base | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=BERT-BASE
// BERT-BASE: "param_count": 109514298,

// RUN: mw-models bert --preset bert-large | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=BERT-LARGE
// BERT-LARGE: "param_count": 335174458,

// OPT: the GPT-2 closed form (tied lm_head; embed_positions has S rows, not
// HF's S + 2). OPT-30B as published is 29.97B.
// RUN: mw-models opt --preset opt-tiny | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=OPT-TINY
// OPT-TINY: "param_count": 118528,
// OPT-TINY: "op_count": 59,

// RUN: mw-models opt --preset opt-30b-shaped | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=OPT-30B
// OPT-30B: "param_count": 29974525952,
// OPT-30B: "op_count": 1255,

// Rotary embeddings add no parameters (the tables are constants).
// RUN: mw-models llama --preset llama-tiny --rotary | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=LLAMA-ROPE
// LLAMA-ROPE: "param_count": 133440,
// LLAMA-ROPE: "op_count": 88,

// bf16 halves the parameter bytes, not the count.
// RUN: mw-models gpt --preset gpt2-small --dtype bf16 | mw-opt --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=GPT2-BF16
// GPT2-BF16: "param_count": 124439808,
// GPT2-BF16-NEXT: "param_bytes": 248879616,
