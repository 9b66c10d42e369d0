// RUN: transformer-opt %s --tfm-plan-workspace=report --split-input-file --verify-diagnostics | FileCheck %s
// A whole model through the CPU pipeline, planned for AVX-512 (Skylake-X):
// one workspace of 14,336 bytes instead of 70,592 bytes in 39 allocations,
// below the ledger's peak of live activations (18,432 bytes,
// test/Dialect/Tfm/print-ledger.mlir): fused epilogues leave fewer
// intermediates than there are tfm op results. Planned for AVX2 (Zen 3,
// 4 x 24 register tiles) the buffers differ: 31,616 bytes for 34 buffers of
// 50,496.
// RUN: transformer-opt %tfm_src/examples/tiny-gpt2.mlir --tfm-cpu-pipeline=cpu=skylake-avx512 --mlir-print-ir-after=tfm-plan-workspace -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODEL
// MODEL: func.func @forward({{.*}} tfm.workspace = {buffers = 39 : i64, bytes = 14336 : i64, unplanned = 70592 : i64}
// RUN: transformer-opt %tfm_src/examples/tiny-gpt2.mlir --tfm-cpu-pipeline=cpu=znver3 --mlir-print-ir-after=tfm-plan-workspace -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX2
// AVX2: func.func @forward({{.*}} tfm.workspace = {buffers = 34 : i64, bytes = 31616 : i64, unplanned = 50496 : i64}

// A chain a -> b -> c -> d of 4 KiB buffers: a dies when b is written, so c
// reuses a's bytes and d reuses b's. One 8 KiB workspace instead of 16 KiB.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: tfm.workspace = {buffers = 4 : i64, bytes = 8192 : i64, unplanned = 16384 : i64}
// CHECK-NEXT: %[[WS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
// CHECK-NOT: memref.alloc
// CHECK: %[[A:.*]] = memref.view %[[WS]][%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[B:.*]] = memref.view %[[WS]][%c4096{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[C:.*]] = memref.view %[[WS]][%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[D:.*]] = memref.view %[[WS]][%c4096{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// expected-remark @below {{workspace of @chain: 8192 bytes for 4 buffers of 16384 bytes}}
func.func @chain(%x: memref<1024xf32>, %out: memref<1024xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  linalg.copy ins(%x : memref<1024xf32>) outs(%a : memref<1024xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  linalg.copy ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  linalg.copy ins(%b : memref<1024xf32>) outs(%c : memref<1024xf32>)
  %d = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  linalg.copy ins(%c : memref<1024xf32>) outs(%d : memref<1024xf32>)
  linalg.copy ins(%d : memref<1024xf32>) outs(%out : memref<1024xf32>)
  return
}

// -----

// A view keeps its buffer alive: %a is read through a reshape after %b is
// written, so the two overlap and get distinct bytes; %c (written after the
// last read of %a) takes %a's place. Sizes are rounded to 64 bytes.
// CHECK-LABEL: func.func @views
// CHECK-SAME: tfm.workspace = {buffers = 3 : i64, bytes = 128 : i64, unplanned = 192 : i64}
// CHECK: %[[A:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<128xi8> to memref<2x5xf32>
// CHECK: %[[B:.*]] = memref.view %{{.*}}[%c64{{.*}}][] : memref<128xi8> to memref<10xf32>
// CHECK: %[[C:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<128xi8> to memref<10xf32>
// expected-remark @below {{workspace of @views: 128 bytes for 3 buffers of 192 bytes}}
func.func @views(%x: memref<10xf32>, %out: memref<10xf32>) {
  %a = memref.alloc() : memref<2x5xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<2x5xf32> into memref<10xf32>
  linalg.copy ins(%x : memref<10xf32>) outs(%flat : memref<10xf32>)
  %b = memref.alloc() : memref<10xf32>
  linalg.copy ins(%x : memref<10xf32>) outs(%b : memref<10xf32>)
  linalg.add ins(%flat, %b : memref<10xf32>, memref<10xf32>) outs(%out : memref<10xf32>)
  %c = memref.alloc() : memref<10xf32>
  linalg.copy ins(%out : memref<10xf32>) outs(%c : memref<10xf32>)
  linalg.copy ins(%c : memref<10xf32>) outs(%out : memref<10xf32>)
  return
}

// -----

// A buffer carried by a loop lives until the loop's results are last used;
// one returned from the function, or passed to a call, is not planned; nor
// are allocations inside loops (a thread's private scratch) or of dynamic
// size.
// CHECK-LABEL: func.func @escapes
// CHECK-SAME: tfm.workspace = {buffers = 2 : i64, bytes = 128 : i64, unplanned = 128 : i64}
// CHECK: %[[C:.*]] = memref.view {{.*}} to memref<4xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[C]])
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: %[[D:.*]] = memref.view {{.*}} to memref<4xf32>
// CHECK: %[[R:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[K:.*]] = memref.alloc() : memref<4xf32>
// CHECK: call @sink(%[[K]])
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: return %[[R]]
func.func private @sink(memref<4xf32>)
// expected-remark @below {{workspace of @escapes: 128 bytes for 2 buffers of 128 bytes}}
func.func @escapes(%x: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %carried = memref.alloc() : memref<4xf32>
  %loop = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %carried) -> (memref<4xf32>) {
    %scratch = memref.alloc() : memref<4xf32>
    linalg.copy ins(%x : memref<4xf32>) outs(%scratch : memref<4xf32>)
    linalg.add ins(%acc, %scratch : memref<4xf32>, memref<4xf32>) outs(%acc : memref<4xf32>)
    scf.yield %acc : memref<4xf32>
  }
  %d = memref.alloc() : memref<4xf32>
  linalg.copy ins(%loop : memref<4xf32>) outs(%d : memref<4xf32>)
  %result = memref.alloc() : memref<4xf32>
  linalg.copy ins(%d : memref<4xf32>) outs(%result : memref<4xf32>)
  %kept = memref.alloc() : memref<4xf32>
  call @sink(%kept) : (memref<4xf32>) -> ()
  %dynamic = memref.alloc(%n) : memref<?xf32>
  return %result : memref<4xf32>
}

