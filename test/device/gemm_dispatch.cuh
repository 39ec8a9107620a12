#pragma once
// A type-erased table of GemmMultistage instantiations, so that a test can pick the layouts,
// input and output types and the stage count of each problem at run time.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tilepipe/gemm/gemm_multistage.cuh>

#include "device_fill.cuh"

namespace tptest {

// GemmMultistage's arguments without their element types.
struct ErasedArgs {
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* d = nullptr;
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  float alpha = 1.0f, beta = 0.0f;
  tilepipe::Layout layout_cd = tilepipe::Layout::kRowMajor;
  int batch_count = 1;
  std::int64_t batch_stride_a = 0, batch_stride_b = 0, batch_stride_c = 0, batch_stride_d = 0;
};

struct GemmConfig {
  DType ab, d;
  tilepipe::Layout la, lb;
  int stages;
  tilepipe::Status (*run)(const ErasedArgs&, cudaStream_t);
  std::string name() const {
    return std::string(name_of(ab)) + "->" + name_of(d) + " A " +
           (la == tilepipe::Layout::kRowMajor ? "row" : "col") + " B " +
           (lb == tilepipe::Layout::kRowMajor ? "row" : "col") + " stages " + std::to_string(stages);
  }
};

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB, int Stages>
tilepipe::Status run_erased(const ErasedArgs& e, cudaStream_t stream) {
  using Gemm = tilepipe::GemmMultistage<AB, D, LA, LB, Stages>;
  typename Gemm::Arguments a;
  a.m = e.m; a.n = e.n; a.k = e.k;
  a.a = static_cast<const AB*>(e.a);
  a.b = static_cast<const AB*>(e.b);
  a.c = static_cast<const D*>(e.c);
  a.d = static_cast<D*>(e.d);
  a.lda = e.lda; a.ldb = e.ldb; a.ldc = e.ldc; a.ldd = e.ldd;
  a.alpha = e.alpha; a.beta = e.beta;
  a.layout_cd = e.layout_cd;
  a.batch_count = e.batch_count;
  a.batch_stride_a = e.batch_stride_a; a.batch_stride_b = e.batch_stride_b;
  a.batch_stride_c = e.batch_stride_c; a.batch_stride_d = e.batch_stride_d;
  return Gemm::run(a, stream);
}

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<__half>() { return DType::kF16; }
template <> constexpr DType dtype_of<__nv_bfloat16>() { return DType::kBF16; }
template <> constexpr DType dtype_of<float>() { return DType::kF32; }

template <class AB, class D, tilepipe::Layout LA, tilepipe::Layout LB>
void add_stages(std::vector<GemmConfig>& out) {
  out.push_back({dtype_of<AB>(), dtype_of<D>(), LA, LB, 2, &run_erased<AB, D, LA, LB, 2>});
  out.push_back({dtype_of<AB>(), dtype_of<D>(), LA, LB, 3, &run_erased<AB, D, LA, LB, 3>});
  out.push_back({dtype_of<AB>(), dtype_of<D>(), LA, LB, 4, &run_erased<AB, D, LA, LB, 4>});
  out.push_back({dtype_of<AB>(), dtype_of<D>(), LA, LB, 5, &run_erased<AB, D, LA, LB, 5>});
  out.push_back({dtype_of<AB>(), dtype_of<D>(), LA, LB, 6, &run_erased<AB, D, LA, LB, 6>});
}

template <class AB, class D>
void add_layouts(std::vector<GemmConfig>& out) {
  using tilepipe::Layout;
  add_stages<AB, D, Layout::kRowMajor, Layout::kColumnMajor>(out);
  add_stages<AB, D, Layout::kRowMajor, Layout::kRowMajor>(out);
  add_stages<AB, D, Layout::kColumnMajor, Layout::kColumnMajor>(out);
  add_stages<AB, D, Layout::kColumnMajor, Layout::kRowMajor>(out);
}

// Every layout pair x Stages 2..6 for f16 -> {f16, f32} and bf16 -> {bf16, f32}: 80 kernels.
inline const std::vector<GemmConfig>& all_configs() {
  static const std::vector<GemmConfig> configs = [] {
    std::vector<GemmConfig> v;
    add_layouts<__half, __half>(v);
    add_layouts<__half, float>(v);
    add_layouts<__nv_bfloat16, __nv_bfloat16>(v);
    add_layouts<__nv_bfloat16, float>(v);
    return v;
  }();
  return configs;
}

}  // namespace tptest
