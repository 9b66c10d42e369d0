// A module may carry `tfm.param_rounded` itself (e.g. saved after the GPU
// pipeline's signature stage): it belongs on a float parameter. Elsewhere it
// is refused before anything is bound or compiled, naming the argument.
// RUN: not transformer-runner %s --random-weights 1 --entry on_input 2>&1 | FileCheck %s --check-prefix=INPUT
// RUN: not transformer-runner %s --random-weights 1 --entry on_integer 2>&1 | FileCheck %s --check-prefix=INTEGER
// INPUT: error: argument #0 ('x') of @on_input: tfm.param_rounded needs tfm.param and a float argument
// INTEGER: error: argument #0 ('table') of @on_integer: tfm.param_rounded needs tfm.param and a float argument

func.func @on_input(%x: tensor<4xf16> {tfm.input = "x", tfm.param_rounded})
    -> (tensor<4xf16> {tfm.output = "y"}) {
  return %x : tensor<4xf16>
}

func.func @on_integer(%t: tensor<4xi64> {tfm.param = "table", tfm.param_rounded})
    -> (tensor<4xi64> {tfm.output = "y"}) {
  return %t : tensor<4xi64>
}
