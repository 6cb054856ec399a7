// RUN: --function=grid --input=1.5
// RUN: --function=grid_dyn --input=40 --input=30
// RUN: --function=grid_dyn --input=1 --input=1024
// RUN: --function=grid_dyn --input=1025 --input=1
// RUN: --function=long_vector --input="2000xi32=7"
// RUN: --function=two_big --input=0.001
// Results larger than iree-run-module's default --output_max_element_count
// (1024), so the printed text is elided ("..." and "[...]"): a static 48x64
// f32 grid, dynamic grids at and around the limit (1x1024, 1025x1, 40x30), a
// 2000-element i32 vector, and two large results where the count restarts per
// result.
module @large_output {
  func.func private @make_grid(%rows: index, %cols: index, %scale: f32) -> tensor<?x?xf32> {
    %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        outs(%e : tensor<?x?xf32>) {
      ^bb0(%o: f32):
        %i = linalg.index 0 : index
        %j = linalg.index 1 : index
        %k100 = arith.constant 100 : index
        %ii = arith.muli %i, %k100 : index
        %s = arith.addi %ii, %j : index
        %si = arith.index_cast %s : index to i32
        %sf = arith.sitofp %si : i32 to f32
        %v = arith.mulf %sf, %scale : f32
        linalg.yield %v : f32
    } -> tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }
  func.func @grid(%scale: f32) -> tensor<48x64xf32> {
    %c48 = arith.constant 48 : index
    %c64 = arith.constant 64 : index
    %g = call @make_grid(%c48, %c64, %scale) : (index, index, f32) -> tensor<?x?xf32>
    %r = tensor.cast %g : tensor<?x?xf32> to tensor<48x64xf32>
    return %r : tensor<48x64xf32>
  }
  func.func @grid_dyn(%rows: i32, %cols: i32) -> tensor<?x?xf32> {
    %one = arith.constant 1.0 : f32
    %r = arith.index_cast %rows : i32 to index
    %c = arith.index_cast %cols : i32 to index
    %g = call @make_grid(%r, %c, %one) : (index, index, f32) -> tensor<?x?xf32>
    return %g : tensor<?x?xf32>
  }
  func.func @long_vector(%x: tensor<2000xi32>) -> tensor<2000xi32> {
    %e = tensor.empty() : tensor<2000xi32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%x : tensor<2000xi32>) outs(%e : tensor<2000xi32>) {
      ^bb0(%v: i32, %o: i32):
        %i = linalg.index 0 : index
        %ii = arith.index_cast %i : index to i32
        %s = arith.muli %ii, %v : i32
        linalg.yield %s : i32
    } -> tensor<2000xi32>
    return %r : tensor<2000xi32>
  }
  func.func @two_big(%scale: f32) -> (tensor<1100xf32>, tensor<3x20x20xf32>) {
    %c1 = arith.constant 1 : index
    %c1100 = arith.constant 1100 : index
    %c60 = arith.constant 60 : index
    %c20 = arith.constant 20 : index
    %a = call @make_grid(%c1, %c1100, %scale) : (index, index, f32) -> tensor<?x?xf32>
    %b = call @make_grid(%c60, %c20, %scale) : (index, index, f32) -> tensor<?x?xf32>
    %as = tensor.cast %a : tensor<?x?xf32> to tensor<1x1100xf32>
    %bs = tensor.cast %b : tensor<?x?xf32> to tensor<60x20xf32>
    %af = tensor.collapse_shape %as [[0, 1]] : tensor<1x1100xf32> into tensor<1100xf32>
    %b3 = tensor.expand_shape %bs [[0, 1], [2]] output_shape [3, 20, 20] : tensor<60x20xf32> into tensor<3x20x20xf32>
    return %af, %b3 : tensor<1100xf32>, tensor<3x20x20xf32>
  }
}
