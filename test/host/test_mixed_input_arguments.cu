// Host tests of GemmMixedInput's argument checks and of the dequantizer's group arithmetic: every
// bad input is refused with kInvalidArgument and a message naming the argument, before any device
// is touched. Pointers here are fake addresses; nothing is dereferenced and no GPU is needed.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <tilepipe/gemm/gemm_mixed_input.cuh>

using tilepipe::Layout;
using tilepipe::Status;

namespace {

using Gemm = tilepipe::GemmMixedInput<__half, std::int8_t, __half>;

template <class T>
T* fake(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// A valid 16 x 4096 x 4096 decode problem with groups of 128, in separate buffers.
Gemm::Arguments valid_args() {
  Gemm::Arguments a;
  a.m = 16;
  a.n = 4096;
  a.k = 4096;
  a.a = fake<const __half>(0x1000000);
  a.lda = 4096;
  a.b = fake<const std::int8_t>(0x2000000);
  a.ldb = 4096;
  a.scale = fake<const __half>(0x4000000);
  a.group = 128;
  a.d = fake<__half>(0x5000000);
  a.ldd = 4096;
  return a;
}

void expect_invalid(const Gemm::Arguments& args, const std::string& names) {
  const Status s = Gemm::check_arguments(args);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find(names), std::string::npos)
      << "message \"" << s.message() << "\" should name " << names;
  EXPECT_EQ(s.message().rfind("GemmMixedInput: ", 0), 0u) << s.message();
}

TEST(MixedInputArguments, AcceptsValidProblems) {
  EXPECT_TRUE(Gemm::check_arguments(valid_args()).ok())
      << Gemm::check_arguments(valid_args()).what();
  Gemm::Arguments a = valid_args();
  a.group = 64;
  EXPECT_TRUE(Gemm::check_arguments(a).ok());
  a.group = a.k;  // one scale per column
  EXPECT_TRUE(Gemm::check_arguments(a).ok());
  // K needs no particular multiple (its residue is zero-filled); only ldb's bytes do.
  a = valid_args();
  a.k = 1000;
  a.lda = 1000;
  a.ldb = 1008;
  a.group = 1000;
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).what();
  a.m = 1;  // decode of one token
  EXPECT_TRUE(Gemm::check_arguments(a).ok());
  // K = 0: D = beta * C, no operand and no scale is read.
  a = valid_args();
  a.k = 0;
  a.scale = nullptr;
  a.a = nullptr;
  a.b = nullptr;
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).what();
}

TEST(MixedInputArguments, RefusesBadScalesAndGroups) {
  Gemm::Arguments a = valid_args();
  a.scale = nullptr;
  expect_invalid(a, "scale is a null pointer");
  a = valid_args();
  a.scale = fake<const __half>(0x4000001);
  expect_invalid(a, "scale is not aligned");
  for (int group : {0, -64, 32, 96, 256, 4095, 4097}) {
    a = valid_args();
    a.group = group;
    expect_invalid(a, "group = " + std::to_string(group));
  }
  // More scales than 32-bit offsets reach: 2^22 x 1024 columns in groups of 64.
  a = valid_args();
  a.m = 1;
  a.n = 1024;
  a.k = 1 << 28;
  a.lda = a.k;
  a.ldb = a.k;
  a.group = 64;
  a.d = fake<__half>(0x5000000);
  a.ldd = 1024;
  a.b = fake<const std::int8_t>(0x10000000000);
  a.a = fake<const __half>(0x20000000000);
  expect_invalid(a, "scale (4194304 x 1024) has 2^31 elements or more");
  // D on top of the scales.
  a = valid_args();
  a.d = fake<__half>(0x4000000 + 64);
  expect_invalid(a, "D overlaps scale");
}

TEST(MixedInputArguments, RefusesBadOperands) {
  Gemm::Arguments a = valid_args();
  a.b = nullptr;
  expect_invalid(a, "B is a null pointer");
  a = valid_args();
  a.ldb = 4100;  // not a multiple of 16 bytes of int8
  expect_invalid(a, "ldb = 4100");
  a = valid_args();
  a.b = fake<const std::int8_t>(0x2000008);
  expect_invalid(a, "B is not 16-byte aligned");
  a = valid_args();
  a.lda = 4092;  // fewer than K
  expect_invalid(a, "lda = 4092");
  a = valid_args();
  a.lda = 4100;  // not a multiple of 8 f16
  expect_invalid(a, "lda = 4100");
  a = valid_args();
  a.m = -1;
  expect_invalid(a, "m = -1");
  a = valid_args();
  a.ldd = 100;
  expect_invalid(a, "ldd = 100");
  a = valid_args();
  a.d = fake<__half>(0x2000000);  // D over B
  expect_invalid(a, "D overlaps B");
}