// -----

// A private function of the module with a body and no results (a kernel,
// such as tfm-cpu-amx-contractions' GEMMs) has its buffers only for the
// call: they are planned, and die at the call.
// CHECK-LABEL: func.func @kernel_call
// CHECK-SAME: tfm.workspace = {buffers = 2 : i64, bytes = 64 : i64, unplanned = 128 : i64}
// CHECK: %[[K:.*]] = memref.view {{.*}} to memref<4xf32>
// CHECK: call @kernel(%[[K]])
// CHECK: %[[L:.*]] = memref.view {{.*}} to memref<4xf32>
func.func private @kernel(%b: memref<4xf32>) {
  return
}
// expected-remark @below {{workspace of @kernel_call: 64 bytes for 2 buffers of 128 bytes}}
func.func @kernel_call(%x: memref<4xf32>) {
  %k = memref.alloc() : memref<4xf32>
  call @kernel(%k) : (memref<4xf32>) -> ()
  %l = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%l : memref<4xf32>)
  return
}

// -----

// An external function marked tfm.nocapture (a runtime micro-kernel, as
// tfm-cpu-lower-quantized-matmuls declares them) keeps no pointer to its
// operands: buffers passed to it are planned. Without the mark, an external
// callee may keep them (@escapes above).
// CHECK-LABEL: func.func @micro_kernel_call
// CHECK-SAME: tfm.workspace = {buffers = 2 : i64, bytes = 64 : i64, unplanned = 128 : i64}
// CHECK: %[[K:.*]] = memref.view {{.*}} to memref<4xf32>
// CHECK: call @micro_kernel(%[[K]])
// CHECK: %[[L:.*]] = memref.view {{.*}} to memref<4xf32>
func.func private @micro_kernel(memref<4xf32>) attributes {tfm.nocapture}
// expected-remark @below {{workspace of @micro_kernel_call: 64 bytes for 2 buffers of 128 bytes}}
func.func @micro_kernel_call(%x: memref<4xf32>) {
  %k = memref.alloc() : memref<4xf32>
  call @micro_kernel(%k) : (memref<4xf32>) -> ()
  %l = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%l : memref<4xf32>)
  return
}

// -----

// A single buffer gains nothing: left as it is, no attribute.
// CHECK-LABEL: func.func @single
// CHECK-NOT: tfm.workspace
// CHECK: memref.alloc() : memref<8xf32>
func.func @single(%x: memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  linalg.copy ins(%x : memref<8xf32>) outs(%a : memref<8xf32>)
  return
}
