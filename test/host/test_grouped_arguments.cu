// Host tests of the grouped GEMMs' argument checks (GemmGroupedSm90, GemmGroupedFp8Sm90 and their
// pointer-array forms): every bad argument is refused with kInvalidArgument and a message naming
// it, before any device is touched. The pointers are addresses of a static buffer, never
// dereferenced; no GPU is needed.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <tilepipe/gemm/gemm_grouped.cuh>
#include <tilepipe/gemm/gemm_grouped_fp8.cuh>
#include <tilepipe/gemm/gemm_grouped_pointer_array.cuh>
#include <tilepipe/gemm/gemm_grouped_pointer_array_fp8.cuh>

namespace {

using tilepipe::Fp8Scaling;
using tilepipe::GroupedForm;
using E4m3 = __nv_fp8_e4m3;
using Bf16 = __nv_bfloat16;

// What every argument points at: aligned for every check (128 bytes: the pointer-array workspace).
alignas(128) unsigned char bytes[4096];

// Bad arguments are refused with a message naming them; nothing is launched.
TEST(GemmGrouped, RefusesBadArguments) {
  using Gemm = tilepipe::GemmGroupedSm90<__nv_bfloat16, __nv_bfloat16>;
  const auto* a = reinterpret_cast<const __nv_bfloat16*>(bytes);
  const auto* b = a;
  auto* d = reinterpret_cast<__nv_bfloat16*>(bytes);
  int* sizes = reinterpret_cast<int*>(bytes);
  auto good = [&] {
    Gemm::Arguments g;
    g.groups = 4, g.m = 256, g.n = 128, g.k = 64;
    g.offs = sizes;
    g.a = a, g.lda = 64;
    g.b = b, g.ldb = 64, g.batch_stride_b = 128 * 64;
    g.d = d, g.ldd = 128;
    return g;
  };
  ASSERT_TRUE(Gemm::check_arguments(good())) << Gemm::check_arguments(good()).message();
  auto refused = [&](Gemm::Arguments g, const char* name) {
    const tilepipe::Status st = Gemm::check_arguments(g);
    EXPECT_FALSE(st) << name;
    EXPECT_NE(st.message().find(name), std::string::npos) << st.message();
  };
  auto g = good();
  g.groups = 0;
  refused(g, "groups");
  g.groups = Gemm::kMaxGroups + 1;
  refused(g, "groups");
  g = good();
  g.offs = nullptr;
  refused(g, "offs");
  g = good();
  g.form = GroupedForm::kMasked;  // counts are not set
  refused(g, "counts");
  g = good();
  g.a = nullptr;
  refused(g, "A is a null");
  g = good();
  g.b = b + 4;
  refused(g, "B is not aligned");
  g = good();
  g.d = nullptr;
  refused(g, "D is a null");
  g = good();
  g.lda = 60;
  refused(g, "lda");
  g = good();
  g.k = 60, g.lda = 60, g.ldb = 60;  // 120-byte lines: TMA needs strides of 16 bytes
  refused(g, "lda");
  g = good();
  g.ldb = 68;
  refused(g, "ldb");
  g = good();
  g.ldd = 100;
  refused(g, "ldd");
  g = good();
  g.batch_stride_b = 4;
  refused(g, "batch_stride_b");
  g = good();
  g.n = -1;
  refused(g, "n");
  g = good();
  g.status = reinterpret_cast<int*>(reinterpret_cast<char*>(sizes) + 2);
  refused(g, "status");
  g = good();
  g.workspace = sizes, g.workspace_bytes = 2;
  refused(g, "workspace_bytes");
  g.workspace = reinterpret_cast<char*>(sizes) + 2, g.workspace_bytes = 4;
  refused(g, "workspace is not aligned");
  g = good();
  g.form = GroupedForm::kMasked, g.counts = sizes, g.m = 64;
  g.batch_stride_a = 64 * 64, g.batch_stride_d = 63 * 128;  // the groups' D would overlap
  refused(g, "batch_stride_d");
}

// The pointer-array form's refusals name the argument.
TEST(GemmGrouped, PointerArrayRefusesBadArguments) {
  using Gemm = tilepipe::GemmGroupedPointerArraySm90<__nv_bfloat16, __nv_bfloat16>;
  const auto good = [] {
    const auto* ptrs = reinterpret_cast<void* const*>(bytes);
    const auto* lds = reinterpret_cast<const std::int64_t*>(bytes);
    Gemm::Arguments g;
    g.groups = 2, g.m = 64, g.n = 64, g.k = 64;
    g.rows = reinterpret_cast<const int*>(bytes);
    g.a = reinterpret_cast<const __nv_bfloat16* const*>(ptrs), g.lda = lds;
    g.b = reinterpret_cast<const __nv_bfloat16* const*>(ptrs), g.ldb = lds;
    g.d = reinterpret_cast<__nv_bfloat16* const*>(ptrs), g.ldd = lds;
    g.workspace = bytes;
    return g;
  };
  ASSERT_TRUE(Gemm::check_arguments(good())) << Gemm::check_arguments(good()).message();
  const auto refused = [&](Gemm::Arguments g, const char* name) {
    const tilepipe::Status st = Gemm::check_arguments(g);
    EXPECT_FALSE(st) << name;
    EXPECT_NE(st.message().find(name), std::string::npos) << st.message();
  };
  auto g = good();
  g.groups = 0;
  refused(g, "groups");
  g = good(), g.groups = Gemm::kMaxGroups + 1;
  refused(g, "groups");
  g = good(), g.workspace = nullptr;
  refused(g, "workspace");
  g = good(), g.workspace = static_cast<char*>(g.workspace) + 64;
  refused(g, "workspace");
  g = good(), g.rows = nullptr;
  refused(g, "rows");
  g = good(), g.a = nullptr;
  refused(g, "a is a null");
  g = good(), g.ldb = nullptr;
  refused(g, "ldb");
  g = good(), g.d = nullptr;
  refused(g, "d is a null");
  g = good(), g.m = -1;
  refused(g, "m");
  g = good(), g.k = 0, g.a = nullptr, g.b = nullptr;  // K = 0: A and B are not read
  EXPECT_TRUE(Gemm::check_arguments(g)) << Gemm::check_arguments(g).message();
}

// Each bad argument is refused with kInvalidArgument and a message naming it.
TEST(GemmGroupedFp8, RefusesBadArguments) {
  using Gemm = tilepipe::GemmGroupedFp8Sm90<E4m3, Bf16, Fp8Scaling::kBlockwise>;
  Gemm::Arguments good;
  good.groups = 2, good.m = 64, good.n = 128, good.k = 256;
  good.offs = reinterpret_cast<const int*>(bytes);
  good.a = reinterpret_cast<const E4m3*>(bytes), good.lda = 256;
  good.b = reinterpret_cast<const E4m3*>(bytes), good.ldb = 256, good.batch_stride_b = 128 * 256;
  good.d = reinterpret_cast<Bf16*>(bytes), good.ldd = 128;
  good.scale_a = reinterpret_cast<const float*>(bytes);
  good.scale_b = reinterpret_cast<const float*>(bytes);
  good.ld_scale_a = 64, good.ld_scale_b = 2;
  ASSERT_TRUE(Gemm::check_arguments(good)) << Gemm::check_arguments(good).message();
  struct Bad {
    const char* name;
    void (*spoil)(Gemm::Arguments&);
  };
  const Bad cases[] = {
      {"scale_a", [](Gemm::Arguments& a) { a.scale_a = nullptr; }},
      {"scale_b", [](Gemm::Arguments& a) { a.scale_b = nullptr; }},
      {"scale_b",
       [](Gemm::Arguments& a) { a.scale_b = reinterpret_cast<const float*>(bytes + 2); }},
      {"ld_scale_a", [](Gemm::Arguments& a) { a.ld_scale_a = 63; }},
      {"ld_scale_b", [](Gemm::Arguments& a) { a.ld_scale_b = 1; }},
      // not a multiple of 16 bytes
      {"lda", [](Gemm::Arguments& a) { a.lda = 260, a.k = 260, a.ld_scale_b = 3; }},
      {"offs", [](Gemm::Arguments& a) { a.offs = nullptr; }},
      {"groups", [](Gemm::Arguments& a) { a.groups = 257; }},
      {"batch_stride_b", [](Gemm::Arguments& a) { a.batch_stride_b = -16; }},
      {"A", [](Gemm::Arguments& a) { a.a = reinterpret_cast<const E4m3*>(bytes + 8); }},
      {"workspace_bytes", [](Gemm::Arguments& a) { a.workspace = bytes, a.workspace_bytes = 2; }},
      {"workspace is not aligned",
       [](Gemm::Arguments& a) { a.workspace = bytes + 2, a.workspace_bytes = 4; }},
  };
  for (const Bad& c : cases) {
    Gemm::Arguments a = good;
    c.spoil(a);
    const tilepipe::Status s = Gemm::check_arguments(a);
    EXPECT_EQ(s.code(), tilepipe::Status::Code::kInvalidArgument) << c.name;
    EXPECT_NE(s.message().find(c.name), std::string::npos) << c.name << ": " << s.message();
    EXPECT_EQ(s.message().rfind("GemmGroupedFp8Sm90: ", 0), 0u) << s.message();
  }
}

// The pointer-array form's refusals name the argument.
TEST(GemmGroupedFp8, PointerArrayRefusesBadArguments) {
  using Gemm = tilepipe::GemmGroupedPointerArrayFp8Sm90<E4m3, Bf16, Fp8Scaling::kBlockwise>;
  const auto* ptrs = reinterpret_cast<void* const*>(bytes);
  const auto* lds = reinterpret_cast<const std::int64_t*>(bytes);
  Gemm::Arguments good;
  good.groups = 2, good.m = 64, good.n = 128, good.k = 256;
  good.rows = reinterpret_cast<const int*>(bytes);
  good.a = reinterpret_cast<const E4m3* const*>(ptrs), good.lda = lds;
  good.b = reinterpret_cast<const E4m3* const*>(ptrs), good.ldb = lds;
  good.d = reinterpret_cast<Bf16* const*>(ptrs), good.ldd = lds;
  good.scale_a = reinterpret_cast<const float* const*>(ptrs);
  good.scale_b = reinterpret_cast<const float* const*>(ptrs);
  good.ld_scale_a = lds, good.ld_scale_b = 2;
  good.workspace = bytes;
  ASSERT_TRUE(Gemm::check_arguments(good)) << Gemm::check_arguments(good).message();
  struct Bad {
    const char* name;
    void (*spoil)(Gemm::Arguments&);
  };
  const Bad cases[] = {
      {"scale_a", [](Gemm::Arguments& a) { a.scale_a = nullptr; }},
      {"scale_b",
       [](Gemm::Arguments& a) {
         a.scale_b = reinterpret_cast<const float* const*>(bytes + 4);  // not pointer-aligned
       }},
      {"ld_scale_a", [](Gemm::Arguments& a) { a.ld_scale_a = nullptr; }},
      {"ld_scale_a", [](Gemm::Arguments& a) { a.ld_scale_a = nullptr, a.k = 0; }},
      {"ld_scale_b", [](Gemm::Arguments& a) { a.ld_scale_b = 1; }},
      {"rows", [](Gemm::Arguments& a) { a.rows = nullptr; }},
      {"workspace", [](Gemm::Arguments& a) { a.workspace = bytes + 64; }},
      {"groups", [](Gemm::Arguments& a) { a.groups = 257; }},
      {"a is a null", [](Gemm::Arguments& a) { a.a = nullptr; }},
  };
  for (const Bad& c : cases) {
    Gemm::Arguments a = good;
    c.spoil(a);
    const tilepipe::Status s = Gemm::check_arguments(a);
    EXPECT_EQ(s.code(), tilepipe::Status::Code::kInvalidArgument) << c.name;
    EXPECT_NE(s.message().find(c.name), std::string::npos) << c.name << ": " << s.message();
    EXPECT_EQ(s.message().rfind("GemmGroupedPointerArrayFp8Sm90: ", 0), 0u) << s.message();
  }
  Gemm::Arguments k0 = good;  // K = 0: A, B and ld_scale_b are not read
  k0.k = 0, k0.a = nullptr, k0.b = nullptr, k0.ld_scale_b = 0;
  EXPECT_TRUE(Gemm::check_arguments(k0)) << Gemm::check_arguments(k0).message();
  Gemm::Arguments empty = good;  // D without elements: no scale is read
  empty.n = 0, empty.scale_a = nullptr, empty.scale_b = nullptr, empty.ld_scale_a = nullptr;
  EXPECT_TRUE(Gemm::check_arguments(empty)) << Gemm::check_arguments(empty).message();
}

}  // namespace
