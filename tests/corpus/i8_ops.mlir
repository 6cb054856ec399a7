// RUN: --function=wrap_add_mul --input="8xi8=100 -128 127 0x10 -1 255 0 7" --input="8xi8=100 -1 1 0x10 -1 1 0 -9"
// RUN: --function=wrap_add_mul --input=8xi8=-7 --input=8xi8=0x7f
// RUN: --function=qmatmul --input="2x4xi8=[1 -2 3 -4][127 -128 0 5]" --input="4x3xi8=[1 2 3][-1 -2 -3][4 5 6][-7 -8 127]"
// RUN: --function=row_max --input="3x4xi8=[[-5 -3 -9 -128][1 2 3 4][100 -100 0x7f 0]]"
// i8 tensors in and out: wrapping add/mul/negate, an i8 x i8 -> i32 matmul
// (quantized style), and a signed max reduction along the last axis. Inputs
// use hex tokens and 255 (which i8 parses as -1).
module @i8_ops {
  func.func @wrap_add_mul(%a: tensor<8xi8>, %b: tensor<8xi8>) -> (tensor<8xi8>, tensor<8xi8>, tensor<8xi8>) {
    %zero = arith.constant dense<0> : tensor<8xi8>
    %s = arith.addi %a, %b : tensor<8xi8>
    %m = arith.muli %a, %b : tensor<8xi8>
    %n = arith.subi %zero, %a : tensor<8xi8>
    return %s, %m, %n : tensor<8xi8>, tensor<8xi8>, tensor<8xi8>
  }
  func.func @qmatmul(%a: tensor<2x4xi8>, %b: tensor<4x3xi8>) -> tensor<2x3xi32> {
    %zero = arith.constant 0 : i32
    %e = tensor.empty() : tensor<2x3xi32>
    %f = linalg.fill ins(%zero : i32) outs(%e : tensor<2x3xi32>) -> tensor<2x3xi32>
    %r = linalg.matmul ins(%a, %b : tensor<2x4xi8>, tensor<4x3xi8>) outs(%f : tensor<2x3xi32>) -> tensor<2x3xi32>
    return %r : tensor<2x3xi32>
  }
  func.func @row_max(%a: tensor<3x4xi8>) -> tensor<3xi8> {
    %lo = arith.constant -128 : i8
    %e = tensor.empty() : tensor<3xi8>
    %f = linalg.fill ins(%lo : i8) outs(%e : tensor<3xi8>) -> tensor<3xi8>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<3x4xi8>) outs(%f : tensor<3xi8>) {
      ^bb0(%x: i8, %acc: i8):
        %m = arith.maxsi %x, %acc : i8
        linalg.yield %m : i8
    } -> tensor<3xi8>
    return %r : tensor<3xi8>
  }
}
