// RUN: --function=transpose2d --input="2x3xf32=[[1 2 3][4 5 6]]"
// RUN: --function=permute3d --input="2x3x4xi32=[[[0 1 2 3][4 5 6 7][8 9 10 11]][[12 13 14 15][16 17 18 19][20 21 22 23]]]"
// RUN: --function=reshapes --input="2x6xf32=[0 1 2 3 4 5][6 7 8 9 10 11]"
// RUN: --function=expand_dyn --input="8xf32=1 2 3 4 5 6 7 8"
// RUN: --function=expand_dyn --input=12xf32=-1.25
// RUN: --function=collapse_dyn --input="3x3xi16=[[1 2 3][4 5 6][7 8 9]]"
// RUN: --function=collapse_dyn --input="1x3xi16=[-1 -2 -3]"
// RUN: --function=transpose_collapse_f64 --input="2x2x3xf64=[[[1 2 3][4 5 6]][[7 8 9][10 11 12]]]"
// Layout ops: linalg.transpose (2-D and a 3-D permutation [2, 0, 1]),
// tensor.collapse_shape / tensor.expand_shape with static shapes, expand_shape
// with a dynamic output_shape and collapse_shape of a dynamic tensor, and a
// transpose followed by a collapse on f64 (f64 kept by COMPILE-FLAGS).
// COMPILE-FLAGS: --iree-input-demote-f64-to-f32=false
module @transpose_reshape {
  func.func @transpose2d(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
    %e = tensor.empty() : tensor<3x2xf32>
    %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
    return %t : tensor<3x2xf32>
  }
  func.func @permute3d(%a: tensor<2x3x4xi32>) -> tensor<4x2x3xi32> {
    %e = tensor.empty() : tensor<4x2x3xi32>
    %t = linalg.transpose ins(%a : tensor<2x3x4xi32>) outs(%e : tensor<4x2x3xi32>) permutation = [2, 0, 1]
    return %t : tensor<4x2x3xi32>
  }
  func.func @reshapes(%a: tensor<2x6xf32>) -> (tensor<12xf32>, tensor<3x4xf32>, tensor<2x3x2xf32>, tensor<1x12x1xf32>) {
    %flat = tensor.collapse_shape %a [[0, 1]] : tensor<2x6xf32> into tensor<12xf32>
    %m = tensor.expand_shape %flat [[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
    %c = tensor.expand_shape %a [[0], [1, 2]] output_shape [2, 3, 2] : tensor<2x6xf32> into tensor<2x3x2xf32>
    %u = tensor.expand_shape %flat [[0, 1, 2]] output_shape [1, 12, 1] : tensor<12xf32> into tensor<1x12x1xf32>
    return %flat, %m, %c, %u : tensor<12xf32>, tensor<3x4xf32>, tensor<2x3x2xf32>, tensor<1x12x1xf32>
  }
  func.func @expand_dyn(%a: tensor<?xf32>) -> tensor<?x4xf32> {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %n = tensor.dim %a, %c0 : tensor<?xf32>
    %rows = arith.divui %n, %c4 : index
    %r = tensor.expand_shape %a [[0, 1]] output_shape [%rows, 4] : tensor<?xf32> into tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  }
  func.func @collapse_dyn(%a: tensor<?x3xi16>) -> tensor<?xi16> {
    %r = tensor.collapse_shape %a [[0, 1]] : tensor<?x3xi16> into tensor<?xi16>
    return %r : tensor<?xi16>
  }
  func.func @transpose_collapse_f64(%a: tensor<2x2x3xf64>) -> tensor<3x4xf64> {
    %e = tensor.empty() : tensor<3x2x2xf64>
    %t = linalg.transpose ins(%a : tensor<2x2x3xf64>) outs(%e : tensor<3x2x2xf64>) permutation = [2, 1, 0]
    %r = tensor.collapse_shape %t [[0], [1, 2]] : tensor<3x2x2xf64> into tensor<3x4xf64>
    return %r : tensor<3x4xf64>
  }
}
