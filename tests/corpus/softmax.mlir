// RUN: --function=softmax --input="2x4xf32=[1 2 3 4][-1 0 1 1000]"
// RUN: --function=softmax --input=2x4xf32=0
// RUN: --function=softmax_op --input="3x5xf32=[[0.5 1 1.5 2 2.5][-3 -3 -3 -3 10][100 -100 0 1 2]]"
// RUN: --function=log_softmax_dyn --input="2x3xf32=[1 2 3][0 0 0]"
// RUN: --function=log_softmax_dyn --input="1x7xf32=0.1 0.2 0.3 0.4 0.5 0.6 0.7"
// Softmax: a numerically stable softmax written with linalg.generic (row max,
// exp, sum, divide), the linalg.softmax op on a 3x5 tensor, and a log-softmax
// on a tensor<?x?xf32> with both dimensions dynamic.
#m2 = affine_map<(i, j) -> (i, j)>
#r1 = affine_map<(i, j) -> (i)>
module @softmax {
  func.func @softmax(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %er = tensor.empty() : tensor<2xf32>
    %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %mx = linalg.generic {indexing_maps = [#m2, #r1], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<2x4xf32>) outs(%fm : tensor<2xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %m = arith.maximumf %a, %acc : f32
        linalg.yield %m : f32
    } -> tensor<2xf32>
    %e = tensor.empty() : tensor<2x4xf32>
    %ex = linalg.generic {indexing_maps = [#m2, #r1, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %mx : tensor<2x4xf32>, tensor<2xf32>) outs(%e : tensor<2x4xf32>) {
      ^bb0(%a: f32, %m: f32, %o: f32):
        %d = arith.subf %a, %m : f32
        %v = math.exp %d : f32
        linalg.yield %v : f32
    } -> tensor<2x4xf32>
    %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
    %sum = linalg.generic {indexing_maps = [#m2, #r1], iterator_types = ["parallel", "reduction"]}
        ins(%ex : tensor<2x4xf32>) outs(%fs : tensor<2xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
    } -> tensor<2xf32>
    %r = linalg.generic {indexing_maps = [#m2, #r1, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%ex, %sum : tensor<2x4xf32>, tensor<2xf32>) outs(%e : tensor<2x4xf32>) {
      ^bb0(%a: f32, %s: f32, %o: f32):
        %v = arith.divf %a, %s : f32
        linalg.yield %v : f32
    } -> tensor<2x4xf32>
    return %r : tensor<2x4xf32>
  }
  func.func @softmax_op(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %e = tensor.empty() : tensor<3x5xf32>
    %r = linalg.softmax dimension(1) ins(%x : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
    return %r : tensor<3x5xf32>
  }
  func.func @log_softmax_dyn(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %n = tensor.dim %x, %c0 : tensor<?x?xf32>
    %m = tensor.dim %x, %c1 : tensor<?x?xf32>
    %er = tensor.empty(%n) : tensor<?xf32>
    %fm = linalg.fill ins(%ninf : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
    %mx = linalg.generic {indexing_maps = [#m2, #r1], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<?x?xf32>) outs(%fm : tensor<?xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %v = arith.maximumf %a, %acc : f32
        linalg.yield %v : f32
    } -> tensor<?xf32>
    %fs = linalg.fill ins(%zero : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
    %sum = linalg.generic {indexing_maps = [#m2, #r1, #r1], iterator_types = ["parallel", "reduction"]}
        ins(%x, %mx : tensor<?x?xf32>, tensor<?xf32>) outs(%fs : tensor<?xf32>) {
      ^bb0(%a: f32, %mm: f32, %acc: f32):
        %d = arith.subf %a, %mm : f32
        %v = math.exp %d : f32
        %s = arith.addf %v, %acc : f32
        linalg.yield %s : f32
    } -> tensor<?xf32>
    %e = tensor.empty(%n, %m) : tensor<?x?xf32>
    %r = linalg.generic {indexing_maps = [#m2, #r1, #r1, #m2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %mx, %sum : tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
      ^bb0(%a: f32, %mm: f32, %s: f32, %o: f32):
        %d = arith.subf %a, %mm : f32
        %l = math.log %s : f32
        %v = arith.subf %d, %l : f32
        linalg.yield %v : f32
    } -> tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }
}
