// Host tests of GemmMultistage's argument checks, split-K's included: every bad input is refused
// with kInvalidArgument and a message naming the argument, before any device is touched.
// Pointers here are fake addresses; nothing is dereferenced and no GPU is needed.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

#include <tilepipe/gemm/gemm_multistage.cuh>

using tilepipe::Layout;
using tilepipe::Status;

namespace {

// The portable 256 x 128 x 32 tile, named explicitly: the default tile depends on the targets
// of the build (DefaultTileConfig), and the split-K cases below count 32-deep k-tiles.
using Portable = tilepipe::detail::PortableDefaultTile;

// Compiled for 16-byte alignment only (AnyAlignment = false), which the first tests check; the
// default, which takes any alignment, is GemmAny (AnyAlignment tests below).
using Gemm = tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                      tilepipe::Identity, Portable, /*SplitK=*/false,
                                      /*AnyAlignment=*/false>;
using GemmAny = tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                         tilepipe::Identity, Portable>;
using GemmNN = tilepipe::GemmMultistage<__nv_bfloat16, float, Layout::kColumnMajor,
                                        Layout::kColumnMajor, 3, tilepipe::Identity, Portable>;

template <class T>
T* fake(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// A valid 100 x 200 x 300 problem (A row-major, B column-major, D row-major) in separate buffers.
Gemm::Arguments valid_args() {
  Gemm::Arguments a;
  a.m = 100;
  a.n = 200;
  a.k = 300;
  a.a = fake<const __half>(0x100000);
  a.lda = 304;
  a.b = fake<const __half>(0x200000);
  a.ldb = 304;
  a.c = fake<const __half>(0x300000);
  a.ldc = 200;
  a.d = fake<__half>(0x400000);
  a.ldd = 200;
  a.beta = 1.0f;
  return a;
}

void expect_invalid(const Gemm::Arguments& args, const std::string& names) {
  const Status s = Gemm::check_arguments(args);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find(names), std::string::npos)
      << "message \"" << s.message() << "\" should name " << names;
  EXPECT_STREQ(s.what(), s.message().c_str());
}

}  // namespace

TEST(GemmArguments, ValidProblemPasses) {
  const Status s = Gemm::check_arguments(valid_args());
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(s.message().empty());
  EXPECT_STREQ(s.what(), "");
}

TEST(GemmArguments, NegativeSizes) {
  auto a = valid_args();
  a.m = -1;
  expect_invalid(a, "m = -1");
  a = valid_args();
  a.n = -5;
  expect_invalid(a, "n = -5");
  a = valid_args();
  a.k = -2;
  expect_invalid(a, "k = -2");
  a = valid_args();
  a.batch_count = -1;
  expect_invalid(a, "batch_count");
  a = valid_args();
  a.batch_count = 70000;
  expect_invalid(a, "batch_count");
}

TEST(GemmArguments, LargestExtents) {
  // 32-bit tile coordinates: extents close to 2^31 are refused, with the limit in the message.
  auto a = valid_args();
  a.m = 0x7FFFFFFF;
  expect_invalid(a, "the largest extent");
  a = valid_args();
  a.n = Gemm::kMaxExtent + 1;
  expect_invalid(a, "n = ");
  a = valid_args();
  a.k = 0x7FFFFFF0;
  a.lda = 0x7FFFFFF8;
  expect_invalid(a, "k = ");
  // At the limit it is the grid that refuses m x n when both are large ...
  a = valid_args();
  a.m = Gemm::kMaxExtent;
  a.n = Gemm::kMaxExtent;
  a.ldd = Gemm::kMaxExtent + 8;
  expect_invalid(a, "thread blocks");
  // ... but a tall-skinny problem with more than 2^31 elements in A is fine (64-bit offsets).
  a = valid_args();
  a.m = 70000;
  a.k = 40000;
  a.lda = 40000;
  a.ldb = 40000;
  a.n = 16;
  a.ldc = 16;
  a.ldd = 16;
  a.a = fake<const __half>(0x100000000ull);
  a.b = fake<const __half>(0x300000000ull);
  a.c = fake<const __half>(0x400000000ull);
  a.d = fake<__half>(0x500000000ull);
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).message();
}

TEST(GemmArguments, NullPointers) {
  auto a = valid_args();
  a.a = nullptr;
  expect_invalid(a, "A is a null pointer");
  a = valid_args();
  a.b = nullptr;
  expect_invalid(a, "B is a null pointer");
  a = valid_args();
  a.d = nullptr;
  expect_invalid(a, "D is a null pointer");
  a = valid_args();
  a.c = nullptr;
  expect_invalid(a, "C is a null pointer");
  // C is not needed when beta == 0, nor A and B when K == 0.
  a = valid_args();
  a.c = nullptr;
  a.beta = 0.0f;
  EXPECT_TRUE(Gemm::check_arguments(a).ok());
  a = valid_args();
  a.a = nullptr;
  a.b = nullptr;
  a.k = 0;
  a.lda = 0;
  a.ldb = 0;
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).message();
}

TEST(GemmArguments, LeadingDimensionsTooSmall) {
  auto a = valid_args();
  a.lda = 296;
  expect_invalid(a, "lda = 296");  // row-major A needs >= K
  a = valid_args();
  a.ldb = 8;
  expect_invalid(a, "ldb = 8");
  a = valid_args();
  a.ldd = 192;
  expect_invalid(a, "ldd = 192");
  a = valid_args();
  a.ldc = 0;
  expect_invalid(a, "ldc = 0");
  a = valid_args();
  a.layout_cd = Layout::kColumnMajor;
  a.ldd = 200;
  a.ldc = 104;  // col-major needs >= M
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).message();
  a.ldd = 96;
  expect_invalid(a, "ldd = 96");
}

// The default GemmMultistage takes any leading dimension and batch stride and pointers aligned to
// their element, and runs what is not 16-byte aligned on its narrow kernel, without split-K.
TEST(GemmArguments, AnyAlignmentAcceptsElementAlignedArguments) {
  static_assert(GemmAny::kAnyAlignment && !Gemm::kAnyAlignment, "");
  auto a = valid_args();
  EXPECT_TRUE(GemmAny::vector_aligned(a));
  a.a = fake<const __half>(0x100002);
  a.lda = 301;
  a.ldb = 303;
  a.ldc = 201;
  a.ldd = 203;
  a.d = fake<__half>(0x400006);
  EXPECT_TRUE(GemmAny::check_arguments(a).ok()) << GemmAny::check_arguments(a).message();
  EXPECT_FALSE(GemmAny::vector_aligned(a));
  a.batch_count = 2;
  a.batch_stride_a = 100 * 301 + 1;
  a.batch_stride_b = 200 * 303 + 3;
  a.batch_stride_c = 100 * 201 + 5;
  a.batch_stride_d = 100 * 203 + 7;
  EXPECT_TRUE(GemmAny::check_arguments(a).ok()) << GemmAny::check_arguments(a).message();
  // Only D not 16-byte aligned is enough for the narrow kernel; C counts only when it is read.
  a = valid_args();
  a.ldd = 204;
  EXPECT_FALSE(GemmAny::vector_aligned(a));
  a = valid_args();
  a.ldc = 204;
  EXPECT_FALSE(GemmAny::vector_aligned(a));
  a.beta = 0.0f;
  EXPECT_TRUE(GemmAny::vector_aligned(a));
  // Each operand's copy width: the widest that its pointer, ld and batch stride all keep.
  using tilepipe::detail::copy_bytes_of;
  EXPECT_EQ(copy_bytes_of(fake<const __half>(0x100000), 304, 0, 1), 16);
  EXPECT_EQ(copy_bytes_of(fake<const __half>(0x100008), 304, 0, 1), 8);
  EXPECT_EQ(copy_bytes_of(fake<const __half>(0x100000), 302, 0, 1), 4);
  EXPECT_EQ(copy_bytes_of(fake<const __half>(0x100000), 304, 301, 2), 2);
  EXPECT_EQ(copy_bytes_of(fake<const __half>(0x100000), 304, 301, 1), 16);  // one batch: no stride
  EXPECT_EQ(copy_bytes_of(fake<const float>(0x100004), 300, 0, 1), 4);
}

