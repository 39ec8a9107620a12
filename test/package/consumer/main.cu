// Compiled by the package tests: tilepipe's umbrella header and <cuda/pipeline> must be
// found through the tilepipe::tilepipe target alone. It only has to build, not run.
#include <tilepipe/tilepipe.cuh>

#include <cuda/pipeline>

static_assert(TILEPIPE_VERSION_MAJOR == EXPECTED_TILEPIPE_MAJOR,
              "the tilepipe headers found are not the version the CMake package reports");

int host_part();  // host_part.cpp

// One 16-byte asynchronous copy per thread through a thread-scope pipeline.
__global__ void copy_through_smem(const int4* src, int4* dst) {
  __shared__ int4 stage[32];  // (32 threads)
  auto pipe = cuda::make_pipeline();
  pipe.producer_acquire();
  cuda::memcpy_async(&stage[threadIdx.x], &src[threadIdx.x], cuda::aligned_size_t<16>(16), pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  dst[threadIdx.x] = stage[threadIdx.x];
}

int main() {
  void (*kernel)(const int4*, int4*) = copy_through_smem;
  return (kernel != nullptr && host_part() == TILEPIPE_VERSION_MAJOR) ? 0 : 1;
}
