// RUN: --function=step --input="1x4xf32=1 0 -1 0.5"
// RUN: --function=sequence --input="5x4xf32=[[1 0 -1 0.5][0 1 0 1][0.25 0.25 0.25 0.25][-1 -1 -1 -1][2 0 0 0]]"
// RUN: --function=sequence --input=3x4xf32=0
// RUN: --function=step_count_twice --input="1x4xf32=0.5 0.5 0.5 0.5"
// A stateful recurrent cell: hidden state h (util.global tensor<1x3xf32>,
// initialised by a util.initializer from a constant) and a step counter (i64
// global). step computes h = tanh(x W + h U + b) and stores h; sequence runs
// step over the rows of a 5x4 or 3x4 input with scf.for + tensor.extract_slice
// (the state flows call to call through the globals) and returns the final
// state, the stacked per-step states and the step counter; step_count_twice
// calls step twice and reports the counter and both states.
module @rnn_state {
  util.global private mutable @h : tensor<1x3xf32>
  util.global private mutable @steps = 0 : i64
  util.initializer {
    %h0 = arith.constant dense<[[0.5, -0.5, 0.0]]> : tensor<1x3xf32>
    util.global.store %h0, @h : tensor<1x3xf32>
    util.return
  }
  func.func @step(%x: tensor<1x4xf32>) -> (tensor<1x3xf32>, i64) {
    %w = arith.constant dense<[[0.5, -0.25, 0.125], [0.25, 0.5, -0.5], [-0.75, 0.0, 0.25], [0.125, 0.125, 1.0]]> : tensor<4x3xf32>
    %u = arith.constant dense<[[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.25, 0.25, 0.5]]> : tensor<3x3xf32>
    %b = arith.constant dense<[[0.0625, -0.0625, 0.0]]> : tensor<1x3xf32>
    %zero = arith.constant 0.0 : f32
    %h = util.global.load @h : tensor<1x3xf32>
    %e = tensor.empty() : tensor<1x3xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
    %xw = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x3xf32>) outs(%f : tensor<1x3xf32>) -> tensor<1x3xf32>
    %hu = linalg.matmul ins(%h, %u : tensor<1x3xf32>, tensor<3x3xf32>) outs(%xw : tensor<1x3xf32>) -> tensor<1x3xf32>
    %s = arith.addf %hu, %b : tensor<1x3xf32>
    %t = math.tanh %s : tensor<1x3xf32>
    util.global.store %t, @h : tensor<1x3xf32>
    %n = util.global.load @steps : i64
    %one = arith.constant 1 : i64
    %n1 = arith.addi %n, %one : i64
    util.global.store %n1, @steps : i64
    return %t, %n1 : tensor<1x3xf32>, i64
  }
  func.func @sequence(%xs: tensor<?x4xf32>) -> (tensor<1x3xf32>, tensor<?x3xf32>, i64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = tensor.dim %xs, %c0 : tensor<?x4xf32>
    %zero = arith.constant 0 : i64
    %h0 = util.global.load @h : tensor<1x3xf32>
    %init = tensor.empty(%n) : tensor<?x3xf32>
    %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%all = %init, %last = %h0, %cnt = %zero) -> (tensor<?x3xf32>, tensor<1x3xf32>, i64) {
      %x = tensor.extract_slice %xs[%i, 0] [1, 4] [1, 1] : tensor<?x4xf32> to tensor<1x4xf32>
      %h:2 = func.call @step(%x) : (tensor<1x4xf32>) -> (tensor<1x3xf32>, i64)
      %all2 = tensor.insert_slice %h#0 into %all[%i, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<?x3xf32>
      scf.yield %all2, %h#0, %h#1 : tensor<?x3xf32>, tensor<1x3xf32>, i64
    }
    return %r#1, %r#0, %r#2 : tensor<1x3xf32>, tensor<?x3xf32>, i64
  }
  func.func @step_count_twice(%x: tensor<1x4xf32>) -> (tensor<1x3xf32>, tensor<1x3xf32>, i64) {
    %a:2 = call @step(%x) : (tensor<1x4xf32>) -> (tensor<1x3xf32>, i64)
    %b:2 = call @step(%x) : (tensor<1x4xf32>) -> (tensor<1x3xf32>, i64)
    return %a#0, %b#0, %b#1 : tensor<1x3xf32>, tensor<1x3xf32>, i64
  }
}
