// RUN-ARGS: --function=add --input=4x8xf32=1 --input=4x8xf32=2
// Several exported elementwise/reduction functions.
#id2 = affine_map<(i, j) -> (i, j)>
#red = affine_map<(i, j) -> (i)>
module @elementwise {
  func.func @add(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %r = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %s = arith.addf %x, %y : f32
        linalg.yield %s : f32
    } -> tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
  func.func @mul(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %r = arith.mulf %a, %b : tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
  func.func @mul_add(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %r = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b, %c : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
      ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
        %m = arith.mulf %x, %y : f32
        %s = arith.addf %m, %z : f32
        linalg.yield %s : f32
    } -> tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
  func.func @row_sum(%a: tensor<4x8xf32>) -> tensor<4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