TEST(GemmArguments, AnyAlignmentRefusesPointersOffTheirElement) {
  auto a = valid_args();
  a.a = fake<const __half>(0x100001);
  Status s = GemmAny::check_arguments(a);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("A is not aligned to its element size (2 bytes)"), std::string::npos)
      << s.message();
  a = valid_args();
  a.d = fake<__half>(0x400003);
  s = GemmAny::check_arguments(a);
  EXPECT_NE(s.message().find("D is not aligned to its element size (2 bytes)"), std::string::npos)
      << s.message();
  GemmNN::Arguments f;
  f.m = 10;
  f.n = 10;
  f.k = 10;
  f.a = fake<const __nv_bfloat16>(0x100000);
  f.lda = 16;
  f.b = fake<const __nv_bfloat16>(0x200000);
  f.ldb = 16;
  f.d = fake<float>(0x400002);
  f.ldd = 12;
  f.layout_cd = Layout::kColumnMajor;
  s = GemmNN::check_arguments(f);
  EXPECT_NE(s.message().find("D is not aligned to its element size (4 bytes)"), std::string::npos)
      << s.message();
}

// Split-K needs 16-byte aligned arguments: for others the narrow kernel runs K whole, and asks
// for no workspace.
TEST(GemmArguments, AnyAlignmentDoesNotSplitK) {
  using GemmSKAny =
      tilepipe::GemmMultistageSplitK<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                     tilepipe::Identity, Portable>;
  GemmSKAny::Arguments a = valid_args();
  a.split_k = 4;
  EXPECT_EQ(GemmSKAny::split_k_slices(a).count, 4);
  EXPECT_GT(GemmSKAny::workspace_size(a), 0u);
  a.lda = 301;
  EXPECT_EQ(GemmSKAny::split_k_slices(a).count, 1);
  // No split-K workspace; the Hopper tier's copy of A (100 lines of 304 halves) where it has one.
  EXPECT_EQ(GemmSKAny::AmpereGemm::workspace_size(a), 0u);
  EXPECT_EQ(GemmSKAny::workspace_size(a),
            GemmSKAny::kHasHopperTier ? std::size_t(100) * 304 * 2 : std::size_t(0));
  EXPECT_TRUE(GemmSKAny::check_arguments(a).ok()) << GemmSKAny::check_arguments(a).message();
}

// The Hopper tier reads A and B with TMA, which needs 16-byte aligned addresses and strides: it
// refuses the rest, naming the argument (GemmMultistage copies them first, or runs them on the
// Ampere tier). C and D need only their elements' alignment: a D that TMA cannot address is
// written from the registers, and C is read element by element.
TEST(GemmArguments, HopperTierNeedsSixteenByteAlignedAAndB) {
  using Sm90 = tilepipe::GemmSm90<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4>;
  Sm90::Arguments a = valid_args();
  EXPECT_TRUE(Sm90::check_arguments(a).ok()) << Sm90::check_arguments(a).message();
  a.lda = 301;
  Status s = Sm90::check_arguments(a);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("lda = 301 is not a multiple of 16 bytes"), std::string::npos)
      << s.message();
  a = valid_args();
  a.b = fake<const __half>(0x200002);
  s = Sm90::check_arguments(a);
  EXPECT_NE(s.message().find("B is not 16-byte aligned"), std::string::npos) << s.message();
  a = valid_args();
  a.batch_count = 2;
  a.batch_stride_a = 100 * 304;
  a.batch_stride_b = 200 * 304 + 4;
  a.batch_stride_c = a.batch_stride_d = 100 * 200;
  s = Sm90::check_arguments(a);
  EXPECT_NE(s.message().find("batch_stride_b = 60804 is not a multiple of 16 bytes"),
            std::string::npos)
      << s.message();
  // C and D: pointers, leading dimensions and batch strides aligned only to their elements.
  a.batch_stride_b = 200 * 304;
  a.c = fake<const __half>(0x300002);
  a.ldc = 201;
  a.batch_stride_c = 100 * 201 + 1;
  a.d = fake<__half>(0x400006);
  a.ldd = 203;
  a.batch_stride_d = 100 * 203 + 3;
  EXPECT_TRUE(Sm90::check_arguments(a).ok()) << Sm90::check_arguments(a).message();
  a.d = fake<__half>(0x400003);
  s = Sm90::check_arguments(a);
  EXPECT_NE(s.message().find("D is not aligned to its element size"), std::string::npos)
      << s.message();
  // With K = 0, A and B are not read: nothing of them is checked.
  a = valid_args();
  a.k = 0;
  a.lda = 301;
  EXPECT_TRUE(Sm90::check_arguments(a).ok()) << Sm90::check_arguments(a).message();
}

TEST(GemmArguments, MisalignedPointersAndLeadingDimensions) {
  auto a = valid_args();
  a.a = fake<const __half>(0x100002);
  expect_invalid(a, "A is not 16-byte aligned");
  a = valid_args();
  a.b = fake<const __half>(0x200008);
  expect_invalid(a, "B is not 16-byte aligned");
  a = valid_args();
  a.d = fake<__half>(0x400004);
  expect_invalid(a, "D is not 16-byte aligned");
  a = valid_args();
  a.c = fake<const __half>(0x30000e);
  expect_invalid(a, "C is not 16-byte aligned");
  a = valid_args();
  a.lda = 301;
  expect_invalid(a, "lda = 301 is not a multiple of 16 bytes");
  a = valid_args();
  a.ldd = 204;
  expect_invalid(a, "ldd = 204 is not a multiple of 16 bytes");
  // f32 D: 4 elements per 16 bytes.
  GemmNN::Arguments f;
  f.m = 10;
  f.n = 10;
  f.k = 16;
  f.a = fake<const __nv_bfloat16>(0x100000);
  f.lda = 16;
  f.b = fake<const __nv_bfloat16>(0x200000);
  f.ldb = 16;
  f.d = fake<float>(0x400000);
  f.ldd = 12;
  f.layout_cd = Layout::kColumnMajor;
  EXPECT_TRUE(GemmNN::check_arguments(f).ok()) << GemmNN::check_arguments(f).message();
  f.ldd = 14;  // 56 bytes: refused where 16-byte alignment is needed, the narrow kernel's otherwise
  using GemmNNStrict =
      tilepipe::GemmMultistage<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kColumnMajor, 3,
                               tilepipe::Identity, Portable, false, /*AnyAlignment=*/false>;
  const Status s = GemmNNStrict::check_arguments(f);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("ldd = 14 is not a multiple of 16 bytes (4 elements)"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(GemmNN::check_arguments(f).ok()) << GemmNN::check_arguments(f).message();
  EXPECT_FALSE(GemmNN::vector_aligned(f));
}

TEST(GemmArguments, F32InputsMoveInFourElementVectors) {
  // f32 A and B (MathTF32). The 16-byte kernels move 4-element vectors: pointers, leading
  // dimensions and batch strides in 4-element steps; without the narrow kernel, anything else is
  // refused, naming it. The default (narrow kernel compiled in) takes it, and refuses only a
  // pointer off its element.
  using GemmF32Strict = tilepipe::GemmMultistage<
      float, float, Layout::kRowMajor, Layout::kColumnMajor, 3, tilepipe::Identity,
      tilepipe::DefaultF32TileConfig<tilepipe::MathTF32>, false, /*AnyAlignment=*/false>;
  using GemmF32 = tilepipe::GemmMultistage<float, float, Layout::kRowMajor, Layout::kColumnMajor, 3,
                                           tilepipe::Identity,
                                           tilepipe::DefaultF32TileConfig<tilepipe::MathTF32>>;
  GemmF32::Arguments f;
  f.m = 10;
  f.n = 10;
  f.k = 17;
  f.a = fake<const float>(0x100000);
  f.lda = 20;
  f.b = fake<const float>(0x200000);
  f.ldb = 20;
  f.d = fake<float>(0x400000);
  f.ldd = 12;
  f.batch_count = 2;
  f.batch_stride_a = 200;
  f.batch_stride_b = 200;
  f.batch_stride_d = 120;
  EXPECT_TRUE(GemmF32Strict::check_arguments(f).ok())
      << GemmF32Strict::check_arguments(f).message();
  EXPECT_TRUE(GemmF32::vector_aligned(f));
  auto expect = [](const GemmF32::Arguments& args, const std::string& names) {
    const Status s = GemmF32Strict::check_arguments(args);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find(names), std::string::npos)
        << "message \"" << s.message() << "\" should name " << names;
    EXPECT_TRUE(GemmF32::check_arguments(args).ok()) << GemmF32::check_arguments(args).message();
    EXPECT_FALSE(GemmF32::vector_aligned(args));
  };
  auto g = f;
  g.lda = 18;
  expect(g, "lda = 18 is not a multiple of 16 bytes (4 elements");
  g = f;
  g.ldb = 22;
  expect(g, "ldb = 22 is not a multiple of 16 bytes (4 elements");
  g = f;
  g.a = fake<const float>(0x100008);
  expect(g, "A is not 16-byte aligned");
  g = f;
  g.batch_stride_b = 202;
  expect(g, "batch_stride_b = 202 is not a multiple of 16 bytes (4 elements");
  g = f;
  g.b = fake<const float>(0x200002);
  const Status s = GemmF32::check_arguments(g);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("B"), std::string::npos) << s.message();
}

