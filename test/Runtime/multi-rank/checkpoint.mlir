// Sharded checkpoints of a ZeRO plan on 2 MPI ranks (gpt2-tiny, stage 2,
// SGD with momentum): each rank writes its pieces, rank 0 a manifest, and
// DIR/latest names the newest complete checkpoint.
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: mw-models gpt --preset gpt2-tiny --batch 4 --train --optimizer=sgd --momentum=0.9 -o step.mlir
// RUN: mw-opt step.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o one.mwplan
// RUN: mw-run one.mwplan --steps 0 --seed 4 --save-weights init.safetensors > /dev/null
// RUN: mw-run one.mwplan --steps 4 --weights init.safetensors --save-weights one4.safetensors > /dev/null
// RUN: mw-opt step.mlir --mw-zero="stage=2 ranks=2 overlap=on" --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o zero.mwplan
//
// An uninterrupted run of 4 steps, and one interrupted after 2 and resumed
// from its sharded checkpoint: the same losses, the same state bit for bit.
// RUN: %mpirun -np 2 mw-run zero.mwplan --steps 4 --weights init.safetensors --save-weights straight > straight.out
// RUN: %mpirun -np 2 mw-run zero.mwplan --steps 2 --weights init.safetensors --save-weights ck > first.out
// RUN: %mpirun -np 2 mw-run zero.mwplan --steps 2 --weights ck --save-weights ck > second.out
// RUN: FileCheck %s --check-prefix=NUMBERED < second.out
// NUMBERED: step 3  loss
// NUMBERED: step 4  loss
// RUN: grep '^step [0-9]' straight.out | awk '{print $4}' > straight.losses
// RUN: cat first.out second.out | grep '^step [0-9]' | awk '{print $4}' | diff straight.losses -
// RUN: python3 %S/../Inputs/compare_safetensors.py straight/step-4/rank-0.safetensors ck/step-4/rank-0.safetensors
// RUN: python3 %S/../Inputs/compare_safetensors.py straight/step-4/rank-1.safetensors ck/step-4/rank-1.safetensors
// RUN: cat ck/latest | FileCheck %s --check-prefix=LATEST4
// LATEST4: step-4
// RUN: ls ck | FileCheck %s --check-prefix=DIRS
// DIRS: latest
// DIRS-NEXT: step-2
// DIRS-NEXT: step-4
//
// A save that crashed midway (a partial temporary directory, a half-written
// `latest` temporary) leaves the last checkpoint loadable; the next save
// replaces the debris.
// RUN: mkdir ck/.step-5.tmp && head -c 100 ck/step-4/rank-0.safetensors > ck/.step-5.tmp/rank-0.safetensors && echo "step-" > ck/latest.tmp
// RUN: %mpirun -np 2 mw-run zero.mwplan --steps 1 --weights ck --save-weights ck | FileCheck %s --check-prefix=RESUMED
// RESUMED: step 5  loss
// RESUMED: saved params and optimizer state to ck (a sharded checkpoint)
// RUN: cat ck/latest | FileCheck %s --check-prefix=LATEST5
// LATEST5: step-5
// RUN: ls -a ck | FileCheck %s --check-prefix=CLEAN
// CLEAN-NOT: .tmp
//
// Consolidation: whole tensors under their unsharded names, which the
// one-rank plan loads; equal to the one-rank run's within 1e-6.
// RUN: mw-run --consolidate straight -o full.safetensors | FileCheck %s --check-prefix=CONS
// CONS: mw-run: consolidated straight (2 ranks, step 4) into full.safetensors: {{[0-9]+}} tensors, {{[0-9]+}} B
// RUN: python3 %S/../Inputs/compare_safetensors.py one4.safetensors full.safetensors --rtol 1e-6
// RUN: mw-run one.mwplan --steps 1 --weights full.safetensors > /dev/null
//
// Errors: a checkpoint of 2 ranks for a plan of 4; not a checkpoint; a
// corrupt manifest; --consolidate without -o.
// RUN: mw-opt step.mlir --mw-zero="stage=2 ranks=4" --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o zero4.mwplan
// RUN: not %mpirun -np 4 mw-run zero4.mwplan --steps 1 --weights ck 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: mw-run: rank 0: error: ck/step-5: a checkpoint of 2 ranks, but the plan runs on 4; merge it with mw-run --consolidate ck -o FULL.safetensors and load that file
// RUN: mkdir -p empty && not mw-run --consolidate empty -o x.safetensors 2>&1 | FileCheck %s --check-prefix=NOTCK
// NOTCK: mw-run: error: empty: not a sharded checkpoint (no 'latest' and no manifest.json)
// RUN: cp -r straight broken && echo '{"format": "memwall-sharded-checkpoint", "version": 1, "ranks": 2}' > broken/step-4/manifest.json
// RUN: not mw-run --consolidate broken -o x.safetensors 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: mw-run: error: broken/step-4/manifest.json: 'files' must list one file per rank
// RUN: not mw-run --consolidate straight 2>&1 | FileCheck %s --check-prefix=NOOUT
// NOOUT: mw-run: --consolidate needs -o FULL.safetensors
// RUN: test ! -e x.safetensors
