// RUN: --function=logic --input="8xi1=01 00 01 01 00 00 01 00" --input="8xi1=01 01 00 00 01 00 01 00"
// RUN: --function=logic --input=8xi1=01 --input=8xi1=00
// RUN: --function=compare --input="2x3xf32=[1 -2 3][0.5 7 -7]" --input="2x3xf32=[1 2 -3][0.25 7.5 -7]"
// RUN: --function=select_mask --input="2x3xi1=[01 00 01][00 00 01]" --input="2x3xi32=[1 2 3][4 5 6]" --input="2x3xi32=-1"
// RUN: --function=count_true --input="8xi1=01 00 01 01 00 00 01 01"
// RUN: --function=any_all --input="4x4xi1=[01 01 01 01][00 00 00 00][01 00 00 00][01 01 00 01]"
// i1 (bool) tensors as inputs and results: and/or/xor/not, cmpf/cmpi producing
// i1 results, select on an i1 mask input, counting and any/all reductions.
module @i1_logic {
  func.func @logic(%a: tensor<8xi1>, %b: tensor<8xi1>) -> (tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>) {
    %t = arith.constant dense<true> : tensor<8xi1>
    %and = arith.andi %a, %b : tensor<8xi1>
    %or = arith.ori %a, %b : tensor<8xi1>
    %xor = arith.xori %a, %b : tensor<8xi1>
    %not = arith.xori %a, %t : tensor<8xi1>
    return %and, %or, %xor, %not : tensor<8xi1>, tensor<8xi1>, tensor<8xi1>, tensor<8xi1>
  }
  func.func @compare(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>) {
    %lt = arith.cmpf olt, %a, %b : tensor<2x3xf32>
    %eq = arith.cmpf oeq, %a, %b : tensor<2x3xf32>
    %ai = arith.fptosi %a : tensor<2x3xf32> to tensor<2x3xi32>
    %bi = arith.fptosi %b : tensor<2x3xf32> to tensor<2x3xi32>
    %ge = arith.cmpi sge, %ai, %bi : tensor<2x3xi32>
    return %lt, %eq, %ge : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>
  }
  func.func @select_mask(%m: tensor<2x3xi1>, %a: tensor<2x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
    %r = arith.select %m, %a, %b : tensor<2x3xi1>, tensor<2x3xi32>
    return %r : tensor<2x3xi32>
  }
  func.func @count_true(%m: tensor<8xi1>) -> (tensor<i32>, i32) {
    %zero = arith.constant 0 : i32
    %e = tensor.empty() : tensor<i32>
    %f = linalg.fill ins(%zero : i32) outs(%e : tensor<i32>) -> tensor<i32>
    %n = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%m : tensor<8xi1>) outs(%f : tensor<i32>) {
      ^bb0(%x: i1, %acc: i32):
        %xi = arith.extui %x : i1 to i32
        %s = arith.addi %acc, %xi : i32
        linalg.yield %s : i32
    } -> tensor<i32>
    %v = tensor.extract %n[] : tensor<i32>
    return %n, %v : tensor<i32>, i32
  }
  func.func @any_all(%m: tensor<4x4xi1>) -> (tensor<4xi1>, tensor<4xi1>) {
    %false = arith.constant false
    %true = arith.constant true
    %e = tensor.empty() : tensor<4xi1>
    %f0 = linalg.fill ins(%false : i1) outs(%e : tensor<4xi1>) -> tensor<4xi1>
    %f1 = linalg.fill ins(%true : i1) outs(%e : tensor<4xi1>) -> tensor<4xi1>
    %any = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%m : tensor<4x4xi1>) outs(%f0 : tensor<4xi1>) {
      ^bb0(%x: i1, %acc: i1):
        %o = arith.ori %x, %acc : i1
        linalg.yield %o : i1
    } -> tensor<4xi1>
    %all = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%m : tensor<4x4xi1>) outs(%f1 : tensor<4xi1>) {
      ^bb0(%x: i1, %acc: i1):
        %a = arith.andi %x, %acc : i1
        linalg.yield %a : i1
    } -> tensor<4xi1>
    return %any, %all : tensor<4xi1>, tensor<4xi1>
  }
}
