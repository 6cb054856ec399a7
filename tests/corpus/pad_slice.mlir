// RUN: --function=pad --input="2x3xf32=[1 2 3][4 5 6]" --input=-1.5
// RUN: --function=pad_dyn --input="3xi32=7 8 9" --input=2 --input=1
// RUN: --function=pad_dyn --input="1xi32=5" --input=0 --input=4
// RUN: --function=slices --input="4x5xf32=[[0 1 2 3 4][10 11 12 13 14][20 21 22 23 24][30 31 32 33 34]]"
// RUN: --function=slice_dyn --input="10xi64=0 1 2 3 4 5 6 7 8 9" --input=3 --input=4
// RUN: --function=slice_dyn --input="10xi64=0 1 2 3 4 5 6 7 8 9" --input=0 --input=10
// RUN: --function=insert --input="4x4xi8=0" --input="2x2xi8=[[1 2][3 4]]" --input=1 --input=2
// tensor.pad (static low/high with a scalar-argument pad value; dynamic
// amounts from i32 arguments), tensor.extract_slice (static offsets, strides
// 2, rank-reducing; dynamic offset and size), tensor.insert_slice at a dynamic
// position.
module @pad_slice {
  func.func @pad(%a: tensor<2x3xf32>, %v: f32) -> tensor<4x6xf32> {
    %p = tensor.pad %a low[1, 2] high[1, 1] {
      ^bb0(%i: index, %j: index):
        tensor.yield %v : f32
    } : tensor<2x3xf32> to tensor<4x6xf32>
    return %p : tensor<4x6xf32>
  }
  func.func @pad_dyn(%a: tensor<?xi32>, %lo: i32, %hi: i32) -> tensor<?xi32> {
    %z = arith.constant 0 : i32
    %l = arith.index_cast %lo : i32 to index
    %h = arith.index_cast %hi : i32 to index
    %p = tensor.pad %a low[%l] high[%h] {
      ^bb0(%i: index):
        tensor.yield %z : i32
    } : tensor<?xi32> to tensor<?xi32>
    return %p : tensor<?xi32>
  }
  func.func @slices(%a: tensor<4x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<5xf32>, tensor<4xf32>) {
    %s0 = tensor.extract_slice %a[1, 1] [2, 3] [1, 1] : tensor<4x5xf32> to tensor<2x3xf32>
    %s1 = tensor.extract_slice %a[0, 0] [2, 3] [2, 2] : tensor<4x5xf32> to tensor<2x3xf32>
    %row = tensor.extract_slice %a[2, 0] [1, 5] [1, 1] : tensor<4x5xf32> to tensor<5xf32>
    %col = tensor.extract_slice %a[0, 4] [4, 1] [1, 1] : tensor<4x5xf32> to tensor<4xf32>
    return %s0, %s1, %row, %col : tensor<2x3xf32>, tensor<2x3xf32>, tensor<5xf32>, tensor<4xf32>
  }
  func.func @slice_dyn(%a: tensor<10xi64>, %off: i32, %len: i32) -> tensor<?xi64> {
    %o = arith.index_cast %off : i32 to index
    %l = arith.index_cast %len : i32 to index
    %s = tensor.extract_slice %a[%o] [%l] [1] : tensor<10xi64> to tensor<?xi64>
    return %s : tensor<?xi64>
  }
  func.func @insert(%dst: tensor<4x4xi8>, %src: tensor<2x2xi8>, %r: i32, %c: i32) -> tensor<4x4xi8> {
    %ri = arith.index_cast %r : i32 to index
    %ci = arith.index_cast %c : i32 to index
    %o = tensor.insert_slice %src into %dst[%ri, %ci] [2, 2] [1, 1] : tensor<2x2xi8> into tensor<4x4xi8>
    return %o : tensor<4x4xi8>
  }
}
