// RUN: --function=layernorm --input="2x8xf32=[1 2 3 4 5 6 7 8][-4 -2 0 2 4 6 8 10]"
// RUN: --function=layernorm --input=2x8xf32=3.5
// RUN: --function=layernorm_affine --input="3x4xf32=[[0.5 -0.5 1.5 -1.5][10 20 30 40][1 1 1 2]]" --input="4xf32=1 2 0.5 -1" --input="4xf32=0 0.1 -0.1 1"
// RUN: --function=rms_norm_f16 --input="2x4xf16=[[1 2 3 4][-0.5 0.25 0 2]]"
// Normalization: layer norm over the last axis (mean, variance, rsqrt with
// epsilon) returning the normalized tensor plus per-row mean and variance; layer
// norm with gamma/beta arguments; an RMS norm on f16 computed in f32.
#m2 = affine_map<(i, j) -> (i, j)>
#r1 = affine_map<(i, j) -> (i)>
#c1 = affine_map<(i, j) -> (j)>
module @layernorm {
  func.func private @stats(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %x, %c0 : tensor<?x?xf32>
    %m = tensor.dim %x, %c1 : tensor<?x?xf32>
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %er = tensor.empty(%n) : tensor<?xf32>
    %f = linalg.fill ins(%zero : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
    %sum = linalg.generic {indexing_maps = [#m2, #r1], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<?x?xf32>) outs(%f : tensor<?xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
    } -> tensor<?xf32>
    %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%sum : tensor<?xf32>) outs(%er : tensor<?xf32>) {
      ^bb0(%a: f32, %o: f32):
        %d = arith.divf %a, %mf : f32
        linalg.yield %d : f32
    } -> tensor<?xf32>
    %sq = linalg.generic {indexing_maps = [#m2, #r1, #r1], iterator_types = ["parallel", "reduction"]}
        ins(%x, %mean : tensor<?x?xf32>, tensor<?xf32>) outs(%f : tensor<?xf32>) {
      ^bb0(%a: f32, %mu: f32, %acc: f32):
        %d = arith.subf %a, %mu : f32
        %d2 = arith.mulf %d, %d : f32
        %s = arith.addf %d2, %acc : f32
        linalg.yield %s : f32
    } -> tensor<?xf32>
    %var = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%sq : tensor<?xf32>) outs(%er : tensor<?xf32>) {
      ^bb0(%a: f32, %o: f32):
        %d = arith.divf %a, %mf : f32
        linalg.yield %d : f32
    } -> tensor<?xf32>
    return %mean, %var : tensor<?xf32>, tensor<?xf32>
  }
  func.func @layernorm(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32>) {
    %eps = arith.constant 1.0e-5 : f32
    %xd = tensor.cast %x : tensor<2x8xf32> to tensor<?x?xf32>
    %st:2 = call @stats(%xd) : (tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
    %mean = tensor.cast %st#0 : tensor<?xf32> to tensor<2xf32>
    %var = tensor.cast %st#1 : tensor<?xf32> to tensor<2xf32>
    %e = tensor.empty() : tensor<2x8xf32>
    %r = linalg.generic {indexing_maps = [#m2, #r1, #r1, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %mean, %var : tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2x8xf32>) {
      ^bb0(%a: f32, %mu: f32, %v: f32, %o: f32):
        %d = arith.subf %a, %mu : f32
        %ve = arith.addf %v, %eps : f32
        %rs = math.rsqrt %ve : f32
        %y = arith.mulf %d, %rs : f32
        linalg.yield %y : f32
    } -> tensor<2x8xf32>
    return %r, %mean, %var : tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32>
  }
  func.func @layernorm_affine(%x: tensor<3x4xf32>, %gamma: tensor<4xf32>, %beta: tensor<4xf32>) -> tensor<3x4xf32> {
    %eps = arith.constant 1.0e-5 : f32
    %xd = tensor.cast %x : tensor<3x4xf32> to tensor<?x?xf32>
    %st:2 = call @stats(%xd) : (tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
    %mean = tensor.cast %st#0 : tensor<?xf32> to tensor<3xf32>
    %var = tensor.cast %st#1 : tensor<?xf32> to tensor<3xf32>
    %e = tensor.empty() : tensor<3x4xf32>
    %r = linalg.generic {indexing_maps = [#m2, #r1, #r1, #c1, #c1, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %mean, %var, %gamma, %beta : tensor<3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<3x4xf32>) {
      ^bb0(%a: f32, %mu: f32, %v: f32, %g: f32, %b: f32, %o: f32):
        %d = arith.subf %a, %mu : f32
        %ve = arith.addf %v, %eps : f32
        %sd = math.sqrt %ve : f32
        %y = arith.divf %d, %sd : f32
        %yg = arith.mulf %y, %g : f32
        %yb = arith.addf %yg, %b : f32
        linalg.yield %yb : f32
    } -> tensor<3x4xf32>
    return %r : tensor<3x4xf32>
  }
  func.func @rms_norm_f16(%x: tensor<2x4xf16>) -> tensor<2x4xf16> {
    %zero = arith.constant 0.0 : f32
    %eps = arith.constant 1.0e-6 : f32
    %four = arith.constant 4.0 : f32
    %er = tensor.empty() : tensor<2xf32>
    %f = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %ss = linalg.generic {indexing_maps = [#m2, #r1], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<2x4xf16>) outs(%f : tensor<2xf32>) {
      ^bb0(%a: f16, %acc: f32):
        %w = arith.extf %a : f16 to f32
        %sq = arith.mulf %w, %w : f32
        %s = arith.addf %sq, %acc : f32
        linalg.yield %s : f32
    } -> tensor<2xf32>
    %e = tensor.empty() : tensor<2x4xf16>
    %r = linalg.generic {indexing_maps = [#m2, #r1, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %ss : tensor<2x4xf16>, tensor<2xf32>) outs(%e : tensor<2x4xf16>) {
      ^bb0(%a: f16, %s: f32, %o: f16):
        %ms = arith.divf %s, %four : f32
        %me = arith.addf %ms, %eps : f32
        %rs = math.rsqrt %me : f32
        %w = arith.extf %a : f16 to f32
        %y = arith.mulf %w, %rs : f32
        %h = arith.truncf %y : f32 to f16
        linalg.yield %h : f16
    } -> tensor<2x4xf16>
    return %r : tensor<2x4xf16>
  }
}