TEST(MixedInputArguments, SplitKNeedsAWorkspaceApartFromEverything) {
  Gemm::Arguments a = valid_args();
  a.split_k = 8;
  const std::size_t bytes = Gemm::workspace_size(a);
  EXPECT_EQ(Gemm::split_k_slices(a).count, 8);
  EXPECT_EQ(bytes, 8u * 16u * 4096u * sizeof(float));
  expect_invalid(a, "workspace is a null pointer");
  a.workspace = fake<void>(0x8000000);
  a.workspace_bytes = bytes - 4;
  expect_invalid(a, "workspace_bytes");
  a.workspace_bytes = bytes;
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).what();
  a.workspace = fake<void>(0x4000000 - 64);  // over the scales (ceil(4096 / 128) x 4096 f16)
  expect_invalid(a, "workspace overlaps scale");
  a.workspace = fake<void>(0x8000004);
  expect_invalid(a, "workspace is not 16-byte aligned");
  a = valid_args();
  a.split_k = 0;
  expect_invalid(a, "split_k = 0");
  // More slices than k-tiles: one slice per k-tile, none empty.
  a = valid_args();
  a.k = 200;
  a.lda = 208;
  a.ldb = 208;
  a.group = 200;
  a.split_k = 4;  // two k-tiles of 128
  EXPECT_EQ(Gemm::split_k_slices(a).count, 2);
}

// The cluster reduction sums the slices in one kernel with no workspace (so none is asked for,
// and one given is ignored), for at most 8 slices; kAuto and kWorkspace size and check the
// workspace as before (kAuto may take the workspace reduction on any GPU).
TEST(MixedInputArguments, SplitKReductionAndItsWorkspace) {
  using tilepipe::SplitKReduction;
  Gemm::Arguments a = valid_args();
  EXPECT_EQ(a.split_k_reduction, SplitKReduction::kAuto);
  a.split_k = 4;
  for (SplitKReduction r : {SplitKReduction::kAuto, SplitKReduction::kWorkspace}) {
    a.split_k_reduction = r;
    EXPECT_EQ(Gemm::workspace_size(a), 4u * 16u * 4096u * sizeof(float)) << tilepipe::to_string(r);
    expect_invalid(a, "workspace is a null pointer");
  }
  a.split_k_reduction = SplitKReduction::kCluster;
  for (int split : {1, 2, 3, 4, 8}) {
    a.split_k = split;
    EXPECT_EQ(Gemm::workspace_size(a), 0u) << split;
    EXPECT_TRUE(Gemm::check_arguments(a).ok()) << split << ": " << Gemm::check_arguments(a).what();
  }
  a.workspace = fake<void>(0x4000000 - 64);  // over the scales: ignored, never touched
  a.workspace_bytes = 1;
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).what();
  a.split_k = 16;
  expect_invalid(a, "split_k_reduction = kCluster sums at most 8 slices");
  expect_invalid(a, "split_k = 16 gives 16 slices of K = 4096; use kWorkspace or kAuto");
  // 9 k-tiles of 128, split_k = 12: 9 slices, still too many.
  a.k = 1100;
  a.lda = 1104;
  a.ldb = 1104;
  a.group = 1100;
  a.split_k = 12;
  expect_invalid(a, "split_k = 12 gives 9 slices of K = 1100");
  a.split_k = 8;  // 8 slices of 9 k-tiles
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).what();
  // Nothing to do: nothing refused.
  a.split_k = 16;
  a.m = 0;
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).what();
  // A value that is none of the enumerators.
  a = valid_args();
  a.split_k_reduction = static_cast<SplitKReduction>(7);
  expect_invalid(a, "split_k_reduction = 7 is not a SplitKReduction");
  EXPECT_EQ(tilepipe::to_string(SplitKReduction::kWorkspace), "kWorkspace");
}

// The device part of the cluster reduction's checks: an sm_90+ GPU, this program's code of the
// cluster kernel for sm_90 or newer, and room for one cluster. Each refusal names the field.
TEST(MixedInputArguments, ClusterReductionDeviceProperties) {
  const auto expect_unsupported = [](const Status& s, const std::string& why) {
    EXPECT_EQ(s.code(), Status::Code::kUnsupportedDevice) << s.what();
    EXPECT_EQ(
        s.message().rfind("GemmMixedInput: split_k_reduction = kCluster cannot run on device ", 0),
        0u)
        << s.message();
    EXPECT_NE(s.message().find(why), std::string::npos)
        << "message \"" << s.message() << "\" should say " << why;
  };
  expect_unsupported(Gemm::check_cluster_properties(0, 8, 0, 80, 4, 0),
                     "device 0: it is sm_80, and thread-block clusters need sm_90 or newer");
  expect_unsupported(Gemm::check_cluster_properties(1, 8, 9, 89, 4, 0), "device 1: it is sm_89");
  expect_unsupported(Gemm::check_cluster_properties(0, 9, 0, 80, 4, 0),
                     "this program's code for it was compiled for sm_80, and thread-block clusters "
                     "need code for sm_90 or newer (CMake architecture 90, 90a or newer)");
  expect_unsupported(Gemm::check_cluster_properties(0, 9, 0, 0, 4, 0),
                     "this program has no code of the cluster kernel for it");
  expect_unsupported(Gemm::check_cluster_properties(0, 9, 0, 90, 8, 0),
                     "no cluster of 8 blocks of the cluster kernel fits on it");
  EXPECT_TRUE(Gemm::check_cluster_properties(0, 9, 0, 90, 4, 33).ok());
  EXPECT_TRUE(Gemm::check_cluster_properties(0, 10, 0, 100, 8, 16).ok());
}

