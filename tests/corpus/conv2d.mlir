// RUN: --function=conv3x3 --input=1x5x5x2xf32=1
// RUN: --function=conv3x3 --input="1x5x5x2xf32=[[[1 0][2 0][3 0][4 0][5 0]][[0 1][0 2][0 3][0 4][0 5]][[1 1][1 1][1 1][1 1][1 1]][[-1 2][-2 3][-3 4][-4 5][-5 6]][[0.5 0.5][0.5 0.5][0.5 0.5][0.5 0.5][0.5 0.5]]]"
// RUN: --function=conv_stride2_pad --input=2x6x6x1xf32=2 --input="3x3x1x2xf32=[[[[1 0]][[0 1]][[1 0]]][[[0 1]][[1 0]][[0 1]]][[[1 0]][[0 1]][[1 0]]]]"
// RUN: --function=depthwise_maxpool --input="1x4x4x2xf32=[[[1 -1][2 -2][3 -3][4 -4]][[5 -5][6 -6][7 -7][8 -8]][[9 -9][10 -10][11 -11][12 -12]][[13 -13][14 -14][15 -15][16 -16]]]"
// 2-D convolutions in NHWC: conv_2d_nhwc_hwcf with a constant 3x3x2x3 filter and
// bias+relu; a strided (2) conv with tensor.pad padding and a filter argument;
// depthwise_conv_2d_nhwc_hwc and pooling_nhwc_max.
module @conv2d {
  func.func @conv3x3(%img: tensor<1x5x5x2xf32>) -> tensor<1x3x3x3xf32> {
    %filter = arith.constant dense<[[[[1.0, 0.0, -1.0], [0.5, 0.25, 0.0]], [[0.0, 1.0, 0.0], [0.0, -0.5, 1.0]], [[-1.0, 0.0, 1.0], [0.25, 0.0, -0.25]]], [[[2.0, 0.0, -2.0], [0.0, 0.0, 0.0]], [[0.0, 2.0, 0.0], [1.0, 1.0, 1.0]], [[-2.0, 0.0, 2.0], [0.0, 0.0, 0.0]]], [[[1.0, 0.0, -1.0], [-0.5, -0.25, 0.0]], [[0.0, 1.0, 0.0], [0.0, 0.5, -1.0]], [[-1.0, 0.0, 1.0], [-0.25, 0.0, 0.25]]]]> : tensor<3x3x2x3xf32>
    %bias = arith.constant dense<[0.5, -8.0, 0.0]> : tensor<3xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1x3x3x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
    %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%img, %filter : tensor<1x5x5x2xf32>, tensor<3x3x2x3xf32>) outs(%f : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%c, %bias : tensor<1x3x3x3xf32>, tensor<3xf32>) outs(%e : tensor<1x3x3x3xf32>) {
      ^bb0(%x: f32, %b: f32, %o: f32):
        %s = arith.addf %x, %b : f32
        %m = arith.maximumf %s, %zero : f32
        linalg.yield %m : f32
    } -> tensor<1x3x3x3xf32>
    return %r : tensor<1x3x3x3xf32>
  }
  func.func @conv_stride2_pad(%img: tensor<2x6x6x1xf32>, %filter: tensor<3x3x1x2xf32>) -> tensor<2x3x3x2xf32> {
    %zero = arith.constant 0.0 : f32
    %p = tensor.pad %img low[0, 1, 1, 0] high[0, 1, 1, 0] {
      ^bb0(%i: index, %j: index, %k: index, %l: index):
        tensor.yield %zero : f32
    } : tensor<2x6x6x1xf32> to tensor<2x8x8x1xf32>
    %e = tensor.empty() : tensor<2x3x3x2xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x3x2xf32>) -> tensor<2x3x3x2xf32>
    %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
        ins(%p, %filter : tensor<2x8x8x1xf32>, tensor<3x3x1x2xf32>) outs(%f : tensor<2x3x3x2xf32>) -> tensor<2x3x3x2xf32>
    return %c : tensor<2x3x3x2xf32>
  }
  func.func @depthwise_maxpool(%img: tensor<1x4x4x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x2x2x2xf32>) {
    %filter = arith.constant dense<[[[1.0, 0.5], [-1.0, 0.5]], [[0.25, 0.5], [0.0, 0.5]]]> : tensor<2x2x2xf32>
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %e = tensor.empty() : tensor<1x3x3x2xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
    %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%img, %filter : tensor<1x4x4x2xf32>, tensor<2x2x2xf32>) outs(%f : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
    %win = tensor.empty() : tensor<2x2xf32>
    %pe = tensor.empty() : tensor<1x2x2x2xf32>
    %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    %mp = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
        ins(%img, %win : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%pf : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    return %d, %mp : tensor<1x3x3x2xf32>, tensor<1x2x2x2xf32>
  }
}
