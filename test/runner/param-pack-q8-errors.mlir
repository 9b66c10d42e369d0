// Quantized weights in a module's signature (tfm.param_pack with format
// "q8_0_values" / "q8_0_scales", Q4_K's three parts, tfm.param_quant on an
// unpacked weight): a
// malformed one is refused before anything is bound or compiled, naming the
// argument.
// RUN: not transformer-runner %s --random-weights 1 --entry bad_panel 2>&1 | FileCheck %s --check-prefix=PANEL
// RUN: not transformer-runner %s --random-weights 1 --entry bad_values 2>&1 | FileCheck %s --check-prefix=VALUES
// RUN: not transformer-runner %s --random-weights 1 --entry bad_scales 2>&1 | FileCheck %s --check-prefix=SCALES
// PANEL: error: argument #0 ('w') of @bad_panel: tfm.param_pack with format = "q8_0_values" needs tfm.param and {layout = "in_out" | "out_in", panel = 8 | 16 | 32 | 64, shape = array<i64: rows, cols>}
// VALUES: error: argument #0 ('w') of @bad_values: tfm.param_pack of a 40x64 weight as q8_0_values needs a K that 32 divides and an argument i8 3x2x32x16
// SCALES: error: argument #0 ('w') of @bad_scales: tfm.param_pack of a 40x64 weight as q8_0_scales needs a K that 32 divides and an argument f16 3x2x16
// The int8 kernels' layout (group = 4): four bytes of a column together,
// [J, K/32, 32/4, P, 4]; only for values, only 1 or 4.
// RUN: not transformer-runner %s --random-weights 1 --entry bad_group_shape 2>&1 | FileCheck %s --check-prefix=GROUPSHAPE
// RUN: not transformer-runner %s --random-weights 1 --entry bad_group 2>&1 | FileCheck %s --check-prefix=GROUP
// RUN: not transformer-runner %s --random-weights 1 --entry group_on_scales 2>&1 | FileCheck %s --check-prefix=GROUP
// GROUPSHAPE: error: argument #0 ('w') of @bad_group_shape: tfm.param_pack of a 40x64 weight as q8_0_values needs a K that 32 divides and an argument i8 3x2x8x16x4
// GROUP: tfm.param_pack's group must be 1 or 4, and only with the values of a quantized weight (format = "q8_0_values", "q4_0_values", ...)

// Q4_K's three parts: K a multiple of its super-blocks of 256, its
// super-blocks' d and dmin f16 [J, K/256, 2, P], its sub-blocks' scales and
// mins i8 [J, K/32, 2, P].
// RUN: not transformer-runner %s --random-weights 1 --entry q4_k_short 2>&1 | FileCheck %s --check-prefix=Q4KSHORT
// RUN: not transformer-runner %s --random-weights 1 --entry q4_k_super 2>&1 | FileCheck %s --check-prefix=Q4KSUPER
// RUN: not transformer-runner %s --random-weights 1 --entry q4_k_scales 2>&1 | FileCheck %s --check-prefix=Q4KSCALES
// Q4KSHORT: error: argument #0 ('w') of @q4_k_short: tfm.param_pack of a 40x64 weight as q4_k_values needs a K that 256 divides and an argument i8 3x2x16x16
// Q4KSUPER: error: argument #0 ('w') of @q4_k_super: tfm.param_pack of a 40x512 weight as q4_k_super needs a K that 256 divides and an argument f16 3x2x2x16
// Q4KSCALES: error: argument #0 ('w') of @q4_k_scales: tfm.param_pack of a 40x512 weight as q4_k_scales needs a K that 256 divides and an argument i8 3x16x2x16
// Q6_K's: values as Q8_0's, the super-blocks' d f16 [J, K/256, P], the 16s'
// scales i8 [J, K/16, P].
// RUN: not transformer-runner %s --random-weights 1 --entry q6_k_values 2>&1 | FileCheck %s --check-prefix=Q6KVALUES
// RUN: not transformer-runner %s --random-weights 1 --entry q6_k_scales 2>&1 | FileCheck %s --check-prefix=Q6KSCALES
// Q6KVALUES: error: argument #0 ('w') of @q6_k_values: tfm.param_pack of a 40x512 weight as q6_k_values needs a K that 256 divides and an argument i8 3x16x32x16
// Q6KSCALES: error: argument #0 ('w') of @q6_k_scales: tfm.param_pack of a 40x512 weight as q6_k_scales needs a K that 256 divides and an argument i8 3x32x16

func.func @bad_panel(%w: tensor<2x2x32x20xi8> {tfm.param = "w", tfm.param_pack = {format = "q8_0_values", layout = "out_in", panel = 20 : i64, shape = array<i64: 40, 64>}})
    -> (tensor<2x2x32x20xi8> {tfm.output = "y"}) {
  return %w : tensor<2x2x32x20xi8>
}

func.func @bad_values(%w: tensor<3x2x32x8xi8> {tfm.param = "w", tfm.param_pack = {format = "q8_0_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 64>}})
    -> (tensor<3x2x32x8xi8> {tfm.output = "y"}) {
  return %w : tensor<3x2x32x8xi8>
}

func.func @bad_scales(%w: tensor<3x2x16xf32> {tfm.param = "w", tfm.param_pack = {format = "q8_0_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 64>}})
    -> (tensor<3x2x16xf32> {tfm.output = "y"}) {
  return %w : tensor<3x2x16xf32>
}

func.func @bad_group_shape(%w: tensor<3x2x32x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q8_0_values", group = 4 : i64, layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 64>}})
    -> (tensor<3x2x32x16xi8> {tfm.output = "y"}) {
  return %w : tensor<3x2x32x16xi8>
}

func.func @bad_group(%w: tensor<3x2x16x16x2xi8> {tfm.param = "w", tfm.param_pack = {format = "q8_0_values", group = 2 : i64, layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 64>}})
    -> (tensor<3x2x16x16x2xi8> {tfm.output = "y"}) {
  return %w : tensor<3x2x16x16x2xi8>
}

func.func @group_on_scales(%w: tensor<3x2x16xf16> {tfm.param = "w", tfm.param_pack = {format = "q8_0_scales", group = 4 : i64, layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 64>}})
    -> (tensor<3x2x16xf16> {tfm.output = "y"}) {
  return %w : tensor<3x2x16xf16>
}

func.func @q4_k_short(%w: tensor<3x2x16x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q4_k_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 64>}})
    -> (tensor<3x2x16x16xi8> {tfm.output = "y"}) {
  return %w : tensor<3x2x16x16xi8>
}

func.func @q4_k_super(%w: tensor<3x2x16xf16> {tfm.param = "w", tfm.param_pack = {format = "q4_k_super", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}})
    -> (tensor<3x2x16xf16> {tfm.output = "y"}) {
  return %w : tensor<3x2x16xf16>
}

func.func @q4_k_scales(%w: tensor<3x16x2x16xf16> {tfm.param = "w", tfm.param_pack = {format = "q4_k_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}})
    -> (tensor<3x16x2x16xf16> {tfm.output = "y"}) {
  return %w : tensor<3x16x2x16xf16>
}

func.func @q6_k_values(%w: tensor<3x16x16x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q6_k_values", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}})
    -> (tensor<3x16x16x16xi8> {tfm.output = "y"}) {
  return %w : tensor<3x16x16x16xi8>
}

func.func @q6_k_scales(%w: tensor<3x16x2x16xi8> {tfm.param = "w", tfm.param_pack = {format = "q6_k_scales", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 512>}})
    -> (tensor<3x16x2x16xi8> {tfm.output = "y"}) {
  return %w : tensor<3x16x2x16xi8>
}
