// RUN: --function=transcendental --input="6xf32=0.5 1 2 0.001 10 3.5"
// RUN: --function=transcendental --input=6xf32=0.75
// RUN: --function=rounding --input="8xf32=-2.5 -1.5 -0.5 0.5 1.5 2.5 -3.7 3.7"
// RUN: --function=pow_fma --input="4xf32=2 -3 0.5 10" --input="4xf32=3 2 0.5 -1" --input="4xf32=1 1 1 1"
// RUN: --function=trig --input="5xf32=0 0.5 1.5707964 3.1415927 -2"
// f32 math ops: exp, exp2, log, log2, log1p, tanh, sqrt, rsqrt; floor, ceil,
// round, roundeven, absf, copysign, negf (math.trunc does not link for
// llvm-cpu generic: undefined symbol truncf); powf, fpowi (integer
// exponent), fma, remf, minimumf/maximumf; sin, cos, erf, atan2.
module @float_math {
  func.func @transcendental(%a: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
    %e = math.exp %a : tensor<6xf32>
    %e2 = math.exp2 %a : tensor<6xf32>
    %l = math.log %a : tensor<6xf32>
    %l2 = math.log2 %a : tensor<6xf32>
    %l1p = math.log1p %a : tensor<6xf32>
    %t = math.tanh %a : tensor<6xf32>
    %s = math.sqrt %a : tensor<6xf32>
    %rs = math.rsqrt %a : tensor<6xf32>
    return %e, %e2, %l, %l2, %l1p, %t, %s, %rs : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
  }
  func.func @rounding(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %fl = math.floor %a : tensor<8xf32>
    %ce = math.ceil %a : tensor<8xf32>
    %ro = math.round %a : tensor<8xf32>
    %re = math.roundeven %a : tensor<8xf32>
    %tr = math.copysign %fl, %a : tensor<8xf32>
    %ab = math.absf %a : tensor<8xf32>
    %ng = arith.negf %a : tensor<8xf32>
    return %fl, %ce, %ro, %re, %tr, %ab, %ng : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
  func.func @pow_fma(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %ab = math.absf %a : tensor<4xf32>
    %p = math.powf %ab, %b : tensor<4xf32>
    %bi = arith.fptosi %b : tensor<4xf32> to tensor<4xi32>
    %pi = math.fpowi %a, %bi : tensor<4xf32>, tensor<4xi32>
    %f = math.fma %a, %b, %c : tensor<4xf32>
    %r = arith.remf %a, %b : tensor<4xf32>
    %mn = arith.minimumf %a, %b : tensor<4xf32>
    %mx = arith.maximumf %a, %b : tensor<4xf32>
    %cs = math.copysign %c, %a : tensor<4xf32>
    return %p, %pi, %f, %r, %mn, %mx, %cs : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  func.func @trig(%a: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
    %s = math.sin %a : tensor<5xf32>
    %c = math.cos %a : tensor<5xf32>
    %e = math.erf %a : tensor<5xf32>
    %one = arith.constant dense<1.0> : tensor<5xf32>
    %at = math.atan2 %a, %one : tensor<5xf32>
    return %s, %c, %e, %at : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
  }
}
