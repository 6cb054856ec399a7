// RUN-ARGS: --function=predict --input=128xf32=2 --input=128xf32=3
// Dynamic shapes: scaled sum of two tensor<?xf32> plus a dynamic-size reduction.
#id1 = affine_map<(i) -> (i)>
#red1 = affine_map<(i) -> ()>
module @dynamic {
  func.func @predict(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<f32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %n = tensor.dim %a, %c0 : tensor<?xf32>
    %e = tensor.empty(%n) : tensor<?xf32>
    %sum = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %s = arith.addf %x, %y : f32
        %m = arith.mulf %s, %half : f32
        linalg.yield %m : f32
    } -> tensor<?xf32>
    %te = tensor.empty() : tensor<f32>
    %tf = linalg.fill ins(%zero : f32) outs(%te : tensor<f32>) -> tensor<f32>
    %total = linalg.generic {indexing_maps = [#id1, #red1], iterator_types = ["reduction"]}
        ins(%sum : tensor<?xf32>) outs(%tf : tensor<f32>) {
      ^bb0(%x: f32, %acc: f32):
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
    } -> tensor<f32>
    return %sum, %total : tensor<?xf32>, tensor<f32>
  }
}
