// RUN: --function=arith16 --input="6xi16=1000 -32768 32767 65535 0x100 -3" --input="6xi16=1000 -1 1 2 0x100 7"
// RUN: --function=arith16 --input=6xi16=300 --input=6xi16=-300
// RUN: --function=widen_sum --input="2x5xi16=[[30000 30000 30000 -5 5][-32768 -32768 1 2 3]]"
// RUN: --function=shifts16 --input="4xi16=-1 0x7ff0 1 -32768" --input="4xi16=1 4 15 3"
// i16 tensors in and out: wrapping add/mul, abs, a widening (i16 -> i32) row sum,
// shifts (shli/shrsi/shrui) on i16. 65535 parses as -1 for i16.
module @i16_ops {
  func.func @arith16(%a: tensor<6xi16>, %b: tensor<6xi16>) -> (tensor<6xi16>, tensor<6xi16>, tensor<6xi16>) {
    %s = arith.addi %a, %b : tensor<6xi16>
    %m = arith.muli %a, %b : tensor<6xi16>
    %d = arith.subi %a, %b : tensor<6xi16>
    %ab = math.absi %d : tensor<6xi16>
    return %s, %m, %ab : tensor<6xi16>, tensor<6xi16>, tensor<6xi16>
  }
  func.func @widen_sum(%a: tensor<2x5xi16>) -> (tensor<2xi32>, tensor<2xi16>) {
    %zero = arith.constant 0 : i32
    %zero16 = arith.constant 0 : i16
    %e = tensor.empty() : tensor<2xi32>
    %f = linalg.fill ins(%zero : i32) outs(%e : tensor<2xi32>) -> tensor<2xi32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<2x5xi16>) outs(%f : tensor<2xi32>) {
      ^bb0(%x: i16, %acc: i32):
        %xw = arith.extsi %x : i16 to i32
        %s = arith.addi %xw, %acc : i32
        linalg.yield %s : i32
    } -> tensor<2xi32>
    %e16 = tensor.empty() : tensor<2xi16>
    %f16 = linalg.fill ins(%zero16 : i16) outs(%e16 : tensor<2xi16>) -> tensor<2xi16>
    %r16 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
        ins(%a : tensor<2x5xi16>) outs(%f16 : tensor<2xi16>) {
      ^bb0(%x: i16, %acc: i16):
        %s = arith.addi %x, %acc : i16
        linalg.yield %s : i16
    } -> tensor<2xi16>
    return %r, %r16 : tensor<2xi32>, tensor<2xi16>
  }
  func.func @shifts16(%a: tensor<4xi16>, %s: tensor<4xi16>) -> (tensor<4xi16>, tensor<4xi16>, tensor<4xi16>) {
    %l = arith.shli %a, %s : tensor<4xi16>
    %r = arith.shrsi %a, %s : tensor<4xi16>
    %u = arith.shrui %a, %s : tensor<4xi16>
    return %l, %r, %u : tensor<4xi16>, tensor<4xi16>, tensor<4xi16>
  }
}
