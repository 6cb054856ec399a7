// RUN: --function=big --input="4xi64=9223372036854775807 -9223372036854775808 0x123456789 -1" --input="4xi64=1 2 0x10 -3000000000"
// RUN: --function=big --input=4xi64=4294967296 --input=4xi64=-7
// RUN: --function=prefix_sum --input="8xi64=1 2 3 4 5 6 7 8"
// RUN: --function=prefix_sum --input=8xi64=1000000000000
// RUN: --function=stats --input="2x3xi64=[[5 -9 12][100000000000 -100000000000 3]]"
// i64 tensors in and out: wrapping add/mul near the limits, signed div/rem
// (divisors nonzero), a prefix sum via scf.for + tensor.insert, rank-0 i64
// results (printed `i64=N`) and an i64 max reduction.
module @i64_ops {
  func.func @big(%a: tensor<4xi64>, %b: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
    %s = arith.addi %a, %b : tensor<4xi64>
    %m = arith.muli %a, %b : tensor<4xi64>
    %q = arith.divsi %a, %b : tensor<4xi64>
    %r = arith.remsi %a, %b : tensor<4xi64>
    return %s, %m, %q, %r : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
  }
  func.func @prefix_sum(%a: tensor<8xi64>) -> tensor<8xi64> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %z = arith.constant 0 : i64
    %init = tensor.empty() : tensor<8xi64>
    %res:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%out = %init, %acc = %z) -> (tensor<8xi64>, i64) {
      %x = tensor.extract %a[%i] : tensor<8xi64>
      %s = arith.addi %acc, %x : i64
      %o = tensor.insert %s into %out[%i] : tensor<8xi64>
      scf.yield %o, %s : tensor<8xi64>, i64
    }
    return %res#0 : tensor<8xi64>
  }
  func.func @stats(%a: tensor<2x3xi64>) -> (tensor<i64>, tensor<2xi64>) {
    %lo = arith.constant -9223372036854775808 : i64
    %z = arith.constant 0 : i64
    %e0 = tensor.empty() : tensor<i64>
    %f0 = linalg.fill ins(%z : i64) outs(%e0 : tensor<i64>) -> tensor<i64>
    %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%a : tensor<2x3xi64>) outs(%f0 : tensor<i64>) {
      ^bb0(%x: i64, %acc: i64):
        %s = arith.addi %x, %acc : i64
        linalg.yield %s : i64
    } -> tensor<i64>
    %e1 = tensor.empty() : tensor<2xi64>
    %f1 = linalg.fill ins(%lo : i64) outs(%e1 : tensor<2xi64>) -> tensor<2xi64>
    %mx = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<2x3xi64>) outs(%f1 : tensor<2xi64>) {
      ^bb0(%x: i64, %acc: i64):
        %m = arith.maxsi %x, %acc : i64
        linalg.yield %m : i64
    } -> tensor<2xi64>
    return %sum, %mx : tensor<i64>, tensor<2xi64>
  }
}