TEST(GemmArguments, Tf32HopperTierIsKMajorOnly) {
  // wgmma reads tf32 operands only K-major: GemmSm90 takes float A and B as A row-major and B
  // column-major (any other layout stops at a static_assert; the trait says the same).
  // GemmMultistage's tf32 tile has a Hopper tier in every layout: it runs that GemmSm90 on
  // K-major copies of A column-major and B row-major.
  using tilepipe::hopper_tier_supports_v;
  static_assert(hopper_tier_supports_v<float, Layout::kRowMajor, Layout::kColumnMajor>);
  static_assert(!hopper_tier_supports_v<float, Layout::kColumnMajor, Layout::kColumnMajor>);
  static_assert(!hopper_tier_supports_v<float, Layout::kRowMajor, Layout::kRowMajor>);
  static_assert(!hopper_tier_supports_v<float, Layout::kColumnMajor, Layout::kRowMajor>);
  static_assert(hopper_tier_supports_v<__half, Layout::kColumnMajor, Layout::kRowMajor>);
  using Tf32Tile = tilepipe::DefaultF32TileConfig<tilepipe::MathTF32>;
  using TN = tilepipe::GemmMultistage<float, float, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                      tilepipe::Identity, Tf32Tile>;
  using NN = tilepipe::GemmMultistage<float, float, Layout::kColumnMajor, Layout::kColumnMajor, 4,
                                      tilepipe::Identity, Tf32Tile>;
  using SimtTN = tilepipe::GemmMultistage<float, float, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                          tilepipe::Identity,
                                          tilepipe::DefaultF32TileConfig<tilepipe::MathSimtF32>>;
  static_assert(TN::kHasHopperTier && NN::kHasHopperTier && !SimtTN::kHasHopperTier);
  static_assert(!TN::kCopyA && !TN::kCopyB && NN::kCopyA && !NN::kCopyB);
  static_assert(std::is_same_v<NN::HopperGemm, TN::HopperGemm>,
                "tf32 NN runs the TN GemmSm90 on A's K-major copy");

  // A float slot is one 128-byte row of k, 32 floats: the same bytes per stage as f16's 64, so the
  // default Hopper tile and ring (128 x 256, 4 stages, 48 KB a stage) fit as they do for f16.
  using Sm90F32 = TN::HopperGemm;
  using Sm90F16 = tilepipe::GemmSm90<__half, float, Layout::kRowMajor, Layout::kColumnMajor, 4>;
  static_assert(Sm90F32::kTileK == 32 && Sm90F16::kTileK == 64);
  static_assert(Sm90F32::Mainloop::Loader::kBytesPerStage == 48 * 1024 &&
                Sm90F32::Mainloop::Loader::kBytesPerStage ==
                    Sm90F16::Mainloop::Loader::kBytesPerStage);
  static_assert(Sm90F32::kSharedBytes == Sm90F16::kSharedBytes);
  static_assert(Sm90F32::Mainloop::k_tiles(33) == 2 && Sm90F32::Mainloop::k_tiles(32) == 1);

  // Its checks count k in 32-float k-tiles: split-K needs a workspace only where K spans more
  // than one.
  Sm90F32::Arguments f;
  f.m = 10;
  f.n = 10;
  f.k = 32;
  f.a = fake<const float>(0x100000);
  f.lda = 40;
  f.b = fake<const float>(0x200000);
  f.ldb = 40;
  f.d = fake<float>(0x400000);
  f.ldd = 12;
  f.split_k = 2;
  EXPECT_TRUE(Sm90F32::check_arguments(f).ok()) << Sm90F32::check_arguments(f).message();
  f.k = 33;
  const Status s = Sm90F32::check_arguments(f);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("workspace is a null pointer"), std::string::npos) << s.message();
  EXPECT_EQ(Sm90F32::workspace_size(f),
            Sm90F32::Kernel::workspace_bytes(Sm90F32::scheduler(f, /*workers=*/1)));
  EXPECT_GT(Sm90F32::workspace_size(f), 0u);
  // And TMA's 16 bytes: 4 floats.
  f.split_k = 1;
  f.lda = 42;
  EXPECT_NE(Sm90F32::check_arguments(f).message().find("lda = 42"), std::string::npos)
      << Sm90F32::check_arguments(f).message();
}

TEST(GemmArguments, SimtF32TakesTheArgumentsOfTf32) {
  // MathSimtF32 moves A and B through the same ring and tile as MathTF32: the same arguments type,
  // shared memory, threads, and the same verdict (and message) on every argument set.
  using Tf32 = tilepipe::GemmMultistage<
      float, float, Layout::kColumnMajor, Layout::kRowMajor, 3, tilepipe::Identity,
      tilepipe::DefaultF32TileConfig<tilepipe::MathTF32>, false, /*AnyAlignment=*/false>;
  using Simt = tilepipe::GemmMultistage<
      float, float, Layout::kColumnMajor, Layout::kRowMajor, 3, tilepipe::Identity,
      tilepipe::DefaultF32TileConfig<tilepipe::MathSimtF32>, false, /*AnyAlignment=*/false>;
  static_assert(std::is_same_v<Tf32::Arguments, Simt::Arguments>, "one arguments type for f32");
  static_assert(Tf32::kSharedBytes == Simt::kSharedBytes && Tf32::kThreads == Simt::kThreads,
                "the same tile and ring");
  static_assert(!Simt::kHasHopperTier, "MathSimtF32 runs on the Ampere tier");
  Simt::Arguments f;
  f.m = 10;
  f.n = 10;
  f.k = 17;
  f.a = fake<const float>(0x100000);
  f.lda = 12;
  f.b = fake<const float>(0x200000);
  f.ldb = 12;
  f.d = fake<float>(0x400000);
  f.ldd = 12;
  EXPECT_TRUE(Simt::check_arguments(f).ok()) << Simt::check_arguments(f).message();
  auto g = f;
  g.lda = 14;
  auto h = f;
  h.b = fake<const float>(0x200004);
  auto i = f;
  i.ldb = 8;  // below N (B row-major)
  for (const auto& args : {g, h, i}) {
    const Status s = Simt::check_arguments(args);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(s.message(), Tf32::check_arguments(args).message());
  }
}

