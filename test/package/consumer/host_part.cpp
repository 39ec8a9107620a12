// Compiled by the HOST compiler: tilepipe::tilepipe must bring CCCL's include directory
// (CUDA 13 keeps it in include/cccl, which only nvcc searches by itself).
#include <tilepipe/version.cuh>

#include <cuda/pipeline>
#include <cuda/std/array>

int host_part() {
  cuda::std::array<int, 1> major{TILEPIPE_VERSION_MAJOR};
  return major[0];
}
