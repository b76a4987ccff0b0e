// A rank that fails ends the run on every rank, naming it, in bounded time
// (Inputs/zero_mpi_failures.sh): bad input on one rank (the ranks agree on
// the outcome of loading, so every rank says which rank failed and why); a
// rank killed mid-run (mpirun names it and ends the others, which say so);
// a rank that stops answering (the others' --comm-timeout ends the step);
// and a plan for 2 ranks started on 3 (refused at load on every rank).
// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t
// RUN: mw-models gpt --preset gpt2-tiny --batch 4 --train -o %t/step.mlir
// RUN: mw-opt %t/step.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t/one.mwplan
// RUN: mw-run %t/one.mwplan --steps 0 --save-weights %t/init.safetensors > /dev/null
// RUN: mw-opt %t/step.mlir --mw-zero="stage=2 ranks=2 overlap=on" --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t/zero.mwplan
// RUN: %S/../Inputs/zero_mpi_failures.sh %mw_bin %t %t/zero.mwplan %t/init.safetensors | FileCheck %s
//
// CHECK-LABEL: == bad input on rank 1
// CHECK-DAG:   mw-run: rank 0: error: stopping because of rank 1: bad.safetensors: header length {{[0-9]+}} exceeds the 100 MiB limit
// CHECK-DAG:   mw-run: rank 1: error: bad.safetensors: header length
// CHECK-DAG:   exit 1
// CHECK:       ended 1 (within 60 s)
//
// CHECK-LABEL: == rank 1 killed in the middle of the run
// Rank 0 is ended by mpirun, or sees the failed collective first itself.
// CHECK-DAG:   mw-run: rank 0: {{stopped: the launcher ended the run \(another rank failed\)|error: step [0-9]+, kernel .*}}
// CHECK-DAG:   mpirun noticed that process rank 1 with PID N on node {{.*}} exited on signal 9 (Killed).
// CHECK-DAG:   exit {{[1-9][0-9]*}}
// CHECK:       ended 1 (within 60 s)
//
// CHECK-LABEL: == rank 1 stopped (SIGSTOP): the others time out
// CHECK-DAG:   mw-run: rank 0: error: step {{[0-9]+}}, kernel {{[0-9]+}} ('{{mw.wait|mesh.[a-z_]+}}' at {{.*}}): the collective did not complete within 3 s (--comm-timeout): another rank failed or stopped
// CHECK-DAG:   exit {{[1-9][0-9]*}}
// CHECK:       ended 1 (within 60 s)
//
// CHECK-LABEL: == a plan for 2 ranks started on 3
// CHECK-NEXT:  mw-run: rank 0: error: {{.*}}zero.mwplan: the plan was compiled for 2 ranks but runs on 3 (mpi); recompile it with --mw-zero="ranks=3 ..." or start 2 processes
// CHECK-NEXT:  mw-run: rank 1: error:
// CHECK-NEXT:  mw-run: rank 2: error:
// CHECK-NEXT:  exit 1