TEST(GemmArguments, BatchStrides) {
  auto a = valid_args();
  a.batch_count = 3;
  a.batch_stride_a = 100 * 304;
  a.batch_stride_b = 200 * 304;
  a.batch_stride_c = 100 * 200;
  a.batch_stride_d = 100 * 200;
  a.d = fake<__half>(0x4000000);  // far from the inputs' batches
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).message();
  auto b = a;
  b.batch_stride_d = 100 * 200 - 8;
  expect_invalid(b, "batch_stride_d = 19992 makes the D matrices");
  b = a;
  b.batch_stride_d = 0;
  expect_invalid(b, "batch_stride_d = 0");
  b = a;
  b.batch_stride_a = 12;
  expect_invalid(b, "batch_stride_a = 12 is not a multiple of 16 bytes");
  b = a;
  b.batch_stride_c = -8;
  expect_invalid(b, "batch_stride_c = -8 is negative");
  b = a;
  b.batch_stride_b = 0;  // broadcasting B is fine
  EXPECT_TRUE(Gemm::check_arguments(b).ok()) << Gemm::check_arguments(b).message();
}

TEST(GemmArguments, Aliasing) {
  auto a = valid_args();
  a.d = fake<__half>(0x100000 + 64);
  expect_invalid(a, "D overlaps A");
  a = valid_args();
  a.d = fake<__half>(0x200000);
  expect_invalid(a, "D overlaps B");
  a = valid_args();
  a.c = fake<const __half>(0x400000 + 16);
  expect_invalid(a, "C overlaps D");
  a = valid_args();
  a.c = a.d;
  a.ldc = 208;
  a.ldd = 208;  // exact in-place update is allowed
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).message();
  a.ldc = 200;
  expect_invalid(a, "C overlaps D");
}

TEST(GemmArguments, EmptyProblemsNeedNothing) {
  Gemm::Arguments a;  // all zero
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).message();
}

TEST(GemmArguments, DeviceProperties) {
  const Status old = Gemm::check_device_properties(0, 7, 5, 64 * 1024);
  EXPECT_EQ(old.code(), Status::Code::kUnsupportedDevice);
  EXPECT_NE(old.message().find("sm_75"), std::string::npos) << old.message();
  const Status small = Gemm::check_device_properties(1, 8, 6, 16 * 1024);
  EXPECT_EQ(small.code(), Status::Code::kInsufficientResources);
  EXPECT_NE(small.message().find("shared memory"), std::string::npos) << small.message();
  EXPECT_TRUE(Gemm::check_device_properties(0, 9, 0, 227 * 1024).ok());
  EXPECT_TRUE(Gemm::check_device_properties(0, 8, 0, 163 * 1024).ok());
}

// ---- The default policy ------------------------------------------------------------------

TEST(DefaultGemmPolicy, SharedMemoryPerArchitecture) {
  using tilepipe::detail::max_smem_bytes_per_block;
  EXPECT_EQ(max_smem_bytes_per_block(800), 163 * 1024);
  EXPECT_EQ(max_smem_bytes_per_block(860), 99 * 1024);
  EXPECT_EQ(max_smem_bytes_per_block(890), 99 * 1024);
  EXPECT_EQ(max_smem_bytes_per_block(900), 227 * 1024);
  EXPECT_EQ(max_smem_bytes_per_block(1000), 227 * 1024);
  EXPECT_EQ(max_smem_bytes_per_block(1200), 99 * 1024);
}

// The deep tile only where every target of this translation unit has sm_90-class shared memory,
// and only at the stage counts whose ring fits; the portable tile otherwise. Both hold in any
// build: CI's (sm_80 + sm_90) checks the portable branch, the GPU machine's (native sm_90) the
// deep one.
TEST(DefaultGemmPolicy, FollowsTheTargetsOfTheBuild) {
  using tilepipe::DefaultGemmPolicy;
  constexpr int smem = tilepipe::detail::kMinSmemBytesPerBlockOfTargets;
  constexpr bool deep = smem >= 227 * 1024;
#if defined(TILEPIPE_PORTABLE_DEFAULT_POLICY)
  static_assert(DefaultGemmPolicy<4>::Tile::kK == 32);
#else
  static_assert(DefaultGemmPolicy<4>::Tile::kK == (deep ? 64 : 32));
  static_assert(DefaultGemmPolicy<2>::Tile::kK == (deep ? 64 : 32));
#endif
  // Never a ring that some target of the build cannot hold, at any stage count.
  static_assert(
      sizeof(tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor,
                                      4>::Mainloop::SharedStorage) <= std::size_t(smem));
  static_assert(DefaultGemmPolicy<5>::Tile::kK == 32 && DefaultGemmPolicy<6>::Tile::kK == 32);
  static_assert(std::is_same_v<DefaultGemmPolicy<4>::Warp,
                               tilepipe::GemmShape<64, 64, DefaultGemmPolicy<4>::Tile::kK>>);
  std::printf("targets' smallest shared memory per block %d KB: DefaultGemmPolicy<4> is %dx%dx%d\n",
              smem / 1024, DefaultGemmPolicy<4>::Tile::kM, DefaultGemmPolicy<4>::Tile::kN,
              DefaultGemmPolicy<4>::Tile::kK);
}

// A deep-tile ring on a device with less shared memory (3 stages, 144 KB, on an sm_86's 99 KB;
// four stages would not even compile for CI's sm_80 target) is refused with a clear status, never
// launched.
TEST(DefaultGemmPolicy, DeepTileIsRefusedWhereItDoesNotFit) {
  using Deep = tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 3,
                                        tilepipe::Identity, tilepipe::detail::DeepDefaultTile>;
  const Status s = Deep::check_device_properties(0, 8, 6, 99 * 1024);
  EXPECT_EQ(s.code(), Status::Code::kInsufficientResources);
  EXPECT_NE(s.message().find("shared memory"), std::string::npos) << s.message();
  EXPECT_TRUE(Deep::check_device_properties(0, 9, 0, 227 * 1024).ok());
}

// ---- Split-K -------------------------------------------------------------------------------

namespace {

using GemmSK =
    tilepipe::GemmMultistageSplitK<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                   tilepipe::Identity, Portable>;
using GemmSKCol =
    tilepipe::GemmMultistageSplitK<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kRowMajor, 3,
                                   tilepipe::Identity, Portable>;

// valid_args() with K = 300 cut into 4 slices of the default tile's 32-deep k-tiles (10 k-tiles:
// 3 + 3 + 2 + 2, the last ending at K), and a workspace of exactly the size it needs, away from
// every matrix.
Gemm::Arguments split_args() {
  auto a = valid_args();
  a.split_k = 4;
  a.workspace = fake<void>(0x1000000);
  a.workspace_bytes = GemmSK::workspace_size(a);
  return a;
}

void expect_split_invalid(const Gemm::Arguments& args, const std::string& names) {
  const Status s = GemmSK::check_arguments(args);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find(names), std::string::npos)
      << "message \"" << s.message() << "\" should name " << names;
  EXPECT_STREQ(s.what(), s.message().c_str());
}

}  // namespace

TEST(GemmArgumentsSplitK, ValidSplitPasses) {
  const auto a = split_args();
  const tilepipe::SplitKSlices slices = GemmSK::split_k_slices(a);
  EXPECT_EQ(slices.count, 4);
  EXPECT_EQ(slices.begin(0), 0);
  EXPECT_EQ(slices.extent(0), 96);
  EXPECT_EQ(slices.begin(1), 96);
  EXPECT_EQ(slices.begin(2), 192);
  EXPECT_EQ(slices.extent(2), 64);
  EXPECT_EQ(slices.begin(3), 256);
  EXPECT_EQ(slices.extent(3), 44);
  // 4 slices x 100 rows x 200 columns (a multiple of 4 already) x 4 bytes.
  EXPECT_EQ(a.workspace_bytes, std::size_t(4) * 100 * 200 * 4);
  const Status s = GemmSK::check_arguments(a);
  EXPECT_TRUE(s.ok()) << s.message();
  // More workspace than needed is fine.
  auto b = a;
  b.workspace_bytes += 1000;
  EXPECT_TRUE(GemmSK::check_arguments(b).ok());
}

