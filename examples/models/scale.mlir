// RUN-ARGS: --function=predict --input=16xf32=1.5 --input=2.5 --input=3
// Scalar arguments and a scalar result: a vector scaled by s, and n times its element count.
module @scale {
  func.func @predict(%x: tensor<16xf32>, %s: f32, %n: i32) -> (tensor<16xf32>, i32) {
    %init = tensor.empty() : tensor<16xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]}
        ins(%x : tensor<16xf32>) outs(%init : tensor<16xf32>) {
      ^bb0(%a: f32, %out: f32):
        %m = arith.mulf %a, %s : f32
        linalg.yield %m : f32
    } -> tensor<16xf32>
    %c16 = arith.constant 16 : i32
    %k = arith.muli %n, %c16 : i32
    return %y, %k : tensor<16xf32>, i32
  }
}
