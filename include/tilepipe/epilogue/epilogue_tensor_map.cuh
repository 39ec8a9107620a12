#pragma once
//! \file
//! The tensor map through which WarpgroupEpilogue's TMA stores write D: D as a (contiguous
//! dimension, other dimension, batch) tensor of 128-byte-swizzled boxes of 64 lines x 128 bytes.
//! Host code only.

#include <cuda.h>

#include <cstdint>
#include <string>

#include "../detail/tensor_map.cuh"
#include "../layout/tile_shape.cuh"
#include "../status.cuh"

namespace tilepipe::detail {

//! Encodes into `map` the `m x n` D at `d` (in `layout`, leading dimension `ldd`) with `batches`
//! batches `batch_stride_d` apart, all 16-byte aligned. Fails with a message naming the argument
//! where TMA cannot address it.
template <class ElementD>
Status make_epilogue_tensor_map(CUtensorMap& map, const ElementD* d, Layout layout, int m, int n,
                                std::int64_t ldd, std::int64_t batch_stride_d, int batches) {
  constexpr auto kBytes = static_cast<std::int64_t>(sizeof(ElementD));
  const auto error = [](Status::Code code, const std::string& msg) {
    return Status::error(code, "WarpgroupEpilogue: " + msg);
  };
  const auto fn = tensor_map_encoder();
  if (fn == nullptr)
    return error(Status::Code::kCudaError, "the driver has no cuTensorMapEncodeTiled (CUDA 12.0+)");
  const bool batched = batches > 1;
  if (ldd * kBytes >= kTensorMapMaxStride)
    return error(Status::Code::kInvalidArgument,
                 "ldd = " + std::to_string(ldd) + " exceeds TMA's largest stride (2^40 bytes)");
  if (batched && batch_stride_d * kBytes >= kTensorMapMaxStride)
    return error(Status::Code::kInvalidArgument,
                 "batch_stride_d = " + std::to_string(batch_stride_d) +
                     " exceeds TMA's largest stride (2^40 bytes)");
  const bool row_major = layout == Layout::kRowMajor;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(row_major ? n : m),
                              static_cast<cuuint64_t>(row_major ? m : n),
                              static_cast<cuuint64_t>(batched ? batches : 1)};
  const cuuint64_t strides[2] = {
      static_cast<cuuint64_t>(ldd * kBytes),
      static_cast<cuuint64_t>((batched ? batch_stride_d : ldd) * kBytes)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(128 / kBytes), 64, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r =
      fn(&map, tensor_map_data_type<ElementD>(), 3, const_cast<ElementD*>(d), dims, strides, box,
         element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return error(Status::Code::kInvalidArgument,
                 "cuTensorMapEncodeTiled refused D (error " + std::to_string(static_cast<int>(r)) +
                     "; ldd = " + std::to_string(ldd) +
                     ", batch_stride_d = " + std::to_string(batch_stride_d) + ")");
  return Status::success();
}

}  // namespace tilepipe::detail