TEST(GemmArgumentsSplitK, SplitKBelowOneIsRefused) {
  auto a = split_args();
  a.split_k = 0;
  expect_split_invalid(a, "split_k = 0 is less than 1");
  a = split_args();
  a.split_k = -3;
  expect_split_invalid(a, "split_k = -3");
  // Also without split-K compiled in, and for an empty problem.
  a = valid_args();
  a.split_k = 0;
  expect_invalid(a, "split_k = 0");
  Gemm::Arguments empty;
  empty.split_k = 0;
  expect_invalid(empty, "split_k = 0");
}

TEST(GemmArgumentsSplitK, MissingOrSmallWorkspaceIsRefused) {
  auto a = split_args();
  const std::string needed = std::to_string(a.workspace_bytes);
  a.workspace = nullptr;
  expect_split_invalid(a, "workspace is a null pointer");
  expect_split_invalid(a, needed + " bytes");  // the message says how much is needed
  a = split_args();
  a.workspace_bytes -= 1;
  expect_split_invalid(
      a, "workspace_bytes = " + std::to_string(a.workspace_bytes) + " is less than the " + needed);
  a = split_args();
  a.workspace_bytes = 0;
  expect_split_invalid(a, "workspace_bytes = 0");
  a = split_args();
  a.workspace = fake<void>(0x1000008);
  expect_split_invalid(a, "workspace is not 16-byte aligned");
}

TEST(GemmArgumentsSplitK, WorkspaceMustNotOverlapTheMatrices) {
  auto a = split_args();
  a.workspace = fake<void>(0x400000 + 1024);
  expect_split_invalid(a, "workspace overlaps D");
  a = split_args();
  a.workspace = fake<void>(0x100000 - 16);
  expect_split_invalid(a, "workspace overlaps A");
  a = split_args();
  a.workspace = fake<void>(0x200000 + 32);
  expect_split_invalid(a, "workspace overlaps B");
  a = split_args();
  a.workspace = fake<void>(0x300000);
  expect_split_invalid(a, "workspace overlaps C");
  // C is not read with beta == 0, so the workspace may lie on it then.
  a.beta = 0.0f;
  EXPECT_TRUE(GemmSK::check_arguments(a).ok()) << GemmSK::check_arguments(a).message();
}

TEST(GemmArgumentsSplitK, OneEffectiveSliceNeedsNoWorkspace) {
  // K = 20 fits in one 32-deep k-tile: split_k = 8 runs the ordinary kernel, no workspace.
  auto a = valid_args();
  a.k = 20;
  a.lda = 24;
  a.ldb = 24;
  a.split_k = 8;
  EXPECT_EQ(GemmSK::split_k_slices(a).count, 1);
  EXPECT_EQ(GemmSK::workspace_size(a), 0u);
  EXPECT_TRUE(GemmSK::check_arguments(a).ok()) << GemmSK::check_arguments(a).message();
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << "no split-K runs, so no split-K support is needed";
  // K = 0 (D = beta * C) with split_k > 1: one slice, nothing needed from A, B or the workspace.
  a.k = 0;
  a.a = nullptr;
  a.b = nullptr;
  a.lda = 0;
  a.ldb = 0;
  EXPECT_EQ(GemmSK::split_k_slices(a).count, 1);
  EXPECT_EQ(GemmSK::workspace_size(a), 0u);
  EXPECT_TRUE(GemmSK::check_arguments(a).ok()) << GemmSK::check_arguments(a).message();
  // Empty outputs need no workspace either.
  a = split_args();
  a.m = 0;
  EXPECT_EQ(GemmSK::workspace_size(a), 0u);
  a.workspace = nullptr;
  EXPECT_TRUE(GemmSK::check_arguments(a).ok());
}

TEST(GemmArgumentsSplitK, WithoutSplitKCompiledInItIsRefused) {
  const auto a = split_args();
  static_assert(!Gemm::kSplitK && GemmSK::kSplitK, "GemmMultistage's SplitK default is false");
  expect_invalid(a, "compiled without");
  expect_invalid(a, "GemmMultistageSplitK");
}

TEST(GemmArgumentsSplitK, WorkspaceSizeFollowsTheLayoutOfD) {
  // Column-major D (bf16 -> f32): slabs of N columns of M rows, M rounded up to 4 floats; batches.
  GemmSKCol::Arguments f;
  f.m = 10;
  f.n = 7;
  f.k = 1000;
  f.batch_count = 3;
  f.a = fake<const __nv_bfloat16>(0x100000);
  f.lda = 16;
  f.batch_stride_a = 16 * 1000;
  f.b = fake<const __nv_bfloat16>(0x200000);
  f.ldb = 8;
  f.batch_stride_b = 8 * 1000;
  f.d = fake<float>(0x400000);
  f.ldd = 12;
  f.batch_stride_d = 12 * 7;
  f.layout_cd = Layout::kColumnMajor;
  f.split_k = 5;
  const tilepipe::SplitKSlices slices = GemmSKCol::split_k_slices(f);  // 32 k-tiles: 7 7 6 6 6
  EXPECT_EQ(slices.count, 5);
  EXPECT_EQ(slices.extent(1), 7 * 32);
  EXPECT_EQ(slices.begin(4), 26 * 32);
  EXPECT_EQ(slices.extent(4), 1000 - 26 * 32);
  EXPECT_EQ(GemmSKCol::workspace_size(f), std::size_t(5) * 3 * 7 * 12 * 4);
  f.workspace = fake<void>(0x800000);
  f.workspace_bytes = GemmSKCol::workspace_size(f);
  EXPECT_TRUE(GemmSKCol::check_arguments(f).ok()) << GemmSKCol::check_arguments(f).message();
}

TEST(GemmArgumentsSplitK, SlicesBeyondTheGridAreRefused) {
  // K of 70000 k-tiles, one k-tile a slice: more slices than gridDim.y holds.
  auto a = valid_args();
  a.k = 32 * 70000;
  a.lda = a.k;
  a.ldb = a.k;
  a.a = fake<const __half>(0x100000000ull);
  a.b = fake<const __half>(0x300000000ull);
  a.c = fake<const __half>(0x500000000ull);
  a.d = fake<__half>(0x510000000ull);
  a.split_k = 70000;
  a.workspace = fake<void>(0x600000000ull);
  a.workspace_bytes = GemmSK::workspace_size(a);
  expect_split_invalid(a, "65535");
}

TEST(GemmArgumentsSplitK, WorkspaceSizeSaturatesInsteadOfWrapping) {
  const tilepipe::SplitKWorkspace w =
      tilepipe::SplitKWorkspace::make(0x7FFFF000, 0x7FFFF000, Layout::kRowMajor, 60000, 60000);
  EXPECT_EQ(w.bytes(), std::numeric_limits<std::size_t>::max());
}

// ---- Output operators ----------------------------------------------------------------------

// A user-written output operator without a `check`: nothing about it is refused. (Outside the
// anonymous namespace: its device operator is never called here.)
struct AddRowTimesCol {
  float weight = 1.0f;
  __device__ float operator()(float v, int row, int col) const { return v + weight * row * col; }
};

namespace {

template <class Op>
using GemmOp = tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                        Op, Portable>;

template <class Op>
typename GemmOp<Op>::Arguments args_with(const Op& op) {
  const Gemm::Arguments base = valid_args();
  typename GemmOp<Op>::Arguments a;
  a.m = base.m;
  a.n = base.n;
  a.k = base.k;
  a.a = base.a;
  a.lda = base.lda;
  a.b = base.b;
  a.ldb = base.ldb;
  a.c = base.c;
  a.ldc = base.ldc;
  a.d = base.d;
  a.ldd = base.ldd;
  a.beta = base.beta;
  a.output_op = op;
  return a;
}

template <class Op>
void expect_op_invalid(const Op& op, const std::string& names) {
  const Status s = GemmOp<Op>::check_arguments(args_with(op));
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << "no error for " << names;
  EXPECT_NE(s.message().find(names), std::string::npos)
      << "message \"" << s.message() << "\" should name " << names;
}

}  // namespace

