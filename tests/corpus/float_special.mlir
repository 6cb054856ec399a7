// RUN: --function=specials --input="6xf32=1 -1 0 -0 inf nan" --input="6xf32=0 0 0 1 -inf 2"
// RUN: --function=specials --input="6xf32=1e38 -1e38 1e-38 -1e-45 3.4e38 1.5e20" --input="6xf32=10 10 1e-10 2 0.5 1e20"
// RUN: --function=tiny_huge --input="5xf32=1e-7 5e-6 123456789 0.000123456 -1.00026e30"
// RUN: --function=nan_compare --input="4xf32=nan 1 -inf 0" --input="4xf32=1 nan -inf -0"
// Special float values and printing: inf/-inf/nan/-0 results (division by zero,
// 0/0, overflow), denormals, %G formatting of tiny and huge values, ordered vs
// unordered comparisons and maximumf/maxnumf with NaN. Inputs use the strtof
// tokens inf, -inf, nan, -0. Inputs below the f32 normal range (1e-38,
// -1e-45) come out as 0 / -0 (denormals are flushed to zero on this path).
// Compiled with the default flags on purpose: f64 demotion is on, so the
// tensor<5xf64> result of tiny_huge is an f32 result in the module (iree-compile
// prints a warning about the changed signature).
module @float_special {
  func.func @specials(%a: tensor<6xf32>, %b: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
    %d = arith.divf %a, %b : tensor<6xf32>
    %m = arith.mulf %a, %b : tensor<6xf32>
    %s = arith.subf %a, %b : tensor<6xf32>
    return %d, %m, %s : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
  }
  func.func @tiny_huge(%a: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf16>, tensor<5xf64>) {
    %k = arith.constant dense<[1.0, 2.0, 3.0, 1.0e-30, 1.0e10]> : tensor<5xf32>
    %m = arith.mulf %a, %k : tensor<5xf32>
    %h = arith.truncf %a : tensor<5xf32> to tensor<5xf16>
    %w = arith.extf %a : tensor<5xf32> to tensor<5xf64>
    return %m, %h, %w : tensor<5xf32>, tensor<5xf16>, tensor<5xf64>
  }
  func.func @nan_compare(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) {
    %oeq = arith.cmpf oeq, %a, %b : tensor<4xf32>
    %ueq = arith.cmpf ueq, %a, %b : tensor<4xf32>
    %uno = arith.cmpf uno, %a, %b : tensor<4xf32>
    %mx = arith.maximumf %a, %b : tensor<4xf32>
    %mn = arith.maxnumf %a, %b : tensor<4xf32>
    return %oeq, %ueq, %uno, %mx, %mn : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
  }
}
