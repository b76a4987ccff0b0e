// mw-models --help documents every flag, family and preset; --list-presets
// prints each preset's dimensions and parameter count.
//
// RUN: mw-models --help | FileCheck %s --check-prefix=HELP
// HELP: mw-models FAMILY [--preset NAME] [dimension flags] [--dtype T] [-o OUT.mlir]
// HELP-DAG: --batch=<B>
// HELP-DAG: --classes=<C>
// HELP-DAG: --dtype=<value>
// HELP-DAG: =bf16
// HELP-DAG: --emit-locations
// HELP-DAG: --ffn=<F>
// HELP-DAG: --heads=<H>
// HELP-DAG: --kv-heads=<N>
// HELP-DAG: --hidden=<D>
// HELP-DAG: --in-features=<I>
// HELP-DAG: --layers=<N>
// HELP-DAG: --list-presets
// HELP-DAG: -o <filename>
// HELP-DAG: --preset=<name>
// HELP-DAG: --rotary
// HELP-DAG: --seq=<S>
// HELP-DAG: --vocab=<V>
// HELP: FAMILIES:
// HELP-NEXT: mlp
// HELP-NEXT: gpt
// HELP-NEXT: llama
// HELP-NEXT: bert
// HELP-NEXT: opt
// HELP: PRESETS
// HELP-NEXT: mlp-tiny
// HELP-NEXT: gpt2-tiny
// HELP-NEXT: gpt2-small
// HELP-NEXT: gpt2-medium
// HELP-NEXT: gpt2-large
// HELP-NEXT: gpt2-xl
// HELP-NEXT: gpt3-175b
// HELP-NEXT: llama-tiny
// HELP-NEXT: llama-tiny-gqa
// HELP-NEXT: llama-7b-shaped
// HELP-NEXT: bert-tiny
// HELP-NEXT: bert-base
// HELP-NEXT: bert-large
// HELP-NEXT: opt-tiny
// HELP-NEXT: opt-30b-shaped
// HELP: OUTPUT:
//
// RUN: mw-models --list-presets | FileCheck %s --check-prefix=LIST
// LIST:      mlp-tiny          mlp                6922 params  layers=3 hidden=64 in_features=32 classes=10 batch=4
// LIST-NEXT: gpt2-tiny         gpt              118528 params  layers=2 hidden=64 heads=4 head_dim=16 ffn=256 seq=32 batch=2 vocab=256
// LIST-NEXT: gpt2-small        gpt           124439808 params  layers=12 hidden=768 heads=12 head_dim=64 ffn=3072 seq=1024 batch=1 vocab=50257
// LIST-NEXT: gpt2-medium       gpt           354823168 params  layers=24 hidden=1024 heads=16 head_dim=64 ffn=4096 seq=1024 batch=1 vocab=50257
// LIST-NEXT: gpt2-large        gpt           774030080 params  layers=36 hidden=1280 heads=20 head_dim=64 ffn=5120 seq=1024 batch=1 vocab=50257
// LIST-NEXT: gpt2-xl           gpt          1557611200 params  layers=48 hidden=1600 heads=25 head_dim=64 ffn=6400 seq=1024 batch=1 vocab=50257
// LIST-NEXT: gpt3-175b         gpt        174604259328 params  layers=96 hidden=12288 heads=96 head_dim=128 ffn=49152 seq=2048 batch=1 vocab=50257
// LIST-NEXT: llama-tiny        llama            133440 params  layers=2 hidden=64 heads=4 head_dim=16 ffn=176 seq=32 batch=2 vocab=256
// LIST-NEXT: llama-tiny-gqa    llama            125248 params  layers=2 hidden=64 heads=4 kv_heads=2 head_dim=16 ffn=176 seq=32 batch=2 vocab=256
// LIST-NEXT: llama-7b-shaped   llama        6738415616 params  layers=32 hidden=4096 heads=32 head_dim=128 ffn=11008 seq=2048 batch=1 vocab=32000
// LIST-NEXT: bert-tiny         bert             123200 params  layers=2 hidden=64 heads=4 head_dim=16 ffn=256 seq=32 batch=2 vocab=256
// LIST-NEXT: bert-base         bert          109514298 params  layers=12 hidden=768 heads=12 head_dim=64 ffn=3072 seq=512 batch=1 vocab=30522
// LIST-NEXT: bert-large        bert          335174458 params  layers=24 hidden=1024 heads=16 head_dim=64 ffn=4096 seq=512 batch=1 vocab=30522
// LIST-NEXT: opt-tiny          opt              118528 params  layers=2 hidden=64 heads=4 head_dim=16 ffn=256 seq=32 batch=2 vocab=256
// LIST-NEXT: opt-30b-shaped    opt         29974525952 params  layers=48 hidden=7168 heads=56 head_dim=128 ffn=28672 seq=2048 batch=1 vocab=50272
//
// With a family, only its presets.
// RUN: mw-models llama --list-presets | FileCheck %s --check-prefix=LLAMA
// LLAMA-NOT:  {{mlp|gpt|bert|opt}}
// LLAMA:      llama-tiny
// LLAMA-NEXT: llama-tiny-gqa
// LLAMA-NEXT: llama-7b-shaped
// LLAMA-NOT:  {{mlp|gpt|bert|opt}}
// RUN: mw-models opt --list-presets | FileCheck %s --check-prefix=OPT
// OPT-NOT:  {{mlp|gpt|bert|llama}}
// OPT:      opt-tiny
// OPT-NEXT: opt-30b-shaped
// OPT-NOT:  {{mlp|gpt|bert|llama}}
//
// Without --preset the family's tiny preset gives the defaults; flags
// override a preset.
// RUN: mw-models gpt | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: // gpt: layers=2 hidden=64 heads=4 head_dim=16 ffn=256 seq=32 batch=2 vocab=256 dtype=f32
// RUN: mw-models gpt --preset gpt2-small --layers 1 --seq 128 --batch 4 | FileCheck %s --check-prefix=OVERRIDE
// OVERRIDE: //   mw-models gpt --layers 1 --hidden 768 --heads 12 --ffn 3072 --seq 128 --batch 4 --vocab 50257 --dtype f32
// OVERRIDE: %arg1: tensor<128x768xf32> {mw.name = "wpe"
// OVERRIDE-SAME: %arg16: tensor<4x128xi32> {mw.name = "tokens"
