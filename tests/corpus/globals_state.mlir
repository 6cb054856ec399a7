// RUN: --function=increment
// RUN: --function=increment_by --input=41
// RUN: --function=accumulate --input="4xf32=1 2 3 4"
// RUN: --function=accumulate_twice --input="4xf32=0.5 -1 2 1e3"
// RUN: --function=run_steps --input=5
// RUN: --function=run_steps --input=11
// RUN: --function=read_total
// RUN: --function=set_total --input=-77
// RUN: --function=set_then_get --input=0x1000000000
// RUN: --function=lookup --input="3xi32=3 0 2"
// Module globals (util.global) mutated across calls. iree-run-module creates a
// fresh module instance per process and calls one export once, so every RUN
// line starts from the initial values; state carried across calls is tested
// by exports that call other exports/private functions (func.call) which read
// and write the globals within one invocation: accumulate_twice calls
// accumulate twice, run_steps calls bump N times (scf.for) and records each
// counter in a tensor global, set_then_get calls set_total then read_total.
// The values written in the loop are returned through scf.for iter_args: IREE
// 3.13.0 hoists a util.global.load placed after an scf.for whose body stores
// that global above the loop (it returns the pre-loop value), so the corpus
// does not read a global right after such a loop.
// Also: an i64 global set by util.initializer, an immutable constant tensor
// global, a global i32 counter and a tensor<4xf32> accumulator.
module @globals_state {
  util.global private mutable @counter = 0 : i32
  util.global private mutable @acc = dense<0.0> : tensor<4xf32>
  util.global private mutable @history = dense<0> : tensor<8xi32>
  util.global private mutable @total : i64
  util.global private @table = dense<[100, 200, 300, 400]> : tensor<4xi32>
  util.initializer {
    %v = arith.constant 1000 : i64
    util.global.store %v, @total : i64
    util.return
  }
  func.func private @bump() -> i32 {
    %c = util.global.load @counter : i32
    %one = arith.constant 1 : i32
    %n = arith.addi %c, %one : i32
    util.global.store %n, @counter : i32
    return %n : i32
  }
  func.func @increment() -> i32 {
    %n = call @bump() : () -> i32
    return %n : i32
  }
  func.func @increment_by(%k: i32) -> i32 {
    %c = util.global.load @counter : i32
    %n = arith.addi %c, %k : i32
    util.global.store %n, @counter : i32
    %b = call @bump() : () -> i32
    return %b : i32
  }
  func.func @accumulate(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = util.global.load @acc : tensor<4xf32>
    %s = arith.addf %a, %x : tensor<4xf32>
    util.global.store %s, @acc : tensor<4xf32>
    return %s : tensor<4xf32>
  }
  func.func @accumulate_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %r1 = call @accumulate(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %r2 = call @accumulate(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %final = util.global.load @acc : tensor<4xf32>
    return %r1, %r2, %final : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  func.func @run_steps(%n: i32) -> (i32, tensor<8xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %ni = arith.index_cast %n : i32 to index
    %c_init = util.global.load @counter : i32
    %h_init = util.global.load @history : tensor<8xi32>
    %r:2 = scf.for %i = %c0 to %ni step %c1 iter_args(%last = %c_init, %hist = %h_init) -> (i32, tensor<8xi32>) {
      %v = func.call @bump() : () -> i32
      %slot = arith.remui %i, %c8 : index
      %h = util.global.load @history : tensor<8xi32>
      %h2 = tensor.insert %v into %h[%slot] : tensor<8xi32>
      util.global.store %h2, @history : tensor<8xi32>
      scf.yield %v, %h2 : i32, tensor<8xi32>
    }
    return %r#0, %r#1 : i32, tensor<8xi32>
  }
  func.func @read_total() -> i64 {
    %t = util.global.load @total : i64
    return %t : i64
  }
  func.func @set_total(%v: i64) -> i64 {
    %old = util.global.load @total : i64
    util.global.store %v, @total : i64
    return %old : i64
  }
  func.func @set_then_get(%v: i64) -> (i64, i64) {
    %old = call @set_total(%v) : (i64) -> i64
    %new = call @read_total() : () -> i64
    return %old, %new : i64, i64
  }
  func.func @lookup(%idx: tensor<3xi32>) -> tensor<3xi32> {
    %t = util.global.load @table : tensor<4xi32>
    %e = tensor.empty() : tensor<3xi32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%idx : tensor<3xi32>) outs(%e : tensor<3xi32>) {
      ^bb0(%j: i32, %o: i32):
        %ji = arith.index_cast %j : i32 to index
        %v = tensor.extract %t[%ji] : tensor<4xi32>
        linalg.yield %v : i32
    } -> tensor<3xi32>
    return %r : tensor<3xi32>
  }
}
