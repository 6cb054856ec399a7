// COMPILE-FLAGS: --iree-input-demote-f64-to-f32=false
// RUN: --function=abs_or_double --input=-21
// RUN: --function=abs_or_double --input=21
// RUN: --function=choose --input=1 --input="2x2xf32=[1 2][3 4]" --input="2x2xf32=[10 20][30 40]"
// RUN: --function=choose --input=0 --input="2x2xf32=[1 2][3 4]" --input="2x2xf32=[10 20][30 40]"
// RUN: --function=on_extract --input="4xf32=5 1 2 3"
// RUN: --function=on_extract --input="4xf32=-1 0 0.5 1"
// RUN: --function=classify --input=-3.5
// RUN: --function=classify --input=0
// RUN: --function=classify --input=0.001
// RUN: --function=classify --input=1e100
// RUN: --function=sign_of_sum --input="5xf32=1 -2 3 -4 5"
// RUN: --function=sign_of_sum --input="3xf32=-1 -1 0.5"
// scf.if with data-dependent branches: on scalar i32/f64 arguments (nested
// if/else chains returning a category), selecting between two tensor
// computations on an i32 flag, and on values read with tensor.extract from a
// tensor argument and from a reduction result (dynamic shape).
// classify: for x > 0 the i32 result comes back as the low 32 bits of the f64
// result (IREE 3.13.0 bytecode: the two branch operands of the merge block
// alias in the VM register file); iree-run-module prints that, so it is kept
// as a bit-exact VM conformance case. x <= 0 gives the expected -1 / 0.
module @scf_if {
  func.func @abs_or_double(%x: i32) -> i32 {
    %zero = arith.constant 0 : i32
    %neg = arith.cmpi slt, %x, %zero : i32
    %r = scf.if %neg -> (i32) {
      %n = arith.subi %zero, %x : i32
      scf.yield %n : i32
    } else {
      %d = arith.addi %x, %x : i32
      scf.yield %d : i32
    }
    return %r : i32
  }
  func.func @choose(%flag: i32, %a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %zero = arith.constant 0 : i32
    %c = arith.cmpi ne, %flag, %zero : i32
    %r = scf.if %c -> (tensor<2x2xf32>) {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<2x2xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
      %m = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
      scf.yield %m : tensor<2x2xf32>
    } else {
      %s = arith.subf %b, %a : tensor<2x2xf32>
      scf.yield %s : tensor<2x2xf32>
    }
    return %r : tensor<2x2xf32>
  }
  func.func @on_extract(%t: tensor<4xf32>) -> (tensor<4xf32>, f32) {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %first = tensor.extract %t[%c0] : tensor<4xf32>
    %last = tensor.extract %t[%c3] : tensor<4xf32>
    %gt = arith.cmpf ogt, %first, %last : f32
    %r:2 = scf.if %gt -> (tensor<4xf32>, f32) {
      %e = tensor.empty() : tensor<4xf32>
      %rev = linalg.generic {indexing_maps = [affine_map<(i) -> (3 - i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
          ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
        ^bb0(%x: f32, %o: f32):
          linalg.yield %x : f32
      } -> tensor<4xf32>
      scf.yield %rev, %first : tensor<4xf32>, f32
    } else {
      %ex = math.exp %t : tensor<4xf32>
      scf.yield %ex, %last : tensor<4xf32>, f32
    }
    return %r#0, %r#1 : tensor<4xf32>, f32
  }
  func.func @classify(%x: f64) -> (i32, f64) {
    %zero = arith.constant 0.0 : f64
    %one = arith.constant 1.0 : f64
    %neg = arith.cmpf olt, %x, %zero : f64
    %r:2 = scf.if %neg -> (i32, f64) {
      %c = arith.constant -1 : i32
      %n = arith.negf %x : f64
      scf.yield %c, %n : i32, f64
    } else {
      %isz = arith.cmpf oeq, %x, %zero : f64
      %in:2 = scf.if %isz -> (i32, f64) {
        %c = arith.constant 0 : i32
        scf.yield %c, %zero : i32, f64
      } else {
        %small = arith.cmpf olt, %x, %one : f64
        %c1 = arith.constant 1 : i32
        %c2 = arith.constant 2 : i32
        %c = arith.select %small, %c1, %c2 : i32
        %l = math.log %x : f64
        scf.yield %c, %l : i32, f64
      }
      scf.yield %in#0, %in#1 : i32, f64
    }
    return %r#0, %r#1 : i32, f64
  }
  func.func @sign_of_sum(%t: tensor<?xf32>) -> (tensor<?xf32>, tensor<f32>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %sum = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%t : tensor<?xf32>) outs(%f0 : tensor<f32>) {
      ^bb0(%x: f32, %acc: f32):
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
    } -> tensor<f32>
    %sv = tensor.extract %sum[] : tensor<f32>
    %pos = arith.cmpf ogt, %sv, %zero : f32
    %r = scf.if %pos -> (tensor<?xf32>) {
      scf.yield %t : tensor<?xf32>
    } else {
      %n = arith.negf %t : tensor<?xf32>
      scf.yield %n : tensor<?xf32>
    }
    return %r, %sum : tensor<?xf32>, tensor<f32>
  }
}
