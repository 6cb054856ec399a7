// COMPILE-FLAGS: --iree-input-demote-f64-to-f32=false
// RUN: --function=add_i32 --input=7 --input=-12
// RUN: --function=add_i32 --input=0x7fffffff --input=1
// RUN: --function=add_i32 --input=010 --input=(ignored)
// RUN: --function=mul_i64 --input=4000000000 --input=-3
// RUN: --function=mul_i64 --input=0x100000000 --input=0x10
// RUN: --function=fma_f32 --input=1.5 --input=-2.25 --input=0.125
// RUN: --function=fma_f32 --input=1e-7 --input=3e20 --input=-inf
// RUN: --function=div_f64 --input=1 --input=3
// RUN: --function=div_f64 --input=-2.5e300 --input=1e-5
// RUN: --function=mixed --input=3 --input=1000000000000 --input=0.5 --input=0.25
// RUN: --function=scalar_and_tensor --input="4xf32=1 2 3 4" --input=2.5
// RUN: --function=constant_scalars
// RUN: --function=select_i32 --input=1 --input=5 --input=9
// RUN: --function=select_i32 --input=0 --input=5 --input=9
// Scalar (non-tensor) arguments and results of every scalar type:
// i32 ('i' cconv), i64 ('I'), f32 ('f'), f64 ('F'); a mix of scalar and
// tensor arguments/results; an export with no arguments; an i1 scalar argument.
module @scalars {
  func.func @add_i32(%a: i32, %b: i32) -> i32 {
    %r = arith.addi %a, %b : i32
    return %r : i32
  }
  func.func @mul_i64(%a: i64, %b: i64) -> i64 {
    %r = arith.muli %a, %b : i64
    return %r : i64
  }
  func.func @fma_f32(%a: f32, %b: f32, %c: f32) -> f32 {
    %r = math.fma %a, %b, %c : f32
    return %r : f32
  }
  func.func @div_f64(%a: f64, %b: f64) -> f64 {
    %r = arith.divf %a, %b : f64
    return %r : f64
  }
  func.func @mixed(%a: i32, %b: i64, %c: f32, %d: f64) -> (f64, i64, f32, i32) {
    %a64 = arith.extsi %a : i32 to i64
    %s = arith.addi %a64, %b : i64
    %cd = arith.extf %c : f32 to f64
    %p = arith.mulf %cd, %d : f64
    %bf = arith.sitofp %b : i64 to f32
    %q = arith.addf %bf, %c : f32
    %n = arith.trunci %b : i64 to i32
    %m = arith.subi %n, %a : i32
    return %p, %s, %q, %m : f64, i64, f32, i32
  }
  func.func @scalar_and_tensor(%t: tensor<4xf32>, %k: f32) -> (tensor<4xf32>, f32) {
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%x: f32, %o: f32):
        %m = arith.mulf %x, %k : f32
        linalg.yield %m : f32
    } -> tensor<4xf32>
    %c2 = arith.constant 2 : index
    %x2 = tensor.extract %r[%c2] : tensor<4xf32>
    return %r, %x2 : tensor<4xf32>, f32
  }
  func.func @constant_scalars() -> (i32, i64, f32, f64) {
    %a = arith.constant -42 : i32
    %b = arith.constant 9007199254740993 : i64
    %c = arith.constant 3.14159274 : f32
    %d = arith.constant 2.718281828459045 : f64
    return %a, %b, %c, %d : i32, i64, f32, f64
  }
  func.func @select_i32(%p: i1, %a: i32, %b: i32) -> i32 {
    %r = arith.select %p, %a, %b : i32
    return %r : i32
  }
}
