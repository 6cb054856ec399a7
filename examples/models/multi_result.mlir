// RUN-ARGS: --function=predict --input=16xi32=3 --input=16xf32=1.5
// Several results of mixed types: i32 and f32 tensors plus scalar-shaped reductions.
#id1 = affine_map<(i) -> (i)>
#red1 = affine_map<(i) -> ()>
module @multi_result {
  func.func @predict(%ints: tensor<16xi32>, %floats: tensor<16xf32>)
      -> (tensor<16xi32>, tensor<16xf32>, tensor<i32>, tensor<f32>) {
    %c0i = arith.constant 0 : i32
    %c2i = arith.constant 2 : i32
    %f0 = arith.constant 0.0 : f32
    %ei = tensor.empty() : tensor<16xi32>
    %ef = tensor.empty() : tensor<16xf32>
    %doubled = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%ints : tensor<16xi32>) outs(%ei : tensor<16xi32>) {
      ^bb0(%x: i32, %o: i32):
        %m = arith.muli %x, %c2i : i32
        linalg.yield %m : i32
    } -> tensor<16xi32>
    %scaled = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%floats, %ints : tensor<16xf32>, tensor<16xi32>) outs(%ef : tensor<16xf32>) {
      ^bb0(%x: f32, %i: i32, %o: f32):
        %fi = arith.sitofp %i : i32 to f32
        %m = arith.mulf %x, %fi : f32
        linalg.yield %m : f32
    } -> tensor<16xf32>
    %tie = tensor.empty() : tensor<i32>
    %tif = linalg.fill ins(%c0i : i32) outs(%tie : tensor<i32>) -> tensor<i32>
    %isum = linalg.generic {indexing_maps = [#id1, #red1], iterator_types = ["reduction"]}
        ins(%doubled : tensor<16xi32>) outs(%tif : tensor<i32>) {
      ^bb0(%x: i32, %acc: i32):
        %s = arith.addi %x, %acc : i32
        linalg.yield %s : i32
    } -> tensor<i32>
    %tfe = tensor.empty() : tensor<f32>
    %tff = linalg.fill ins(%f0 : f32) outs(%tfe : tensor<f32>) -> tensor<f32>
    %fmax = linalg.generic {indexing_maps = [#id1, #red1], iterator_types = ["reduction"]}
        ins(%scaled : tensor<16xf32>) outs(%tff : tensor<f32>) {
      ^bb0(%x: f32, %acc: f32):
        %m = arith.maximumf %x, %acc : f32
        linalg.yield %m : f32
    } -> tensor<f32>
    return %doubled, %scaled, %isum, %fmax : tensor<16xi32>, tensor<16xf32>, tensor<i32>, tensor<f32>
  }
}
