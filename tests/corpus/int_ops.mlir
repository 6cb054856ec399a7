// RUN: --function=shifts --input="6xi32=1 -16 0x40000000 -1 12345 -2147483648" --input="6xi32=3 2 1 31 0 4"
// RUN: --function=divrem --input="6xi32=7 -7 7 -7 100 -2147483647" --input="6xi32=2 2 -2 -2 7 3"
// RUN: --function=divrem --input=6xi32=-1 --input=6xi32=0x10
// RUN: --function=minmax --input="5xi32=-5 3 -2147483648 2147483647 0" --input="5xi32=4 -3 1 -1 0"
// RUN: --function=compares --input="6xi32=1 -1 5 0 7 -8" --input="6xi32=1 1 -5 0 9 -8"
// RUN: --function=bits --input="4xi32=0xff00ff00 0x0f 0 -1" --input="4xi32=0x0ff00ff0 0xf0 0 12"
// RUN: --function=clamp_select --input="8xi32=-100 -5 0 5 10 15 20 100" --input=0 --input=10
// i32 integer ops on tensors: shli/shrsi/shrui, divsi/divui/remsi/remui,
// ceildivsi/floordivsi, minsi/maxsi/minui/maxui, every cmpi predicate
// (packed into a bitmask), and/or/xor, ctpop, select/clamp with scalar bounds.
module @int_ops {
  func.func @shifts(%a: tensor<6xi32>, %s: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>) {
    %l = arith.shli %a, %s : tensor<6xi32>
    %r = arith.shrsi %a, %s : tensor<6xi32>
    %u = arith.shrui %a, %s : tensor<6xi32>
    return %l, %r, %u : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>
  }
  func.func @divrem(%a: tensor<6xi32>, %b: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>) {
    %q = arith.divsi %a, %b : tensor<6xi32>
    %r = arith.remsi %a, %b : tensor<6xi32>
    %qu = arith.divui %a, %b : tensor<6xi32>
    %ru = arith.remui %a, %b : tensor<6xi32>
    %c = arith.ceildivsi %a, %b : tensor<6xi32>
    %f = arith.floordivsi %a, %b : tensor<6xi32>
    return %q, %r, %qu, %ru, %c, %f : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>
  }
  func.func @minmax(%a: tensor<5xi32>, %b: tensor<5xi32>) -> (tensor<5xi32>, tensor<5xi32>, tensor<5xi32>, tensor<5xi32>) {
    %mins = arith.minsi %a, %b : tensor<5xi32>
    %maxs = arith.maxsi %a, %b : tensor<5xi32>
    %minu = arith.minui %a, %b : tensor<5xi32>
    %maxu = arith.maxui %a, %b : tensor<5xi32>
    return %mins, %maxs, %minu, %maxu : tensor<5xi32>, tensor<5xi32>, tensor<5xi32>, tensor<5xi32>
  }
  func.func @compares(%a: tensor<6xi32>, %b: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi1>) {
    %e = tensor.empty() : tensor<6xi32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%a, %b : tensor<6xi32>, tensor<6xi32>) outs(%e : tensor<6xi32>) {
      ^bb0(%x: i32, %y: i32, %o: i32):
        %c0 = arith.cmpi eq, %x, %y : i32
        %c1 = arith.cmpi ne, %x, %y : i32
        %c2 = arith.cmpi slt, %x, %y : i32
        %c3 = arith.cmpi sle, %x, %y : i32
        %c4 = arith.cmpi sgt, %x, %y : i32
        %c5 = arith.cmpi sge, %x, %y : i32
        %c6 = arith.cmpi ult, %x, %y : i32
        %c7 = arith.cmpi ule, %x, %y : i32
        %c8 = arith.cmpi ugt, %x, %y : i32
        %c9 = arith.cmpi uge, %x, %y : i32
        %z0 = arith.extui %c0 : i1 to i32
        %z1 = arith.extui %c1 : i1 to i32
        %z2 = arith.extui %c2 : i1 to i32
        %z3 = arith.extui %c3 : i1 to i32
        %z4 = arith.extui %c4 : i1 to i32
        %z5 = arith.extui %c5 : i1 to i32
        %z6 = arith.extui %c6 : i1 to i32
        %z7 = arith.extui %c7 : i1 to i32
        %z8 = arith.extui %c8 : i1 to i32
        %z9 = arith.extui %c9 : i1 to i32
        %k1 = arith.constant 1 : i32
        %k2 = arith.constant 2 : i32
        %k3 = arith.constant 3 : i32
        %k4 = arith.constant 4 : i32
        %k5 = arith.constant 5 : i32
        %k6 = arith.constant 6 : i32
        %k7 = arith.constant 7 : i32
        %k8 = arith.constant 8 : i32
        %k9 = arith.constant 9 : i32
        %s1 = arith.shli %z1, %k1 : i32
        %s2 = arith.shli %z2, %k2 : i32
        %s3 = arith.shli %z3, %k3 : i32
        %s4 = arith.shli %z4, %k4 : i32
        %s5 = arith.shli %z5, %k5 : i32
        %s6 = arith.shli %z6, %k6 : i32
        %s7 = arith.shli %z7, %k7 : i32
        %s8 = arith.shli %z8, %k8 : i32
        %s9 = arith.shli %z9, %k9 : i32
        %o1 = arith.ori %z0, %s1 : i32
        %o2 = arith.ori %o1, %s2 : i32
        %o3 = arith.ori %o2, %s3 : i32
        %o4 = arith.ori %o3, %s4 : i32
        %o5 = arith.ori %o4, %s5 : i32
        %o6 = arith.ori %o5, %s6 : i32
        %o7 = arith.ori %o6, %s7 : i32
        %o8 = arith.ori %o7, %s8 : i32
        %o9 = arith.ori %o8, %s9 : i32
        linalg.yield %o9 : i32
    } -> tensor<6xi32>
    %ult = arith.cmpi ult, %a, %b : tensor<6xi32>
    return %r, %ult : tensor<6xi32>, tensor<6xi1>
  }
  func.func @bits(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
    %and = arith.andi %a, %b : tensor<4xi32>
    %or = arith.ori %a, %b : tensor<4xi32>
    %xor = arith.xori %a, %b : tensor<4xi32>
    %pop = math.ctpop %a : tensor<4xi32>
    return %and, %or, %xor, %pop : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
  }
  func.func @clamp_select(%a: tensor<8xi32>, %lo: i32, %hi: i32) -> (tensor<8xi32>, tensor<8xi32>) {
    %e = tensor.empty() : tensor<8xi32>
    %r:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%a : tensor<8xi32>) outs(%e, %e : tensor<8xi32>, tensor<8xi32>) {
      ^bb0(%x: i32, %o: i32, %o2: i32):
        %below = arith.cmpi slt, %x, %lo : i32
        %above = arith.cmpi sgt, %x, %hi : i32
        %t = arith.select %below, %lo, %x : i32
        %c = arith.select %above, %hi, %t : i32
        %m = arith.constant -1 : i32
        %z = arith.constant 1 : i32
        %flag0 = arith.select %above, %z, %m : i32
        %inside = arith.ori %below, %above : i1
        %zero = arith.constant 0 : i32
        %flag = arith.select %inside, %flag0, %zero : i32
        linalg.yield %c, %flag : i32, i32
    } -> (tensor<8xi32>, tensor<8xi32>)
    return %r#0, %r#1 : tensor<8xi32>, tensor<8xi32>
  }
}
