// COMPILE-FLAGS: --iree-input-demote-f64-to-f32=false
// RUN: --function=from_i1 --input="4xi1=01 00 01 00"
// RUN: --function=from_i8 --input="4xi8=-128 -1 0x7f 6"
// RUN: --function=from_i8 --input=4xi8=0xff
// RUN: --function=from_i16 --input="4xi16=-32768 -1 2049 0"
// RUN: --function=from_i32 --input="4xi32=-2147483648 -1 16777217 0x3f800000"
// RUN: --function=from_i64 --input="4xi64=-9223372036854775808 -1 0x100000001 4607182418800017408"
// RUN: --function=from_f16 --input="4xf16=-100.75 0 2.5 100.5"
// RUN: --function=from_f32 --input="4xf32=-100.75 0 2.5 127.9"
// RUN: --function=from_f32 --input=4xf32=-0.5
// RUN: --function=from_f64 --input="4xf64=-100.75 0 1e-9 3.14159265358979"
// Casts between every ordered pair of i1, i8, i16, i32, i64, f16, f32, f64:
// one export per source type returning its conversion to each other type
// (extsi/extui, trunci, cmpi/cmpf ne 0 for i1, sitofp/uitofp, fptosi/fptoui,
// extf/truncf), plus arith.bitcast between same-width int/float types.
// Float inputs are in range of every integer target (fptoui gets |x|).
module @casts {
  func.func @from_i1(%a: tensor<4xi1>) -> (tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>) {
    %to_i8 = arith.extui %a : tensor<4xi1> to tensor<4xi8>
    %to_i16 = arith.extui %a : tensor<4xi1> to tensor<4xi16>
    %to_i32 = arith.extui %a : tensor<4xi1> to tensor<4xi32>
    %to_i64 = arith.extui %a : tensor<4xi1> to tensor<4xi64>
    %to_f16 = arith.uitofp %a : tensor<4xi1> to tensor<4xf16>
    %to_f32 = arith.uitofp %a : tensor<4xi1> to tensor<4xf32>
    %to_f64 = arith.uitofp %a : tensor<4xi1> to tensor<4xf64>
    return %to_i8, %to_i16, %to_i32, %to_i64, %to_f16, %to_f32, %to_f64 : tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>
  }
  func.func @from_i8(%a: tensor<4xi8>) -> (tensor<4xi1>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>) {
    %to_i1 = arith.trunci %a : tensor<4xi8> to tensor<4xi1>
    %to_i16 = arith.extsi %a : tensor<4xi8> to tensor<4xi16>
    %to_i32 = arith.extsi %a : tensor<4xi8> to tensor<4xi32>
    %to_i64 = arith.extsi %a : tensor<4xi8> to tensor<4xi64>
    %to_f16 = arith.sitofp %a : tensor<4xi8> to tensor<4xf16>
    %to_f32 = arith.uitofp %a : tensor<4xi8> to tensor<4xf32>
    %to_f64 = arith.sitofp %a : tensor<4xi8> to tensor<4xf64>
    return %to_i1, %to_i16, %to_i32, %to_i64, %to_f16, %to_f32, %to_f64 : tensor<4xi1>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>
  }
  func.func @from_i16(%a: tensor<4xi16>) -> (tensor<4xi1>, tensor<4xi8>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>, tensor<4xf16>) {
    %zero_i16 = arith.constant dense<0> : tensor<4xi16>
    %to_i1 = arith.cmpi ne, %a, %zero_i16 : tensor<4xi16>
    %to_i8 = arith.trunci %a : tensor<4xi16> to tensor<4xi8>
    %to_i32 = arith.extsi %a : tensor<4xi16> to tensor<4xi32>
    %to_i64 = arith.extui %a : tensor<4xi16> to tensor<4xi64>
    %to_f16 = arith.sitofp %a : tensor<4xi16> to tensor<4xf16>
    %to_f32 = arith.sitofp %a : tensor<4xi16> to tensor<4xf32>
    %to_f64 = arith.uitofp %a : tensor<4xi16> to tensor<4xf64>
    %bits = arith.bitcast %a : tensor<4xi16> to tensor<4xf16>
    return %to_i1, %to_i8, %to_i32, %to_i64, %to_f16, %to_f32, %to_f64, %bits : tensor<4xi1>, tensor<4xi8>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>, tensor<4xf16>
  }
  func.func @from_i32(%a: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>) {
    %to_i1 = arith.trunci %a : tensor<4xi32> to tensor<4xi1>
    %to_i8 = arith.trunci %a : tensor<4xi32> to tensor<4xi8>
    %to_i16 = arith.trunci %a : tensor<4xi32> to tensor<4xi16>
    %to_i64 = arith.extui %a : tensor<4xi32> to tensor<4xi64>
    %to_f16 = arith.sitofp %a : tensor<4xi32> to tensor<4xf16>
    %to_f32 = arith.sitofp %a : tensor<4xi32> to tensor<4xf32>
    %to_f64 = arith.sitofp %a : tensor<4xi32> to tensor<4xf64>
    %bits = arith.bitcast %a : tensor<4xi32> to tensor<4xf32>
    return %to_i1, %to_i8, %to_i16, %to_i64, %to_f16, %to_f32, %to_f64, %bits : tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>
  }
  func.func @from_i64(%a: tensor<4xi64>) -> (tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>, tensor<4xf64>) {
    %zero_i64 = arith.constant dense<0> : tensor<4xi64>
    %to_i1 = arith.cmpi ne, %a, %zero_i64 : tensor<4xi64>
    %to_i8 = arith.trunci %a : tensor<4xi64> to tensor<4xi8>
    %to_i16 = arith.trunci %a : tensor<4xi64> to tensor<4xi16>
    %to_i32 = arith.trunci %a : tensor<4xi64> to tensor<4xi32>
    %to_f16 = arith.sitofp %a : tensor<4xi64> to tensor<4xf16>
    %to_f32 = arith.uitofp %a : tensor<4xi64> to tensor<4xf32>
    %to_f64 = arith.sitofp %a : tensor<4xi64> to tensor<4xf64>
    %bits = arith.bitcast %a : tensor<4xi64> to tensor<4xf64>
    return %to_i1, %to_i8, %to_i16, %to_i32, %to_f16, %to_f32, %to_f64, %bits : tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf64>, tensor<4xf64>
  }
  func.func @from_f16(%a: tensor<4xf16>) -> (tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf64>, tensor<4xi16>) {
    %zero_f16 = arith.constant dense<0.0> : tensor<4xf16>
    %to_i1 = arith.cmpf une, %a, %zero_f16 : tensor<4xf16>
    %to_i8 = arith.fptosi %a : tensor<4xf16> to tensor<4xi8>
    %to_i16 = arith.fptosi %a : tensor<4xf16> to tensor<4xi16>
    %abs_f16 = math.absf %a : tensor<4xf16>
    %to_i32 = arith.fptoui %abs_f16 : tensor<4xf16> to tensor<4xi32>
    %to_i64 = arith.fptosi %a : tensor<4xf16> to tensor<4xi64>
    %to_f32 = arith.extf %a : tensor<4xf16> to tensor<4xf32>
    %to_f64 = arith.extf %a : tensor<4xf16> to tensor<4xf64>
    %bits = arith.bitcast %a : tensor<4xf16> to tensor<4xi16>
    return %to_i1, %to_i8, %to_i16, %to_i32, %to_i64, %to_f32, %to_f64, %bits : tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf64>, tensor<4xi16>
  }
  func.func @from_f32(%a: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf64>, tensor<4xi32>) {
    %zero_f32 = arith.constant dense<0.0> : tensor<4xf32>
    %to_i1 = arith.cmpf une, %a, %zero_f32 : tensor<4xf32>
    %to_i8 = arith.fptosi %a : tensor<4xf32> to tensor<4xi8>
    %to_i16 = arith.fptosi %a : tensor<4xf32> to tensor<4xi16>
    %to_i32 = arith.fptosi %a : tensor<4xf32> to tensor<4xi32>
    %abs_f32 = math.absf %a : tensor<4xf32>
    %to_i64 = arith.fptoui %abs_f32 : tensor<4xf32> to tensor<4xi64>
    %to_f16 = arith.truncf %a : tensor<4xf32> to tensor<4xf16>
    %to_f64 = arith.extf %a : tensor<4xf32> to tensor<4xf64>
    %bits = arith.bitcast %a : tensor<4xf32> to tensor<4xi32>
    return %to_i1, %to_i8, %to_i16, %to_i32, %to_i64, %to_f16, %to_f64, %bits : tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf64>, tensor<4xi32>
  }
  func.func @from_f64(%a: tensor<4xf64>) -> (tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xi64>) {
    %zero_f64 = arith.constant dense<0.0> : tensor<4xf64>
    %to_i1 = arith.cmpf une, %a, %zero_f64 : tensor<4xf64>
    %to_i8 = arith.fptosi %a : tensor<4xf64> to tensor<4xi8>
    %to_i16 = arith.fptosi %a : tensor<4xf64> to tensor<4xi16>
    %to_i32 = arith.fptosi %a : tensor<4xf64> to tensor<4xi32>
    %to_i64 = arith.fptosi %a : tensor<4xf64> to tensor<4xi64>
    %to_f16 = arith.truncf %a : tensor<4xf64> to tensor<4xf16>
    %to_f32 = arith.truncf %a : tensor<4xf64> to tensor<4xf32>
    %bits = arith.bitcast %a : tensor<4xf64> to tensor<4xi64>
    return %to_i1, %to_i8, %to_i16, %to_i32, %to_i64, %to_f16, %to_f32, %bits : tensor<4xi1>, tensor<4xi8>, tensor<4xi16>, tensor<4xi32>, tensor<4xi64>, tensor<4xf16>, tensor<4xf32>, tensor<4xi64>
  }
}
