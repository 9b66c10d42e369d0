// A Llama MLP and residual whose GEMMs run on AMX tiles where the host has
// them (M = 64, d = 256, hidden 704 = 5.5 blocks of 128 columns: blocks of
// 64), nn.Linear ([out, in]) weights, K = 704 for the down projection (K
// blocks of 352 at most: 32-deep steps): x + down(silu(gate(x)) * up(x)).
func.func @mlp(%x: tensor<1x64x256xf32> {tfm.input = "hidden"},
               %gate_w: tensor<704x256xf32> {tfm.param = "mlp.gate_proj.weight"},
               %up_w: tensor<704x256xf32> {tfm.param = "mlp.up_proj.weight"},
               %down_w: tensor<256x704xf32> {tfm.param = "mlp.down_proj.weight"})
    -> (tensor<1x64x256xf32> {tfm.output = "hidden"}) {
  %g = tfm.linear %x, %gate_w {layout = #tfm.layout<out_in>}
      : (tensor<1x64x256xf32>, tensor<704x256xf32>) -> tensor<1x64x704xf32>
  %u = tfm.linear %x, %up_w {layout = #tfm.layout<out_in>}
      : (tensor<1x64x256xf32>, tensor<704x256xf32>) -> tensor<1x64x704xf32>
  %h = tfm.swiglu %g, %u
      : (tensor<1x64x704xf32>, tensor<1x64x704xf32>) -> tensor<1x64x704xf32>
  %d = tfm.linear %h, %down_w {layout = #tfm.layout<out_in>}
      : (tensor<1x64x704xf32>, tensor<256x704xf32>) -> tensor<1x64x256xf32>
  %y = tfm.residual_add %x, %d
      : (tensor<1x64x256xf32>, tensor<1x64x256xf32>) -> tensor<1x64x256xf32>
  return %y : tensor<1x64x256xf32>
}