TEST(GemmOutputOp, BiasAndScaleNeedAlignedPointers) {
  using tilepipe::BiasPerCol;
  using tilepipe::BiasPerRow;
  using tilepipe::ScalePerCol;
  using tilepipe::ScalePerRow;
  expect_op_invalid(BiasPerCol<float>{}, "BiasPerCol::bias");
  expect_op_invalid(BiasPerRow<__half>{}, "BiasPerRow::bias");
  expect_op_invalid(ScalePerRow<float>{}, "ScalePerRow::scale");
  expect_op_invalid(ScalePerCol<__nv_bfloat16>{}, "ScalePerCol::scale");
  expect_op_invalid(BiasPerCol<float>{fake<const float>(0x500002)}, "not aligned");
  expect_op_invalid(BiasPerRow<__half>{fake<const __half>(0x500001)}, "not aligned");
  // The message says how many values the vector must hold: N per column, M per row.
  expect_op_invalid(BiasPerCol<float>{},
                    std::to_string(valid_args().n) + " values, one per column");
  expect_op_invalid(ScalePerRow<float>{}, std::to_string(valid_args().m) + " values, one per row");
  EXPECT_TRUE(GemmOp<BiasPerCol<float>>::check_arguments(
                  args_with(BiasPerCol<float>{fake<const float>(0x500004)}))
                  .ok());
  EXPECT_TRUE(GemmOp<BiasPerRow<__half>>::check_arguments(
                  args_with(BiasPerRow<__half>{fake<const __half>(0x500002)}))
                  .ok());
}

TEST(GemmOutputOp, ClampBoundsMustBeOrdered) {
  expect_op_invalid(tilepipe::Clamp{1.0f, -1.0f}, "Clamp::lo");
  expect_op_invalid(tilepipe::Clamp{std::nanf(""), 1.0f}, "Clamp::lo");
  EXPECT_TRUE(
      GemmOp<tilepipe::Clamp>::check_arguments(args_with(tilepipe::Clamp{-1.0f, 1.0f})).ok());
}

TEST(GemmOutputOp, ChainChecksEveryOperator) {
  using Op = tilepipe::Chain<tilepipe::ScalePerRow<float>, tilepipe::BiasPerCol<float>,
                             tilepipe::GeluTanh, tilepipe::Clamp>;
  Op op;
  op.get<0>().scale = fake<const float>(0x600000);
  op.get<1>().bias = fake<const float>(0x700000);
  op.get<3>() = tilepipe::Clamp{-6.0f, 6.0f};
  EXPECT_TRUE(GemmOp<Op>::check_arguments(args_with(op)).ok())
      << GemmOp<Op>::check_arguments(args_with(op)).message();
  Op no_bias = op;
  no_bias.get<1>().bias = nullptr;
  expect_op_invalid(no_bias, "BiasPerCol::bias");
  Op bad_clamp = op;
  bad_clamp.get<3>().hi = -7.0f;
  expect_op_invalid(bad_clamp, "Clamp::lo");
}

TEST(GemmOutputOp, UserOperatorWithoutCheckIsAccepted) {
  EXPECT_TRUE(GemmOp<AddRowTimesCol>::check_arguments(args_with(AddRowTimesCol{0.5f})).ok());
  // The other arguments are still checked.
  auto a = args_with(AddRowTimesCol{});
  a.d = nullptr;
  EXPECT_EQ(GemmOp<AddRowTimesCol>::check_arguments(a).code(), Status::Code::kInvalidArgument);
}

// tf32 with A column-major or B row-major: the Hopper tier's K-major copies take
// workspace_size(args) bytes (K rounded up to 4 floats a row, per batch unless the batch stride
// is 0), asked for only where the Hopper tier would copy; without a workspace the arguments are
// valid (the Ampere tier runs them), and a workspace that is given is checked like split-K's.
namespace {

using Tf32Tile = tilepipe::DefaultF32TileConfig<tilepipe::MathTF32>;
using Tf32NN = tilepipe::GemmMultistage<float, float, Layout::kColumnMajor, Layout::kColumnMajor, 3,
                                        tilepipe::Identity, Tf32Tile>;
using Tf32NT = tilepipe::GemmMultistage<float, float, Layout::kColumnMajor, Layout::kRowMajor, 3,
                                        tilepipe::Identity, Tf32Tile>;
using Tf32TN = tilepipe::GemmMultistage<float, float, Layout::kRowMajor, Layout::kColumnMajor, 3,
                                        tilepipe::Identity, Tf32Tile>;

// 100 x 200 x 301 in batches of 3: A column-major (lda 104), B column-major (ldb 304), D
// row-major, C = D in place; the workspace far from all of them.
Tf32NN::Arguments tf32_nn_args() {
  Tf32NN::Arguments a;
  a.m = 100;
  a.n = 200;
  a.k = 301;
  a.a = fake<const float>(0x1000000);
  a.lda = 104;
  a.batch_stride_a = 104 * 301;
  a.b = fake<const float>(0x2000000);
  a.ldb = 304;
  a.batch_stride_b = 304 * 200;
  a.d = fake<float>(0x3000000);
  a.ldd = 200;
  a.batch_stride_d = 200 * 100;
  a.c = a.d;
  a.ldc = a.ldd;
  a.batch_stride_c = a.batch_stride_d;
  a.beta = 1.0f;
  a.batch_count = 3;
  a.workspace = fake<void>(0x8000000);
  a.workspace_bytes = Tf32NN::workspace_size(a);
  return a;
}

void expect_copy_invalid(const Tf32NN::Arguments& args, const std::string& names) {
  const Status s = Tf32NN::check_arguments(args);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find(names), std::string::npos)
      << "message \"" << s.message() << "\" should name " << names;
}

}  // namespace

TEST(GemmArgumentsTf32Copy, WorkspaceSize) {
  auto a = tf32_nn_args();
  // A's copy: 100 rows of 304 floats (301 rounded up to 4), one per batch.
  EXPECT_EQ(a.workspace_bytes, std::size_t(3) * 100 * 304 * 4);
  EXPECT_TRUE(Tf32NN::check_arguments(a).ok()) << Tf32NN::check_arguments(a).message();
  auto b = a;
  b.batch_stride_a = 0;  // one A for every batch: one copy
  EXPECT_EQ(Tf32NN::workspace_size(b), std::size_t(100) * 304 * 4);
  b = a;
  b.k = 0;  // nothing read, nothing copied
  EXPECT_EQ(Tf32NN::workspace_size(b), 0u);
  b = a;
  b.lda = 101;  // not 16-byte aligned: the narrow kernel, no copy
  EXPECT_EQ(Tf32NN::workspace_size(b), 0u);
  b = a;
  b.n = 0;
  EXPECT_EQ(Tf32NN::workspace_size(b), 0u);
  // Both copies for A column-major and B row-major (B's after A's), none for TN.
  Tf32NT::Arguments nt = a;
  nt.ldb = 200;
  nt.batch_stride_b = 200 * 301;
  EXPECT_EQ(Tf32NT::workspace_size(nt), std::size_t(3) * (100 + 200) * 304 * 4);
  EXPECT_EQ(Tf32TN::workspace_size(a), 0u);
  // NT's layout: A's copy (100 lines of K a batch) first, B's (200 lines) after it.
  const auto w = tilepipe::CopyWorkspace::make({100, 301, true}, {200, 301, true}, 4, 3);
  EXPECT_EQ(w.a.ld, 304);
  EXPECT_EQ(w.b.ld, 304);
  EXPECT_EQ(w.a.batch_stride, 100 * 304);
  EXPECT_EQ(w.b.batch_stride, 200 * 304);
  EXPECT_EQ(w.b.offset, std::size_t(3) * 100 * 304 * 4);
  EXPECT_EQ(w.bytes, Tf32NT::workspace_size(nt));
}

