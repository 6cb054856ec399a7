// RUN: --function=embedding --input="5xi32=0 7 3 3 -2"
// RUN: --function=embedding --input=5xi32=100
// RUN: --function=gather_rows --input="6x3xf32=[[0 1 2][10 11 12][20 21 22][30 31 32][40 41 42][50 51 52]]" --input="4xi64=5 0 2 2"
// RUN: --function=take_along --input="3x4xi32=[[1 2 3 4][50 60 70 80][-1 -2 -3 -4]]" --input="3x2xi32=[[3 0][1 1][2 3]]"
// RUN: --function=gather_dyn --input="5xf16=0.5 1.5 2.5 3.5 4.5" --input="7xi32=4 3 2 1 0 9 -9"
// RUN: --function=gather_dyn --input="1xf16=-7" --input="3xi32=0 0 0"
// Gather-style indexing with tensor.extract inside linalg.generic: embedding
// lookup into a constant 8x4 table, row gather with i64 indices, per-row
// take-along-axis, and a gather on dynamic f16 data with indices clamped to
// the dynamic size (tensor.dim).
module @gather {
  func.func @embedding(%ids: tensor<5xi32>) -> tensor<5x4xf32> {
    %table = arith.constant dense<[[0.0, 0.1, 0.2, 0.3], [1.0, 1.1, 1.2, 1.3], [2.0, 2.1, 2.2, 2.3], [3.0, 3.1, 3.2, 3.3], [4.0, 4.1, 4.2, 4.3], [5.0, 5.1, 5.2, 5.3], [6.0, 6.1, 6.2, 6.3], [7.0, 7.1, 7.2, 7.3]]> : tensor<8x4xf32>
    %e = tensor.empty() : tensor<5x4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%ids : tensor<5xi32>) outs(%e : tensor<5x4xf32>) {
      ^bb0(%id: i32, %o: f32):
        %z = arith.constant 0 : i32
        %hi = arith.constant 7 : i32
        %c0 = arith.maxsi %id, %z : i32
        %c1 = arith.minsi %c0, %hi : i32
        %row = arith.index_cast %c1 : i32 to index
        %col = linalg.index 1 : index
        %v = tensor.extract %table[%row, %col] : tensor<8x4xf32>
        linalg.yield %v : f32
    } -> tensor<5x4xf32>
    return %r : tensor<5x4xf32>
  }
  func.func @gather_rows(%src: tensor<6x3xf32>, %idx: tensor<4xi64>) -> tensor<4x3xf32> {
    %e = tensor.empty() : tensor<4x3xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%idx : tensor<4xi64>) outs(%e : tensor<4x3xf32>) {
      ^bb0(%k: i64, %o: f32):
        %row = arith.index_cast %k : i64 to index
        %col = linalg.index 1 : index
        %v = tensor.extract %src[%row, %col] : tensor<6x3xf32>
        linalg.yield %v : f32
    } -> tensor<4x3xf32>
    return %r : tensor<4x3xf32>
  }
  func.func @take_along(%src: tensor<3x4xi32>, %idx: tensor<3x2xi32>) -> tensor<3x2xi32> {
    %e = tensor.empty() : tensor<3x2xi32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%idx : tensor<3x2xi32>) outs(%e : tensor<3x2xi32>) {
      ^bb0(%k: i32, %o: i32):
        %row = linalg.index 0 : index
        %col = arith.index_cast %k : i32 to index
        %v = tensor.extract %src[%row, %col] : tensor<3x4xi32>
        linalg.yield %v : i32
    } -> tensor<3x2xi32>
    return %r : tensor<3x2xi32>
  }
  func.func @gather_dyn(%src: tensor<?xf16>, %idx: tensor<?xi32>) -> tensor<?xf16> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %src, %c0 : tensor<?xf16>
    %m = tensor.dim %idx, %c0 : tensor<?xi32>
    %c1_idx = arith.constant 1 : index
    %nm1 = arith.subi %n, %c1_idx : index
    %e = tensor.empty(%m) : tensor<?xf16>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%idx : tensor<?xi32>) outs(%e : tensor<?xf16>) {
      ^bb0(%k: i32, %o: f16):
        %ki = arith.index_cast %k : i32 to index
        %lo = arith.maxsi %ki, %c0 : index
        %cl = arith.minsi %lo, %nm1 : index
        %v = tensor.extract %src[%cl] : tensor<?xf16>
        linalg.yield %v : f16
    } -> tensor<?xf16>
    return %r : tensor<?xf16>
  }
}
