// COMPILE-FLAGS: --iree-input-demote-f64-to-f32=false
// RUN: --function=bcast_rows --input="4xf32=1 2 3 4"
// RUN: --function=outer --input="3xf32=1 -1 0.5" --input="4xf32=1 2 3 4"
// RUN: --function=bias3d --input="2x3x4xi32=[[[0 0 0 0][1 1 1 1][2 2 2 2]][[3 3 3 3][4 4 4 4][5 5 5 5]]]" --input="3x1xi32=[[100][200][300]]" --input="4xi32=1 2 3 4"
// RUN: --function=scale_dyn_f64 --input="2x3xf64=[[1 2 3][4 5 6]]" --input=0.1
// RUN: --function=scale_dyn_f64 --input=4x3xf64=2 --input=-1e-300
// RUN: --function=fill_dyn --input=-9000000000 --input=3
// RUN: --function=fill_dyn --input=0x7fffffffffffffff --input=1
// RUN: --function=rank0_bcast --input=i64=-5 --input="3xi64=10 20 30"
// RUN: --function=rank0_bcast --input="i64=0x10" --input=3xi64=1
// Broadcasting: linalg.broadcast of a row, an outer product via indexing maps,
// a 3-D add of a size-1 dimension argument and a 1-D argument, an f64 scalar
// argument broadcast over a dynamic tensor<?x3xf64>, and linalg.fill of a
// dynamic i64 result from scalar arguments; a rank-0 tensor<i64> argument
// (input `i64=N`) broadcast against a 1-D tensor.
module @broadcast {
  func.func @bcast_rows(%v: tensor<4xf32>) -> tensor<3x4xf32> {
    %e = tensor.empty() : tensor<3x4xf32>
    %b = linalg.broadcast ins(%v : tensor<4xf32>) outs(%e : tensor<3x4xf32>) dimensions = [0]
    return %b : tensor<3x4xf32>
  }
  func.func @outer(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
    %e = tensor.empty() : tensor<3x4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : tensor<3xf32>, tensor<4xf32>) outs(%e : tensor<3x4xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %m = arith.mulf %x, %y : f32
        linalg.yield %m : f32
    } -> tensor<3x4xf32>
    return %r : tensor<3x4xf32>
  }
  func.func @bias3d(%x: tensor<2x3x4xi32>, %rb: tensor<3x1xi32>, %cb: tensor<4xi32>) -> tensor<2x3x4xi32> {
    %e = tensor.empty() : tensor<2x3x4xi32>
    %r = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, 0)>, affine_map<(b, i, j) -> (j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x, %rb, %cb : tensor<2x3x4xi32>, tensor<3x1xi32>, tensor<4xi32>) outs(%e : tensor<2x3x4xi32>) {
      ^bb0(%v: i32, %r1: i32, %c1: i32, %o: i32):
        %s = arith.addi %v, %r1 : i32
        %t = arith.muli %s, %c1 : i32
        linalg.yield %t : i32
    } -> tensor<2x3x4xi32>
    return %r : tensor<2x3x4xi32>
  }
  func.func @scale_dyn_f64(%x: tensor<?x3xf64>, %s: f64) -> tensor<?x3xf64> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x3xf64>
    %e = tensor.empty(%n) : tensor<?x3xf64>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<?x3xf64>) outs(%e : tensor<?x3xf64>) {
      ^bb0(%v: f64, %o: f64):
        %m = arith.mulf %v, %s : f64
        linalg.yield %m : f64
    } -> tensor<?x3xf64>
    return %r : tensor<?x3xf64>
  }
  func.func @fill_dyn(%v: i64, %n: i32) -> tensor<?xi64> {
    %ni = arith.index_cast %n : i32 to index
    %e = tensor.empty(%ni) : tensor<?xi64>
    %f = linalg.fill ins(%v : i64) outs(%e : tensor<?xi64>) -> tensor<?xi64>
    return %f : tensor<?xi64>
  }
  func.func @rank0_bcast(%s: tensor<i64>, %x: tensor<3xi64>) -> (tensor<3xi64>, tensor<i64>) {
    %e = tensor.empty() : tensor<3xi64>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%s, %x : tensor<i64>, tensor<3xi64>) outs(%e : tensor<3xi64>) {
      ^bb0(%a: i64, %b: i64, %o: i64):
        %m = arith.muli %a, %b : i64
        linalg.yield %m : i64
    } -> tensor<3xi64>
    %neg = arith.subi %s, %s : tensor<i64>
    %n2 = arith.subi %neg, %s : tensor<i64>
    return %r, %n2 : tensor<3xi64>, tensor<i64>
  }
}
