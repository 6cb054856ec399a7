// RUN: --function=arith_f16 --input="6xf16=1 -2.5 65504 0.0001 3.14159 -0" --input="6xf16=0.5 4 2 0.0001 -1 0"
// RUN: --function=arith_f16 --input=6xf16=1.5 --input=6xf16=-0.25
// RUN: --function=exp_f16 --input="2x4xf16=[[0 1 -1 2][10 -10 0.5 11.5]]"
// RUN: --function=dot_f16 --input="16xf16=0.125" --input="16xf16=1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16"
// RUN: --function=bf16_round --input="4xbf16=1 3.14159 -1e30 0.1" --input="4xf32=1.00390625 1.01 -2.5 65504"
// f16 tensors in and out: add/mul/div with rounding and overflow to inf,
// math.exp in f16, and an f16 dot product accumulated in f32 then truncated;
// also bf16 in and out (bf16 + bf16, f32 -> bf16 rounding, bf16 -> f32).
module @f16_ops {
  func.func @arith_f16(%a: tensor<6xf16>, %b: tensor<6xf16>) -> (tensor<6xf16>, tensor<6xf16>, tensor<6xf16>) {
    %s = arith.addf %a, %b : tensor<6xf16>
    %m = arith.mulf %a, %b : tensor<6xf16>
    %d = arith.divf %a, %b : tensor<6xf16>
    return %s, %m, %d : tensor<6xf16>, tensor<6xf16>, tensor<6xf16>
  }
  func.func @exp_f16(%a: tensor<2x4xf16>) -> tensor<2x4xf16> {
    %r = math.exp %a : tensor<2x4xf16>
    return %r : tensor<2x4xf16>
  }
  func.func @dot_f16(%a: tensor<16xf16>, %b: tensor<16xf16>) -> (tensor<f16>, tensor<f32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%a, %b : tensor<16xf16>, tensor<16xf16>) outs(%f : tensor<f32>) {
      ^bb0(%x: f16, %y: f16, %acc: f32):
        %xw = arith.extf %x : f16 to f32
        %yw = arith.extf %y : f16 to f32
        %m = arith.mulf %xw, %yw : f32
        %s = arith.addf %m, %acc : f32
        linalg.yield %s : f32
    } -> tensor<f32>
    %h = arith.truncf %r : tensor<f32> to tensor<f16>
    return %h, %r : tensor<f16>, tensor<f32>
  }
  func.func @bf16_round(%a: tensor<4xbf16>, %b: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>) {
    %s = arith.addf %a, %a : tensor<4xbf16>
    %t = arith.truncf %b : tensor<4xf32> to tensor<4xbf16>
    %w = arith.extf %a : tensor<4xbf16> to tensor<4xf32>
    return %s, %t, %w : tensor<4xbf16>, tensor<4xbf16>, tensor<4xf32>
  }
}
