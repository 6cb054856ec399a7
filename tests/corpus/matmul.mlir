// RUN: --function=matmul --input="2x3xf32=[[1 2 3][4 5 6]]" --input="3x4xf32=[[1 0 0 1][0 1 0 1][0 0 1 1]]"
// RUN: --function=matmul --input=2x3xf32=0.5 --input=3x4xf32=-2
// RUN: --function=batch_matmul --input="2x2x3xf32=[[[1 2 3][4 5 6]][[-1 0 1][0.5 0.5 0.5]]]" --input="2x3x2xf32=[[[1 2][3 4][5 6]][[1 1][2 2][3 3]]]"
// RUN: --function=matmul_dyn --input=5x3xf32=1 --input="3x2xf32=[1 2][3 4][5 6]"
// RUN: --function=matmul_dyn --input="1x1xf32=4" --input="1x6xf32=1 2 3 4 5 6"
// RUN: --function=matmul_i32 --input="2x2xi32=[[2 -3][4 5]]" --input="2x2xi32=[[0x10 1][-1 0]]"
// RUN: --function=mlp --input="2x8xf32=[1 2 3 4 5 6 7 8][-1 -0.5 0 0.5 1 1.5 2 2.5]"
// Matrix products: linalg.matmul f32 (static), linalg.batch_matmul,
// linalg.matmul with dynamic M/N/K (tensor<?x?xf32>), i32 matmul,
// and a two-layer MLP (matmul with a transposed-B generic, bias broadcast, relu).
module @matmul {
  func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
    %r = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    return %r : tensor<2x4xf32>
  }
  func.func @batch_matmul(%a: tensor<2x2x3xf32>, %b: tensor<2x3x2xf32>) -> tensor<2x2x2xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x2x2xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %r = linalg.batch_matmul ins(%a, %b : tensor<2x2x3xf32>, tensor<2x3x2xf32>) outs(%f : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    return %r : tensor<2x2x2xf32>
  }
  func.func @matmul_dyn(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %a, %c0 : tensor<?x?xf32>
    %n = tensor.dim %b, %c1 : tensor<?x?xf32>
    %e = tensor.empty(%m, %n) : tensor<?x?xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }
  func.func @matmul_i32(%a: tensor<2x2xi32>, %b: tensor<2x2xi32>) -> tensor<2x2xi32> {
    %zero = arith.constant 0 : i32
    %e = tensor.empty() : tensor<2x2xi32>
    %f = linalg.fill ins(%zero : i32) outs(%e : tensor<2x2xi32>) -> tensor<2x2xi32>
    %r = linalg.matmul ins(%a, %b : tensor<2x2xi32>, tensor<2x2xi32>) outs(%f : tensor<2x2xi32>) -> tensor<2x2xi32>
    return %r : tensor<2x2xi32>
  }
  func.func @mlp(%x: tensor<2x8xf32>) -> tensor<2x2xf32> {
    %w1 = arith.constant dense<[[0.5, -0.25, 0.125, 0.0, 1.0, -1.0, 0.75, 0.5], [0.25, 0.25, 0.25, 0.25, -0.25, -0.25, -0.25, -0.25], [1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0], [-0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5]]> : tensor<4x8xf32>
    %b1 = arith.constant dense<[0.1, -0.2, 0.3, -0.4]> : tensor<4xf32>
    %w2 = arith.constant dense<[[1.0, -1.0], [0.5, 0.5], [-0.25, 2.0], [0.125, -0.125]]> : tensor<4x2xf32>
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<2x4xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %h = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w1 : tensor<2x8xf32>, tensor<4x8xf32>) outs(%f1 : tensor<2x4xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
    } -> tensor<2x4xf32>
    %hr = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%h, %b1 : tensor<2x4xf32>, tensor<4xf32>) outs(%e1 : tensor<2x4xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %s = arith.addf %a, %b : f32
        %r = arith.maximumf %s, %zero : f32
        linalg.yield %r : f32
    } -> tensor<2x4xf32>
    %e2 = tensor.empty() : tensor<2x2xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x2xf32>) -> tensor<2x2xf32>
    %o = linalg.matmul ins(%hr, %w2 : tensor<2x4xf32>, tensor<4x2xf32>) outs(%f2 : tensor<2x2xf32>) -> tensor<2x2xf32>
    return %o : tensor<2x2xf32>
  }
}
