// RUN: --function=collatz --input=27
// RUN: --function=collatz --input=1
// RUN: --function=gcd --input=1071 --input=462
// RUN: --function=gcd --input=0x7fffffff --input=65536
// RUN: --function=newton_sqrt --input=2
// RUN: --function=newton_sqrt --input=1e6
// RUN: --function=grow_until --input="4xf32=1.5 -2 0.25 3" --input=100
// RUN: --function=grow_until --input=4xf32=200 --input=100
// RUN: --function=find_first --input="8xi32=5 3 9 -1 9 2 7 9" --input=9
// RUN: --function=find_first --input="8xi32=5 3 9 -1 9 2 7 9" --input=42
// scf.while loops with data-dependent trip counts: on scalar arguments
// (collatz steps on i64, gcd on i32, Newton iteration on f32) and on values read
// from tensors with tensor.extract (grow a tensor until its first element passes
// a limit; linear search returning -1 when absent).
module @scf_while {
  func.func @collatz(%n: i64) -> (i64, i64) {
    %one = arith.constant 1 : i64
    %two = arith.constant 2 : i64
    %three = arith.constant 3 : i64
    %zero = arith.constant 0 : i64
    %r:3 = scf.while (%x = %n, %steps = %zero, %peak = %n) : (i64, i64, i64) -> (i64, i64, i64) {
      %go = arith.cmpi sgt, %x, %one : i64
      scf.condition(%go) %x, %steps, %peak : i64, i64, i64
    } do {
    ^bb0(%x: i64, %steps: i64, %peak: i64):
      %rem = arith.remsi %x, %two : i64
      %odd = arith.cmpi ne, %rem, %zero : i64
      %half = arith.divsi %x, %two : i64
      %t3 = arith.muli %x, %three : i64
      %t31 = arith.addi %t3, %one : i64
      %next = arith.select %odd, %t31, %half : i64
      %s1 = arith.addi %steps, %one : i64
      %p = arith.maxsi %peak, %next : i64
      scf.yield %next, %s1, %p : i64, i64, i64
    }
    return %r#1, %r#2 : i64, i64
  }
  func.func @gcd(%a: i32, %b: i32) -> i32 {
    %zero = arith.constant 0 : i32
    %r:2 = scf.while (%x = %a, %y = %b) : (i32, i32) -> (i32, i32) {
      %go = arith.cmpi ne, %y, %zero : i32
      scf.condition(%go) %x, %y : i32, i32
    } do {
    ^bb0(%x: i32, %y: i32):
      %m = arith.remui %x, %y : i32
      scf.yield %y, %m : i32, i32
    }
    return %r#0 : i32
  }
  func.func @newton_sqrt(%x: f32) -> (f32, i32) {
    %half = arith.constant 0.5 : f32
    %eps = arith.constant 1.0e-4 : f32
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %cap = arith.constant 100 : i32
    %r:2 = scf.while (%y = %x, %it = %zero) : (f32, i32) -> (f32, i32) {
      %sq = arith.mulf %y, %y : f32
      %diff = arith.subf %sq, %x : f32
      %ad = math.absf %diff : f32
      %tol = arith.mulf %eps, %x : f32
      %far = arith.cmpf ogt, %ad, %tol : f32
      %more = arith.cmpi slt, %it, %cap : i32
      %go = arith.andi %far, %more : i1
      scf.condition(%go) %y, %it : f32, i32
    } do {
    ^bb0(%y: f32, %it: i32):
      %q = arith.divf %x, %y : f32
      %s = arith.addf %y, %q : f32
      %n = arith.mulf %s, %half : f32
      %i1 = arith.addi %it, %one : i32
      scf.yield %n, %i1 : f32, i32
    }
    return %r#0, %r#1 : f32, i32
  }
  func.func @grow_until(%t: tensor<4xf32>, %limit: f32) -> (tensor<4xf32>, i32) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %two = arith.constant dense<2.0> : tensor<4xf32>
    %r:2 = scf.while (%cur = %t, %n = %zero) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {
      %first = tensor.extract %cur[%c0] : tensor<4xf32>
      %go = arith.cmpf olt, %first, %limit : f32
      scf.condition(%go) %cur, %n : tensor<4xf32>, i32
    } do {
    ^bb0(%cur: tensor<4xf32>, %n: i32):
      %next = arith.mulf %cur, %two : tensor<4xf32>
      %n1 = arith.addi %n, %one : i32
      scf.yield %next, %n1 : tensor<4xf32>, i32
    }
    return %r#0, %r#1 : tensor<4xf32>, i32
  }
  func.func @find_first(%t: tensor<8xi32>, %v: i32) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %false = arith.constant false
    %r:2 = scf.while (%i = %c0, %found = %false) : (index, i1) -> (index, i1) {
      %inb = arith.cmpi ult, %i, %c8 : index
      %notf = arith.xori %found, %inb : i1
      %go = arith.andi %inb, %notf : i1
      scf.condition(%go) %i, %found : index, i1
    } do {
    ^bb0(%i: index, %found: i1):
      %x = tensor.extract %t[%i] : tensor<8xi32>
      %hit = arith.cmpi eq, %x, %v : i32
      %next = arith.addi %i, %c1 : index
      %ni = arith.select %hit, %i, %next : index
      scf.yield %ni, %hit : index, i1
    }
    %idx = arith.index_cast %r#0 : index to i32
    %m1 = arith.constant -1 : i32
    %res = arith.select %r#1, %idx, %m1 : i32
    return %res : i32
  }
}
