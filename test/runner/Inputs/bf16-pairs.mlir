// bf16 projections of a bf16 model (bf16-pairs.test): on a CPU with
// AVX512-BF16 their weights are bound with K pairs interleaved and the GEMMs
// run as pair dot products (tfm-cpu-pack-weights, `bf16_pairs`).

// A projection with a bias (an epilogue fused into the GEMM's blocks), M =
// 130 rows (6-row tiles and a remainder), N = 200 (panels of 64, padded).
func.func @proj(%x: tensor<1x130x400xf32> {tfm.input = "x"},
                %w: tensor<200x400xbf16> {tfm.param = "proj.weight"},
                %b: tensor<200xbf16> {tfm.param = "proj.bias"})
    -> (tensor<1x130x200xf32> {tfm.output = "y"}) {
  %xh = tfm.convert %x : (tensor<1x130x400xf32>) -> tensor<1x130x400xbf16>
  %yh = tfm.linear %xh, %w, %b {layout = #tfm.layout<out_in>}
      : (tensor<1x130x400xbf16>, tensor<200x400xbf16>, tensor<200xbf16>) -> tensor<1x130x200xbf16>
  %y = tfm.convert %yh : (tensor<1x130x200xbf16>) -> tensor<1x130x200xf32>
  return %y : tensor<1x130x200xf32>
}

// A head without an epilogue (the full panels write into the result, the
// last panel's N mod 64 = 11 columns are a narrow GEMM of their own), in_out.
func.func @head(%x: tensor<1x7x64xf32> {tfm.input = "x"},
                %w: tensor<64x203xbf16> {tfm.param = "head.weight"})
    -> (tensor<1x7x203xf32> {tfm.output = "y"}) {
  %xh = tfm.convert %x : (tensor<1x7x64xf32>) -> tensor<1x7x64xbf16>
  %yh = tfm.linear %xh, %w {layout = #tfm.layout<in_out>}
      : (tensor<1x7x64xbf16>, tensor<64x203xbf16>) -> tensor<1x7x203xbf16>
  %y = tfm.convert %yh : (tensor<1x7x203xbf16>) -> tensor<1x7x203xf32>
  return %y : tensor<1x7x203xf32>
}

// One row (a decode step) against the projection's weight.
func.func @row(%x: tensor<1x1x400xf32> {tfm.input = "x"},
               %w: tensor<200x400xbf16> {tfm.param = "proj.weight"},
               %b: tensor<200xbf16> {tfm.param = "proj.bias"})
    -> (tensor<1x1x200xf32> {tfm.output = "y"}) {
  %xh = tfm.convert %x : (tensor<1x1x400xf32>) -> tensor<1x1x400xbf16>
  %yh = tfm.linear %xh, %w, %b {layout = #tfm.layout<out_in>}
      : (tensor<1x1x400xbf16>, tensor<200x400xbf16>, tensor<200xbf16>) -> tensor<1x1x200xbf16>
  %y = tfm.convert %yh : (tensor<1x1x200xbf16>) -> tensor<1x1x200xf32>
  return %y : tensor<1x1x200xf32>
}

// An odd K (37): no pairs; the weight keeps plain panels.
func.func @odd(%x: tensor<1x9x37xf32> {tfm.input = "x"},
               %w: tensor<48x37xbf16> {tfm.param = "odd.weight"})
    -> (tensor<1x9x48xf32> {tfm.output = "y"}) {
  %xh = tfm.convert %x : (tensor<1x9x37xf32>) -> tensor<1x9x37xbf16>
  %yh = tfm.linear %xh, %w {layout = #tfm.layout<out_in>}
      : (tensor<1x9x37xbf16>, tensor<48x37xbf16>) -> tensor<1x9x48xbf16>
  %y = tfm.convert %yh : (tensor<1x9x48xbf16>) -> tensor<1x9x48xf32>
  return %y : tensor<1x9x48xf32>
}

// bf16 operands, f32 result with no elementwise consumer (as an LM head's
// logits): the full panel writes into the result, the last 8 of N = 72
// columns are a narrow GEMM of their own (256-bit pair dot products).
func.func @logits(%xf: tensor<6x40xf32> {tfm.input = "x"},
                  %w: tensor<40x72xbf16> {tfm.param = "logits.weight"})
    -> (tensor<6x72xf32> {tfm.output = "y"}) {
  %x = tfm.convert %xf : (tensor<6x40xf32>) -> tensor<6x40xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x72xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<6x72xf32>) -> tensor<6x72xf32>
  %y = linalg.matmul ins(%x, %w : tensor<6x40xbf16>, tensor<40x72xbf16>)
      outs(%c : tensor<6x72xf32>) -> tensor<6x72xf32>
  return %y : tensor<6x72xf32>
}

// Causal GQA attention in bf16 (S = 77: a partial last key tile): Q K^T
// reads K's pairs (K^T's pair copy, made once before the flash loops).
func.func @attention(%qf: tensor<1x4x77x64xf32> {tfm.input = "q"},
                     %kf: tensor<1x2x77x64xf32> {tfm.input = "k"},
                     %vf: tensor<1x2x77x64xf32> {tfm.input = "v"})
    -> (tensor<1x4x77x64xf32> {tfm.output = "y"}) {
  %q = tfm.convert %qf : (tensor<1x4x77x64xf32>) -> tensor<1x4x77x64xbf16>
  %k = tfm.convert %kf : (tensor<1x2x77x64xf32>) -> tensor<1x2x77x64xbf16>
  %v = tfm.convert %vf : (tensor<1x2x77x64xf32>) -> tensor<1x2x77x64xbf16>
  %a = tfm.attention %q, %k, %v : (tensor<1x4x77x64xbf16>, tensor<1x2x77x64xbf16>, tensor<1x2x77x64xbf16>) -> tensor<1x4x77x64xbf16>
  %y = tfm.convert %a : (tensor<1x4x77x64xbf16>) -> tensor<1x4x77x64xf32>
  return %y : tensor<1x4x77x64xf32>
}