TEST(GemmArgumentsTf32Copy, NoWorkspaceIsValid) {
  auto a = tf32_nn_args();
  a.workspace = nullptr;
  a.workspace_bytes = 0;
  EXPECT_TRUE(Tf32NN::check_arguments(a).ok()) << Tf32NN::check_arguments(a).message();
}

TEST(GemmArgumentsTf32Copy, MisusedWorkspaceIsRefused) {
  const std::string needed = std::to_string(tf32_nn_args().workspace_bytes);
  auto a = tf32_nn_args();
  a.workspace_bytes -= 4;
  expect_copy_invalid(
      a, "workspace_bytes = " + std::to_string(a.workspace_bytes) + " is less than the " + needed);
  a = tf32_nn_args();
  a.workspace_bytes = 0;
  expect_copy_invalid(a, "workspace_bytes = 0 is less than");
  a = tf32_nn_args();
  a.workspace = fake<void>(0x8000008);
  expect_copy_invalid(a, "workspace is not 16-byte aligned");
  a = tf32_nn_args();
  a.workspace = fake<void>(0x3000000 + 64);
  expect_copy_invalid(a, "the tf32 copy workspace overlaps D");
  a = tf32_nn_args();
  a.workspace = fake<void>(0x1000000 - 1024);
  expect_copy_invalid(a, "the tf32 copy workspace overlaps A");
  a = tf32_nn_args();
  a.workspace = fake<void>(0x2000000 + 1024);
  expect_copy_invalid(a, "the tf32 copy workspace overlaps B");
  // More than needed is fine.
  a = tf32_nn_args();
  a.workspace_bytes += 1000;
  EXPECT_TRUE(Tf32NN::check_arguments(a).ok()) << Tf32NN::check_arguments(a).message();
}

// ---- f16 and bf16 operands that are not 16-byte aligned: the Hopper tier's copies ----------

// The Hopper tier copies A or B that TMA cannot read (pointer, leading dimension or batch stride
// not a multiple of 16 bytes) into workspace_size(args) bytes, lines rounded up to 8 halves, each
// copy 256-byte aligned; D and C that are not aligned need no copy. Without a workspace the
// arguments are valid (the narrow kernel runs them); a workspace that is given is checked.
namespace {

using DefaultTN = tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor>;
using DefaultTNStrict =
    tilepipe::GemmMultistage<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4,
                             tilepipe::Identity, tilepipe::DefaultTileConfig<4>, false,
                             /*AnyAlignment=*/false>;
using DefaultNTBf16 =
    tilepipe::GemmMultistage<__nv_bfloat16, float, Layout::kColumnMajor, Layout::kRowMajor, 3>;

// 131 x 67 x 4099, A row-major and B column-major with the odd leading dimensions that fit them,
// D row-major with ldd = 67; the workspace far from all of them.
DefaultTN::Arguments odd_k_args() {
  DefaultTN::Arguments a;
  a.m = 131;
  a.n = 67;
  a.k = 4099;
  a.a = fake<const __half>(0x1000000);
  a.lda = 4099;
  a.b = fake<const __half>(0x2000000);
  a.ldb = 4099;
  a.d = fake<__half>(0x3000000);
  a.ldd = 67;
  a.workspace = fake<void>(0x8000000);
  a.workspace_bytes = DefaultTN::workspace_size(a);
  return a;
}

std::size_t round_up_256(std::size_t x) { return (x + 255) / 256 * 256; }

void expect_unaligned_copy_invalid(const DefaultTN::Arguments& args, const std::string& names) {
  const Status s = DefaultTN::check_arguments(args);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find(names), std::string::npos)
      << "message \"" << s.message() << "\" should name " << names;
}

}  // namespace

TEST(GemmArgumentsUnalignedCopy, WorkspaceSize) {
  static_assert(DefaultTN::kHasHopperTier && DefaultNTBf16::kHasHopperTier,
                "the default tile has a Hopper tier");
  auto a = odd_k_args();
  // A: 131 lines of K = 4099 halves at a pitch of 4104; B: 67 lines, after A on 256 bytes.
  const std::size_t bytes_a = std::size_t(131) * 4104 * 2, bytes_b = std::size_t(67) * 4104 * 2;
  EXPECT_EQ(a.workspace_bytes, round_up_256(bytes_a) + bytes_b);
  EXPECT_TRUE(DefaultTN::check_arguments(a).ok()) << DefaultTN::check_arguments(a).message();
  const tilepipe::CopyWorkspace w = DefaultTN::HopperTier::workspace_layout(a);
  EXPECT_EQ(w.a.ld, 4104);
  EXPECT_EQ(w.b.ld, 4104);
  EXPECT_EQ(w.b.offset, round_up_256(bytes_a));
  // split_k and stream_k are ignored for such arguments, on both tiers.
  auto b = a;
  b.split_k = 4;
  EXPECT_EQ(DefaultTN::workspace_size(b), a.workspace_bytes);
  EXPECT_TRUE(DefaultTN::check_arguments(b).ok()) << DefaultTN::check_arguments(b).message();
  b.split_k = 1;
  b.stream_k = 8;
  EXPECT_EQ(DefaultTN::workspace_size(b), a.workspace_bytes);
  EXPECT_TRUE(DefaultTN::check_arguments(b).ok()) << DefaultTN::check_arguments(b).message();
  // Only A's leading dimension odd: A alone; only B's: B alone, from the start.
  b = a;
  b.ldb = 4104;
  EXPECT_EQ(DefaultTN::workspace_size(b), bytes_a);
  b = a;
  b.lda = 4104;
  EXPECT_EQ(DefaultTN::workspace_size(b), bytes_b);
  EXPECT_EQ(DefaultTN::HopperTier::workspace_layout(b).b.offset, 0u);
  // Aligned leading dimensions, but A one element past 16 bytes: A is copied.
  b.ldb = 4104;
  EXPECT_EQ(DefaultTN::workspace_size(b), 0u);
  b.a = fake<const __half>(0x1000002);
  EXPECT_EQ(DefaultTN::workspace_size(b), bytes_a);
  // Only D (ldd = 67) and C (ldc odd, beta != 0) not aligned: no copy, no workspace.
  b = a;
  b.lda = b.ldb = 4104;
  EXPECT_FALSE(DefaultTN::vector_aligned(b));
  EXPECT_EQ(DefaultTN::workspace_size(b), 0u);
  b.c = fake<const __half>(0x4000002);
  b.ldc = 69;
  b.beta = 1.0f;
  EXPECT_EQ(DefaultTN::workspace_size(b), 0u);
  // Batches: A's odd batch stride gives a copy per batch; B broadcast (stride 0), one copy.
  b = a;
  b.lda = 4104;
  b.batch_count = 3;
  b.batch_stride_a = 131 * 4104 + 1;
  b.ldb = 4099;
  b.batch_stride_b = 0;
  b.batch_stride_d = 131 * 67;
  EXPECT_EQ(DefaultTN::workspace_size(b), round_up_256(3 * bytes_a) + bytes_b);
  EXPECT_EQ(DefaultTN::HopperTier::workspace_layout(b).a.batch_stride, 131 * 4104);
  EXPECT_EQ(DefaultTN::HopperTier::workspace_layout(b).b.batch_stride, 0);
  // Nothing to multiply, nothing copied; without the narrow kernel such arguments are refused
  // and ask for nothing.
  b = a;
  b.k = 0;
  EXPECT_EQ(DefaultTN::workspace_size(b), 0u);
  b = a;
  b.n = 0;
  EXPECT_EQ(DefaultTN::workspace_size(b), 0u);
  EXPECT_EQ(DefaultTNStrict::workspace_size(a), 0u);
  EXPECT_FALSE(DefaultTNStrict::check_arguments(a).ok());
  // A column-major (K lines of M) and B row-major (K lines of N), bf16 in, f32 out.
  DefaultNTBf16::Arguments nt;
  nt.m = 131;
  nt.n = 67;
  nt.k = 4099;
  nt.a = fake<const __nv_bfloat16>(0x1000000);
  nt.lda = 131;
  nt.b = fake<const __nv_bfloat16>(0x2000000);
  nt.ldb = 67;
  nt.d = fake<float>(0x3000000);
  nt.ldd = 68;
  const std::size_t nt_a = std::size_t(4099) * 136 * 2, nt_b = std::size_t(4099) * 72 * 2;
  EXPECT_EQ(DefaultNTBf16::workspace_size(nt), round_up_256(nt_a) + nt_b);
  EXPECT_EQ(DefaultNTBf16::HopperTier::workspace_layout(nt).a.ld, 136);
  EXPECT_EQ(DefaultNTBf16::HopperTier::workspace_layout(nt).b.ld, 72);
}

