// RUN-ARGS: --function=zeros --input=4
// n zero floats, allocated by the device at run time: a large n is an out-of-memory allocation
// (tests/drivers/test_cuda_gpu.py).
module @alloc_n {
  func.func @zeros(%n: i64) -> tensor<?xf32> {
    %c = arith.index_cast %n : i64 to index
    %e = tensor.empty(%c) : tensor<?xf32>
    %z = arith.constant 0.0 : f32
    %f = linalg.fill ins(%z : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    return %f : tensor<?xf32>
  }
}