TEST(MixedInputArguments, SplitKRuleForDecode) {
  Gemm::Arguments a = valid_args();  // 16 x 4096 x 4096: 64 output tiles of 64, 32 k-tiles of 128
  EXPECT_EQ(Gemm::split_k_for(a, 132), 2);  // 128 blocks: the most that fit in one wave
  EXPECT_EQ(Gemm::split_k_for(a, 256), 4);
  EXPECT_EQ(Gemm::split_k_for(a, 64), 1);
  a.m = 128;  // 512 tiles fill 132 SMs
  EXPECT_EQ(Gemm::split_k_for(a, 132), 1);
  a.m = 1;
  a.n = 14336;
  a.k = 14336;  // 224 tiles: a split of 2 would not fit in one wave
  EXPECT_EQ(Gemm::split_k_for(a, 132), 1);
  EXPECT_EQ(Gemm::split_k_for(a, 448), 2);
  a.n = 128;
  a.k = 1024;  // 8 k-tiles: one slice of 4 k-tiles at least
  EXPECT_EQ(Gemm::split_k_for(a, 132), 2);
  a.k = 512;  // 4 k-tiles: no split
  EXPECT_EQ(Gemm::split_k_for(a, 132), 1);
}

// fp8 e4m3 weights take the same arguments (B is one byte per element either way).
TEST(MixedInputArguments, Fp8WeightsTakeTheSameChecks) {
  using GemmE4M3 = tilepipe::GemmMixedInput<__half, __nv_fp8_e4m3, __half>;
  const Gemm::Arguments v = valid_args();
  GemmE4M3::Arguments a;
  a.m = v.m;
  a.n = v.n;
  a.k = v.k;
  a.a = v.a;
  a.lda = v.lda;
  a.b = fake<const __nv_fp8_e4m3>(0x2000000);
  a.ldb = v.ldb;
  a.scale = v.scale;
  a.group = v.group;
  a.d = v.d;
  a.ldd = v.ldd;
  EXPECT_TRUE(GemmE4M3::check_arguments(a).ok()) << GemmE4M3::check_arguments(a).what();
  a.ldb = 4104;
  EXPECT_NE(GemmE4M3::check_arguments(a).message().find("ldb = 4104"), std::string::npos);
}

TEST(MixedInputArguments, DeviceProperties) {
  EXPECT_EQ(Gemm::check_device_properties(0, 7, 5, 1 << 20).code(),
            Status::Code::kUnsupportedDevice);
  EXPECT_EQ(Gemm::check_device_properties(0, 8, 0, 1024).code(),
            Status::Code::kInsufficientResources);
  EXPECT_TRUE(Gemm::check_device_properties(0, 8, 0, 100 * 1024).ok());
}

// The scale row of k is k / group: a shift for groups of 64 and 128, always 0 for one scale per
// column (group = K, whatever K is); the k past K of a zero-filled residue, up to the end of the
// last k-tile of any depth, read the last row.
TEST(DequantizeInt8, GroupRowOfK) {
  using T = tilepipe::DequantizeInt8<__half>;
  for (int group : {64, 128}) {
    const T t = T::make(nullptr, 4096, 4096, 4096, group);
    for (int k = 0; k < 4096; ++k) EXPECT_EQ(t.row_of(k), k / group);
  }
  for (int k_total : {1, 16, 64, 100, 128, 1000, 4096, 14336}) {
    const T t = T::make(nullptr, 4096, 4096, k_total, k_total);
    for (int k = 0; k < k_total + 256; ++k) EXPECT_EQ(t.row_of(k), 0);
  }
  for (int group : {64, 128})
    for (int k_total = 1; k_total < 1100; ++k_total) {
      const T t = T::make(nullptr, 4096, 4096, k_total, group);
      const int rows = (k_total + group - 1) / group;
      for (int k = 0; k < k_total; ++k) ASSERT_EQ(t.row_of(k), k / group);
      for (int k = k_total; k < k_total + 256; ++k) ASSERT_EQ(t.row_of(k), rows - 1);
    }
}

}  // namespace
