// RUN: --function=sums --input="3x4xf32=[[1 2 3 4][5 6 7 8][9 10 11 12]]"
// RUN: --function=sums --input=3x4xf32=-0.5
// RUN: --function=max_argmax --input="3x5xf32=[[1 9 3 9 0][-5 -4 -3 -2 -1][0.5 0.25 2 1 -7]]"
// RUN: --function=max_argmax --input=3x5xf32=1
// RUN: --function=min_prod_i32 --input="2x3x4xi32=[[[1 2 3 4][-1 -2 -3 -4][5 5 5 5]][[7 0 -7 1][2 2 2 2][100 -100 3 3]]]"
// RUN: --function=mean_total --input="2x8xf32=[1 2 3 4 5 6 7 8][0.125 0.25 0.375 0.5 0.625 0.75 0.875 1]"
// Reductions: sum along axis 0 and axis 1, max and argmax (value + i32 index,
// first index wins on ties) along the last axis, i32 min along the middle axis
// and product along the last axis of a 3-D tensor, row means and a full
// reduction returned as an f32 scalar (tensor.extract).
#m2 = affine_map<(i, j) -> (i, j)>
#r1 = affine_map<(i, j) -> (i)>
#r0 = affine_map<(i, j) -> (j)>
module @reductions {
  func.func @sums(%a: tensor<3x4xf32>) -> (tensor<4xf32>, tensor<3xf32>) {
    %zero = arith.constant 0.0 : f32
    %e4 = tensor.empty() : tensor<4xf32>
    %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
    %s0 = linalg.generic {indexing_maps = [#m2, #r0], iterator_types = ["reduction", "parallel"]}
        ins(%a : tensor<3x4xf32>) outs(%f4 : tensor<4xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
    } -> tensor<4xf32>
    %e3 = tensor.empty() : tensor<3xf32>
    %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
    %s1 = linalg.reduce ins(%a : tensor<3x4xf32>) outs(%f3 : tensor<3xf32>) dimensions = [1]
      (%x: f32, %acc: f32) {
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
      }
    return %s0, %s1 : tensor<4xf32>, tensor<3xf32>
  }
  func.func @max_argmax(%a: tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0 : i32
    %ev = tensor.empty() : tensor<3xf32>
    %ei = tensor.empty() : tensor<3xi32>
    %fv = linalg.fill ins(%ninf : f32) outs(%ev : tensor<3xf32>) -> tensor<3xf32>
    %fi = linalg.fill ins(%zero : i32) outs(%ei : tensor<3xi32>) -> tensor<3xi32>
    %r:2 = linalg.generic {indexing_maps = [#m2, #r1, #r1], iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<3x5xf32>) outs(%fv, %fi : tensor<3xf32>, tensor<3xi32>) {
      ^bb0(%x: f32, %best: f32, %bi: i32):
        %j = linalg.index 1 : index
        %ji = arith.index_cast %j : index to i32
        %gt = arith.cmpf ogt, %x, %best : f32
        %nv = arith.select %gt, %x, %best : f32
        %ni = arith.select %gt, %ji, %bi : i32
        linalg.yield %nv, %ni : f32, i32
    } -> (tensor<3xf32>, tensor<3xi32>)
    return %r#0, %r#1 : tensor<3xf32>, tensor<3xi32>
  }
  func.func @min_prod_i32(%a: tensor<2x3x4xi32>) -> (tensor<2x4xi32>, tensor<2x3xi32>) {
    %big = arith.constant 2147483647 : i32
    %one = arith.constant 1 : i32
    %e0 = tensor.empty() : tensor<2x4xi32>
    %f0 = linalg.fill ins(%big : i32) outs(%e0 : tensor<2x4xi32>) -> tensor<2x4xi32>
    %mn = linalg.reduce ins(%a : tensor<2x3x4xi32>) outs(%f0 : tensor<2x4xi32>) dimensions = [1]
      (%x: i32, %acc: i32) {
        %m = arith.minsi %x, %acc : i32
        linalg.yield %m : i32
      }
    %e1 = tensor.empty() : tensor<2x3xi32>
    %f1 = linalg.fill ins(%one : i32) outs(%e1 : tensor<2x3xi32>) -> tensor<2x3xi32>
    %pr = linalg.reduce ins(%a : tensor<2x3x4xi32>) outs(%f1 : tensor<2x3xi32>) dimensions = [2]
      (%x: i32, %acc: i32) {
        %m = arith.muli %x, %acc : i32
        linalg.yield %m : i32
      }
    return %mn, %pr : tensor<2x4xi32>, tensor<2x3xi32>
  }
  func.func @mean_total(%a: tensor<2x8xf32>) -> (tensor<2xf32>, f32) {
    %zero = arith.constant 0.0 : f32
    %n = arith.constant 8.0 : f32
    %e = tensor.empty() : tensor<2xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
    %s = linalg.reduce ins(%a : tensor<2x8xf32>) outs(%f : tensor<2xf32>) dimensions = [1]
      (%x: f32, %acc: f32) {
        %t = arith.addf %x, %acc : f32
        linalg.yield %t : f32
      }
    %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%s : tensor<2xf32>) outs(%e : tensor<2xf32>) {
      ^bb0(%x: f32, %o: f32):
        %d = arith.divf %x, %n : f32
        linalg.yield %d : f32
    } -> tensor<2xf32>
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %tot = linalg.reduce ins(%a : tensor<2x8xf32>) outs(%f0 : tensor<f32>) dimensions = [0, 1]
      (%x: f32, %acc: f32) {
        %t = arith.addf %x, %acc : f32
        linalg.yield %t : f32
      }
    %tv = tensor.extract %tot[] : tensor<f32>
    return %mean, %tv : tensor<2xf32>, f32
  }
}
