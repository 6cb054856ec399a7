// RUN: --function=scale_rows --input="3x4xf32=[1 2 3 4][5 6 7 8][-1 -2 -3 -4]" --input="3xf32=2 0.5 -1"
// RUN: --function=scale_rows --input=1x4xf32=7 --input=1xf32=3
// RUN: --function=scale_rows --input=0x4xf32= --input=0xf32=
// RUN: --function=dims --input="2x3xi32=[[1 2 3][4 5 6]]"
// RUN: --function=dims --input="5x1xi32=[10][20][30][40][50]"
// RUN: --function=sum_cols --input="2x5xf32=[0.5 1 1.5 2 2.5][-1 -1 -1 -1 -1]"
// RUN: --function=sum_cols --input=7x3xf32=0.25
// RUN: --function=iota --input=5 --input=3
// RUN: --function=iota --input=0x0c --input=-2
// RUN: --function=concat_dyn --input="2xi64=1 2" --input="3xi64=30 40 50"
// Dynamic shapes: tensor<?x4xf32> and tensor<?x?xi32> arguments and results of
// several sizes (including an empty 0x4 tensor), tensor.dim returned as i64
// scalars, a dynamic reduction, a result whose size comes from a scalar
// argument (iota via linalg.index), and tensor.insert_slice into a dynamic
// concatenation.
module @dynamic_shapes {
  func.func @scale_rows(%a: tensor<?x4xf32>, %s: tensor<?xf32>) -> tensor<?x4xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %a, %c0 : tensor<?x4xf32>
    %e = tensor.empty(%n) : tensor<?x4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%a, %s : tensor<?x4xf32>, tensor<?xf32>) outs(%e : tensor<?x4xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %m = arith.mulf %x, %y : f32
        linalg.yield %m : f32
    } -> tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  }
  func.func @dims(%a: tensor<?x?xi32>) -> (i64, i64, tensor<?x?xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %d0 = tensor.dim %a, %c0 : tensor<?x?xi32>
    %d1 = tensor.dim %a, %c1 : tensor<?x?xi32>
    %e = tensor.empty(%d1, %d0) : tensor<?x?xi32>
    %t = linalg.transpose ins(%a : tensor<?x?xi32>) outs(%e : tensor<?x?xi32>) permutation = [1, 0]
    %i0 = arith.index_cast %d0 : index to i64
    %i1 = arith.index_cast %d1 : index to i64
    return %i0, %i1, %t : i64, i64, tensor<?x?xi32>
  }
  func.func @sum_cols(%a: tensor<?x?xf32>) -> tensor<?xf32> {
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %a, %c1 : tensor<?x?xf32>
    %e = tensor.empty(%n) : tensor<?xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
        ins(%a : tensor<?x?xf32>) outs(%f : tensor<?xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
    } -> tensor<?xf32>
    return %r : tensor<?xf32>
  }
  func.func @iota(%n: i32, %step: i32) -> tensor<?xi32> {
    %ni = arith.index_cast %n : i32 to index
    %e = tensor.empty(%ni) : tensor<?xi32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        outs(%e : tensor<?xi32>) {
      ^bb0(%o: i32):
        %i = linalg.index 0 : index
        %ii = arith.index_cast %i : index to i32
        %v = arith.muli %ii, %step : i32
        linalg.yield %v : i32
    } -> tensor<?xi32>
    return %r : tensor<?xi32>
  }
  func.func @concat_dyn(%a: tensor<?xi64>, %b: tensor<?xi64>) -> tensor<?xi64> {
    %c0 = arith.constant 0 : index
    %na = tensor.dim %a, %c0 : tensor<?xi64>
    %nb = tensor.dim %b, %c0 : tensor<?xi64>
    %n = arith.addi %na, %nb : index
    %e = tensor.empty(%n) : tensor<?xi64>
    %r0 = tensor.insert_slice %a into %e[0] [%na] [1] : tensor<?xi64> into tensor<?xi64>
    %r1 = tensor.insert_slice %b into %r0[%na] [%nb] [1] : tensor<?xi64> into tensor<?xi64>
    return %r1 : tensor<?xi64>
  }
}
