// RUN: transformer-opt %s --tfm-strip-frontend-arg-attributes --split-input-file | FileCheck %s

// The frontend's argument and result attributes go; LLVM's stay.
// CHECK-LABEL: llvm.func @entry
// CHECK-SAME: (%{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64)
// CHECK-SAME: -> (i64 {llvm.zeroext})
// CHECK-NOT: tfm.
llvm.func @entry(%arg0: !llvm.ptr {llvm.noalias, tfm.param = "wte"},
                 %arg1: i64 {tfm.input = "position"})
    -> (i64 {llvm.zeroext, tfm.result = "x"}) {
  llvm.return %arg1 : i64
}

// -----

// A function left with no attributes at all has none printed.
// CHECK-LABEL: llvm.func @only_frontend
// CHECK-SAME: (%{{.*}}: !llvm.ptr)
// CHECK-NOT: tfm.
llvm.func @only_frontend(%arg0: !llvm.ptr {tfm.kv_cache = "k0"}) {
  llvm.return
}

// -----

// Other functions, and function-level attributes, are left alone.
// CHECK-LABEL: func.func @not_llvm
// CHECK-SAME: tfm.param = "w"
func.func @not_llvm(%arg0: f32 {tfm.param = "w"}) {
  return
}
