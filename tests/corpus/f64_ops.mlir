// COMPILE-FLAGS: --iree-input-demote-f64-to-f32=false
// RUN: --function=arith_f64 --input="4xf64=1e300 0.1 -2.5 3" --input="4xf64=1e10 0.2 1e-300 -7"
// RUN: --function=arith_f64 --input=4xf64=1.0000000001 --input=4xf64=-1
// RUN: --function=math_f64 --input="5xf64=0.5 1 2 10 100"
// RUN: --function=sum_f64 --input="3x4xf64=[[1 2 3 4][0.1 0.2 0.3 0.4][1e20 1 -1e20 1]]"
// f64 tensors in and out (compiled with f64 demotion off so the signatures stay
// f64): add/mul/div with values outside the f32 range, exp/log/sqrt/floor in f64 (f64 tanh
// does not link for llvm-cpu generic: undefined symbol tanh),
// and a row sum reduction.
module @f64_ops {
  func.func @arith_f64(%a: tensor<4xf64>, %b: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
    %s = arith.addf %a, %b : tensor<4xf64>
    %m = arith.mulf %a, %b : tensor<4xf64>
    %d = arith.divf %a, %b : tensor<4xf64>
    return %s, %m, %d : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
  }
  func.func @math_f64(%a: tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, tensor<5xf64>) {
    %e = math.exp %a : tensor<5xf64>
    %l = math.log %a : tensor<5xf64>
    %s = math.sqrt %a : tensor<5xf64>
    %t = math.floor %a : tensor<5xf64>
    return %e, %l, %s, %t : tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, tensor<5xf64>
  }
  func.func @sum_f64(%a: tensor<3x4xf64>) -> tensor<3xf64> {
    %zero = arith.constant 0.0 : f64
    %e = tensor.empty() : tensor<3xf64>
    %f = linalg.fill ins(%zero : f64) outs(%e : tensor<3xf64>) -> tensor<3xf64>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<3x4xf64>) outs(%f : tensor<3xf64>) {
      ^bb0(%x: f64, %acc: f64):
        %s = arith.addf %x, %acc : f64
        linalg.yield %s : f64
    } -> tensor<3xf64>
    return %r : tensor<3xf64>
  }
}
