// RUN: --function=nested_sum --input=4 --input=5
// RUN: --function=nested_sum --input=0 --input=9
// RUN: --function=strided_range --input=-10 --input=11 --input=3
// RUN: --function=power_iteration --input="3x3xf32=[[2 1 0][1 3 1][0 1 4]]" --input=8
// RUN: --function=switch --input=0 --input="3xi32=1 2 3"
// RUN: --function=switch --input=1 --input="3xi32=1 2 3"
// RUN: --function=switch --input=7 --input="3xi32=1 2 3"
// scf.for loops: nested loops with scalar i64 accumulation and bounds from i32
// arguments (including a zero trip count), a negative-start strided range
// collecting values into a tensor<8xi32>, power iteration (matvec + norm +
// divide, tensor iter_args) run for a scalar number of steps, and
// scf.index_switch on a scalar argument (scalar results only: IREE 3.13.0
// fails to compile an scf.index_switch that yields tensors).
module @loops {
  func.func @nested_sum(%n: i32, %m: i32) -> (i64, i32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0 : i64
    %zi = arith.constant 0 : i32
    %ni = arith.index_cast %n : i32 to index
    %mi = arith.index_cast %m : i32 to index
    %r:2 = scf.for %i = %c0 to %ni step %c1 iter_args(%acc = %z, %cnt = %zi) -> (i64, i32) {
      %inner:2 = scf.for %j = %c0 to %mi step %c1 iter_args(%a = %acc, %c = %cnt) -> (i64, i32) {
        %p = arith.muli %i, %j : index
        %p64 = arith.index_cast %p : index to i64
        %s = arith.addi %a, %p64 : i64
        %one = arith.constant 1 : i32
        %c2 = arith.addi %c, %one : i32
        scf.yield %s, %c2 : i64, i32
      }
      scf.yield %inner#0, %inner#1 : i64, i32
    }
    return %r#0, %r#1 : i64, i32
  }
  func.func @strided_range(%lo: i32, %hi: i32, %step: i32) -> (tensor<8xi32>, i32) {
    %zero = arith.constant dense<0> : tensor<8xi32>
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %seven = arith.constant 7 : i32
    %r:2 = scf.for %i = %lo to %hi step %step iter_args(%t = %zero, %k = %c0) -> (tensor<8xi32>, i32) : i32 {
      %slot = arith.minsi %k, %seven : i32
      %si = arith.index_cast %slot : i32 to index
      %t2 = tensor.insert %i into %t[%si] : tensor<8xi32>
      %k1 = arith.addi %k, %one : i32
      scf.yield %t2, %k1 : tensor<8xi32>, i32
    }
    return %r#0, %r#1 : tensor<8xi32>, i32
  }
  func.func @power_iteration(%a: tensor<3x3xf32>, %iters: i32) -> (tensor<3xf32>, f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %v0 = arith.constant dense<1.0> : tensor<3xf32>
    %n = arith.index_cast %iters : i32 to index
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%v = %v0, %lam = %zero) -> (tensor<3xf32>, f32) {
      %e = tensor.empty() : tensor<3xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
      %av = linalg.matvec ins(%a, %v : tensor<3x3xf32>, tensor<3xf32>) outs(%f : tensor<3xf32>) -> tensor<3xf32>
      %e0 = tensor.empty() : tensor<f32>
      %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
      %ss = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
          ins(%av : tensor<3xf32>) outs(%f0 : tensor<f32>) {
        ^bb0(%x: f32, %acc: f32):
          %sq = arith.mulf %x, %x : f32
          %s = arith.addf %sq, %acc : f32
          linalg.yield %s : f32
      } -> tensor<f32>
      %ssv = tensor.extract %ss[] : tensor<f32>
      %norm = math.sqrt %ssv : f32
      %nv = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
          ins(%av : tensor<3xf32>) outs(%e : tensor<3xf32>) {
        ^bb0(%x: f32, %o: f32):
          %d = arith.divf %x, %norm : f32
          linalg.yield %d : f32
      } -> tensor<3xf32>
      scf.yield %nv, %norm : tensor<3xf32>, f32
    }
    return %r#0, %r#1 : tensor<3xf32>, f32
  }
  func.func @switch(%k: i32, %t: tensor<3xi32>) -> (tensor<3xi32>, i32) {
    %ki = arith.index_cast %k : i32 to index
    %r:2 = scf.index_switch %ki -> i32, i32
    case 0 {
      %m = arith.constant 2 : i32
      %c = arith.constant 100 : i32
      scf.yield %m, %c : i32, i32
    }
    case 1 {
      %m = arith.constant -3 : i32
      %c = arith.constant 200 : i32
      scf.yield %m, %c : i32, i32
    }
    default {
      %m = arith.constant 1 : i32
      %c = arith.constant -1 : i32
      scf.yield %m, %c : i32, i32
    }
    %e = tensor.empty() : tensor<3xi32>
    %o = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%t : tensor<3xi32>) outs(%e : tensor<3xi32>) {
      ^bb0(%x: i32, %out: i32):
        %y = arith.muli %x, %r#0 : i32
        %z = arith.addi %y, %r#1 : i32
        linalg.yield %z : i32
    } -> tensor<3xi32>
    return %o, %r#1 : tensor<3xi32>, i32
  }
}
