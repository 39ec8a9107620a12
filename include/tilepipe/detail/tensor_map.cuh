#pragma once
//! \file
//! Host side of TMA: `cuTensorMapEncodeTiled`, found through the runtime (no link to libcuda),
//! and the tensor-map data type of each element type. The TMA tile loader (A and B) and the
//! Hopper epilogue (D) build their maps with these.

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <type_traits>

namespace tilepipe::detail {

//! `cuTensorMapEncodeTiled` from the driver, or null where the driver has none (before 12.0).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      p = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

//! The tensor-map data type of `T` (`__half`, `__nv_bfloat16` or `float`; the fp8 types as bytes,
//! which TMA copies without looking at them).
template <class T>
constexpr CUtensorMapDataType tensor_map_data_type() {
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> ||
                    std::is_same_v<T, float> || std::is_same_v<T, __nv_fp8_e4m3> ||
                    std::is_same_v<T, __nv_fp8_e5m2>,
                "tensor_map_data_type: TMA maps of tilepipe hold __half, __nv_bfloat16, float, "
                "__nv_fp8_e4m3 or __nv_fp8_e5m2");
  if constexpr (sizeof(T) == 1) return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  else if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  else return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

//! TMA's largest global stride, in bytes.
inline constexpr long long kTensorMapMaxStride = 1LL << 40;

}  // namespace tilepipe::detail
