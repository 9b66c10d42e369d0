// Four 1 EiB weights and a 1 EiB result: representable, more than any
// machine has.
func.func @forward(%a: tensor<288230376151711744xf32> {tfm.param = "a"},
                   %b: tensor<288230376151711744xf32> {tfm.param = "b"},
                   %c: tensor<288230376151711744xf32> {tfm.param = "c"},
                   %d: tensor<288230376151711744xf32> {tfm.param = "d"})
    -> (tensor<288230376151711744xf32> {tfm.output = "y"}) {
  return %a : tensor<288230376151711744xf32>
}