TEST(GemmArgumentsUnalignedCopy, NoWorkspaceIsValid) {
  auto a = odd_k_args();
  a.workspace = nullptr;
  a.workspace_bytes = 0;
  EXPECT_TRUE(DefaultTN::check_arguments(a).ok()) << DefaultTN::check_arguments(a).message();
}

TEST(GemmArgumentsUnalignedCopy, MisusedWorkspaceIsRefused) {
  const std::string needed = std::to_string(odd_k_args().workspace_bytes);
  auto a = odd_k_args();
  a.workspace_bytes -= 2;
  expect_unaligned_copy_invalid(a, "workspace_bytes = " + std::to_string(a.workspace_bytes) +
                                       " is less than the " + needed +
                                       " bytes that the Hopper "
                                       "tier's copy of A or B (not 16-byte aligned) needs");
  a = odd_k_args();
  a.workspace_bytes = 0;
  expect_unaligned_copy_invalid(a, "workspace_bytes = 0 is less than");
  a = odd_k_args();
  a.workspace = fake<void>(0x8000002);
  expect_unaligned_copy_invalid(a, "workspace is not 16-byte aligned");
  a = odd_k_args();
  a.workspace = fake<void>(0x3000000 - 256);
  expect_unaligned_copy_invalid(a, "the copy workspace overlaps D");
  a = odd_k_args();
  a.workspace = fake<void>(0x1000000 + 4096);
  expect_unaligned_copy_invalid(a, "the copy workspace overlaps A");
  a = odd_k_args();
  a.workspace = fake<void>(0x2000000 - 4096);
  expect_unaligned_copy_invalid(a, "the copy workspace overlaps B");
  a = odd_k_args();
  a.workspace_bytes += 1000;
  EXPECT_TRUE(DefaultTN::check_arguments(a).ok()) << DefaultTN::check_arguments(a).message();
}

// ---- Stream-K ------------------------------------------------------------------------------

namespace {

using GemmStreamK =
    tilepipe::GemmMultistageStreamK<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                    tilepipe::Identity, Portable, /*AnyAlignment=*/false>;

// valid_args() (100 x 200 x 300: one 256 x 128 tile row, two tile columns, 10 k-tiles) on 3
// stream-K blocks: 20 iterations as 7 + 7 + 6, both tiles split; a workspace of exactly its size.
Gemm::Arguments stream_args() {
  auto a = valid_args();
  a.stream_k = 3;
  a.workspace = fake<void>(0x1000000);
  a.workspace_bytes = GemmStreamK::workspace_size(a);
  return a;
}

void expect_stream_invalid(const Gemm::Arguments& args, const std::string& names) {
  const Status s = GemmStreamK::check_arguments(args);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find(names), std::string::npos)
      << "message \"" << s.message() << "\" should name " << names;
}

}  // namespace

TEST(GemmArgumentsStreamK, ValidStreamKPasses) {
  const auto a = stream_args();
  ASSERT_TRUE(GemmStreamK::stream_k_runs(a));
  const tilepipe::StreamKPartition p = GemmStreamK::stream_k_partition(a);
  EXPECT_EQ(p.tiles, 2);
  EXPECT_EQ(p.k_tiles, 10);
  EXPECT_EQ(p.blocks, 3);
  EXPECT_EQ(p.dp_tiles, 0);
  // 2 slots per block of 256 x 128 floats, then a counter per tile.
  EXPECT_EQ(GemmStreamK::workspace_size(a), std::size_t(6) * 256 * 128 * 4 + 2 * 4);
  const Status s = GemmStreamK::check_arguments(a);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(p.k_chunks, GemmStreamK::kStreamKChunks);
  // More blocks than iterations: the grid shrinks to the 2 x 4 chunks.
  auto many = a;
  many.stream_k = 1000;
  EXPECT_EQ(GemmStreamK::stream_k_partition(many).blocks, 2 * GemmStreamK::kStreamKChunks);
  // Batches are more tiles: 3 batches of 2 tiles on 3 blocks divide evenly, so nothing is shared
  // and no workspace is needed.
  auto batched = a;
  batched.batch_count = 3;
  batched.batch_stride_a = 100 * 304;
  batched.batch_stride_b = 200 * 304;
  batched.batch_stride_c = batched.batch_stride_d = 100 * 200;
  EXPECT_EQ(GemmStreamK::stream_k_partition(batched).tiles, 6);
  EXPECT_EQ(GemmStreamK::workspace_size(batched), 0u);
}

TEST(GemmArgumentsStreamK, BadStreamKIsRefused) {
  auto a = stream_args();
  a.stream_k = -1;
  expect_stream_invalid(a, "stream_k = -1 is negative");
  a = stream_args();
  a.split_k = 2;
  expect_stream_invalid(a, "split_k = 2 and stream_k = 3");
  a = stream_args();
  a.workspace = nullptr;
  expect_stream_invalid(a, "workspace is a null pointer");
  a = stream_args();
  a.workspace_bytes -= 1;
  expect_stream_invalid(a, "is less than the");
  a = stream_args();
  a.workspace = fake<void>(0x1000004);
  expect_stream_invalid(a, "workspace is not 16-byte aligned");
  a = stream_args();
  a.workspace = fake<void>(0x400000 - 64);
  expect_stream_invalid(a, "stream-K workspace overlaps D");
  a = stream_args();
  a.workspace = fake<void>(0x300000 - 16);
  expect_stream_invalid(a, "stream-K workspace overlaps C");
  // Without stream-K compiled in it is refused, naming the alias that has it.
  a = stream_args();
  const Status s = Gemm::check_arguments(a);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("GemmMultistageStreamK"), std::string::npos) << s.message();
}

TEST(GemmArgumentsStreamK, NothingToShareNeedsNoStreamK) {
  // K = 0 (D = beta * C): stream-K does not run, so neither its support nor a workspace is needed.
  auto a = valid_args();
  a.k = 0;
  a.stream_k = 132;
  EXPECT_FALSE(GemmStreamK::stream_k_runs(a));
  EXPECT_EQ(GemmStreamK::workspace_size(a), 0u);
  EXPECT_TRUE(Gemm::check_arguments(a).ok()) << Gemm::check_arguments(a).message();
  // Not 16-byte aligned (a GEMM that takes any alignment): the narrow kernel runs, whole.
  using GemmStreamKAny =
      tilepipe::GemmMultistageStreamK<__half, __half, Layout::kRowMajor, Layout::kColumnMajor, 4,
                                      tilepipe::Identity, Portable>;
  auto odd = valid_args();
  odd.lda = 301;
  odd.stream_k = 132;
  EXPECT_FALSE(GemmStreamKAny::stream_k_runs(odd));
  EXPECT_EQ(GemmStreamKAny::AmpereGemm::workspace_size(odd), 0u);
  EXPECT_EQ(GemmStreamKAny::workspace_size(odd),  // the Hopper tier's copy of A, if it has one
            GemmStreamKAny::kHasHopperTier ? std::size_t(100) * 304 * 2 : std::size_t(0));
  odd.lda = 304;
  EXPECT_TRUE(GemmStreamKAny::stream_k_runs(odd));
}
