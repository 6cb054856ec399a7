// RUN-ARGS: --function=predict --input=32xf32=1
// scf.for loop running a few iterations of an elementwise update (several dispatches).
module @loop {
  func.func @predict(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %k = arith.constant dense<0.5> : tensor<32xf32>
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (tensor<32xf32>) {
      %m = arith.mulf %acc, %k : tensor<32xf32>
      %s = arith.addf %m, %x : tensor<32xf32>
      %t = math.tanh %s : tensor<32xf32>
      scf.yield %t : tensor<32xf32>
    }
    return %r : tensor<32xf32>
  }
}
