// A module may carry `tfm.param_pack` itself (e.g. saved after the CPU
// pipeline's signature stage). A malformed one is refused before anything is
// bound or compiled, naming the argument.
// RUN: not transformer-runner %s --random-weights 1 --entry bad_layout 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: not transformer-runner %s --random-weights 1 --entry bad_shape 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not transformer-runner %s --random-weights 1 --entry bad_format 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not transformer-runner %s --random-weights 1 --entry bad_parts 2>&1 | FileCheck %s --check-prefix=PARTS
// RUN: not transformer-runner %s --random-weights 1 --entry odd_parts 2>&1 | FileCheck %s --check-prefix=ODD
// RUN: not transformer-runner %s --random-weights 1 --entry bad_pairs 2>&1 | FileCheck %s --check-prefix=PAIRS
// RUN: not transformer-runner %s --random-weights 1 --entry odd_pairs 2>&1 | FileCheck %s --check-prefix=ODDPAIRS
// RUN: not transformer-runner %s --random-weights 1 --entry f32_pairs 2>&1 | FileCheck %s --check-prefix=F32PAIRS
// LAYOUT: error: argument #0 ('w') of @bad_layout: tfm.param_pack needs tfm.param and {layout = "in_out" | "out_in", panel = N > 0, shape = array<i64: rows, cols>} and optionally format = "amx_bf16x3" | "amx_bf16" | "bf16_pairs"
// SHAPE: error: argument #0 ('w') of @bad_shape: tfm.param_pack of a 40x16 weight in panels of 16 needs an f32, bf16 or f16 argument of shape 3x16x16
// FORMAT: error: argument #0 ('w') of @bad_format: tfm.param_pack needs tfm.param and {layout = "in_out" | "out_in", panel = N > 0, shape = array<i64: rows, cols>} and optionally format = "amx_bf16x3" | "amx_bf16" | "bf16_pairs"
// PARTS: error: argument #0 ('w') of @bad_parts: tfm.param_pack of a 40x16 weight as amx_bf16x3 in panels of 16 needs a panel width that 16 divides, an even K and a bf16 argument of shape 3x3x8x32
// PAIRS: error: argument #0 ('w') of @bad_pairs: tfm.param_pack of a 40x16 weight as bf16_pairs in panels of 16 needs an even K and a bf16 argument of shape 3x8x16x2
// ODDPAIRS: error: argument #0 ('w') of @odd_pairs: tfm.param_pack of a 40x15 weight as bf16_pairs in panels of 16 needs an even K and a bf16 argument of shape 3x7x16x2
// F32PAIRS: error: argument #0 ('w') of @f32_pairs: tfm.param_pack of a 40x16 weight as bf16_pairs in panels of 16 needs an even K and a bf16 argument of shape 3x8x16x2
// ODD: error: argument #0 ('w') of @odd_parts: tfm.param_pack of a 40x15 weight as amx_bf16x3 in panels of 16 needs a panel width that 16 divides, an even K and a bf16 argument of shape 3x3x7x32

func.func @bad_layout(%w: tensor<3x16x16xf32> {tfm.param = "w", tfm.param_pack = {layout = "sideways", panel = 16 : i64, shape = array<i64: 40, 16>}})
    -> (tensor<3x16x16xf32> {tfm.output = "y"}) {
  return %w : tensor<3x16x16xf32>
}

func.func @bad_shape(%w: tensor<2x16x16xf32> {tfm.param = "w", tfm.param_pack = {layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 16>}})
    -> (tensor<2x16x16xf32> {tfm.output = "y"}) {
  return %w : tensor<2x16x16xf32>
}

func.func @bad_format(%w: tensor<3x3x8x32xbf16> {tfm.param = "w", tfm.param_pack = {format = "vnni", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 16>}})
    -> (tensor<3x3x8x32xbf16> {tfm.output = "y"}) {
  return %w : tensor<3x3x8x32xbf16>
}

// The parts in f32, and in a shape that is not tiles'.
func.func @bad_parts(%w: tensor<3x3x8x32xf32> {tfm.param = "w", tfm.param_pack = {format = "amx_bf16x3", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 16>}})
    -> (tensor<3x3x8x32xf32> {tfm.output = "y"}) {
  return %w : tensor<3x3x8x32xf32>
}

// K odd: rows of K cannot pair.
func.func @odd_parts(%w: tensor<3x3x7x32xbf16> {tfm.param = "w", tfm.param_pack = {format = "amx_bf16x3", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 15>}})
    -> (tensor<3x3x7x32xbf16> {tfm.output = "y"}) {
  return %w : tensor<3x3x7x32xbf16>
}

// K pairs interleaved: the K axis not halved.
func.func @bad_pairs(%w: tensor<3x16x16x2xbf16> {tfm.param = "w", tfm.param_pack = {format = "bf16_pairs", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 16>}})
    -> (tensor<3x16x16x2xbf16> {tfm.output = "y"}) {
  return %w : tensor<3x16x16x2xbf16>
}

// K odd: no pairs.
func.func @odd_pairs(%w: tensor<3x7x16x2xbf16> {tfm.param = "w", tfm.param_pack = {format = "bf16_pairs", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 15>}})
    -> (tensor<3x7x16x2xbf16> {tfm.output = "y"}) {
  return %w : tensor<3x7x16x2xbf16>
}

// Pairs are of bf16 only.
func.func @f32_pairs(%w: tensor<3x8x16x2xf32> {tfm.param = "w", tfm.param_pack = {format = "bf16_pairs", layout = "out_in", panel = 16 : i64, shape = array<i64: 40, 16>}})
    -> (tensor<3x8x16x2xf32> {tfm.output = "y"}) {
  return %w : tensor<3x8x16x2xf32>
}
