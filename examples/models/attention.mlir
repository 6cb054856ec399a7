// RUN-ARGS: --function=predict --input=8x16xf32=0.25 --input=8x16xf32=0.5 --input=8x16xf32=1
// One attention block: softmax(Q K^T * scale) V for seq=8, head_dim=16.
#qk_q = affine_map<(i, j, k) -> (i, k)>
#qk_k = affine_map<(i, j, k) -> (j, k)>
#qk_s = affine_map<(i, j, k) -> (i, j)>
#row2 = affine_map<(i, j) -> (i, j)>
#red2 = affine_map<(i, j) -> (i)>
module @attention {
  func.func @predict(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %scale = arith.constant 0.25 : f32
    // scores = Q K^T
    %se = tensor.empty() : tensor<8x8xf32>
    %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<8x8xf32>) -> tensor<8x8xf32>
    %scores = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%q, %k : tensor<8x16xf32>, tensor<8x16xf32>) outs(%sf : tensor<8x8xf32>) {
      ^bb0(%a: f32, %b: f32, %acc: f32):
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %m : f32
        linalg.yield %s : f32
    } -> tensor<8x8xf32>
    // row max
    %re = tensor.empty() : tensor<8xf32>
    %mf = linalg.fill ins(%ninf : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
    %rmax = linalg.generic {indexing_maps = [#row2, #red2], iterator_types = ["parallel", "reduction"]}
        ins(%scores : tensor<8x8xf32>) outs(%mf : tensor<8xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %sa = arith.mulf %a, %scale : f32
        %m = arith.maximumf %sa, %acc : f32
        linalg.yield %m : f32
    } -> tensor<8xf32>
    // exp(x*scale - max)
    %exps = linalg.generic {indexing_maps = [#row2, #red2, #row2], iterator_types = ["parallel", "parallel"]}
        ins(%scores, %rmax : tensor<8x8xf32>, tensor<8xf32>) outs(%se : tensor<8x8xf32>) {
      ^bb0(%a: f32, %m: f32, %o: f32):
        %sa = arith.mulf %a, %scale : f32
        %d = arith.subf %sa, %m : f32
        %e = math.exp %d : f32
        linalg.yield %e : f32
    } -> tensor<8x8xf32>
    // row sum
    %zf = linalg.fill ins(%zero : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
    %rsum = linalg.generic {indexing_maps = [#row2, #red2], iterator_types = ["parallel", "reduction"]}
        ins(%exps : tensor<8x8xf32>) outs(%zf : tensor<8xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
    } -> tensor<8xf32>
    // normalize
    %probs = linalg.generic {indexing_maps = [#row2, #red2, #row2], iterator_types = ["parallel", "parallel"]}
        ins(%exps, %rsum : tensor<8x8xf32>, tensor<8xf32>) outs(%se : tensor<8x8xf32>) {
      ^bb0(%a: f32, %s: f32, %o: f32):
        %d = arith.divf %a, %s : f32
        linalg.yield %d : f32
    } -> tensor<8x8xf32>
    // out = P V
    %oe = tensor.empty() : tensor<8x16xf32>
    %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<8x16xf32>) -> tensor<8x16xf32>
    %out = linalg.matmul ins(%probs, %v : tensor<8x8xf32>, tensor<8x16xf32>) outs(%of : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %out : tensor<8x16xf32>
  }
}
